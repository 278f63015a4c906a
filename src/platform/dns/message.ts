/**
 * DNS messages on the wire (RFC 1035 §4, EDNS RFC 6891, Extended DNS Errors RFC 8914):
 * the query we send and the decoded answer. Pure: no I/O, runs in workerd and Node.
 *
 * Encoding and record decoding are @leichtgewicht/dns-packet. That library reads past
 * the end of a truncated buffer as zeros instead of failing, so every answer is first
 * walked by `checkMessageStructure` (header counts, name compression, RDLENGTH bounds):
 * a truncated or malformed message, a compression loop or a forward pointer is a
 * `DnsLookupError("malformed")`, never a half-decoded answer that looks like "no records".
 */
import * as dnsPacket from "@leichtgewicht/dns-packet";

export type DnsRecordType = dnsPacket.RecordType;

/** One resource record of an answer, as decoded by dns-packet (data shape depends on type). */
export interface DnsRecord {
  /** Owner name, lowercase, without trailing dot. */
  name: string;
  type: string;
  ttl: number;
  data: unknown;
}

/** An Extended DNS Error (RFC 8914) carried in the answer's OPT record. */
export interface ExtendedDnsError {
  code: number;
  /** The IANA name of the code ("DNSSEC Bogus"), or "Unknown (<code>)". */
  name: string;
  /** EXTRA-TEXT, possibly empty. */
  text: string;
}

export interface DnsResponse {
  /** "NOERROR", "NXDOMAIN", "SERVFAIL", ... */
  rcode: string;
  /** AD flag: the resolver validated the answer with DNSSEC. */
  authenticData: boolean;
  /** CD flag echoed by the resolver (checking disabled was asked). */
  checkingDisabled: boolean;
  answers: DnsRecord[];
  authorities: DnsRecord[];
  /** Extended DNS Errors of the answer (empty when none). */
  ede: ExtendedDnsError[];
  /** The resolver URL that produced the answer ("cache:" prefix when served from the cache). */
  resolver: string;
}

export interface DnsQueryOptions {
  /** Set the EDNS DO bit (ask for DNSSEC records). Default false. */
  dnssecOk?: boolean;
  /** Set CD (checking disabled): get data even when validation fails. Default false. */
  checkingDisabled?: boolean;
}

/**
 * Why a lookup gave no answer. `deadline` and `circuit-open` mean the question was never
 * put to a resolver (the caller's deadline passed; every resolver's circuit breaker is
 * open): not a fact about the name, see `isNotAsked`.
 */
export type DnsLookupErrorCode = "no-resolvers" | "timeout" | "network" | "http" | "malformed" | "deadline" | "circuit-open";

/** One resolver's failure to answer a question. */
export interface DnsResolverFailure {
  resolver: string;
  code: DnsLookupErrorCode;
  message: string;
  /** For `circuit-open`: the transport fault that opened the circuit (what is wrong with the resolver). */
  lastFault?: { code: DnsLookupErrorCode; message: string };
}

/** Every resolver failed at transport level (or none is configured), or an answer was unusable. */
export class DnsLookupError extends Error {
  override readonly name = "DnsLookupError";
  constructor(
    readonly code: DnsLookupErrorCode,
    message: string,
    /** Per-resolver failures, in the order tried. */
    readonly attempts: DnsResolverFailure[] = [],
  ) {
    super(message);
  }
}

/** The lookup failed without any resolver being asked (deadline, circuit open): it says nothing about the name. */
export function isNotAsked(err: unknown): boolean {
  return err instanceof DnsLookupError && (err.code === "deadline" || err.code === "circuit-open");
}

/** The largest DNS message there is (16-bit length over TCP); a bigger body is not a DNS answer. */
export const MAX_DNS_MESSAGE_BYTES = 65_535;

