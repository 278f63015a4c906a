/**
 * static-ct-api read client (c2sp.org/static-ct-api): the checkpoint (signed
 * note, verified with the log key), data tiles (full or partial `.p/<width>`,
 * possibly gzip'd), and issuer certificates fetched by fingerprint and cached.
 */
import { CtWireError, bytesEqual, sha256, toHex } from "../wire/bytes";
import { parseCheckpoint, verifyCheckpoint } from "../wire/checkpoint";
import type { LogPublicKey } from "../wire/digitally-signed";
import { TILE_WIDTH, issuerPath, maybeGunzip, parseDataTile, parseHashTile, tileLeafHash, tilePath, type TileLeaf } from "../wire/static-ct";
import { CollapsedMerkleTree, hashChildren, rangeDecomposition } from "../merkle";
import { PoliteFetcher, type PolitenessOptions } from "./politeness";
import { staticCtTreeAt } from "./start-tree";
import { withTrailingSlash } from "./rfc6962-client";
import {
  EntryRangeError,
  checkedTreeSize,
  LogDataError,
  LogHttpError,
  TreeHeadVerificationError,
  type GetEntriesOptions,
  type LogClient,
  type LogEntry,
  type SignedTreeHead,
} from "./types";

/** Where issuer certificates are kept between calls (a Map by default; may be shared across clients). */
export interface IssuerCache {
  get(fingerprintHex: string): Uint8Array | undefined;
  set(fingerprintHex: string, der: Uint8Array): void;
}

export interface StaticCtClientOptions extends PolitenessOptions {
  /** The list's `monitoring_url`. */
  monitoringUrl: string;
  key: LogPublicKey;
  /**
   * Expected checkpoint origin. static-ct-api makes it the submission prefix
   * without scheme or trailing slash; see originFromSubmissionUrl. When absent,
   * the origin is not checked (the key id still binds the signature to it).
   */
  origin?: string;
  /** Fetch issuer certificates for LogEntry.chain (default true). */
  resolveIssuers?: boolean;
  issuerCache?: IssuerCache;
}

/** Hash tiles kept per client (8 KiB each). */
const HASH_TILE_CACHE = 64;

/** "https://log.example/2025h2/" -> "log.example/2025h2". */
export function originFromSubmissionUrl(submissionUrl: string): string {
  return submissionUrl.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/\/+$/, "");
}

export class StaticCtClient implements LogClient {
  readonly protocol = "static-ct" as const;
  readonly baseUrl: string;
  private readonly http: PoliteFetcher;
  private readonly key: LogPublicKey;
  private readonly origin?: string;
  private readonly resolveIssuers: boolean;
  readonly issuers: IssuerCache;
  lastTreeHead?: SignedTreeHead;
  private lastTile?: { index: number; width: number; leaves: TileLeaf[] };
  private readonly hashTiles = new Map<string, Promise<Uint8Array[]>>();

  constructor(opts: StaticCtClientOptions) {
    this.baseUrl = withTrailingSlash(opts.monitoringUrl);
    this.key = opts.key;
    this.origin = opts.origin;
    this.resolveIssuers = opts.resolveIssuers ?? true;
    this.issuers = opts.issuerCache ?? new Map<string, Uint8Array>();
    this.http = new PoliteFetcher(opts);
  }

  /** GET a path; null on 404 (the caller decides), LogHttpError on other failures. */
  private async getBytes(path: string, allow404 = false, signal?: AbortSignal): Promise<Uint8Array | null> {
    const url = this.baseUrl + path;
    const res = await this.http.fetch(url, signal ? { signal } : undefined);
    if (res.status === 404 && allow404) return null;
    if (!res.ok) throw new LogHttpError(url, res.status);
    try {
      return await maybeGunzip(new Uint8Array(await res.arrayBuffer()));
    } catch (err) {
      throw new LogDataError(`${url}: ${(err as Error).message}`);
    }
  }

