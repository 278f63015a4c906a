/**
 * Collection state as stored and as shown: a plain record each module keeps in its own
 * table (columns of its choice, see `collectionColumns` in db/schema/columns.ts), the one
 * transition every attempt goes through, and the view the API returns.
 *
 * The transition is pure and the caller writes its result in the statement it already
 * makes for the attempt: an unchanged successful attempt adds no D1 row.
 */
import { FAILING_AFTER_CONSECUTIVE, type CollectionError, type CollectionErrorClass, type CollectionState } from "./vocabulary";
import type { CollectionView } from "./schema";

/** What a module keeps per asset (ISO 8601 strings; null when never). */
export interface CollectionRecord {
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  failingSince: string | null;
  consecutiveFailures: number;
  nextAttemptAt: string | null;
  errorClass: CollectionErrorClass | null;
  errorMessage: string | null;
}

export const NEVER_COLLECTED: CollectionRecord = {
  lastAttemptAt: null,
  lastSuccessAt: null,
  failingSince: null,
  consecutiveFailures: 0,
  nextAttemptAt: null,
  errorClass: null,
  errorMessage: null,
};

export type AttemptOutcome = { ok: true } | { ok: false; error: CollectionError };

/**
 * The state change an attempt caused, if any: `failing` when the asset just entered
 * `failing` (its FAILING_AFTER_CONSECUTIVE-th failure in a row), `recovered` when it
 * succeeded after having been `failing`. Events are raised on these, once per change.
 */
export type CollectionTransition = "failing" | "recovered" | null;

/** The record after one attempt at `at`, and the transition it caused. */
export function recordAttempt(prev: CollectionRecord, outcome: AttemptOutcome, at: string, nextAttemptAt: string | null): { record: CollectionRecord; transition: CollectionTransition } {
  if (outcome.ok) {
    const wasFailing = prev.consecutiveFailures >= FAILING_AFTER_CONSECUTIVE;
    return {
      record: { lastAttemptAt: at, lastSuccessAt: at, failingSince: null, consecutiveFailures: 0, nextAttemptAt, errorClass: null, errorMessage: null },
      transition: wasFailing ? "recovered" : null,
    };
  }
  const consecutiveFailures = prev.consecutiveFailures + 1;
  return {
    record: {
      lastAttemptAt: at,
      lastSuccessAt: prev.lastSuccessAt,
      failingSince: prev.failingSince ?? at,
      consecutiveFailures,
      nextAttemptAt,
      errorClass: outcome.error.class,
      errorMessage: outcome.error.message,
    },
    transition: consecutiveFailures === FAILING_AFTER_CONSECUTIVE ? "failing" : null,
  };
}

/** The state of a record; `enabled: false` is `paused` whatever was collected before. */
export function collectionState(record: CollectionRecord, enabled = true): CollectionState {
  if (!enabled) return "paused";
  if (record.consecutiveFailures >= FAILING_AFTER_CONSECUTIVE) return "failing";
  return record.lastSuccessAt ? "ok" : "pending";
}

/** The `collection` object of the API (schema.ts `CollectionSchema`). */
export function collectionView(record: CollectionRecord, enabled = true): CollectionView {
  const paused = !enabled;
  return {
    state: collectionState(record, enabled),
    last_attempt_at: record.lastAttemptAt,
    last_success_at: record.lastSuccessAt,
    failing_since: record.failingSince,
    consecutive_failures: record.consecutiveFailures,
    next_attempt_at: paused ? null : record.nextAttemptAt,
    error: record.errorClass && record.errorMessage !== null ? { class: record.errorClass, message: record.errorMessage } : null,
  };
}

/**
 * Whether the asset was collected within `windowSeconds` before `now` (the reports'
 * "assessed" test: see modules/reports/freshness.ts for each module's window).
 */
export function collectedWithin(record: Pick<CollectionRecord, "lastSuccessAt">, now: Date, windowSeconds: number): boolean {
  if (!record.lastSuccessAt) return false;
  return now.getTime() - Date.parse(record.lastSuccessAt) <= windowSeconds * 1000;
}
