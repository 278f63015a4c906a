/** Rule lists (docs/modules/lists.md): named IP/CIDR, domain or SPKI-hash lists used by CEL rules. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

import { id, organizationId, createdAt, updatedAt } from "./columns";

/** What a list holds; the API schema, the normalization and the CEL list data derive from this. */
export const LIST_TYPES = ["ip", "domain", "spki"] as const;
export type ListType = (typeof LIST_TYPES)[number];

export const ruleLists = sqliteTable(
  "rule_lists",
  {
    id: id(),
    organizationId: organizationId(),
    name: text("name").notNull(),
    listType: text("list_type", { enum: LIST_TYPES }).notNull(),
    description: text("description").notNull().default(""),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("rule_lists_org_name_unique").on(t.organizationId, t.name)],
);

export const ruleListEntries = sqliteTable(
  "rule_list_entries",
  {
    id: id(),
    organizationId: organizationId(),
    listId: integer("list_id")
      .notNull()
      .references(() => ruleLists.id, { onDelete: "cascade" }),
    /** Normalized (entry rule 3): CIDR with prefix, compressed IPv6, lowercase A-label domain. */
    value: text("value").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("rule_list_entries_list_value_unique").on(t.listId, t.value), index("rule_list_entries_org_idx").on(t.organizationId)],
);