  async getTreeHead(): Promise<SignedTreeHead> {
    const bytes = (await this.getBytes("checkpoint"))!;
    let note: string;
    try {
      note = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      throw new LogDataError("checkpoint is not UTF-8");
    }
    let cp;
    try {
      cp = await parseCheckpoint(note, this.key.logId);
    } catch (err) {
      if (err instanceof CtWireError) throw new TreeHeadVerificationError(`checkpoint: ${err.message}`);
      throw err;
    }
    if (this.origin !== undefined && cp.origin !== this.origin) {
      throw new TreeHeadVerificationError(`checkpoint origin "${cp.origin}" is not "${this.origin}"`);
    }
    let ok: boolean;
    try {
      ok = await verifyCheckpoint(cp, this.key);
    } catch (err) {
      throw new TreeHeadVerificationError(`checkpoint: ${(err as Error).message}`);
    }
    if (!ok) throw new TreeHeadVerificationError(`checkpoint signature does not verify (tree size ${cp.treeSize})`);
    const sth: SignedTreeHead = { treeSize: cp.treeSize, timestamp: cp.timestamp, rootHash: cp.rootHash };
    this.lastTreeHead = sth;
    return sth;
  }

  /**
   * Reads one data tile as it is in a tree of `treeSize`. A partial tile may have
   * been replaced by the full one (logs may delete partials), so a 404 on a
   * partial falls back to the full tile, cut to the width.
   */
  async getDataTile(index: number, treeSize: number, signal?: AbortSignal): Promise<TileLeaf[]> {
    const width = Math.min(TILE_WIDTH, treeSize - index * TILE_WIDTH);
    if (width <= 0) throw new EntryRangeError(`data tile ${index} is past tree size ${treeSize}`);
    // Batches smaller than a tile read the same tile several times in a row: keep the last one.
    if (this.lastTile?.index === index && this.lastTile.width === width) return this.lastTile.leaves;
    const leaves = await this.fetchDataTile(index, width, signal);
    this.lastTile = { index, width, leaves };
    return leaves;
  }

  private async fetchDataTile(index: number, width: number, signal?: AbortSignal): Promise<TileLeaf[]> {
    let bytes = await this.getBytes(tilePath("data", index, width), width < TILE_WIDTH, signal);
    let count = width;
    if (bytes === null) {
      bytes = (await this.getBytes(tilePath("data", index), false, signal))!;
      count = TILE_WIDTH;
    }
    try {
      return parseDataTile(bytes, count).slice(0, width);
    } catch (err) {
      throw new LogDataError(`data tile ${index}: ${(err as Error).message}`);
    }
  }

  /**
   * Reads one hash tile (tlog-tiles level >= 0) as it is in a tree of
   * `treeSize`: width = the hashes of that level complete in the tree, up to 256.
   * Full tiles never change, so they are kept (a few dozen: the ones near the right
   * edge of the tree, which every batch's proof reads again).
   */
  async getHashTile(level: number, index: number, treeSize: number): Promise<Uint8Array[]> {
    const complete = Math.floor(treeSize / TILE_WIDTH ** level);
    const width = Math.min(TILE_WIDTH, complete - index * TILE_WIDTH);
    if (width <= 0) throw new EntryRangeError(`hash tile ${level}/${index} is past tree size ${treeSize}`);
    const key = `${level}/${index}/${width}`;
    let tile = this.hashTiles.get(key);
    if (!tile) {
      tile = this.fetchHashTile(level, index, width);
      this.hashTiles.set(key, tile);
      tile.catch(() => this.hashTiles.delete(key));
      // Bounded: the oldest go first (a Map iterates in insertion order).
      for (const k of this.hashTiles.keys()) {
        if (this.hashTiles.size <= HASH_TILE_CACHE) break;
        this.hashTiles.delete(k);
      }
    }
    return tile;
  }

  private async fetchHashTile(level: number, index: number, width: number): Promise<Uint8Array[]> {
    let bytes = await this.getBytes(tilePath(level, index, width), width < TILE_WIDTH);
    if (bytes === null) bytes = (await this.getBytes(tilePath(level, index)))!;
    try {
      return parseHashTile(bytes.subarray(0, width * 32), width);
    } catch (err) {
      throw new LogDataError(`hash tile ${level}/${index}: ${(err as Error).message}`);
    }
  }

