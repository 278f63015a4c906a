/**
 * When an asset's source is asked next (`collection_next_attempt_at`, the
 * `collectionColumns()` of db/schema/columns.ts) when nothing failed: at the next
 * scheduled run, or for an asset switched back on, in the statement that enables it.
 */
import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * The next scheduled run (the Cron Trigger, platform/scheduler.ts, fires each minute):
 * when a source not backing off is asked next, e.g. a log, or a domain or monitor created
 * a moment ago.
 */
export function nextScheduledRun(now: Date): string {
  return new Date(Math.ceil((now.getTime() + 1) / 60_000) * 60_000).toISOString();
}

/**
 * `collection_next_attempt_at` for an asset being switched back on: the next scheduled run
 * when it has never been asked or its next attempt has passed while it was paused (so it
 * is asked at the next minute and its collection view does not show a time in the past),
 * otherwise the attempt already scheduled (a retry backing off keeps its backoff).
 * One statement, so the decision reads the row the update writes.
 */
export function nextAttemptWhenEnabled(columns: { lastCheckedAt: SQLiteColumn; collectionNextAttemptAt: SQLiteColumn }, now: Date): SQL<string> {
  return sql<string>`CASE WHEN ${columns.lastCheckedAt} IS NULL OR ${columns.collectionNextAttemptAt} IS NULL OR ${columns.collectionNextAttemptAt} < ${now.toISOString()}
    THEN ${nextScheduledRun(now)} ELSE ${columns.collectionNextAttemptAt} END`;
}
