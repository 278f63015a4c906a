/**
 * An RDAP monitor's collection record (platform/collection), read from its row: each
 * check is an attempt (`last_checked_at`), one that took a snapshot a success
 * (`last_success_at`); the failure run is in the `collection_*` columns (record.ts writes
 * them with each check). Read by the poll, the API and the reports.
 */
import type { rdapMonitors } from "../../db/schema/rdap";
import type { CollectionErrorClass, CollectionRecord } from "../../platform/collection";

export type MonitorCollectionColumns = Pick<
  typeof rdapMonitors.$inferSelect,
  "lastCheckedAt" | "lastSuccessAt" | "collectionFailingSince" | "collectionFailures" | "collectionNextAttemptAt" | "collectionErrorClass" | "collectionError"
>;

export function monitorCollection(m: MonitorCollectionColumns): CollectionRecord {
  return {
    lastAttemptAt: m.lastCheckedAt,
    lastSuccessAt: m.lastSuccessAt,
    failingSince: m.collectionFailingSince,
    consecutiveFailures: m.collectionFailures,
    nextAttemptAt: m.collectionNextAttemptAt,
    errorClass: m.collectionErrorClass as CollectionErrorClass | null,
    errorMessage: m.collectionError,
  };
}