  /**
   * The log's hash of the perfect subtree at `level` (2^level leaves) and `index`, in
   * the tree of `treeSize`: a node of level h is in tile level floor(h/8), as the fold
   * of 2^(h mod 8) consecutive hashes of one tile.
   */
  async nodeAt(level: number, index: number, treeSize: number): Promise<Uint8Array> {
    const tileLevel = Math.floor(level / 8);
    const width = 2 ** (level % 8);
    const first = index * width;
    const hashes = await this.getHashTile(tileLevel, Math.floor(first / TILE_WIDTH), treeSize);
    const offset = first % TILE_WIDTH;
    const slice = hashes.slice(offset, offset + width);
    if (slice.length !== width) throw new LogDataError(`hash tile ${tileLevel}: too short for node ${level}/${index}`);
    return foldPerfect(slice);
  }

  /**
   * Whether `tree` (built from downloaded leaves) is a prefix of the signed tree: the
   * tree is completed to `head.treeSize` with the log's own nodes for the rest
   * (hash tiles), and the result must hash to the signed root. Our leaves enter the
   * root unchanged, so a tampered entry can never verify.
   */
  async provesPrefix(tree: CollapsedMerkleTree, head: SignedTreeHead): Promise<boolean> {
    if (tree.size > head.treeSize) return false;
    const full = tree.clone();
    for (const { level, index } of rangeDecomposition(tree.size, head.treeSize)) full.appendSubtree(level, await this.nodeAt(level, index, head.treeSize));
    return bytesEqual(full.root(), head.rootHash);
  }

  treeAt(head: SignedTreeHead): Promise<CollapsedMerkleTree> {
    return staticCtTreeAt(this, head);
  }

  /** An issuer certificate by SHA-256 fingerprint, from the cache or the log (checked against the fingerprint). */
  async getIssuer(fingerprint: Uint8Array): Promise<Uint8Array> {
    const hex = toHex(fingerprint);
    const cached = this.issuers.get(hex);
    if (cached) return cached;
    const der = (await this.getBytes(issuerPath(hex)))!;
    if (!bytesEqual(await sha256(der), fingerprint)) throw new LogDataError(`issuer ${hex}: served bytes have another fingerprint`);
    this.issuers.set(hex, der);
    return der;
  }

  /** One request reads one data tile: [start, end of its tile). */
  unitEnd(start: number, treeSize: number): number {
    return Math.min(treeSize, (Math.floor(start / TILE_WIDTH) + 1) * TILE_WIDTH);
  }

  /** The entries [start, min(end, end of start's tile)) with ONE tile request. */
  async fetchRange(start: number, end: number, treeSize: number, signal?: AbortSignal): Promise<LogEntry[]> {
    checkedTreeSize(start, end - 1, treeSize);
    const t = Math.floor(start / TILE_WIDTH);
    const leaves = await this.getDataTile(t, treeSize, signal);
    const to = Math.min(end, t * TILE_WIDTH + leaves.length);
    const out: LogEntry[] = [];
    for (let i = start; i < to; i++) {
      const leaf = leaves[i - t * TILE_WIDTH];
      if (leaf.leafIndex !== undefined && leaf.leafIndex !== i) throw new LogDataError(`entry ${i}: leaf_index extension says ${leaf.leafIndex}`);
      out.push({
        index: i,
        leafHash: tileLeafHash(leaf),
        entry: leaf.entry,
        preCertificate: leaf.preCertificate,
        chain: this.resolveIssuers ? await Promise.all(leaf.chainFingerprints.map((fp) => this.getIssuer(fp))) : [],
        chainFingerprints: leaf.chainFingerprints,
      });
    }
    return out;
  }

  async getEntries(start: number, end: number, opts: GetEntriesOptions = {}): Promise<LogEntry[]> {
    const treeSize = checkedTreeSize(start, end, opts.treeSize ?? this.lastTreeHead?.treeSize);
    const out: LogEntry[] = [];
    for (let next = start; next <= end; next = start + out.length) out.push(...(await this.fetchRange(next, end + 1, treeSize)));
    return out;
  }
}

/** Root of a perfect subtree from its 2^k leaves-level hashes. */
export function foldPerfect(hashes: Uint8Array[]): Uint8Array {
  let layer = hashes;
  while (layer.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < layer.length; i += 2) next.push(hashChildren(layer[i], layer[i + 1]));
    layer = next;
  }
  return layer[0];
}