/** Extended DNS Error codes (IANA "Extended DNS Error Codes" registry, RFC 8914 §4 and later). */
const EDE_NAMES: Record<number, string> = {
  0: "Other Error",
  1: "Unsupported DNSKEY Algorithm",
  2: "Unsupported DS Digest Type",
  3: "Stale Answer",
  4: "Forged Answer",
  5: "DNSSEC Indeterminate",
  6: "DNSSEC Bogus",
  7: "Signature Expired",
  8: "Signature Not Yet Valid",
  9: "DNSKEY Missing",
  10: "RRSIGs Missing",
  11: "No Zone Key Bit Set",
  12: "NSEC Missing",
  13: "Cached Error",
  14: "Not Ready",
  15: "Blocked",
  16: "Censored",
  17: "Filtered",
  18: "Prohibited",
  19: "Stale NXDomain Answer",
  20: "Not Authoritative",
  21: "Not Supported",
  22: "No Reachable Authority",
  23: "Network Error",
  24: "Invalid Data",
  25: "Signature Expired before Valid",
  26: "Too Early",
  27: "Unsupported NSEC3 Iterations Value",
  28: "Unable to conform to policy",
  29: "Synthesized",
  30: "Invalid Query Type",
};

/** Code 15 in the OPT record: EDE (RFC 8914 §2): INFO-CODE (16 bits) then UTF-8 EXTRA-TEXT. */
const EDE_OPTION = 15;

export function decodeExtendedError(data: Uint8Array): ExtendedDnsError | null {
  if (data.length < 2) return null;
  const code = (data[0] << 8) | data[1];
  let text = "";
  try {
    text = new TextDecoder().decode(data.subarray(2)).replace(/\0+$/, "");
  } catch {
    text = "";
  }
  return { code, name: EDE_NAMES[code] ?? `Unknown (${code})`, text };
}

/** The wire-format query (ID 0 per RFC 8484 §4.1, RD set, EDNS0 with a 1232-byte payload). */
export function buildDnsQuery(name: string, type: DnsRecordType, options: DnsQueryOptions = {}): Uint8Array {
  let flags = dnsPacket.RECURSION_DESIRED;
  if (options.checkingDisabled) flags |= dnsPacket.CHECKING_DISABLED;
  return dnsPacket.encode({
    type: "query",
    id: 0,
    flags,
    questions: [{ type, name: stripDot(name), class: "IN" }],
    additionals: [
      { type: "OPT", name: ".", udpPayloadSize: 1232, flags: options.dnssecOk ? dnsPacket.DNSSEC_OK : 0, options: [] } as unknown as dnsPacket.Answer,
    ],
  });
}

/**
 * Walks the whole message without interpreting record data: returns why it is not a
 * well-formed DNS message, or null. Checks every length against the buffer, that name
 * compression only points backwards (RFC 1035 §4.1.4; which also rules out loops), that
 * names stay within 255 octets and labels within 63, and that the section counts match.
 */
export function checkMessageStructure(wire: Uint8Array): string | null {
  if (wire.length < 12) return `message of ${wire.length} bytes is shorter than a DNS header`;
  if (wire.length > MAX_DNS_MESSAGE_BYTES) return `message of ${wire.length} bytes exceeds the DNS maximum`;
  const u16 = (o: number) => (wire[o] << 8) | wire[o + 1];
  const counts = [u16(4), u16(6), u16(8), u16(10)];
  let offset = 12;

  /** Skips a (possibly compressed) name at `at`; returns the offset after it, or an error string. */
  const skipName = (at: number): number | string => {
    let pos = at;
    let end = -1;
    let length = 1;
    let jumps = 0;
    for (;;) {
      if (pos >= wire.length) return "name runs past the end of the message";
      const len = wire[pos];
      if (len === 0) {
        if (end < 0) end = pos + 1;
        return end;
      }
      const kind = len & 0xc0;
      if (kind === 0xc0) {
        if (pos + 1 >= wire.length) return "compression pointer runs past the end of the message";
        const target = ((len & 0x3f) << 8) | wire[pos + 1];
        if (target >= pos) return "compression pointer does not point backwards (loop)";
        if (++jumps > 127) return "too many compression pointers";
        if (end < 0) end = pos + 2;
        pos = target;
        continue;
      }
      if (kind !== 0) return "unknown label type";
      length += len + 1;
      if (length > 255) return "name longer than 255 octets";
      if (pos + 1 + len > wire.length) return "label runs past the end of the message";
      pos += 1 + len;
    }
  };

  for (let q = 0; q < counts[0]; q++) {
    const after = skipName(offset);
    if (typeof after === "string") return `question ${q + 1}: ${after}`;
    if (after + 4 > wire.length) return `question ${q + 1} is truncated`;
    offset = after + 4;
  }
  const sections = ["answer", "authority", "additional"];
  for (let s = 0; s < 3; s++) {
    for (let i = 0; i < counts[s + 1]; i++) {
      const after = skipName(offset);
      if (typeof after === "string") return `${sections[s]} record ${i + 1}: ${after}`;
      if (after + 10 > wire.length) return `${sections[s]} record ${i + 1} is truncated`;
      const rdlength = u16(after + 8);
      if (after + 10 + rdlength > wire.length) return `${sections[s]} record ${i + 1}: RDATA runs past the end of the message`;
      offset = after + 10 + rdlength;
    }
  }
  return null;
}

