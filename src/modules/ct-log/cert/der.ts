/**
 * A minimal DER (ITU-T X.690) walker for the hot path of CT ingestion.
 *
 * Why hand-written: a full ASN.1 schema decoder allocates an object for every
 * node of every certificate; at 100k entries/s we only want to look at a dozen
 * fields, so we read tag/length headers in place and hand out offsets into the
 * original buffer. @peculiar/asn1-x509 stays the reference implementation the
 * parser is tested against (test/ct-log/cert/reference.test.ts).
 *
 * Every function bounds-checks against the enclosing element and throws
 * `DerError` on garbage; callers never see a RangeError or an out-of-bounds read.
 */

import { toHex } from "../wire/bytes";

/** Re-exported for the certificate parsers (one hex encoder in the module). */
export { toHex };

/** Typed fault for malformed or truncated DER. */
export class DerError extends Error {
  override readonly name = "DerError";
  constructor(
    message: string,
    /** Byte offset in the input where the problem was found. */
    readonly offset: number,
  ) {
    super(`${message} at byte ${offset}`);
  }
}

/** One TLV element; all offsets index the original buffer. */
export interface DerElement {
  /** The full identifier octet (class, constructed bit and tag number < 31). */
  tag: number;
  /** Offset of the identifier octet. */
  start: number;
  /** Offset of the first content octet. */
  valueStart: number;
  /** Offset just past the last content octet (= start of the next sibling). */
  end: number;
}

// Universal tags and context-specific tags we use, as full identifier octets.
export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  TELETEX_STRING: 0x14,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  UNIVERSAL_STRING: 0x1c,
  BMP_STRING: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/**
 * Reads the element starting at `offset`, which must end at or before `limit`.
 * Only definite lengths (DER) and low tag numbers (< 31) are accepted: X.509
 * never needs more, and refusing the rest keeps hostile input cheap to reject.
 */
export function readElement(buf: Uint8Array, offset: number, limit: number = buf.length): DerElement {
  if (offset + 2 > limit) throw new DerError("truncated element header", offset);
  const tag = buf[offset];
  if ((tag & 0x1f) === 0x1f) throw new DerError("high tag numbers are not supported", offset);
  let len = buf[offset + 1];
  let p = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0) throw new DerError("indefinite length is not DER", offset);
    if (n > 4) throw new DerError("length too large", offset);
    if (p + n > limit) throw new DerError("truncated length", offset);
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p++];
  }
  const end = p + len;
  if (end > limit) throw new DerError("element runs past its container", offset);
  return { tag, start: offset, valueStart: p, end };
}

/** Reads an element and checks its tag. */
export function expectElement(buf: Uint8Array, offset: number, limit: number, tag: number, what: string): DerElement {
  const el = readElement(buf, offset, limit);
  if (el.tag !== tag) {
    throw new DerError(`expected ${what} (tag 0x${tag.toString(16)}), found tag 0x${el.tag.toString(16)}`, offset);
  }
  return el;
}

/** The children of a constructed element, in order. */
export function children(buf: Uint8Array, parent: DerElement): DerElement[] {
  const out: DerElement[] = [];
  let p = parent.valueStart;
  while (p < parent.end) {
    const el = readElement(buf, p, parent.end);
    out.push(el);
    p = el.end;
  }
  return out;
}

/** Dotted-decimal form of an OBJECT IDENTIFIER's content octets. */
export function decodeOid(buf: Uint8Array, el: DerElement): string {
  if (el.end <= el.valueStart) throw new DerError("empty OID", el.start);
  let out = "";
  let value = 0;
  let first = true;
  for (let i = el.valueStart; i < el.end; i++) {
    const b = buf[i];
    value = value * 128 + (b & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) throw new DerError("OID arc too large", i);
    if (b & 0x80) continue;
    if (first) {
      // The first subidentifier packs the first two arcs (X.690 §8.19.4).
      const a = value < 40 ? 0 : value < 80 ? 1 : 2;
      out = `${a}.${value - a * 40}`;
      first = false;
    } else {
      out += "." + value;
    }
    value = 0;
  }
  if (buf[el.end - 1] & 0x80) throw new DerError("truncated OID", el.start);
  return out;
}

/** True when the element's content equals the given encoded OID content octets. */
export function oidEquals(buf: Uint8Array, el: DerElement, oidBytes: Uint8Array): boolean {
  if (el.end - el.valueStart !== oidBytes.length) return false;
  for (let i = 0; i < oidBytes.length; i++) if (buf[el.valueStart + i] !== oidBytes[i]) return false;
  return true;
}


/** Latin-1 decoding of a byte range: one char per byte, never fails. */
export function latin1(buf: Uint8Array, start: number, end: number): string {
  // String.fromCharCode on a small subarray is the fastest exact decoder for short ASCII names.
  if (end - start < 4096) return String.fromCharCode.apply(null, buf.subarray(start, end) as unknown as number[]);
  let s = "";
  for (let i = start; i < end; i++) s += String.fromCharCode(buf[i]);
  return s;
}

const utf8Fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** UTF-8 decoding; invalid UTF-8 falls back to Latin-1 so the bytes stay visible "as reported". */
export function utf8OrLatin1(buf: Uint8Array, start: number, end: number): string {
  let ascii = true;
  for (let i = start; i < end; i++) {
    if (buf[i] > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return latin1(buf, start, end);
  try {
    return utf8Fatal.decode(buf.subarray(start, end));
  } catch {
    return latin1(buf, start, end);
  }
}

/** Encodes a DER length header (identifier octet + length octets). */
export function encodeHeader(tag: number, length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(tag, length);
  const bytes: number[] = [];
  for (let l = length; l > 0; l = Math.floor(l / 256)) bytes.unshift(l & 0xff);
  return Uint8Array.of(tag, 0x80 | bytes.length, ...bytes);
}

/** Encoded content octets of a dotted OID (for fast comparisons). */
export function encodeOid(dotted: string): Uint8Array {
  const arcs = dotted.split(".").map(Number);
  const out: number[] = [];
  const push = (v: number) => {
    const tmp: number[] = [v & 0x7f];
    for (v = Math.floor(v / 128); v > 0; v = Math.floor(v / 128)) tmp.unshift((v & 0x7f) | 0x80);
    out.push(...tmp);
  };
  push(arcs[0] * 40 + arcs[1]);
  for (let i = 2; i < arcs.length; i++) push(arcs[i]);
  return Uint8Array.from(out);
}
