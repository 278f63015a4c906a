/** Rule lists (spec "Rule list"): named IP/CIDR or domain lists used by CEL rules. */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { organizations } from "./platform";

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

export const ruleLists = sqliteTable(
  "rule_lists",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    organizationId: integer("organization_id").notNull().references(() => organizations.id),
    name: text("name").notNull(),
    listType: text("list_type", { enum: ["ip", "domain"] }).notNull(),
    description: text("description").notNull().default(""),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("rule_lists_org_name_unique").on(t.organizationId, t.name)],
);

export const ruleListEntries = sqliteTable(
  "rule_list_entries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    organizationId: integer("organization_id").notNull().references(() => organizations.id),
    listId: integer("list_id")
      .notNull()
      .references(() => ruleLists.id, { onDelete: "cascade" }),
    /** Normalized (entry rule 3): CIDR with prefix, compressed IPv6, lowercase A-label domain. */
    value: text("value").notNull(),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [uniqueIndex("rule_list_entries_list_value_unique").on(t.listId, t.value), index("rule_list_entries_org_idx").on(t.organizationId)],
);