const RCODE_NAMES: Record<number, string> = { 0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED" };

/**
 * Decodes a wire-format response into DnsResponse (throws DnsLookupError "malformed").
 * When `expect` is given, the answer must be for that question (a resolver answering
 * another name or type is malformed, not "no records").
 */
export function decodeDnsResponse(wire: Uint8Array, resolver: string, expect?: { name: string; type: string }): DnsResponse {
  const structural = checkMessageStructure(wire);
  if (structural) throw new DnsLookupError("malformed", `malformed DNS message from ${resolver}: ${structural}`);
  let p: dnsPacket.Packet;
  try {
    p = dnsPacket.decode(wire);
  } catch (err) {
    throw new DnsLookupError("malformed", `undecodable DNS message from ${resolver}: ${(err as Error).message}`);
  }
  if (p.type !== "response") throw new DnsLookupError("malformed", `message from ${resolver} is not a response`);
  const flags = p.flags ?? 0;
  if (flags & dnsPacket.TRUNCATED_RESPONSE) throw new DnsLookupError("malformed", `answer from ${resolver} is truncated (TC set)`);
  if (expect) {
    const q = p.questions?.[0];
    if (!q || stripDot(q.name).toLowerCase() !== stripDot(expect.name).toLowerCase() || q.type !== expect.type) {
      throw new DnsLookupError("malformed", `answer from ${resolver} is for another question (${q ? `${q.name} ${q.type}` : "none"})`);
    }
  }
  const conv = (list: dnsPacket.Answer[] | undefined): DnsRecord[] =>
    (list ?? [])
      .filter((a) => a.type !== "OPT")
      .map((a) => ({ name: stripDot(a.name).toLowerCase(), type: a.type, ttl: (a as { ttl?: number }).ttl ?? 0, data: (a as { data?: unknown }).data }));
  const opt = (p.additionals ?? []).find((a) => a.type === "OPT") as { extendedRcode?: number; options?: { code: number; data?: Uint8Array }[] } | undefined;
  const ede: ExtendedDnsError[] = [];
  for (const o of opt?.options ?? []) {
    if (o.code !== EDE_OPTION || !o.data) continue;
    const e = decodeExtendedError(o.data);
    if (e) ede.push(e);
  }
  // The full RCODE is 12 bits: 4 in the header, 8 more in the OPT record (RFC 6891 §6.1.3).
  const rcodeNumber = (flags & 0xf) | ((opt?.extendedRcode ?? 0) << 4);
  return {
    rcode: RCODE_NAMES[rcodeNumber] ?? `RCODE${rcodeNumber}`,
    authenticData: (flags & dnsPacket.AUTHENTIC_DATA) !== 0,
    checkingDisabled: (flags & dnsPacket.CHECKING_DISABLED) !== 0,
    answers: conv(p.answers),
    authorities: conv(p.authorities),
    ede,
    resolver,
  };
}

export function stripDot(name: string): string {
  return name.endsWith(".") && name.length > 1 ? name.slice(0, -1) : name;
}
