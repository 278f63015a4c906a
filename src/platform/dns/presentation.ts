/**
 * Canonical presentation of the watched record types, so that comparing two answers
 * compares what the records SAY: the record set is a sorted set of strings, owner and
 * target names are lowercase with a trailing dot, IPv6 addresses in RFC 5952 form, hex
 * digests upper case, TTLs left out. Reordering, case changes of names and TTL changes
 * therefore never look like a change; TXT and CAA values keep their case (it is data).
 *
 * Formats (RFC 1035 §5.1 master-file style):
 *   A       192.0.2.10                 AAAA    2001:db8::10
 *   CNAME   target.example.            NS      ns1.example.
 *   MX      10 mx1.example.            TXT     "v=spf1 -all"  ("a" "b" for several strings)
 *   CAA     0 issue "letsencrypt.org"  (tag lowercase, RFC 8659 §4.1)
 *   SOA     mname. rname. serial refresh retry expire minimum
 *   DS      keytag algorithm digesttype HEX
 *   DNSKEY  flags protocol algorithm base64
 *   TLSA    usage selector matching-type HEX  (RFC 6698 §2.2)
 */
import ipaddr from "ipaddr.js";
import type { DnsRecord } from "./message";

export const WATCHED_RECORD_TYPES = ["A", "AAAA", "CNAME", "MX", "NS", "TXT", "CAA", "SOA", "DS", "DNSKEY", "TLSA"] as const;
export type WatchedRecordType = (typeof WATCHED_RECORD_TYPES)[number];

export function isWatchedRecordType(t: string): t is WatchedRecordType {
  return (WATCHED_RECORD_TYPES as readonly string[]).includes(t);
}

/** Limits past which an answer is refused as hostile rather than stored (a lookup error). */
export const MAX_TXT_RECORD_BYTES = 4096;
export const MAX_RECORDS_PER_SET = 100;

export class PresentationError extends Error {
  override readonly name = "PresentationError";
}

export const canonicalName = (name: string): string => {
  const n = name.toLowerCase().replace(/\.+$/, "");
  return n === "" ? "." : `${n}.`;
};

/** RFC 5952 text form of an IPv6 address given in any valid spelling (an embedded IPv4 tail becomes hex). */
export function canonicalIpv6(text: string): string {
  if (!ipaddr.IPv6.isValid(text) || text.includes("%")) throw new PresentationError(`not an IPv6 address: ${text}`);
  return ipaddr.IPv6.parse(text).toRFC5952String();
}

/** A character-string in quotes: `"` and `\` escaped, bytes outside printable ASCII as \DDD. */
export function quoteCharacterString(bytes: Uint8Array): string {
  let out = '"';
  for (const b of bytes) {
    if (b === 0x22 || b === 0x5c) out += "\\" + String.fromCharCode(b);
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += "\\" + b.toString().padStart(3, "0");
  }
  return out + '"';
}

/** Inverse of quoteCharacterString for one or more quoted strings ("a" "b"). */
export function unquoteCharacterStrings(presentation: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\[0-9]{3}|\\.)*)"/g;
  for (const m of presentation.matchAll(re)) {
    out.push(m[1].replace(/\\([0-9]{3})|\\(.)/g, (_, d: string | undefined, c: string | undefined) => (d ? String.fromCharCode(Number(d)) : (c ?? ""))));
  }
  return out;
}

const toBytes = (v: unknown): Uint8Array => (v instanceof Uint8Array ? v : new TextEncoder().encode(String(v ?? "")));
const hexUpper = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("").toUpperCase();
function base64(b: Uint8Array): string {
  let bin = "";
  for (const x of b) bin += String.fromCharCode(x);
  return btoa(bin);
}

/** The presentation of one record's data (throws PresentationError for unusable data). */
export function presentRecord(type: WatchedRecordType, data: unknown): string {
  switch (type) {
    case "A": {
      const s = String(data);
      if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(s) || s.split(".").some((o) => Number(o) > 255)) throw new PresentationError(`not an IPv4 address: ${s}`);
      return s.split(".").map(Number).join(".");
    }
    case "AAAA":
      return canonicalIpv6(String(data));
    case "CNAME":
    case "NS":
      return canonicalName(String(data));
    case "MX": {
      const d = data as { preference?: number; exchange?: string };
      return `${d.preference ?? 0} ${canonicalName(String(d.exchange ?? "."))}`;
    }
    case "TXT": {
      const parts = (Array.isArray(data) ? data : [data]).map(toBytes);
      const size = parts.reduce((n, p) => n + p.length, 0);
      if (size > MAX_TXT_RECORD_BYTES) throw new PresentationError(`TXT record of ${size} bytes exceeds ${MAX_TXT_RECORD_BYTES}`);
      return parts.map(quoteCharacterString).join(" ");
    }
    case "CAA": {
      const d = data as { flags?: number; tag?: string; value?: string };
      return `${d.flags ?? 0} ${String(d.tag ?? "").toLowerCase()} ${quoteCharacterString(toBytes(d.value ?? ""))}`;
    }
    case "SOA": {
      const d = data as { mname: string; rname: string; serial: number; refresh: number; retry: number; expire: number; minimum: number };
      return `${canonicalName(d.mname)} ${canonicalName(d.rname)} ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
    }
    case "DS": {
      const d = data as { keyTag: number; algorithm: number; digestType: number; digest: Uint8Array };
      return `${d.keyTag} ${d.algorithm} ${d.digestType} ${hexUpper(toBytes(d.digest))}`;
    }
    case "DNSKEY": {
      const d = data as { flags: number; algorithm: number; key: Uint8Array };
      return `${d.flags} 3 ${d.algorithm} ${base64(toBytes(d.key))}`;
    }
    case "TLSA": {
      // dns-packet has no TLSA codec: the data is the raw RDATA (usage, selector, matching type, association data).
      const b = toBytes(data);
      if (b.length < 4) throw new PresentationError(`TLSA record of ${b.length} bytes is too short`);
      return `${b[0]} ${b[1]} ${b[2]} ${hexUpper(b.subarray(3))}`;
    }
  }
}

/**
 * The canonical record set of `type` in an answer: every record of that type (the owner
 * may be the end of a CNAME chain), presented, de-duplicated and sorted. Throws
 * PresentationError for data that cannot be presented or an oversize set.
 */
export function canonicalRecordSet(type: WatchedRecordType, answers: readonly DnsRecord[]): string[] {
  const values = new Set<string>();
  for (const r of answers) if (r.type === type) values.add(presentRecord(type, r.data));
  if (values.size > MAX_RECORDS_PER_SET) throw new PresentationError(`${values.size} ${type} records exceed ${MAX_RECORDS_PER_SET}`);
  return [...values].sort();
}

/** The TXT strings of a presented TXT value, glued as RFC 7208 §3.3 and RFC 7489 §6.6.3 read them. */
export function txtText(presentation: string): string {
  return unquoteCharacterStrings(presentation).join("");
}
