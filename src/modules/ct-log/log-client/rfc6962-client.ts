/**
 * RFC 6962 §4 read client: get-sth (signature verified with the log key),
 * get-entries (inclusive ranges; servers may return fewer entries than asked, so
 * we continue from what came back, and never ask past the tree size) and
 * get-sth-consistency (to prove what was read is a prefix of a signed tree).
 */
import { CollapsedMerkleTree, verifyConsistency } from "../merkle";
import { CtWireError, bytesEqual, fromBase64 } from "../wire/bytes";
import { parseDigitallySigned, verifyTreeHeadSignature, type LogPublicKey } from "../wire/digitally-signed";
import { merkleLeafHash, parseGetEntriesResponse } from "../wire/rfc6962";
import { PoliteFetcher, type PolitenessOptions } from "./politeness";
import { rfc6962TreeAt } from "./start-tree";
import {
  checkedTreeSize,
  LogDataError,
  LogHttpError,
  TreeHeadVerificationError,
  type GetEntriesOptions,
  type LogClient,
  type LogEntry,
  type SignedTreeHead,
} from "./types";

export interface Rfc6962ClientOptions extends PolitenessOptions {
  /** Log base URL, e.g. "https://ct.googleapis.com/logs/us1/argon2025h2/" (the list's `url`). */
  baseUrl: string;
  key: LogPublicKey;
  /** Entries asked per get-entries request (default 256). */
  batchSize?: number;
}

export function withTrailingSlash(u: string): string {
  return u.endsWith("/") ? u : u + "/";
}

/** Parses and verifies a get-sth JSON body. */
export async function verifyGetSthResponse(body: unknown, key: LogPublicKey): Promise<SignedTreeHead> {
  const b = body as Record<string, unknown> | null;
  if (!b || typeof b.tree_size !== "number" || typeof b.timestamp !== "number" || typeof b.sha256_root_hash !== "string" || typeof b.tree_head_signature !== "string") {
    throw new LogDataError("get-sth: body lacks tree_size/timestamp/sha256_root_hash/tree_head_signature");
  }
  if (!Number.isSafeInteger(b.tree_size) || b.tree_size < 0 || !Number.isSafeInteger(b.timestamp) || b.timestamp < 0) {
    throw new LogDataError("get-sth: tree_size/timestamp out of range");
  }
  let rootHash: Uint8Array;
  let ds;
  try {
    rootHash = fromBase64(b.sha256_root_hash, "sha256_root_hash");
    ds = parseDigitallySigned(fromBase64(b.tree_head_signature, "tree_head_signature"));
  } catch (err) {
    throw new LogDataError(`get-sth: ${(err as Error).message}`);
  }
  if (rootHash.length !== 32) throw new LogDataError("get-sth: root hash is not 32 bytes");
  const sth: SignedTreeHead = { treeSize: b.tree_size, timestamp: b.timestamp, rootHash };
  let ok: boolean;
  try {
    ok = await verifyTreeHeadSignature(key, sth, ds);
  } catch (err) {
    throw new TreeHeadVerificationError(`get-sth: ${(err as Error).message}`);
  }
  if (!ok) throw new TreeHeadVerificationError(`get-sth: signature does not verify (tree size ${sth.treeSize})`);
  return sth;
}

export class Rfc6962Client implements LogClient {
  readonly protocol = "rfc6962" as const;
  readonly baseUrl: string;
  readonly batchSize: number;
  /** Entries per request: batchSize until the server answers shorter. */
  private pageSize: number;
  private readonly http: PoliteFetcher;
  private readonly key: LogPublicKey;
  /** Last verified tree head, bounding getEntries. */
  lastTreeHead?: SignedTreeHead;

  constructor(opts: Rfc6962ClientOptions) {
    this.baseUrl = withTrailingSlash(opts.baseUrl);
    this.key = opts.key;
    this.batchSize = Math.max(1, Math.floor(opts.batchSize ?? 256));
    this.pageSize = this.batchSize;
    this.http = new PoliteFetcher(opts);
  }

  private async getJson(path: string, signal?: AbortSignal): Promise<unknown> {
    const url = this.baseUrl + path;
    const res = await this.http.fetch(url, { headers: { accept: "application/json" }, signal });
    if (!res.ok) throw new LogHttpError(url, res.status);
    try {
      return await res.json();
    } catch {
      throw new LogDataError(`${url}: body is not JSON`);
    }
  }

  async getTreeHead(): Promise<SignedTreeHead> {
    const sth = await verifyGetSthResponse(await this.getJson("ct/v1/get-sth"), this.key);
    this.lastTreeHead = sth;
    return sth;
  }

