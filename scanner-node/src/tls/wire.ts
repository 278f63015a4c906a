// TLS wire format, byte level: ClientHello construction and parsing of what a server sends in
// cleartext (records, ServerHello, HelloRetryRequest, alerts, and for TLS <= 1.2 the
// Certificate and ServerKeyExchange). Pure functions over Buffers; every malformed input
// raises TlsParseError, never anything else.

import { randomBytes as nodeRandomBytes } from "node:crypto";

export class TlsParseError extends Error {
  override name = "TlsParseError";
}

export const VERSION = { SSLv3: 0x0300, "TLSv1.0": 0x0301, "TLSv1.1": 0x0302, "TLSv1.2": 0x0303, "TLSv1.3": 0x0304 } as const;
export type ProtocolName = keyof typeof VERSION;
export const PROTOCOLS: readonly ProtocolName[] = ["SSLv3", "TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"];
export function protocolName(v: number): ProtocolName | undefined {
  return PROTOCOLS.find((p) => VERSION[p] === v);
}

export const CONTENT = { changeCipherSpec: 20, alert: 21, handshake: 22, applicationData: 23 } as const;
export const HS = { clientHello: 1, serverHello: 2, newSessionTicket: 4, encryptedExtensions: 8, certificate: 11,
  serverKeyExchange: 12, certificateRequest: 13, serverHelloDone: 14, certificateVerify: 15, finished: 20, certificateStatus: 22 } as const;
export const EXT = { serverName: 0, statusRequest: 5, supportedGroups: 10, ecPointFormats: 11, signatureAlgorithms: 13,
  renegotiationInfo: 0xff01, supportedVersions: 43, pskKeyExchangeModes: 45, keyShare: 51, extendedMasterSecret: 23 } as const;

/** RFC 8446 §4.1.3: a ServerHello with this random is a HelloRetryRequest. */
export const HRR_RANDOM = Buffer.from("CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C", "hex");

/** Maximum record payload we accept: 2^14 plaintext + 2048 expansion (RFC 5246 §6.2.3). */
export const MAX_RECORD = 16384 + 2048;

export const ALERTS: Record<number, string> = {
  0: "close_notify", 10: "unexpected_message", 20: "bad_record_mac", 22: "record_overflow", 40: "handshake_failure",
  42: "bad_certificate", 43: "unsupported_certificate", 47: "illegal_parameter", 48: "unknown_ca", 50: "decode_error",
  51: "decrypt_error", 70: "protocol_version", 71: "insufficient_security", 80: "internal_error", 86: "inappropriate_fallback",
  90: "user_canceled", 109: "missing_extension", 110: "unsupported_extension", 112: "unrecognized_name", 120: "no_application_protocol",
};

// Signature schemes offered in TLS 1.2/1.3 hellos: everything a server might need to pick a certificate.
const SIGNATURE_SCHEMES = [0x0403, 0x0503, 0x0603, 0x0807, 0x0808, 0x0804, 0x0805, 0x0806, 0x0809, 0x080a, 0x080b,
  0x0401, 0x0501, 0x0601, 0x0303, 0x0301, 0x0302, 0x0402, 0x0502, 0x0602, 0x0203, 0x0201, 0x0202, 0x0101, 0x0102];

