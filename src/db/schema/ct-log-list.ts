/**
 * The CT log list as parsed and stored (`ct_log_list_cache.list`): the shape
 * modules/ct-log/loglist.ts produces from Google's log list v3 after checking its
 * signature, and the cursors read their logs from. Declared below the CT module so the
 * table does not import the module; loglist.ts re-exports it.
 * No table here, so it is not in index.ts (drizzle-kit reads that).
 */

export type LogStateName = "pending" | "qualified" | "usable" | "readonly" | "retired" | "rejected";

export interface FinalTreeHead {
  treeSize: number;
  /** base64, as in the list. */
  sha256RootHash: string;
}

export interface LogState {
  name: LogStateName;
  /** ISO 8601 time the log entered this state. */
  timestamp: string;
  /** Only for readonly logs: the tree head the log was frozen at. */
  finalTreeHead?: FinalTreeHead;
}

export type LogProtocol = "rfc6962" | "static-ct";

/** One log of the list, both kinds in one shape. */
export interface CtLogDescriptor {
  operator: string;
  description: string;
  /** base64 LogID = SHA-256 of the key. */
  logId: string;
  /** base64 DER SubjectPublicKeyInfo. */
  key: string;
  protocol: LogProtocol;
  /** Where to read entries: `url` for RFC 6962 logs, `monitoring_url` for tiled logs. Always ends in "/". */
  readUrl: string;
  /** `submission_url` of tiled logs (not used for reading). */
  submissionUrl?: string;
  mmd: number;
  /** Absent for some logs of all_logs_list.json. */
  state?: LogState;
  temporalInterval?: { startInclusive: string; endExclusive: string };
  /** "test" or "prod" in all_logs_list.json; absent in log_list.json. */
  logType?: string;
}

export interface LogList {
  version: string;
  logListTimestamp: string;
  isAllLogs: boolean;
  logs: CtLogDescriptor[];
}
