/**
 * The decisions of a log cursor's run, as pure functions over plain values: whether a
 * run may start, what the run does next once it holds a verified tree and a signed head,
 * whether a fresher head is worth reading towards, and how the cursor's status changes
 * when the run ends (success, a failure with exponential backoff, a pause the log asked
 * for). run.ts does the I/O (the log, the store, the sink) around them; these are tested
 * on their own (test/ct-log/cursor-transitions.test.ts).
 *
 *            ┌───────────── backing off (until backoffUntil): the run ends at once
 *   start ───┤
 *            └─► [verified tree, signed head] ──► nextMove:
 *                   verified < head ........... read      ──► (budget spent: stop, more)
 *                   verified = head, unchecked  check_root ──► (root differs: failure)
 *                   final head / budget spent /
 *                   head fetched < 1 s ago .... stop
 *                   otherwise ................. refetch_head ──► afterHeadRefetch:
 *                                                  grew by MIN_GROWTH_TO_READ_ON: read on
 *                                                  else: stop
 *   stop ──► succeeded(status)     any failure ──► failed(status): backoff or the log's pause
 */
import type { CursorStatus } from "../cursor-contract";
import type { CollectionError } from "../../../platform/collection";

type Status = Omit<CursorStatus, "inProgress">;

/** A batch is verified and published this often while reading; also the least time between two fetches of a log's head. */
export const COMMIT_INTERVAL_MS = 1_000;
export const BACKOFF_BASE_MS = 30_000;
export const BACKOFF_MAX_MS = 3600_000;
/** The longest pause a log's Retry-After gets: a longer one (or a bogus date far ahead) is cut to this. */
export const MAX_LOG_PAUSE_MS = 3600_000;
/** Caught up with time left: the head is fetched again, and read on if the log grew by at least this much. */
export const MIN_GROWTH_TO_READ_ON = 256;

/** How long a cursor still backing off waits (ms from now), or null when it may run now. */
export function backoffRemaining(status: Pick<Status, "backoffUntil">, nowMs: number): number | null {
  if (!status.backoffUntil) return null;
  const left = Date.parse(status.backoffUntil) - nowMs;
  return left > 0 ? left : null;
}

/** Where the run stands: the verified tree's size against the signed head it reads towards. */
export interface LoopView {
  verified: number;
  headSize: number;
  /** The root of a head of the verified size was checked against the verified tree. */
  rootChecked: boolean;
  /** A read-only log's final head: never ask the log for another. */
  finalHead: boolean;
  budgetSpent: boolean;
  /** Since the head was fetched. */
  headAgeMs: number;
}

export type Move =
  /** Read, verify and publish towards the head. */
  | { do: "read" }
  /** A head of the size already verified must have the same root (a forged head otherwise). */
  | { do: "check_root" }
  /** Ask the log for a fresher head. */
  | { do: "refetch_head" }
  /** The run is done: caught up, or no time left. */
  | { do: "stop" };

export function nextMove(v: LoopView): Move {
  if (v.verified < v.headSize) return { do: "read" };
  if (v.verified === v.headSize && !v.rootChecked) return { do: "check_root" };
  if (v.finalHead || v.budgetSpent || v.headAgeMs < COMMIT_INTERVAL_MS) return { do: "stop" };
  return { do: "refetch_head" };
}

/** After a fresher head: read on towards it only when the log grew enough to be worth a batch. */
export function afterHeadRefetch(verified: number, nextHeadSize: number): "read_on" | "stop" {
  return nextHeadSize < verified + MIN_GROWTH_TO_READ_ON ? "stop" : "read_on";
}

/** The delay before the next run after `consecutiveFailures` failures in a row (the first: 30 s, doubling, at most an hour). */
export function backoffDelayMs(consecutiveFailures: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (consecutiveFailures - 1));
}

/** The run reached its verified position without a failure: the failure state is cleared. */
export function succeeded(status: Status, verified: number, nowMs: number): Status {
  return {
    ...status,
    position: verified,
    verifiedPosition: verified,
    backlog: Math.max(0, (status.treeSize ?? verified) - verified),
    lastError: null,
    lastErrorClass: null,
    failingSince: null,
    lastSuccessAt: new Date(nowMs).toISOString(),
    consecutiveFailures: 0,
    backoffUntil: null,
  };
}

/**
 * The run failed: reading resumes from the verified position. A log that asked for a pause
 * (`pauseMs`, its Retry-After) is not failing, so no exponential backoff, but nothing is
 * asked of it before then (up to MAX_LOG_PAUSE_MS); any other failure counts and backs off.
 */
export function failed(status: Status, failure: CollectionError, pauseMs: number | null, nowMs: number): Status {
  const next: Status = { ...status, position: status.verifiedPosition, lastError: failure.message, lastErrorClass: failure.class };
  if (pauseMs !== null) return { ...next, backoffUntil: new Date(nowMs + Math.min(MAX_LOG_PAUSE_MS, pauseMs)).toISOString() };
  const consecutiveFailures = status.consecutiveFailures + 1;
  return {
    ...next,
    consecutiveFailures,
    failingSince: status.failingSince ?? status.lastRunAt,
    backoffUntil: new Date(nowMs + backoffDelayMs(consecutiveFailures)).toISOString(),
  };
}

/** When to run again, in ms from now: at once with a backlog, the rest of the backoff, or null (the next poke decides). */
export function resumeAfterMs(more: boolean, status: Pick<Status, "backoffUntil">, nowMs: number): number | null {
  if (more) return 0;
  return status.backoffUntil ? Math.max(0, Date.parse(status.backoffUntil) - nowMs) : null;
}
