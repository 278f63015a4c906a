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

/**
 * The collection-state columns (platform/collection/state.ts `CollectionRecord`) an
 * asset table needs beside its last-attempt and last-success times, which most tables
 * already have under names of their own (`last_checked_at`, `last_success_at`).
 */
export const collectionColumns = () => ({
  /** First failed attempt of the current run of failures; null after a success. */
  collectionFailingSince: text("collection_failing_since"),
  /** Failed attempts in a row; 0 after a success. */
  collectionFailures: integer("collection_failures").notNull().default(0),
  /** When the source is asked next; null when not known. */
  collectionNextAttemptAt: text("collection_next_attempt_at"),
  /** platform/collection COLLECTION_ERROR_CLASSES; null after a success. */
  collectionErrorClass: text("collection_error_class"),
  /** The latest failure in words (classify.ts); null after a success. */
  collectionError: text("collection_error"),
});
