/**
 * One run of a log cursor: read, verify, match, publish, until the log is caught up
 * or the run's time budget is spent. No Durable Object in here: state comes and goes
 * through a CursorStore, verified batches leave through a CursorSink, so the loop is
 * tested on its own (test/ct-log/cursor-run.test.ts).
 *
 *   read     the log's request units from the verified position towards the newest
 *            signed tree head, as many in flight as its politeness allows, requested
 *            ahead of the consumer within a bounded window (reader.ts)
 *   match    every entry's leaf hash goes into a working copy of the collapsed Merkle
 *            tree; its names through the filter and typosquat indexes (EntryMatcher);
 *            the CAA lookups of a unit's matches (DNS round trips) go on while the
 *            next units are matched, a few units at a time, and are awaited by the commit
 *   verify   a batch (every COMMIT_INTERVAL_MS, or as soon as the previous commit is
 *            done if that takes longer; at most COMMIT_ENTRIES; at the head and at the
 *            end of the budget) is proven a prefix of the signed tree:
 *            static-ct-api completes the tree with the log's hash tiles, RFC 6962
 *            checks a consistency proof (LogClient.provesPrefix)
 *   publish  only then are its observations written (idempotent) and the verified
 *            tree saved: nothing unverified is ever visible, and a restart re-reads
 *            from the last saved tree (no gap) while publication ignores what it
 *            already has (no duplicate)
 *
 * Commits overlap reading: while batch N is verified and published, batch N+1 is
 * read and matched (and the reader keeps requesting ahead). Commits run one at a
 * time and in order; batch N+1 builds on N's tree before N is proven, so when N
 * fails verification, N+1 is dropped unpublished with it.
 *
 * A batch that does not verify is cut down to its longest prefix that does (a binary
 * search over its request units): that prefix is published, the log stops there with
 * the mismatch recorded and backs off. A tampered entry is never published, nor
 * anything after it, while every match before it is.
 *
 * The run's decisions (start or keep backing off, read / check the root / fetch a fresher
 * head / stop, and the status after success or failure) are pure functions in
 * transitions.ts; this file does the I/O around them.
 */
import { CollapsedMerkleTree } from "../merkle";
import type { CursorStatus } from "../cursor-contract";
import type { EntryMatcher, LogRef, ObservedEntry } from "../ingest";
import { LogPausedError, type LogClient, type SignedTreeHead } from "../log-client/types";
import { toBase64 } from "../wire/bytes";
import { classifyLogFailure } from "../collection";
import { readInOrder } from "./reader";
import { initialStatus, type CursorRecord, type CursorSink, type CursorStore } from "./state";
import { afterHeadRefetch, backoffRemaining, COMMIT_INTERVAL_MS, failed, MAX_LOG_PAUSE_MS, nextMove, resumeAfterMs, succeeded } from "./transitions";

/**
 * A batch is verified and published this often while reading (COMMIT_INTERVAL_MS, in
 * transitions.ts), or as soon as the previous commit is done when that takes longer
 * (reading never waits for a commit only because a second has passed)...
 */
export { COMMIT_INTERVAL_MS, MAX_LOG_PAUSE_MS };
/** ... and at least every this many entries (then reading waits for the previous commit). */
export const COMMIT_ENTRIES = 16_384;
/**
 * Request units whose matches may still wait for their CAA lookups while the next ones are
 * matched: DNS round trips overlap instead of pacing the loop (EntryMatcher runs up to
 * CAA_LOOKUPS_AT_ONCE lookups per unit, so at most 4 x 8 are in flight).
 */
const UNITS_AWAITING_CAA = 4;

export interface CursorRunInput {
  log: LogRef;
  client: LogClient;
  /** A read-only log's final tree head (from the signed log list): read up to it, never ask the log for another. */
  finalHead?: SignedTreeHead;
  /** Where a log with no saved state starts: entry 0, or its current size (verified from the log's nodes). */
  startPosition: "end" | "start";
  store: CursorStore;
  sink: CursorSink;
  /** The matcher of the current filters; asked again before each batch, so a changed filter applies from the next batch. */
  matcher: () => Promise<EntryMatcher>;
  /**
   * Request units asked ahead of the one being processed: the reader's window. The log's
   * politeness (in the client) decides how many of them are in flight; the rest wait their turn.
   */
  ahead: number;
  budgetMs: number;
  /** The scheduler's clock: backoff decisions and the recorded times of the run. */
  now: Date;
  /** A clock in ms for the budget and batching (the runtime's). */
  clock: () => number;
  /** Gives the thread to other work (API requests) between request units. */
  pause: () => Promise<void>;
  /** Live view of the run (position read so far). */
  onProgress?: (status: Omit<CursorStatus, "inProgress">) => void;
  commitIntervalMs?: number;
  commitEntries?: number;
}