  /**
   * get-proof-by-index (RFC 6962 §4.5 sibling, served by Trillian-based logs):
   * the audit path of one leaf in the tree of `treeSize`, bottom-up.
   */
  async getProofByIndex(leafIndex: number, treeSize: number): Promise<Uint8Array[]> {
    const body = (await this.getJson(`ct/v1/get-proof-by-index?leaf_index=${leafIndex}&tree_size=${treeSize}`)) as { audit_path?: unknown } | null;
    if (!body || !Array.isArray(body.audit_path) || body.audit_path.some((h) => typeof h !== "string")) {
      throw new LogDataError("get-proof-by-index: body lacks audit_path[]");
    }
    try {
      const path = (body.audit_path as string[]).map((h) => fromBase64(h, "audit_path"));
      if (path.some((h) => h.length !== 32)) throw new LogDataError("get-proof-by-index: audit path hash is not 32 bytes");
      return path;
    } catch (err) {
      if (err instanceof CtWireError) throw new LogDataError(`get-proof-by-index: ${err.message}`);
      throw err;
    }
  }

  /**
   * get-sth-consistency (RFC 6962 §4.4): the proof that the tree of size `first` is a
   * prefix of the tree of size `second`.
   */
  async getConsistencyProof(first: number, second: number): Promise<Uint8Array[]> {
    const body = (await this.getJson(`ct/v1/get-sth-consistency?first=${first}&second=${second}`)) as { consistency?: unknown } | null;
    if (!body || !Array.isArray(body.consistency) || body.consistency.some((h) => typeof h !== "string")) {
      throw new LogDataError("get-sth-consistency: body lacks consistency[]");
    }
    try {
      const proof = (body.consistency as string[]).map((h) => fromBase64(h, "consistency"));
      if (proof.some((h) => h.length !== 32)) throw new LogDataError("get-sth-consistency: proof hash is not 32 bytes");
      return proof;
    } catch (err) {
      if (err instanceof CtWireError) throw new LogDataError(`get-sth-consistency: ${err.message}`);
      throw err;
    }
  }

  /**
   * Whether `tree` (built from downloaded leaves) is a prefix of the signed tree: a
   * consistency proof from the tree's size to the head's, checked against OUR root
   * for the first tree and the signed root for the second.
   */
  async provesPrefix(tree: CollapsedMerkleTree, head: SignedTreeHead): Promise<boolean> {
    if (tree.size > head.treeSize) return false;
    if (tree.size === head.treeSize) return bytesEqual(tree.root(), head.rootHash);
    if (tree.size === 0) return true;
    const proof = await this.getConsistencyProof(tree.size, head.treeSize);
    return verifyConsistency(tree.size, head.treeSize, tree.root(), head.rootHash, proof);
  }

  treeAt(head: SignedTreeHead): Promise<CollapsedMerkleTree> {
    return rfc6962TreeAt(this, head);
  }

  /** One request reads up to the page size the server answers (learnt from short answers), at most batchSize. */
  unitEnd(start: number, treeSize: number): number {
    return Math.min(treeSize, start + this.pageSize);
  }

  /**
   * The entries [start, start + k) for the k >= 1 the log returns to ONE get-entries
   * request for [start, end). A short answer (the server's page size) lowers the size
   * of later requests to it, so a range is not asked twice.
   */
  async fetchRange(start: number, end: number, treeSize: number, signal?: AbortSignal): Promise<LogEntry[]> {
    checkedTreeSize(start, end - 1, treeSize);
    const last = Math.min(end, start + this.batchSize) - 1;
    const body = await this.getJson(`ct/v1/get-entries?start=${start}&end=${last}`, signal);
    let decoded;
    try {
      decoded = parseGetEntriesResponse(body);
    } catch (err) {
      if (err instanceof CtWireError) throw new LogDataError(`get-entries ${start}..${last}: ${err.message}`);
      throw err;
    }
    // A server may answer short; it must not answer empty (that would loop forever) nor long.
    if (decoded.length === 0) throw new LogDataError(`get-entries ${start}..${last}: no entries returned`);
    const take = decoded.length > last - start + 1 ? decoded.slice(0, last - start + 1) : decoded;
    if (take.length < last - start + 1) this.pageSize = Math.max(1, Math.min(this.pageSize, take.length));
    return take.map((d, i) => ({
      index: start + i,
      leafHash: merkleLeafHash(d.leafInput),
      entry: d.entry,
      preCertificate: d.extra.entryType === "precert_entry" ? d.extra.preCertificate : undefined,
      chain: d.extra.chain,
    }));
  }

  async getEntries(start: number, end: number, opts: GetEntriesOptions = {}): Promise<LogEntry[]> {
    const treeSize = checkedTreeSize(start, end, opts.treeSize ?? this.lastTreeHead?.treeSize);
    const out: LogEntry[] = [];
    for (let next = start; next <= end; next = start + out.length) out.push(...(await this.fetchRange(next, end + 1, treeSize)));
    return out;
  }
}
