/**
 * What a log cursor keeps between runs, and the small interface it keeps it through
 * (certspotter's StateProvider is the model: the monitor loop never knows whether its
 * state lives in a Durable Object, a file or a test's memory).
 *
 * The record holds only what is verified: the collapsed Merkle tree of the entries
 * below the verified position. Entries read past it are held in memory until their
 * batch verifies; after a crash they are read again, which is why publication is
 * idempotent and the record is saved only after publishing.
 */
import type { CollapsedTreeJson } from "../merkle";
import type { CursorStatus } from "../cursor-contract";
import type { ObservedEntry } from "../ingest";

export interface CursorRecord {
  /** The verified tree (null before the log's starting point is known). */
  tree: CollapsedTreeJson | null;
  status: Omit<CursorStatus, "inProgress">;
}

export interface CursorStore {
  load(): Promise<CursorRecord | null>;
  /** Persists the record; called after every published batch and at the end of every run. */
  save(record: CursorRecord): Promise<void>;
}

/** Where verified batches go: made visible (D1) and handed to the event fan-out. Must be idempotent. */
export interface CursorSink {
  publish(batch: VerifiedBatch): Promise<void>;
}

export interface VerifiedBatch {
  /** Entries [from, to) of the log, verified. */
  from: number;
  to: number;
  /** Observations (matches, lookalikes) of those entries. */
  observed: ObservedEntry[];
}

export function initialStatus(logId: string, logName: string): Omit<CursorStatus, "inProgress"> {
  return {
    logId,
    logName,
    position: null,
    verifiedPosition: null,
    treeSize: null,
    treeHeadAt: null,
    verifiedTreeHeadAt: null,
    lastEntryAt: null,
    backlog: 0,
    lastRunAt: null,
    lastSuccessAt: null,
    lastError: null,
    lastErrorClass: null,
    failingSince: null,
    lastMismatch: null,
    consecutiveFailures: 0,
    backoffUntil: null,
    entriesProcessed: 0,
    matchesFound: 0,
    runs: 0,
    lastRunEntries: 0,
    lastRunMs: 0,
  };
}

/** A store in memory (tests, benchmarks). */
export class MemoryCursorStore implements CursorStore {
  record: CursorRecord | null = null;
  saves = 0;
  async load(): Promise<CursorRecord | null> {
    return this.record ? structuredClone(this.record) : null;
  }
  async save(record: CursorRecord): Promise<void> {
    this.saves++;
    this.record = structuredClone(record);
  }
}
