/**
 * Byte helpers shared by the CT wire formats: a bounds-checked reader for the TLS
 * presentation language (RFC 8446 §3, used by RFC 6962 and static-ct-api), a
 * writer for the structures we sign or hash, and base64/hex conversions.
 *
 * Every read past the end throws CtWireError, never a RangeError or a silent
 * `undefined`, so a truncated tile or a garbage get-entries body becomes a typed
 * fault the caller can report.
 */
import { createHash } from "node:crypto";

/** A CT wire format could not be decoded (truncated, wrong tag, bad length...). */
export class CtWireError extends Error {
  override readonly name = "CtWireError";
  /** Data that does not decode (platform/collection). */
  readonly collectionClass = "protocol";
  constructor(
    /** Which structure was being read, e.g. "MerkleTreeLeaf". */
    readonly structure: string,
    message: string,
  ) {
    super(`${structure}: ${message}`);
  }
}

/** Sequential reader over a byte array; offsets are checked on every read. */
export class TlsReader {
  private pos = 0;
  constructor(
    readonly bytes: Uint8Array,
    readonly structure: string,
  ) {}

  get offset(): number {
    return this.pos;
  }
  get remaining(): number {
    return this.bytes.length - this.pos;
  }
  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  private need(n: number, what: string): void {
    if (n > this.remaining) {
      throw new CtWireError(this.structure, `truncated reading ${what} at byte ${this.pos}: need ${n}, have ${this.remaining}`);
    }
  }

  /** Unsigned big-endian integer of 1..6 bytes (uint40 is used by static-ct leaf_index). */
  uint(n: 1 | 2 | 3 | 4 | 5 | 6, what = `uint${n * 8}`): number {
    this.need(n, what);
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + this.bytes[this.pos + i];
    this.pos += n;
    return v;
  }
  u8(what?: string): number {
    return this.uint(1, what);
  }
  u16(what?: string): number {
    return this.uint(2, what);
  }
  u24(what?: string): number {
    return this.uint(3, what);
  }
  /**
   * uint64 as a JS number. CT timestamps (ms since epoch) and tree sizes are far
   * below 2^53; anything larger is rejected rather than silently rounded.
   */
  u64(what = "uint64"): number {
    this.need(8, what);
    const hi = this.uint(4, what);
    const lo = this.uint(4, what);
    const v = hi * 2 ** 32 + lo;
    if (!Number.isSafeInteger(v)) throw new CtWireError(this.structure, `${what} ${hi}:${lo} exceeds 2^53`);
    return v;
  }
  /** A fixed-length field. The result is a view (no copy). */
  fixed(n: number, what = "bytes"): Uint8Array {
    this.need(n, what);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  /** `opaque x<0..2^(8*lenBytes)-1>`: a length prefix then that many bytes. */
  vector(lenBytes: 1 | 2 | 3, what = "vector"): Uint8Array {
    const len = this.uint(lenBytes, `${what} length`);
    return this.fixed(len, what);
  }
  /** Throws unless every byte was consumed; trailing garbage is a format error too. */
  end(): void {
    if (this.remaining !== 0) throw new CtWireError(this.structure, `${this.remaining} trailing bytes`);
  }
}

/** Growable writer for the few structures we build (TreeHeadSignature, leaves in fixtures). */
export class TlsWriter {
  private parts: Uint8Array[] = [];
  private length = 0;

  bytes(b: Uint8Array): this {
    this.parts.push(b);
    this.length += b.length;
    return this;
  }
  uint(n: 1 | 2 | 3 | 4 | 5 | 6 | 8, value: number): this {
    if (!Number.isSafeInteger(value) || value < 0 || (n < 8 && value >= 2 ** (8 * n))) {
      throw new CtWireError("TlsWriter", `value ${value} does not fit in uint${n * 8}`);
    }
    const out = new Uint8Array(n);
    let v = value;
    for (let i = n - 1; i >= 0; i--) {
      out[i] = v % 256;
      v = Math.floor(v / 256);
    }
    return this.bytes(out);
  }
  vector(lenBytes: 1 | 2 | 3, b: Uint8Array): this {
    return this.uint(lenBytes, b.length).bytes(b);
  }
  finish(): Uint8Array {
    return concatBytes(...this.parts);
  }
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const HEX: string[] = [];
for (let i = 0; i < 256; i++) HEX.push(i.toString(16).padStart(2, "0"));

/** Lowercase hex of a byte range. */
export function toHex(buf: Uint8Array, start = 0, end = buf.length): string {
  let s = "";
  for (let i = start; i < end; i++) s += HEX[buf[i]];
  return s;
}
export function fromHex(s: string): Uint8Array {
  if (s.length % 2 !== 0 || /[^0-9a-fA-F]/.test(s)) throw new CtWireError("hex", "not a hex string");
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Standard base64 (with padding), the encoding used by get-sth, get-entries and notes. */
export function toBase64(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}
export function fromBase64(s: string, structure = "base64"): Uint8Array {
  let bin: string;
  try {
    bin = atob(s);
  } catch {
    throw new CtWireError(structure, "invalid base64");
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * SHA-256 of the concatenated parts (leaf and node hashes of every log entry).
 * node:crypto's createHash is synchronous and available in workerd (nodejs_compat)
 * and Node 20; it is an order of magnitude cheaper per call than crypto.subtle.digest,
 * which hops to a thread pool under Node (~30-70 us per leaf in bench/ct-ingest.ts).
 * Synchronous, so the per-entry Merkle work costs no promise round-trips.
 */
export function sha256Sync(...parts: Uint8Array[]): Uint8Array {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

/** `sha256Sync` for callers that want a promise (signature checks, fixtures). */
export async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  return sha256Sync(...parts);
}

/** PEM (any label) to DER bytes. */
export function pemToDer(pem: string, structure = "PEM"): Uint8Array {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/.exec(pem);
  if (!m) throw new CtWireError(structure, "no PEM block found");
  return fromBase64(m[2].replace(/\s+/g, ""), structure);
}
