/**
 * The RPC surface of the CtLogCursor Durable Object (one per CT log), declared here
 * so that `src/` depends on the contract, never on the Durable Object class.
 */
import type { CtLogDescriptor } from "./loglist";
import type { CollectionErrorClass } from "../../platform/collection";

export interface CursorOptions {
  /** Entries per get-entries request of RFC 6962 logs (CT_BATCH_SIZE); static-ct-api logs read whole tiles. */
  batchSize: number;
  /** Where a log never seen before starts (CT_START_POSITION). */
  startPosition: "end" | "start";
  dohResolverUrls: string[];
  /** Requests per second to this log; 0 = no limit (CT_REQUESTS_PER_SECOND, CT_LOG_POLITENESS). */
  requestsPerSecond: number;
  /** Requests to this log in flight at once (CT_CONCURRENCY, CT_LOG_POLITENESS). */
  concurrency: number;
  /** How long one invocation reads before it hands over (and re-schedules at once if a backlog remains) (CT_RUN_SECONDS). */
  runBudgetMs: number;
  /** Each log's runs start at a stable offset within this window after a poke (CT_POLL_SPREAD_SECONDS). */
  pollSpreadMs?: number;
}

export interface CursorStatus {
  logId: string;
  logName: string;
  /** Next entry to read: the verified position, or past it while a run reads (null before the first run). */
  position: number | null;
  /** Entries below this index are verified against a signed tree head and published. */
  verifiedPosition: number | null;
  /** Size of the newest signed tree head seen. */
  treeSize: number | null;
  /** Its timestamp, ISO 8601. */
  treeHeadAt: string | null;
  /** Timestamp of the tree head the verified position was proven against. */
  verifiedTreeHeadAt: string | null;
  /** Timestamp of the last verified entry, as the log signed it. */
  lastEntryAt: string | null;
  /** treeSize - verifiedPosition. */
  backlog: number;
  lastRunAt: string | null;
  /** The last verified read: a batch verified and published, or a run that ended verified up to the head. */
  lastSuccessAt: string | null;
  /** The failure of the last run, classified (ct-log/collection.ts): never the runtime's opaque text. */
  lastError: string | null;
  lastErrorClass: CollectionErrorClass | null;
  /** First failed run of the current run of failures; null after a success. */
  failingSince: string | null;
  lastMismatch: { treeSize: number; signedRoot: string; verifiedPosition: number; at: string } | null;
  consecutiveFailures: number;
  backoffUntil: string | null;
  /** Entries verified and published: each entry counts once across restarts. */
  entriesProcessed: number;
  matchesFound: number;
  /** Completed runs. */
  runs: number;
  /** Entries and wall time of the last run (throughput). */
  lastRunEntries: number;
  lastRunMs: number;
  /** A run is under way in this instance (not persisted). */
  inProgress: boolean;
}

export interface CtLogCursorRpc extends Rpc.DurableObjectBranded {
  /** Called by the Cron job every run: remembers the log and options, then reads what is due. */
  poke(log: CtLogDescriptor, options: CursorOptions, nowMs?: number): Promise<CursorStatus>;
  status(): Promise<CursorStatus>;
}

declare module "../../env" {
  interface Bindings {
    /** One CtLogCursor Durable Object per CT log (durable-objects/ct-log-cursor.ts). */
    CT_LOG_CURSOR: DurableObjectNamespace<CtLogCursorRpc>;
  }
}