export interface CursorRunResult {
  status: Omit<CursorStatus, "inProgress">;
  /** A backlog remains (the budget ran out before the head): run again at once. */
  more: boolean;
  /**
   * When to run again, in ms from now: 0 with a backlog, the rest of the backoff while the
   * log backs off (a failure, or the pause its Retry-After asked for), null when caught up
   * (the next poke decides).
   */
  resumeAfterMs: number | null;
}

/** The signed tree did not contain what was read; `published` entries before it were verified and published. */
export class TreeMismatchError extends Error {
  override name = "TreeMismatchError";
  /** The log served entries its signed tree does not contain (platform/collection). */
  readonly collectionClass = "protocol";
  constructor(
    readonly treeSize: number,
    readonly signedRoot: string,
    readonly verifiedPosition: number,
  ) {
    super(`the tree head of size ${treeSize} (root ${signedRoot}) does not contain the entries served after ${verifiedPosition}: stopped at ${verifiedPosition}`);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** One request unit of a batch: the tree after it (where a failed batch can be cut) and its observations. */
interface BatchUnit {
  tree: CollapsedMerkleTree;
  /** Settles once the unit's matches have their CAA verdicts. */
  observed: Promise<ObservedEntry[]>;
  lastEntryTimestamp: number;
}

interface Batch {
  start: number;
  tree: CollapsedMerkleTree;
  units: BatchUnit[];
}

export async function runCursor(input: CursorRunInput): Promise<CursorRunResult> {
  const started = input.clock();
  const nowMs = () => input.now.getTime() + (input.clock() - started);
  const record: CursorRecord = (await input.store.load()) ?? { tree: null, status: initialStatus(input.log.logId, input.log.logName) };
  // Fields added since the record was saved start empty.
  const status = { ...initialStatus(input.log.logId, input.log.logName), ...record.status, logId: input.log.logId, logName: input.log.logName };
  record.status = status;

  const waiting = backoffRemaining(status, input.now.getTime());
  if (waiting !== null) {
    status.runs += 1; // a run that found the cursor backing off
    await input.store.save(record);
    return { status, more: false, resumeAfterMs: waiting };
  }
  status.lastRunAt = input.now.toISOString();
  const verifiedBefore = status.entriesProcessed;
  const deadline = started + input.budgetMs;
  let more = false;

  const noteHead = (head: SignedTreeHead) => {
    status.treeSize = head.treeSize;
    status.treeHeadAt = iso(head.timestamp);
  };
  const noteVerified = (tree: CollapsedMerkleTree, head: SignedTreeHead) => {
    record.tree = tree.toJSON();
    // Reading may already be past it (the next batch is read while this one commits).
    status.position = Math.max(status.position ?? 0, tree.size);
    status.verifiedPosition = tree.size;
    status.verifiedTreeHeadAt = iso(head.timestamp);
    status.backlog = Math.max(0, (status.treeSize ?? tree.size) - tree.size);
  };

  /** Verifies the batch (or its longest verifiable prefix), publishes it, saves the record. */
  const commit = async (batch: Batch, head: SignedTreeHead): Promise<CollapsedMerkleTree> => {
    // The proof and the last CAA answers of the batch, at the same time.
    const [observedPerUnit, proven] = await Promise.all([Promise.all(batch.units.map((u) => u.observed)), input.client.provesPrefix(batch.tree, head)]);
    let good = batch.units.length - 1;
    if (!proven) {
      // The last boundary failed; the batch start is known good. Binary search between.
      let lo = -1;
      let hi = good;
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (await input.client.provesPrefix(batch.units[mid].tree, head)) lo = mid;
        else hi = mid;
      }
      good = lo;
    }
    const cut = good >= 0 ? batch.units[good] : null;
    const tree = cut?.tree ?? null;
    if (cut && tree) {
      const observed = observedPerUnit.slice(0, good + 1).flat();
      await input.sink.publish({ from: batch.start, to: tree.size, observed });
      status.entriesProcessed += tree.size - batch.start;
      status.matchesFound += observed.length;
      status.lastEntryAt = iso(cut.lastEntryTimestamp);
      status.lastSuccessAt = iso(nowMs());
      noteVerified(tree, head);
      await input.store.save(record);
    }
    if (good < batch.units.length - 1) {
      const at = tree?.size ?? batch.start;
      status.lastMismatch = { treeSize: head.treeSize, signedRoot: toBase64(head.rootHash), verifiedPosition: at, at: iso(nowMs()) };
      throw new TreeMismatchError(head.treeSize, toBase64(head.rootHash), at);
    }
    return tree!;
  };

  /**
   * Reads [tree.size, head) until the budget is spent; returns the verified tree and whether the
   * budget ran out. Each batch's commit runs while the next batch is read; at most one at a time.
   */
  const readTowards = async (start: CollapsedMerkleTree, head: SignedTreeHead): Promise<{ tree: CollapsedMerkleTree; spent: boolean }> => {
    const commitEntries = input.commitEntries ?? COMMIT_ENTRIES;
    const commitIntervalMs = input.commitIntervalMs ?? COMMIT_INTERVAL_MS;
    let verified = start;
    let matcher = await input.matcher();
    let batch: Batch = { start: start.size, tree: start.clone(), units: [] };
    let lastCommit = input.clock();
    /** Units matched whose CAA lookups may still be under way (bounded: UNITS_AWAITING_CAA). */
    const awaitingCaa: Promise<unknown>[] = [];
    /** The commit of the previous batch, under way while this one is read. */
    let committing: Promise<CollapsedMerkleTree> | null = null;
    let commitUnderWay = false;
    const settle = async () => {
      const c = committing;
      committing = null;
      if (c) verified = await c;
    };
    try {
      for await (const entries of readInOrder(input.client, start.size, head.treeSize, head.treeSize, input.ahead)) {
        for (const e of entries) batch.tree.append(e.leafHash);
        // Names are matched now; the CAA lookups of the matches go on while the next units are read.
        const observed = matcher.observe(entries);
        observed.catch(() => undefined); // awaited below or by the commit
        awaitingCaa.push(observed);
        batch.units.push({ tree: batch.tree.clone(), observed, lastEntryTimestamp: entries[entries.length - 1].entry.timestamp });
        while (awaitingCaa.length > UNITS_AWAITING_CAA) await awaitingCaa.shift();
        status.position = batch.tree.size;
        input.onProgress?.(status);
        const t = input.clock();
        const spent = t >= deadline;
        const due = t - lastCommit >= commitIntervalMs && !commitUnderWay;
        if (spent || batch.tree.size === head.treeSize || batch.tree.size - batch.start >= commitEntries || due) {
          // In order: the previous batch is published (or refused) before this one is verified.
          await settle();
          commitUnderWay = true;
          committing = commit(batch, head);
          committing.then(
            () => (commitUnderWay = false),
            () => (commitUnderWay = false), // the failure itself is observed by settle()
          );
          lastCommit = input.clock();
          if (spent) {
            await settle();
            return { tree: verified, spent: true };
          }
          matcher = await input.matcher();
          // The next batch continues from this one's (still unproven) tree: dropped with it if it fails.
          batch = { start: batch.tree.size, tree: batch.tree.clone(), units: [] };
        }
        await input.pause();
      }
      await settle();
      return { tree: verified, spent: false };
    } catch (err) {
      // Reading or matching failed while a commit was under way: it completes first (its failure,
      // a tree mismatch, is the one that says where the log stopped).
      await settle();
      throw err;
    }
  };

  try {
    let head = input.finalHead ?? (await input.client.getTreeHead());
    let headAt = input.clock();
    noteHead(head);
    let tree: CollapsedMerkleTree;
    if (record.tree) {
      tree = CollapsedMerkleTree.fromJSON(record.tree);
    } else {
      tree = input.startPosition === "start" ? CollapsedMerkleTree.empty() : await input.client.treeAt(head);
      noteVerified(tree, head);
      await input.store.save(record);
    }
    let rootChecked = false;
    run: for (;;) {
      const move = nextMove({
        verified: tree.size,
        headSize: head.treeSize,
        rootChecked,
        finalHead: Boolean(input.finalHead),
        budgetSpent: input.clock() >= deadline,
        headAgeMs: input.clock() - headAt,
      });
      switch (move.do) {
        case "check_root":
          if (!(await input.client.provesPrefix(tree, head))) {
            status.lastMismatch = { treeSize: head.treeSize, signedRoot: toBase64(head.rootHash), verifiedPosition: tree.size, at: iso(nowMs()) };
            throw new TreeMismatchError(head.treeSize, toBase64(head.rootHash), tree.size);
          }
          rootChecked = true;
          continue;
        case "refetch_head": {
          const next = await input.client.getTreeHead();
          headAt = input.clock();
          if (next.treeSize > head.treeSize) noteHead(next);
          if (afterHeadRefetch(tree.size, next.treeSize) === "stop") break run;
          head = next;
          rootChecked = false;
          continue;
        }
        case "read": {
          const r = await readTowards(tree, head);
          tree = r.tree;
          rootChecked = false;
          if (r.spent) {
            more = tree.size < head.treeSize;
            break run;
          }
          continue;
        }
        case "stop":
          break run;
      }
    }
    Object.assign(status, succeeded(status, tree.size, nowMs()));
  } catch (err) {
    const pauseMs = err instanceof LogPausedError ? err.retryAfterMs : null;
    Object.assign(status, failed(status, classifyLogFailure(err, input.log), pauseMs, nowMs()));
    more = false;
  }
  status.runs += 1;
  status.lastRunEntries = status.entriesProcessed - verifiedBefore;
  status.lastRunMs = input.clock() - started;
  await input.store.save(record);
  return { status, more, resumeAfterMs: resumeAfterMs(more, status, nowMs()) };
}
