/**
 * One interface for reading a CT log, whichever protocol it speaks (RFC 6962
 * get-sth/get-entries, or static-ct-api checkpoint and tiles).
 */
import type { CollapsedMerkleTree } from "../merkle";
import type { TimestampedEntry } from "../wire/rfc6962";

/** A tree head whose signature has been verified with the log's key. */
export interface SignedTreeHead {
  treeSize: number;
  /** ms since epoch, as signed. */
  timestamp: number;
  rootHash: Uint8Array;
}

/** One log entry, as needed downstream (certificate parsing, filter matching). */
export interface LogEntry {
  /** Position in the log. */
  index: number;
  /** SHA-256(0x00 || MerkleTreeLeaf): the input of the Merkle tree. */
  leafHash: Uint8Array;
  entry: TimestampedEntry;
  /** DER precertificate (precert_entry only). */
  preCertificate?: Uint8Array;
  /**
   * Issuer chain, DER, leaf-most issuer first. RFC 6962: from extra_data.
   * static-ct-api: the issuers fetched by fingerprint (empty when the client is
   * configured not to resolve them).
   */
  chain: Uint8Array[];
  /** SHA-256 fingerprints of the chain (static-ct-api tiles carry these directly). */
  chainFingerprints?: Uint8Array[];
}

export interface GetEntriesOptions {
  /**
   * Tree size the range must fit in; defaults to the size of the last tree head
   * this client fetched. Entries at or beyond it are never requested.
   */
  treeSize?: number;
}

export interface LogClient {
  readonly protocol: "rfc6962" | "static-ct";
  /** Fetches the latest tree head and verifies its signature; throws TreeHeadVerificationError otherwise. */
  getTreeHead(): Promise<SignedTreeHead>;
  /**
   * Entries start..end inclusive, in order, all of them (short server answers are
   * followed by further requests). end must be below the tree size.
   */
  getEntries(start: number, end: number, opts?: GetEntriesOptions): Promise<LogEntry[]>;
  /** Where the request unit that starts at `start` ends (exclusive): a data tile, or a get-entries page. */
  unitEnd(start: number, treeSize: number): number;
  /**
   * The entries from `start` that ONE request returns: at least one, at most up to `end` (exclusive), in order.
   * An aborted `signal` drops the request if it has not left yet (a reader that stopped does not spend the log's rate).
   */
  fetchRange(start: number, end: number, treeSize: number, signal?: AbortSignal): Promise<LogEntry[]>;
  /**
   * Whether `tree`, built from the leaves this monitor downloaded, is a prefix of the
   * signed tree `head` (hash tiles or a consistency proof complete it to the head's
   * size; the result must hash to the signed root). False on a mismatch; throws when
   * the log cannot be read.
   */
  provesPrefix(tree: CollapsedMerkleTree, head: SignedTreeHead): Promise<boolean>;
  /** The verified collapsed tree at the head's size, without reading the entries (a log started at its end). */
  treeAt(head: SignedTreeHead): Promise<CollapsedMerkleTree>;
}

/** Base class of every log client failure. */
export class LogClientError extends Error {
  override name = "LogClientError";
}

/**
 * The log answered with an HTTP error after retries were exhausted (or a non-retryable
 * one), or, with status 0, could not be reached at all: `cause` is then the runtime's
 * failure (ct-log/collection.ts classifies it; its text may be opaque).
 */
export class LogHttpError extends LogClientError {
  override name = "LogHttpError";
  constructor(
    readonly url: string,
    readonly status: number,
    message?: string,
    override readonly cause?: unknown,
  ) {
    super(message ?? `HTTP ${status} from ${url}`);
  }
}

/**
 * The log asked for a pause longer than a run should wait (429/5xx with a long
 * Retry-After): nothing is asked of it until `retryAfterMs` have passed. Not a
 * failure of the log: the cursor stops the run and comes back when it was told to.
 */
export class LogPausedError extends LogClientError {
  override name = "LogPausedError";
  readonly collectionClass = "rate_limited";
  constructor(
    readonly url: string,
    readonly retryAfterMs: number,
  ) {
    super(`${url} asked for a pause of ${Math.ceil(retryAfterMs / 1000)} s (Retry-After)`);
  }
}

/** A request was dropped because its reader stopped (AbortSignal). */
export class RequestDroppedError extends LogClientError {
  override name = "RequestDroppedError";
}

/** A tree head or checkpoint did not verify with the log's key. */
export class TreeHeadVerificationError extends LogClientError {
  override name = "TreeHeadVerificationError";
  /** An answer that does not verify (platform/collection). */
  readonly collectionClass = "protocol";
}

/** A caller asked for entries the log cannot have (past the tree size) or the log served the wrong ones. */
export class EntryRangeError extends LogClientError {
  override name = "EntryRangeError";
  readonly collectionClass = "protocol";
}

/**
 * The tree size a getEntries call reads against, after checking the inclusive range
 * start..end lies inside it: a client never asks a log past its tree size.
 */
export function checkedTreeSize(start: number, end: number, treeSize: number | undefined): number {
  if (treeSize === undefined) throw new EntryRangeError("getEntries needs a tree size: call getTreeHead first or pass treeSize");
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new EntryRangeError(`bad range ${start}..${end}`);
  }
  if (end >= treeSize) throw new EntryRangeError(`entry ${end} is past tree size ${treeSize}`);
  return treeSize;
}

/** The log served data that does not decode or does not match (tampered, wrong index). */
export class LogDataError extends LogClientError {
  override name = "LogDataError";
  readonly collectionClass = "protocol";
}
