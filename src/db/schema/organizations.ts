/** The tenant: every other tenant table references it through `organization_id`. */
import { sql } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const organizations = sqliteTable("organizations", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull(),
  tier: text("tier", { enum: ["free", "pro", "enterprise"] }).notNull().default("free"),
  /** Every member must sign in with a second factor (PUT /api/admin/security-policy). */
  requireMfa: integer("require_mfa", { mode: "boolean" }).notNull().default(false),
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`),
});