const u8 = (n: number) => Buffer.from([n & 0xff]);
const u16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const u24 = (n: number) => Buffer.from([(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);
const vec8 = (b: Buffer) => Buffer.concat([u8(b.length), b]);
const vec16 = (b: Buffer) => Buffer.concat([u16(b.length), b]);
/** A list of 16-bit values in one allocation (a hello lists hundreds of suites; one Buffer each was measurable). */
const list16 = (xs: readonly number[]) => {
  const b = Buffer.allocUnsafe(xs.length * 2);
  for (let i = 0; i < xs.length; i++) {
    b[2 * i] = (xs[i] >> 8) & 0xff;
    b[2 * i + 1] = xs[i] & 0xff;
  }
  return b;
};
const ext = (type: number, body: Buffer) => Buffer.concat([u16(type), vec16(body)]);

/** The same in every TLS >= 1.2 hello: built once (hellos are built by the hundred per scan). */
let SIGNATURE_ALGORITHMS_EXT: Buffer | undefined;

export interface KeyShareEntry { group: number; key: Buffer }

export interface ClientHelloSpec {
  /** Highest version offered. TLSv1.3 sends legacy_version 0x0303 plus supported_versions. */
  version: ProtocolName;
  cipherSuites: readonly number[];
  /** Hostname for SNI; omitted when empty or an IP literal (RFC 6066 forbids IPs). */
  serverName?: string;
  /** supported_groups; also gives ECDHE a curve in TLS <= 1.2. */
  groups?: readonly number[];
  /** TLS 1.3 key_share entries; an empty list asks the server for a HelloRetryRequest. */
  keyShares?: readonly KeyShareEntry[];
  /** Versions listed in supported_versions (TLS 1.3 hellos); default [0x0304]. */
  supportedVersions?: readonly number[];
  random?: Buffer;
  sessionId?: Buffer;
}

function isIpLiteral(s: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(s) || s.includes(":");
}

/** A complete ClientHello record (record header + handshake header + body). */
export function buildClientHello(spec: ClientHelloSpec): Buffer {
  const v = VERSION[spec.version];
  const tls13 = v === VERSION["TLSv1.3"];
  const legacyVersion = tls13 ? VERSION["TLSv1.2"] : v;
  const random = spec.random ?? randomBytes(32);
  const sessionId = spec.sessionId ?? (v >= VERSION["TLSv1.0"] ? randomBytes(32) : Buffer.alloc(0));
  const exts: Buffer[] = [];
  if (v >= VERSION["TLSv1.0"]) {
    if (spec.serverName && !isIpLiteral(spec.serverName)) {
      const name = Buffer.from(spec.serverName, "ascii");
      exts.push(ext(EXT.serverName, vec16(Buffer.concat([u8(0), vec16(name)]))));
    }
    if (spec.groups?.length) exts.push(ext(EXT.supportedGroups, vec16(list16(spec.groups))));
    exts.push(ext(EXT.ecPointFormats, vec8(Buffer.from([0, 1, 2]))));
    if (v >= VERSION["TLSv1.2"]) exts.push((SIGNATURE_ALGORITHMS_EXT ??= ext(EXT.signatureAlgorithms, vec16(list16(SIGNATURE_SCHEMES)))));
    exts.push(ext(EXT.renegotiationInfo, Buffer.from([0])));
    exts.push(ext(EXT.extendedMasterSecret, Buffer.alloc(0)));
    if (tls13) {
      exts.push(ext(EXT.supportedVersions, vec8(list16(spec.supportedVersions ?? [VERSION["TLSv1.3"]]))));
      exts.push(ext(EXT.pskKeyExchangeModes, vec8(Buffer.from([1]))));
      const shares = (spec.keyShares ?? []).map((k) => Buffer.concat([u16(k.group), vec16(k.key)]));
      exts.push(ext(EXT.keyShare, vec16(Buffer.concat(shares))));
    }
  }
  const body = Buffer.concat([
    u16(legacyVersion), random, vec8(sessionId), vec16(list16(spec.cipherSuites)), vec8(Buffer.from([0])),
    ...(exts.length ? [vec16(Buffer.concat(exts))] : []),
  ]);
  const hs = Buffer.concat([u8(HS.clientHello), u24(body.length), body]);
  // Record version 0x0301 for TLS >= 1.0 hellos: what browsers send, and tolerant servers expect.
  return Buffer.concat([u8(CONTENT.handshake), u16(v === VERSION.SSLv3 ? 0x0300 : 0x0301), u16(hs.length), hs]);
}

function randomBytes(n: number): Buffer {
  return nodeRandomBytes(n);
}

/** Bounds-checked reader; any overrun is a TlsParseError naming what was being read. */
export class Reader {
  pos = 0;
  constructor(readonly buf: Buffer, readonly what = "message") {}
  get left(): number { return this.buf.length - this.pos; }
  private need(n: number, field: string) {
    if (this.pos + n > this.buf.length) throw new TlsParseError(`truncated ${this.what}: ${field} needs ${n} bytes, ${this.left} left`);
  }
  u8(field = "u8"): number { this.need(1, field); return this.buf[this.pos++]; }
  u16(field = "u16"): number { this.need(2, field); const v = this.buf.readUInt16BE(this.pos); this.pos += 2; return v; }
  u24(field = "u24"): number { this.need(3, field); const v = this.buf.readUIntBE(this.pos, 3); this.pos += 3; return v; }
  bytes(n: number, field = "bytes"): Buffer { this.need(n, field); const b = this.buf.subarray(this.pos, this.pos + n); this.pos += n; return b; }
  vec8(field = "vector"): Buffer { return this.bytes(this.u8(field), field); }
  vec16(field = "vector"): Buffer { return this.bytes(this.u16(field), field); }
  vec24(field = "vector"): Buffer { return this.bytes(this.u24(field), field); }
}

export interface TlsRecord { type: number; version: number; payload: Buffer }

/**
 * Splits complete records off the front of `buf`. Returns the records and the unconsumed tail.
 * Throws on a header that cannot be TLS (wrong content type, version or an oversized length),
 * which is how an HTTP or garbage answer on a TLS port is recognised.
 */
export function splitRecords(buf: Buffer): { records: TlsRecord[]; rest: Buffer } {
  const records: TlsRecord[] = [];
  let pos = 0;
  while (buf.length - pos >= 5) {
    const type = buf[pos];
    const version = buf.readUInt16BE(pos + 1);
    const len = buf.readUInt16BE(pos + 3);
    if (type < 20 || type > 24 || (version >> 8) !== 0x03) throw new TlsParseError(`not a TLS record: ${describeBytes(buf.subarray(pos, pos + 48))}`);
    if (len > MAX_RECORD) throw new TlsParseError(`oversized TLS record: ${len} bytes (max ${MAX_RECORD})`);
    if (buf.length - pos - 5 < len) break;
    records.push({ type, version, payload: buf.subarray(pos + 5, pos + 5 + len) });
    pos += 5 + len;
  }
  return { records, rest: buf.subarray(pos) };
}

/** Printable rendering of unexpected bytes for error messages (e.g. "HTTP/1.1 400 Bad Request"). */
export function describeBytes(b: Buffer): string {
  const text = b.toString("latin1");
  return /^[\x20-\x7e\r\n\t]+$/.test(text) ? JSON.stringify(text.replace(/\r?\n[\s\S]*$/, "")) : "0x" + b.toString("hex");
}

export interface HandshakeMessage { type: number; body: Buffer }

/** Splits handshake messages off a (possibly multi-record) handshake byte stream. */
export function splitHandshakes(buf: Buffer): { messages: HandshakeMessage[]; rest: Buffer } {
  const messages: HandshakeMessage[] = [];
  let pos = 0;
  while (buf.length - pos >= 4) {
    const len = buf.readUIntBE(pos + 1, 3);
    if (len > 1 << 20) throw new TlsParseError(`oversized handshake message: ${len} bytes`);
    if (buf.length - pos - 4 < len) break;
    messages.push({ type: buf[pos], body: buf.subarray(pos + 4, pos + 4 + len) });
    pos += 4 + len;
  }
  return { messages, rest: buf.subarray(pos) };
}

export interface Alert { level: number; description: number; name: string }
export function parseAlert(payload: Buffer): Alert {
  const r = new Reader(payload, "alert");
  const level = r.u8("level");
  const description = r.u8("description");
  return { level, description, name: ALERTS[description] ?? `alert_${description}` };
}

export interface ServerHello {
  /** Negotiated version (supported_versions for TLS 1.3, else the legacy field). */
  version: number;
  legacyVersion: number;
  random: Buffer;
  sessionId: Buffer;
  cipherSuite: number;
  compression: number;
  isHelloRetryRequest: boolean;
  /** HRR: the group the server asks for; ServerHello: the key_share group. */
  selectedGroup?: number;
  keyShare?: Buffer;
  extensions: Map<number, Buffer>;
}

export function parseServerHello(body: Buffer): ServerHello {
  const r = new Reader(body, "ServerHello");
  const legacyVersion = r.u16("version");
  const random = r.bytes(32, "random");
  const sessionId = r.vec8("session_id");
  const cipherSuite = r.u16("cipher_suite");
  const compression = r.u8("compression");
  const extensions = new Map<number, Buffer>();
  if (r.left > 0) {
    const er = new Reader(r.vec16("extensions"), "ServerHello extensions");
    while (er.left > 0) {
      const t = er.u16("extension type");
      extensions.set(t, er.vec16("extension data"));
    }
  }
  const isHelloRetryRequest = random.equals(HRR_RANDOM);
  let version = legacyVersion;
  const sv = extensions.get(EXT.supportedVersions);
  if (sv) version = new Reader(sv, "supported_versions").u16("selected_version");
  const sh: ServerHello = { version, legacyVersion, random, sessionId, cipherSuite, compression, isHelloRetryRequest, extensions };
  const ks = extensions.get(EXT.keyShare);
  if (ks) {
    const kr = new Reader(ks, "key_share");
    sh.selectedGroup = kr.u16("group");
    if (!isHelloRetryRequest) sh.keyShare = kr.vec16("key_exchange");
  }
  return sh;
}

/** TLS <= 1.2 Certificate message: the chain exactly as served (DER, in order). */
export function parseCertificateMessage(body: Buffer): Buffer[] {
  const r = new Reader(body, "Certificate");
  const list = new Reader(r.vec24("certificate_list"), "certificate_list");
  const certs: Buffer[] = [];
  while (list.left > 0) certs.push(Buffer.from(list.vec24("certificate")));
  return certs;
}

/** TLS 1.3 Certificate message (request context + entries with extensions). */
export function parseCertificateMessage13(body: Buffer): Buffer[] {
  const r = new Reader(body, "Certificate");
  r.vec8("certificate_request_context");
  const list = new Reader(r.vec24("certificate_list"), "certificate_list");
  const certs: Buffer[] = [];
  while (list.left > 0) {
    certs.push(Buffer.from(list.vec24("cert_data")));
    list.vec16("extensions");
  }
  return certs;
}

export type ServerKeyExchange =
  | { kind: "ecdhe"; group: number }
  | { kind: "ecdhe_explicit"; curveType: number }
  | { kind: "dhe"; primeBits: number; prime: Buffer }
  | { kind: "other" };

/** The key-exchange parameters at the front of a ServerKeyExchange, given the suite's key exchange. */
export function parseServerKeyExchange(body: Buffer, keyExchange: string): ServerKeyExchange {
  const r = new Reader(body, "ServerKeyExchange");
  if (keyExchange.startsWith("ECDHE") || keyExchange.startsWith("ECDH")) {
    if (keyExchange.includes("PSK")) r.vec16("psk_identity_hint");
    const curveType = r.u8("curve_type");
    if (curveType !== 3) return { kind: "ecdhe_explicit", curveType };
    return { kind: "ecdhe", group: r.u16("named_curve") };
  }
  if (keyExchange.startsWith("DHE") || keyExchange === "DH") {
    if (keyExchange.includes("PSK")) r.vec16("psk_identity_hint");
    const p = r.vec16("dh_p");
    let i = 0;
    while (i < p.length && p[i] === 0) i++;
    const prime = p.subarray(i);
    const bits = prime.length ? (prime.length - 1) * 8 + (32 - Math.clz32(prime[0])) : 0;
    return { kind: "dhe", primeBits: bits, prime: Buffer.from(prime) };
  }
  return { kind: "other" };
}
