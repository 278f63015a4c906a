/**
 * Column helpers shared by every feature's tables, so the conventions are written
 * once: integer autoincrement ids, `organization_id` on every tenant row, and ISO
 * 8601 UTC timestamps stored as TEXT (they sort lexicographically and are what the
 * API returns). A migration generated after a table adopts these is empty.
 */
import { sql } from "drizzle-orm";
import { integer, text } from "drizzle-orm/sqlite-core";
import { organizations } from "./organizations";

/** SQLite's "now" as ISO 8601 with milliseconds, the default of timestamp columns. */
export const isoNow = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

/** `id INTEGER PRIMARY KEY AUTOINCREMENT`. */
export const id = () => integer("id").primaryKey({ autoIncrement: true });

/** `organization_id`, required and referencing the tenant. */
export const organizationId = () =>
  integer("organization_id")
    .notNull()
    .references(() => organizations.id);

/** `created_at`, defaulting to the insert time. */
export const createdAt = () => text("created_at").notNull().default(isoNow);

/** `updated_at`, defaulting to the insert time (services set it on change). */
export const updatedAt = () => text("updated_at").notNull().default(isoNow);

/** `created_at` and `updated_at`. */
export const timestamps = () => ({ createdAt: createdAt(), updatedAt: updatedAt() });
