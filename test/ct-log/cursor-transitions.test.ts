// The log cursor's run decisions as pure functions (src/modules/ct-log/cursor/transitions.ts):
// each move of the loop, the fresher-head rule, and the status after success, a failure
// (exponential backoff, capped) and a pause the log asked for. The loop that performs them
// against real logs is test/ct-log/cursor-run.test.ts.
import { describe, expect, it } from "vitest";
import type { CollectionError } from "../../src/platform/collection";
import { initialStatus } from "../../src/modules/ct-log/cursor/state";
import {
  afterHeadRefetch,
  BACKOFF_MAX_MS,
  backoffDelayMs,
  backoffRemaining,
  COMMIT_INTERVAL_MS,
  failed,
  MAX_LOG_PAUSE_MS,
  MIN_GROWTH_TO_READ_ON,
  nextMove,
  resumeAfterMs,
  succeeded,
  type LoopView,
} from "../../src/modules/ct-log/cursor/transitions";

const NOW = Date.parse("2026-11-29T07:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const view = (v: Partial<LoopView> = {}): LoopView => ({
  verified: 1000,
  headSize: 1000,
  rootChecked: true,
  finalHead: false,
  budgetSpent: false,
  headAgeMs: COMMIT_INTERVAL_MS,
  ...v,
});
const timeout: CollectionError = { class: "timeout", message: "Reading the CT log Test log timed out" };
const status = (s: Partial<ReturnType<typeof initialStatus>> = {}) => ({ ...initialStatus("log-1", "Test log"), ...s });

describe("a run's start", () => {
  it("waits out a backoff that has not passed, and runs once it has (or when there is none)", () => {
    expect(backoffRemaining({ backoffUntil: iso(NOW + 5000) }, NOW)).toBe(5000);
    expect(backoffRemaining({ backoffUntil: iso(NOW) }, NOW)).toBeNull();
    expect(backoffRemaining({ backoffUntil: iso(NOW - 1) }, NOW)).toBeNull();
    expect(backoffRemaining({ backoffUntil: null }, NOW)).toBeNull();
  });
});

describe("the loop's next move", () => {
  it("reads while the verified tree is behind the head, whatever the budget or the head's age", () => {
    expect(nextMove(view({ verified: 10, headSize: 11, rootChecked: false, budgetSpent: true, headAgeMs: 0 }))).toEqual({ do: "read" });
  });

  it("checks the root of a head of the verified size once (the verified-checkpoint path), before anything else", () => {
    expect(nextMove(view({ rootChecked: false, budgetSpent: true, finalHead: true }))).toEqual({ do: "check_root" });
    expect(nextMove(view({ rootChecked: true }))).toEqual({ do: "refetch_head" });
  });

  it("does not check a head smaller than the verified tree: it decides at once", () => {
    expect(nextMove(view({ verified: 1200, headSize: 1000, rootChecked: false }))).toEqual({ do: "refetch_head" });
    expect(nextMove(view({ verified: 1200, headSize: 1000, rootChecked: false, budgetSpent: true }))).toEqual({ do: "stop" });
  });

  it("stops at the head of a read-only log, when the budget is spent, or when the head was fetched less than a commit interval ago", () => {
    expect(nextMove(view({ finalHead: true }))).toEqual({ do: "stop" });
    expect(nextMove(view({ budgetSpent: true }))).toEqual({ do: "stop" });
    expect(nextMove(view({ headAgeMs: COMMIT_INTERVAL_MS - 1 }))).toEqual({ do: "stop" });
    expect(nextMove(view({ headAgeMs: COMMIT_INTERVAL_MS }))).toEqual({ do: "refetch_head" });
  });

  it("reads on towards a fresher head only when the log grew by at least MIN_GROWTH_TO_READ_ON", () => {
    expect(afterHeadRefetch(1000, 1000 + MIN_GROWTH_TO_READ_ON)).toBe("read_on");
    expect(afterHeadRefetch(1000, 1000 + MIN_GROWTH_TO_READ_ON - 1)).toBe("stop");
    expect(afterHeadRefetch(1000, 900)).toBe("stop");
  });
});

describe("the status at the end of a run", () => {
  it("a success moves both positions to the verified tree, keeps the backlog to the newest head, and clears the failure state", () => {
    const before = status({
      position: 500,
      verifiedPosition: 400,
      treeSize: 1500,
      consecutiveFailures: 3,
      failingSince: iso(NOW - 60_000),
      lastError: "old",
      lastErrorClass: "timeout",
      backoffUntil: iso(NOW - 1),
    });
    const after = succeeded(before, 1000, NOW);
    expect(after).toMatchObject({
      position: 1000,
      verifiedPosition: 1000,
      backlog: 500,
      consecutiveFailures: 0,
      failingSince: null,
      lastError: null,
      lastErrorClass: null,
      backoffUntil: null,
      lastSuccessAt: iso(NOW),
    });
    expect(before.consecutiveFailures).toBe(3); // pure: the input is left as it was
    expect(succeeded(status({ treeSize: null }), 1000, NOW).backlog).toBe(0);
  });

  it("a failure goes back to the verified position, counts, remembers when failing began, and backs off 30 s doubling up to an hour", () => {
    const first = failed(status({ position: 900, verifiedPosition: 800, lastRunAt: iso(NOW) }), timeout, null, NOW);
    expect(first).toMatchObject({
      position: 800,
      consecutiveFailures: 1,
      failingSince: iso(NOW),
      lastError: timeout.message,
      lastErrorClass: "timeout",
      backoffUntil: iso(NOW + 30_000),
    });
    const second = failed({ ...first, lastRunAt: iso(NOW + 40_000) }, timeout, null, NOW + 40_000);
    expect(second).toMatchObject({ consecutiveFailures: 2, failingSince: iso(NOW), backoffUntil: iso(NOW + 40_000 + 60_000) });
    expect([1, 2, 3, 8, 20].map(backoffDelayMs)).toEqual([30_000, 60_000, 120_000, BACKOFF_MAX_MS, BACKOFF_MAX_MS]);
  });

  it("a pause the log asked for is not a failure: no count, no failing-since, the pause it asked for up to an hour", () => {
    const paused = failed(status({ verifiedPosition: 800, consecutiveFailures: 2, lastRunAt: iso(NOW) }), { class: "rate_limited", message: "429" }, 120_000, NOW);
    expect(paused).toMatchObject({ position: 800, consecutiveFailures: 2, failingSince: null, lastErrorClass: "rate_limited", backoffUntil: iso(NOW + 120_000) });
    expect(failed(status(), timeout, 10 * MAX_LOG_PAUSE_MS, NOW).backoffUntil).toBe(iso(NOW + MAX_LOG_PAUSE_MS));
  });

  it("resumes at once with a backlog, after the rest of a backoff, or leaves it to the next poke", () => {
    expect(resumeAfterMs(true, { backoffUntil: iso(NOW + 5000) }, NOW)).toBe(0);
    expect(resumeAfterMs(false, { backoffUntil: iso(NOW + 5000) }, NOW)).toBe(5000);
    expect(resumeAfterMs(false, { backoffUntil: iso(NOW - 5000) }, NOW)).toBe(0);
    expect(resumeAfterMs(false, { backoffUntil: null }, NOW)).toBeNull();
  });
});
