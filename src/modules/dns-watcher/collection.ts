/**
 * The DNS watcher's collection records (platform/collection), read from its rows: what
 * the API, the console and the reports say about whether a domain and each record set
 * could be looked up. What a run writes is decided in assessment.ts.
 *
 *  - A domain: each scheduled run is an attempt (`last_checked_at`); one in which some
 *    record set resolved is a success (`last_success_at`, status ok or partial).
 *  - A record set: every run asks every record set of its domain, so its last attempt is
 *    the domain's; while its lookups resolve (no failures) that is also its last success,
 *    if it ever resolved. A set with neither values nor failures was never asked yet.
 */
import type { dnsDomains, dnsRecordSets } from "../../db/schema/dns-watcher";
import { NEVER_COLLECTED, type CollectionErrorClass, type CollectionRecord } from "../../platform/collection";

type DomainRow = typeof dnsDomains.$inferSelect;
type RecordSetRow = typeof dnsRecordSets.$inferSelect;

export type DomainCollectionColumns = Pick<
  DomainRow,
  "lastCheckedAt" | "lastSuccessAt" | "collectionFailingSince" | "collectionFailures" | "collectionNextAttemptAt" | "collectionErrorClass" | "collectionError"
>;

export function domainCollection(d: DomainCollectionColumns): CollectionRecord {
  return {
    lastAttemptAt: d.lastCheckedAt,
    lastSuccessAt: d.lastSuccessAt,
    failingSince: d.collectionFailingSince,
    consecutiveFailures: d.collectionFailures,
    nextAttemptAt: d.collectionNextAttemptAt,
    errorClass: d.collectionErrorClass as CollectionErrorClass | null,
    errorMessage: d.collectionError,
  };
}

export function recordSetCollection(
  r: Pick<RecordSetRow, "valuesJson" | "lastError" | "collectionFailures" | "collectionFailingSince" | "collectionErrorClass" | "lastSuccessAt">,
  d: Pick<DomainRow, "lastCheckedAt" | "collectionNextAttemptAt">,
): CollectionRecord {
  const failing = r.collectionFailures > 0;
  if (!failing && r.valuesJson === null) return { ...NEVER_COLLECTED, nextAttemptAt: d.collectionNextAttemptAt };
  return {
    lastAttemptAt: d.lastCheckedAt,
    lastSuccessAt: failing ? r.lastSuccessAt : d.lastCheckedAt,
    failingSince: r.collectionFailingSince,
    consecutiveFailures: r.collectionFailures,
    nextAttemptAt: d.collectionNextAttemptAt,
    errorClass: failing ? (r.collectionErrorClass as CollectionErrorClass | null) : null,
    errorMessage: failing ? r.lastError : null,
  };
}

/** The first retry of a domain whose run resolved nothing; each further failure doubles it, up to the check interval. */
export const FIRST_RETRY_MS = 60_000;

/**
 * When a domain whose lookups all failed is due again: a minute after the first failed
 * run, then 2, 4, 8 … minutes, never later than its regular next check. A resolver that
 * is down for a moment costs a minute of blindness, not a whole interval, and the second
 * failure (which turns the domain `failing`) is known within minutes.
 */
export function retryAfterFailure(attemptedAt: string, consecutiveFailures: number, regularNextAttemptAt: string | null): string {
  const backoff = Date.parse(attemptedAt) + FIRST_RETRY_MS * 2 ** Math.min(Math.max(consecutiveFailures - 1, 0), 20);
  if (regularNextAttemptAt !== null && Date.parse(regularNextAttemptAt) <= backoff) return regularNextAttemptAt;
  return new Date(backoff).toISOString();
}
