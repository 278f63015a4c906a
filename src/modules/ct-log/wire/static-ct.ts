/**
 * static-ct-api (c2sp.org/static-ct-api) tiles.
 *
 * A data tile holds up to 256 TileLeaf entries:
 *
 *   struct { TimestampedEntry timestamped_entry;
 *            select (entry_type) { case x509_entry: Empty; case precert_entry: ASN.1Cert pre_certificate; };
 *            Fingerprint certificate_chain<0..2^16-1>; } TileLeaf;     // Fingerprint = opaque[32]
 *
 * The Merkle leaf is rebuilt as MerkleTreeLeaf{v1, timestamped_entry}, so the leaf
 * hash is SHA-256(0x00 || 0x00 0x00 || timestamped_entry bytes). A level-0 hash
 * tile is the same 256 leaf hashes, 32 bytes each.
 *
 * Tile paths (c2sp.org/tlog-tiles): the index is written in groups of three
 * decimal digits, every group but the last prefixed with "x" (1234067 ->
 * x001/x234/067); a partial tile of width W < 256 appends ".p/W".
 */
import { CtWireError, TlsReader, sha256Sync } from "./bytes";
import { parseCtExtensions, readTimestampedEntry, type TimestampedEntry } from "./rfc6962";

export const TILE_WIDTH = 256;

/** The N in tile paths: "x001/x234/067" for 1234067. */
export function encodeTileIndex(index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) throw new CtWireError("tile path", `bad tile index ${index}`);
  let s = String(index);
  while (s.length % 3 !== 0) s = "0" + s;
  const groups: string[] = [];
  for (let i = 0; i < s.length; i += 3) groups.push(s.slice(i, i + 3));
  return groups.map((g, i) => (i < groups.length - 1 ? "x" + g : g)).join("/");
}

/** Inverse of encodeTileIndex; throws CtWireError on anything not produced by it. */
export function decodeTileIndex(path: string): number {
  const groups = path.split("/");
  let s = "";
  groups.forEach((g, i) => {
    const last = i === groups.length - 1;
    const m = (last ? /^(\d{3})$/ : /^x(\d{3})$/).exec(g);
    if (!m) throw new CtWireError("tile path", `bad tile index path "${path}"`);
    s += m[1];
  });
  return Number(s);
}

/** "tile/data/x001/234" or "tile/0/000.p/10"; width 256 (full) adds no suffix. */
export function tilePath(level: number | "data", index: number, width = TILE_WIDTH): string {
  if (!Number.isInteger(width) || width < 1 || width > TILE_WIDTH) throw new CtWireError("tile path", `bad tile width ${width}`);
  const suffix = width === TILE_WIDTH ? "" : `.p/${width}`;
  return `tile/${level}/${encodeTileIndex(index)}${suffix}`;
}

/** Parses "tile/<level>/<N>[.p/<W>]" back to its parts (used by the fixture log server). */
export function parseTilePath(path: string): { level: number | "data"; index: number; width: number } {
  const m = /^tile\/(data|\d+)\/((?:x\d{3}\/)*\d{3})(?:\.p\/(\d+))?$/.exec(path);
  if (!m) throw new CtWireError("tile path", `not a tile path "${path}"`);
  const width = m[3] === undefined ? TILE_WIDTH : Number(m[3]);
  // A partial tile is 1..255 wide; ".p/256" is not a valid name for a full tile.
  if (m[3] !== undefined && (width < 1 || width >= TILE_WIDTH)) throw new CtWireError("tile path", `bad width in "${path}"`);
  return { level: m[1] === "data" ? "data" : Number(m[1]), index: decodeTileIndex(m[2]), width };
}

/**
 * Which data tile (index, width) holds entry `entryIndex` in a tree of `treeSize`:
 * tiles below the last are full; the last one is partial if treeSize is not a
 * multiple of 256.
 */
export function dataTileFor(entryIndex: number, treeSize: number): { index: number; width: number } {
  if (entryIndex >= treeSize) throw new CtWireError("tile path", `entry ${entryIndex} is beyond tree size ${treeSize}`);
  const index = Math.floor(entryIndex / TILE_WIDTH);
  const width = Math.min(TILE_WIDTH, treeSize - index * TILE_WIDTH);
  return { index, width };
}

/** One decoded TileLeaf. */
export interface TileLeaf {
  entry: TimestampedEntry;
  /** The bytes of timestamped_entry as served, for hashing. */
  timestampedEntryBytes: Uint8Array;
  /** DER precertificate (precert_entry only). */
  preCertificate?: Uint8Array;
  /** SHA-256 fingerprints of the chain certificates, leaf-most issuer first. */
  chainFingerprints: Uint8Array[];
  /** Value of the static-ct-api leaf_index extension (type 0, uint40), if present. */
  leafIndex?: number;
}

/** Extension type of static-ct-api's leaf_index. */
export const LEAF_INDEX_EXTENSION = 0;

/** Reads the leaf_index extension from a CtExtensions vector, or undefined when absent. */
export function leafIndexFromExtensions(extensions: Uint8Array): number | undefined {
  for (const ext of parseCtExtensions(extensions)) {
    if (ext.type !== LEAF_INDEX_EXTENSION) continue;
    if (ext.data.length !== 5) throw new CtWireError("leaf_index", `extension is ${ext.data.length} bytes, want 5`);
    const r = new TlsReader(ext.data, "leaf_index");
    return r.uint(5);
  }
  return undefined;
}

function readTileLeaf(r: TlsReader): TileLeaf {
  const start = r.offset;
  const entry = readTimestampedEntry(r);
  const timestampedEntryBytes = r.bytes.subarray(start, r.offset);
  let preCertificate: Uint8Array | undefined;
  if (entry.entryType === "precert_entry") preCertificate = r.vector(3, "pre_certificate");
  const fps = r.vector(2, "certificate_chain");
  if (fps.length % 32 !== 0) throw new CtWireError(r.structure, `certificate_chain length ${fps.length} is not a multiple of 32`);
  const chainFingerprints: Uint8Array[] = [];
  for (let i = 0; i < fps.length; i += 32) chainFingerprints.push(fps.subarray(i, i + 32));
  return { entry, timestampedEntryBytes, preCertificate, chainFingerprints, leafIndex: leafIndexFromExtensions(entry.extensions) };
}

/**
 * Parses a data tile. `expectedCount` (the tile width from the path) is checked
 * when given: a full tile must hold exactly 256 entries, a partial one W.
 */
export function parseDataTile(tile: Uint8Array, expectedCount?: number): TileLeaf[] {
  const r = new TlsReader(tile, "data tile");
  const leaves: TileLeaf[] = [];
  while (!r.done) {
    if (leaves.length >= TILE_WIDTH) throw new CtWireError(r.structure, "more than 256 entries");
    leaves.push(readTileLeaf(r));
  }
  if (expectedCount !== undefined && leaves.length !== expectedCount) {
    throw new CtWireError(r.structure, `holds ${leaves.length} entries, want ${expectedCount}`);
  }
  return leaves;
}

/** Leaf hash of a tile leaf: SHA-256(0x00 || 0x00 0x00 || timestamped_entry). */
export function tileLeafHash(leaf: TileLeaf): Uint8Array {
  // MerkleTreeLeaf = version v1 (0) + leaf type timestamped_entry (0), after the 0x00 leaf prefix.
  return sha256Sync(TILE_LEAF_PREFIX, leaf.timestampedEntryBytes);
}

const TILE_LEAF_PREFIX = new Uint8Array([0, 0, 0]);

/** Splits a hash tile into its 32-byte hashes. */
export function parseHashTile(tile: Uint8Array, expectedCount?: number): Uint8Array[] {
  if (tile.length % 32 !== 0) throw new CtWireError("hash tile", `length ${tile.length} is not a multiple of 32`);
  const n = tile.length / 32;
  if (n === 0 || n > TILE_WIDTH) throw new CtWireError("hash tile", `holds ${n} hashes`);
  if (expectedCount !== undefined && n !== expectedCount) throw new CtWireError("hash tile", `holds ${n} hashes, want ${expectedCount}`);
  const out: Uint8Array[] = [];
  for (let i = 0; i < n; i++) out.push(tile.subarray(32 * i, 32 * i + 32));
  return out;
}

/** Path of an issuer certificate: "issuer/<lowercase hex SHA-256 of DER>". */
export function issuerPath(fingerprintHex: string): string {
  if (!/^[0-9a-f]{64}$/.test(fingerprintHex)) throw new CtWireError("issuer path", "fingerprint must be 64 lowercase hex digits");
  return `issuer/${fingerprintHex}`;
}

/** True when bytes start with the gzip magic (0x1f 0x8b); tiles may be served gzip'd without Content-Encoding. */
export function isGzip(b: Uint8Array): boolean {
  return b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;
}

/** Gunzips through the Web DecompressionStream (workerd and Node 20). */
export async function gunzip(b: Uint8Array): Promise<Uint8Array> {
  try {
    const stream = new Blob([b]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (err) {
    throw new CtWireError("gzip", `cannot decompress: ${(err as Error).message}`);
  }
}

/** Returns the body as-is, or gunzipped if it carries the gzip magic. */
export async function maybeGunzip(b: Uint8Array): Promise<Uint8Array> {
  return isGzip(b) ? gunzip(b) : b;
}
