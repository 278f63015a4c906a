// STARTTLS for every protocol the scanner claims (IMAP, POP3, FTP, LDAP, XMPP, PostgreSQL), each
// against a minimal Node server written here that speaks the plaintext dialogue as its RFC says
// and then upgrades the same socket with a real TLS server (tls.TLSSocket, test PKI, configured
// protocol versions). Every scan opens hundreds of connections; the servers count them and check
// that each one did the whole dance, so an out-of-step dialogue cannot pass unnoticed.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { createSecureContext, TLSSocket, type SecureContext, type SecureVersion } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scanTarget, type ScanReport } from "../src/scan";
import type { StartTlsProtocol } from "../src/tls/starttls";
import { makePki, type TestPki } from "./helpers/pki";

// ---------------------------------------------------------------------------------------------
// A plaintext reader over a socket: lines and byte counts, awaited in straight-line code.

class PlainReader {
  buf = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  private closed = false;
  private readonly onData = (d: Buffer) => { this.buf = Buffer.concat([this.buf, d]); this.wake?.(); };
  constructor(private readonly socket: Socket) {
    socket.on("data", this.onData);
    socket.on("close", () => { this.closed = true; this.wake?.(); });
  }
  async until<T>(check: (b: Buffer) => T | undefined): Promise<T> {
    for (;;) {
      const v = check(this.buf);
      if (v !== undefined) return v;
      if (this.closed) throw new Error("client went away");
      await new Promise<void>((r) => { this.wake = r; });
      this.wake = null;
    }
  }
  /** One CRLF-terminated line, without the CRLF. */
  async line(): Promise<string> {
    const i = await this.until((b) => { const j = b.indexOf("\r\n"); return j < 0 ? undefined : j; });
    const l = this.buf.toString("latin1", 0, i);
    this.buf = this.buf.subarray(i + 2);
    return l;
  }
  async bytes(n: number): Promise<Buffer> {
    await this.until((b) => (b.length >= n ? true : undefined));
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }
  /** Stops reading plaintext: from here on the socket belongs to TLS. */
  detach(): void { this.socket.off("data", this.onData); }
}

// ---------------------------------------------------------------------------------------------
// The servers' side of each dialogue. A dialogue returns "upgrade" when TLS starts now, or
// "refused" when it declined STARTTLS (the connection then stays plaintext until the client leaves).

interface DialogueOptions {
  refuse: boolean;
  /** Protocol-specific realism switches (multi-line greetings, long-form BER lengths, ...). */
  variant?: string;
  /** Close the connection where the go-ahead would be sent (a crashing or connection-limited server). */
  drop?: boolean;
}
interface Io {
  read: PlainReader;
  /** Writes a reply; with `split`, in separate TCP segments at these offsets (a slow or busy server). */
  send(text: string | Buffer, split?: number[]): Promise<void>;
  /** Sends the go-ahead for TLS; with `drop` set, the server instead drops the connection at this point. */
  goAhead(text: string | Buffer, split?: number[]): Promise<void>;
  /** What the client sent that the test wants to look at afterwards. */
  seen: string[];
}
type Dialogue = (io: Io, o: DialogueOptions) => Promise<"upgrade" | "refused">;

/** RFC 3501 §6.2.1: `tag STARTTLS` -> `tag OK`; the greeting may advertise CAPABILITY. */
const imap: Dialogue = async (io, o) => {
  await io.send("* OK [CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED] imap.scan.test IMAP4rev1 Service Ready\r\n");
  for (;;) {
    const line = await io.read.line();
    const [tag, command = ""] = line.split(" ");
    io.seen.push(line);
    if (/^STARTTLS$/i.test(command)) {
      if (o.refuse) { await io.send(`${tag} NO [ALERT] STARTTLS is disabled on this server\r\n`); return "refused"; }
      // Untagged data before the tagged completion is legal at any time (RFC 3501 §2.2.2).
      if (o.variant === "untagged") await io.send("* CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED\r\n* OK [ALERT] system maintenance at 02:00\r\n");
      const ok = `${tag} OK Begin TLS negotiation now\r\n`;
      await io.goAhead(ok, o.variant === "slow" ? [ok.length - 8] : undefined);
      return "upgrade";
    }
    if (/^CAPABILITY$/i.test(command)) await io.send(`* CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED\r\n${tag} OK CAPABILITY completed\r\n`);
    else await io.send(`${tag} BAD command unknown or arguments invalid\r\n`);
  }
};

/** RFC 2595 §4: `STLS` -> `+OK`. */
const pop3: Dialogue = async (io, o) => {
  await io.send("+OK POP3 server ready <1896.697170952@pop.scan.test>\r\n");
  for (;;) {
    const line = await io.read.line();
    io.seen.push(line);
    if (/^STLS$/i.test(line)) {
      if (o.refuse) { await io.send("-ERR Command not permitted when TLS active\r\n"); return "refused"; }
      await io.goAhead("+OK Begin TLS negotiation\r\n");
      return "upgrade";
    }
    if (/^CAPA$/i.test(line)) await io.send("+OK Capability list follows\r\nSTLS\r\nUSER\r\n.\r\n");
    else await io.send("-ERR unknown command\r\n");
  }
};

/** RFC 4217 §4: `AUTH TLS` -> `234`; RFC 959 §4.2 multi-line replies. */
const ftp: Dialogue = async (io, o) => {
  if (o.variant === "multiline") {
    // RFC 959 §4.2: between "220-" and "220 " the lines are free text; only the last one repeats the code.
    await io.send("220-ftp.scan.test FTP server ready.\r\n   This system is for authorised use only.\r\n 220 is not the end of this reply either\r\n220-Still the greeting\r\n220 Ready.\r\n");
  } else {
    await io.send("220 ftp.scan.test FTP server ready.\r\n");
  }
  for (;;) {
    const line = await io.read.line();
    io.seen.push(line);
    if (/^AUTH TLS$/i.test(line)) {
      if (o.refuse) { await io.send("500 AUTH not understood.\r\n"); return "refused"; }
      await io.goAhead("234 AUTH TLS successful; proceed with negotiation.\r\n");
      return "upgrade";
    }
    if (/^FEAT$/i.test(line)) await io.send("211-Features:\r\n AUTH TLS\r\n PBSZ\r\n PROT\r\n211 End\r\n");
    else await io.send("502 Command not implemented.\r\n");
  }
};

// -- LDAP: just enough BER (X.690) for the StartTLS extended operation (RFC 4511 §4.14). --------

const STARTTLS_OID = "1.3.6.1.4.1.1466.20037";

/** BER length: short form, or long form with `longForm` (Active Directory always uses 0x84 + 4 bytes). */
function berLength(n: number, longForm: boolean): Buffer {
  if (longForm) return Buffer.from([0x84, (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, body: Buffer, longForm = false) => Buffer.concat([Buffer.from([tag]), berLength(body.length, longForm), body]);

/** Reads one TLV header: [tag, content length, header size], or undefined while incomplete. */
function berHeader(b: Buffer, at = 0): [number, number, number] | undefined {
  if (b.length < at + 2) return undefined;
  const first = b[at + 1];
  if (first < 0x80) return [b[at], first, 2];
  const n = first & 0x7f;
  if (b.length < at + 2 + n) return undefined;
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + b[at + 2 + i];
  return [b[at], len, 2 + n];
}

/** An LDAPMessage { messageID, ExtendedResponse { resultCode, matchedDN, diagnosticMessage, [10] responseName } }. */
function ldapExtendedResponse(messageId: Buffer, resultCode: number, diagnostic: string, longForm: boolean): Buffer {
  const op = tlv(0x78, Buffer.concat([
    tlv(0x0a, Buffer.from([resultCode]), longForm), tlv(0x04, Buffer.alloc(0), longForm), tlv(0x04, Buffer.from(diagnostic), longForm),
    ...(resultCode === 0 ? [tlv(0x8a, Buffer.from(STARTTLS_OID), longForm)] : []),
  ]), longForm);
  return tlv(0x30, Buffer.concat([tlv(0x02, messageId, longForm), op]), longForm);
}

const ldap: Dialogue = async (io, o) => {
  for (;;) {
    const [tag, len, hdr] = await io.read.until((b) => berHeader(b));
    const message = await io.read.bytes(hdr + len);
    if (tag !== 0x30) throw new Error(`LDAP: not an LDAPMessage (tag ${tag})`);
    const [idTag, idLen, idHdr] = berHeader(message, hdr)!;
    if (idTag !== 0x02) throw new Error("LDAP: no messageID");
    const messageId = message.subarray(hdr + idHdr, hdr + idHdr + idLen);
    const opAt = hdr + idHdr + idLen;
    const [opTag, , opHdr] = berHeader(message, opAt)!;
    if (opTag !== 0x77) throw new Error(`LDAP: unexpected operation ${opTag}`); // only ExtendedRequest is served here
    const [nameTag, nameLen, nameHdr] = berHeader(message, opAt + opHdr)!;
    const name = message.toString("latin1", opAt + opHdr + nameHdr, opAt + opHdr + nameHdr + nameLen);
    io.seen.push(`messageID=${messageId.toString("hex")} op=ExtendedRequest requestName${nameTag === 0x80 ? "" : "?"}=${name}`);
    if (name !== STARTTLS_OID) { await io.send(ldapExtendedResponse(messageId, 2, "unsupported extended operation", false)); continue; }
    const longForm = o.variant === "long-form";
    if (o.refuse) { await io.send(ldapExtendedResponse(messageId, 53, "StartTLS is administratively disabled", longForm)); return "refused"; }
    await io.goAhead(ldapExtendedResponse(messageId, 0, "", longForm));
    return "upgrade";
  }
};

/** RFC 6120 §5.4: stream header, features offering starttls, `<starttls/>` -> `<proceed/>` or `<failure/>`. */
const xmpp: Dialogue = async (io, o) => {
  const header = await io.read.until((b) => { const s = b.toString("utf8"); const m = /<stream:stream\b[^>]*>/.exec(s); return m ? m[0] : undefined; });
  io.read.buf = Buffer.alloc(0);
  io.seen.push(header);
  await io.send("<?xml version='1.0'?><stream:stream from='scan.test' id='++TR84Sm6A3hnt3Q065SnAbbk3Y=' version='1.0' xml:lang='en' " +
    "xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>");
  if (o.variant !== "host-unknown") await io.send("<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls>" +
    "<mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-1</mechanism></mechanisms></stream:features>");
  if (o.variant === "host-unknown") {
    // RFC 6120 §4.9.3.6: a stream error for a domain the server does not serve, then the stream closes.
    await io.send("<stream:error><host-unknown xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error></stream:stream>");
    return "refused";
  }
  const request = await io.read.until((b) => { const m = /<starttls\b[^>]*\/>|<starttls\b[^>]*>\s*<\/starttls>/.exec(b.toString("utf8")); return m ? m[0] : undefined; });
  io.read.buf = Buffer.alloc(0);
  io.seen.push(request);
  if (o.refuse) { await io.send("<failure xmlns='urn:ietf:params:xml:ns:xmpp-tls'/></stream:stream>"); return "refused"; }
  if (o.variant === "slow") {
    // The same element with an explicit end tag (XML 1.0 §3.1), the end tag in a later TCP segment.
    const proceed = "<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'></proceed>";
    await io.goAhead(proceed, [proceed.indexOf(">") + 1]);
  } else {
    await io.goAhead("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
  }
  return "upgrade";
};

/** PostgreSQL protocol §55.2.10: SSLRequest (length 8, code 80877103) -> 'S' or 'N'. */
const postgres: Dialogue = async (io, o) => {
  const req = await io.read.bytes(8);
  const length = req.readUInt32BE(0), code = req.readUInt32BE(4);
  io.seen.push(`length=${length} code=${code}`);
  if (length !== 8 || code !== 80877103) throw new Error("PostgreSQL: not an SSLRequest");
  if (o.refuse) { await io.send("N"); return "refused"; } // a real server now expects a plaintext StartupMessage
  await io.goAhead("S");
  return "upgrade";
};

// ---------------------------------------------------------------------------------------------
// The server: plaintext dialogue, then a TLS server on the same socket.

interface TlsConfig { cert: string; key: string; chain: string; minVersion: SecureVersion; maxVersion: SecureVersion; ciphers?: string; honorCipherOrder?: boolean }
interface StartTlsServer {
  host: string;
  port: number;
  stats: { connections: number; upgrades: number; refusals: number; dialogueErrors: string[]; leftovers: number; drops: number };
  seen: string[];
  stop(): Promise<void>;
}

function secureContextFor(t: TlsConfig): SecureContext {
  return createSecureContext({
    cert: readFileSync(t.cert, "utf8") + readFileSync(t.chain, "utf8"), key: readFileSync(t.key),
    minVersion: t.minVersion, maxVersion: t.maxVersion, ciphers: t.ciphers, honorCipherOrder: t.honorCipherOrder,
  });
}

async function startTlsServer(dialogue: Dialogue, options: DialogueOptions, tls: TlsConfig): Promise<StartTlsServer> {
  const context = secureContextFor(tls);
  const sockets = new Set<Socket>();
  const stats: StartTlsServer["stats"] = { connections: 0, upgrades: 0, refusals: 0, dialogueErrors: [], leftovers: 0, drops: 0 };
  const seen: string[] = [];
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
    s.setNoDelay(true);
    stats.connections++;
    const read = new PlainReader(s);
    const io: Io = {
      read, seen,
      async goAhead(text, split) {
        if (options.drop) { stats.drops++; s.destroy(); throw new Error("client went away"); }
        await io.send(text, split);
      },
      async send(text, split) {
        const b = typeof text === "string" ? Buffer.from(text, "latin1") : text;
        let at = 0;
        for (const cut of [...(split ?? []), b.length]) {
          if (s.destroyed) return;
          s.write(b.subarray(at, cut));
          at = cut;
          if (cut < b.length) await new Promise((r) => setTimeout(r, 15));
        }
      },
    };
    dialogue(io, options).then((outcome) => {
      if (outcome === "refused") { stats.refusals++; return; }
      read.detach();
      // The client sends nothing between the go-ahead and its ClientHello.
      if (read.buf.length) stats.leftovers++;
      stats.upgrades++;
      const t = new TLSSocket(s, { isServer: true, secureContext: context });
      t.on("error", () => s.destroy());
    }, (e: Error) => {
      if (!/client went away/.test(e.message)) stats.dialogueErrors.push(e.message);
      s.destroy();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    host: "127.0.0.1", port: (server.address() as { port: number }).port, stats, seen,
    stop: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}

// ---------------------------------------------------------------------------------------------

let pki: TestPki;
const running: StartTlsServer[] = [];
const serve = async (d: Dialogue, o: DialogueOptions, t: Partial<TlsConfig> = {}) => {
  const s = await startTlsServer(d, o, {
    cert: pki.files.rsa, key: pki.files.rsaKey, chain: pki.files.int, minVersion: "TLSv1.2", maxVersion: "TLSv1.3", ...t,
  });
  running.push(s);
  return s;
};
const scan = (s: StartTlsServer, starttls: StartTlsProtocol, timeoutMs = 3000): Promise<ScanReport> =>
  scanTarget({ host: s.host, port: s.port, sni: "localhost", starttls, rootCaPem: pki.caPem }, { timeoutMs });
const detail = (r: ScanReport, p: string) => r.protocols_detail.find((d) => d.protocol === p)!;
const fingerprint = (file: string) => new X509Certificate(readFileSync(file)).fingerprint256.replace(/:/g, "").toLowerCase();

beforeAll(() => { pki = makePki(); });
afterAll(async () => { await Promise.all(running.map((s) => s.stop())); });

/** What every successful STARTTLS scan must show: the served chain and a dance on every connection. */
function expectServedChainAndDance(r: ScanReport, s: StartTlsServer, starttls: StartTlsProtocol, leaf: { cert: string; algorithm: string }) {
  expect(r.error).toBe("");
  expect(r.has_error).toBe(false);
  expect(r.connection_method).toBe("starttls");
  expect(r.starttls).toBe(starttls);
  // The chain as configured: leaf + intermediate, validated to the test root.
  expect(r.chain_length).toBe(2);
  expect(r.certificate).toMatchObject({ sha256: fingerprint(leaf.cert), subject: "CN=localhost", public_key_algorithm: leaf.algorithm, dns_names: ["localhost", "scan.test"] });
  expect(r.intermediates.map((i) => i.signature_sha256)).toEqual([fingerprint(pki.files.int)]);
  expect(r.validation).toMatchObject({ trusted: true, error: "", hostname_match: true, anchor: "root_ca" });
  // Enumeration is many connections; every one of them went through the whole upgrade dialogue
  // (a plaintext reply read only in part would leak into the TLS parser and break the results above).
  expect(r.probes).toBeGreaterThan(20);
  expect(s.stats.dialogueErrors).toEqual([]);
  expect(s.stats.connections).toBe(r.probes);
  expect(s.stats.upgrades).toBe(r.probes);
  expect(s.stats.refusals).toBe(0);
  expect(s.stats.leftovers).toBe(0);
}

/** A refusal: an error naming the protocol, nothing accepted, and the scanner stops early (circuit breaker). */
function expectRefusal(r: ScanReport, s: StartTlsServer, message: RegExp) {
  expect(r.has_error).toBe(true);
  expect(r.error).toMatch(message);
  expect(r.connection_method).toBe("starttls");
  expect(r.protocol).toEqual([]);
  expect(r.certificate).toBeNull();
  expect(s.stats.upgrades).toBe(0);
  expect(s.stats.refusals).toBeGreaterThanOrEqual(1);
  expect(s.stats.dialogueErrors).toEqual([]);
  expect(r.probes).toBeLessThan(20);
}

describe("IMAP (RFC 3501 STARTTLS)", () => {
  it("TLS 1.2 only with two server-ordered suites: upgrades, enumerates exactly the configuration", async () => {
    const s = await serve(imap, { refuse: false }, { minVersion: "TLSv1.2", maxVersion: "TLSv1.2",
      ciphers: "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256", honorCipherOrder: true });
    const r = await scan(s, "imap");
    expectServedChainAndDance(r, s, "imap", { cert: pki.files.rsa, algorithm: "RSA" });
    expect(r.protocol).toEqual(["TLSv1.2"]);
    expect(detail(r, "TLSv1.2").cipher_codes).toEqual(["0xC030", "0xC02F"]);
    expect(detail(r, "TLSv1.2").cipher_preference).toBe("server");
    expect(detail(r, "TLSv1.3").accepted).toBe(false);
    // the client's command as the server saw it: a tag, then STARTTLS
    expect(s.seen[0]).toMatch(/^[A-Za-z0-9]+ STARTTLS$/);
  });
  it("untagged responses before the tagged OK (RFC 3501 §2.2.2) do not confuse the dialogue", async () => {
    const s = await serve(imap, { refuse: false, variant: "untagged" });
    const r = await scan(s, "imap");
    expectServedChainAndDance(r, s, "imap", { cert: pki.files.rsa, algorithm: "RSA" });
    expect(r.protocol).toEqual(["TLSv1.2", "TLSv1.3"]);
  });
  it("a tagged OK that arrives in two TCP segments is read to its end before TLS starts", async () => {
    const s = await serve(imap, { refuse: false, variant: "slow" }, { minVersion: "TLSv1.3", maxVersion: "TLSv1.3" });
    const r = await scan(s, "imap", 4000);
    expectServedChainAndDance(r, s, "imap", { cert: pki.files.rsa, algorithm: "RSA" });
    expect(r.protocol).toEqual(["TLSv1.3"]);
  });
  it("refusal `tag NO` is has_error naming IMAP", async () => {
    const s = await serve(imap, { refuse: true });
    expectRefusal(await scan(s, "imap"), s, /^IMAP STARTTLS refused: \S+ NO \[ALERT\] STARTTLS is disabled on this server$/);
  });
});

describe("POP3 (RFC 2595 STLS)", () => {
  it("TLS 1.3 only with two suites", async () => {
    const s = await serve(pop3, { refuse: false }, { minVersion: "TLSv1.3", maxVersion: "TLSv1.3", ciphers: "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256" });
    const r = await scan(s, "pop3");
    expectServedChainAndDance(r, s, "pop3", { cert: pki.files.rsa, algorithm: "RSA" });
    expect(r.protocol).toEqual(["TLSv1.3"]);
    expect([...detail(r, "TLSv1.3").cipher_codes].sort()).toEqual(["0x1301", "0x1303"]);
    expect(r.chain_protocol).toBe("TLSv1.3");
    expect(s.seen[0]).toBe("STLS");
  });
  it("refusal `-ERR` is has_error naming POP3", async () => {
    const s = await serve(pop3, { refuse: true });
    expectRefusal(await scan(s, "pop3"), s, /^POP3 STLS refused: -ERR Command not permitted when TLS active$/);
  });
});

describe("FTP (RFC 4217 AUTH TLS)", () => {
  it("legacy TLS 1.0-1.2 at SECLEVEL=0: every configured version found", async () => {
    const s = await serve(ftp, { refuse: false }, { minVersion: "TLSv1", maxVersion: "TLSv1.2", ciphers: "AES128-SHA:ECDHE-RSA-AES256-SHA:@SECLEVEL=0" });
    const r = await scan(s, "ftp");
    expectServedChainAndDance(r, s, "ftp", { cert: pki.files.rsa, algorithm: "RSA" });
    expect(r.protocol).toEqual(["TLSv1.0", "TLSv1.1", "TLSv1.2"]);
    for (const p of ["TLSv1.0", "TLSv1.1", "TLSv1.2"]) expect(detail(r, p).cipher_codes).toEqual(["0x002F", "0xC014"]);
    expect(detail(r, "TLSv1.3").accepted).toBe(false);
    expect(s.seen[0]).toBe("AUTH TLS");
  });
  it("an RFC 959 multi-line greeting with free-text lines is read as one reply", async () => {
    const s = await serve(ftp, { refuse: false, variant: "multiline" });
    const r = await scan(s, "ftp");
    expectServedChainAndDance(r, s, "ftp", { cert: pki.files.rsa, algorithm: "RSA" });
    expect(r.protocol).toEqual(["TLSv1.2", "TLSv1.3"]);
  });
  it("refusal `500` is has_error naming FTP", async () => {
    const s = await serve(ftp, { refuse: true });
    expectRefusal(await scan(s, "ftp"), s, /^FTP AUTH TLS refused: 500 AUTH not understood\.$/);
  });
});

describe("LDAP (RFC 4511 StartTLS extended operation)", () => {
  it("ECDSA leaf, TLS 1.2-1.3: ExtendedRequest with the StartTLS OID, resultCode success", async () => {
    const s = await serve(ldap, { refuse: false }, { cert: pki.files.ecdsa, key: pki.files.ecdsaKey });
    const r = await scan(s, "ldap");
    expectServedChainAndDance(r, s, "ldap", { cert: pki.files.ecdsa, algorithm: "ECDSA" });
    expect(r.protocol).toEqual(["TLSv1.2", "TLSv1.3"]);
    expect(r.certificate?.curve).toBe("prime256v1");
    expect(s.seen[0]).toBe(`messageID=01 op=ExtendedRequest requestName=${STARTTLS_OID}`);
  });
  it("long-form BER lengths in the response (as Active Directory sends them) are understood", async () => {
    const s = await serve(ldap, { refuse: false, variant: "long-form" }, { minVersion: "TLSv1.2", maxVersion: "TLSv1.2" });
    const r = await scan(s, "ldap");
    expectServedChainAndDance(r, s, "ldap", { cert: pki.files.rsa, algorithm: "RSA" });
    expect(r.protocol).toEqual(["TLSv1.2"]);
  });
  it("refusal resultCode 53 (unwillingToPerform) is has_error naming LDAP", async () => {
    const s = await serve(ldap, { refuse: true });
    expectRefusal(await scan(s, "ldap"), s, /^LDAP StartTLS refused: resultCode 53 \(StartTLS is administratively disabled\)$/);
  });
  it("refusal with long-form lengths is still a refusal, not a timeout", async () => {
    const s = await serve(ldap, { refuse: true, variant: "long-form" });
    const t = Date.now();
    expectRefusal(await scan(s, "ldap"), s, /^LDAP StartTLS refused: resultCode 53/);
    expect(Date.now() - t).toBeLessThan(2000);
  });
});

describe("XMPP (RFC 6120 STARTTLS)", () => {
  it("stream header to the domain, features, <starttls/> -> <proceed/>", async () => {
    const s = await serve(xmpp, { refuse: false });
    const r = await scan(s, "xmpp");
    expectServedChainAndDance(r, s, "xmpp", { cert: pki.files.rsa, algorithm: "RSA" });
    expect(r.protocol).toEqual(["TLSv1.2", "TLSv1.3"]);
    expect(s.seen[0]).toMatch(/to='localhost'/);
    expect(s.seen[0]).toMatch(/version='1.0'/);
    expect(s.seen[1]).toBe("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
  });
  it("a <proceed></proceed> whose end tag arrives in a later TCP segment is read to its end before TLS starts", async () => {
    const s = await serve(xmpp, { refuse: false, variant: "slow" }, { minVersion: "TLSv1.2", maxVersion: "TLSv1.2" });
    const r = await scan(s, "xmpp", 4000);
    expectServedChainAndDance(r, s, "xmpp", { cert: pki.files.rsa, algorithm: "RSA" });
    expect(r.protocol).toEqual(["TLSv1.2"]);
  });
  it("refusal <failure/> is has_error naming XMPP", async () => {
    const s = await serve(xmpp, { refuse: true });
    expectRefusal(await scan(s, "xmpp"), s, /^XMPP starttls refused: <failure xmlns='urn:ietf:params:xml:ns:xmpp-tls'\/>$/);
  });
  it("a <stream:error> instead of features is has_error naming XMPP at once, not a timeout", async () => {
    const s = await serve(xmpp, { refuse: false, variant: "host-unknown" });
    const t = Date.now();
    expectRefusal(await scan(s, "xmpp"), s, /^XMPP stream error: <stream:error><host-unknown xmlns='urn:ietf:params:xml:ns:xmpp-streams'\/><\/stream:error>$/);
    expect(Date.now() - t).toBeLessThan(2000);
  });
});

describe("PostgreSQL (SSLRequest)", () => {
  it("SSLRequest -> 'S', TLS 1.2-1.3", async () => {
    const s = await serve(postgres, { refuse: false });
    const r = await scan(s, "postgres");
    expectServedChainAndDance(r, s, "postgres", { cert: pki.files.rsa, algorithm: "RSA" });
    expect(r.protocol).toEqual(["TLSv1.2", "TLSv1.3"]);
    expect(s.seen[0]).toBe("length=8 code=80877103");
  });
  it("refusal 'N' is has_error naming PostgreSQL", async () => {
    const s = await serve(postgres, { refuse: true });
    expectRefusal(await scan(s, "postgres"), s, /^PostgreSQL refused SSL \(answered "N"\)$/);
  });
});

describe("faults in the plaintext dialogue are typed errors naming the protocol, never a crash", () => {
  const dialogues: [StartTlsProtocol, Dialogue, RegExp][] = [
    ["imap", imap, /^IMAP STARTTLS dialogue cut short: connection closed by server$/],
    ["pop3", pop3, /^POP3 STARTTLS dialogue cut short: connection closed by server$/],
    ["ftp", ftp, /^FTP STARTTLS dialogue cut short: connection closed by server$/],
    ["ldap", ldap, /^LDAP STARTTLS dialogue cut short: connection closed by server$/],
    ["xmpp", xmpp, /^XMPP STARTTLS dialogue cut short: connection closed by server$/],
    ["postgres", postgres, /^PostgreSQL STARTTLS dialogue cut short: connection closed by server$/],
  ];
  // A dropped connection before TLS began is not a TLS refusal: every version must stay
  // "unknown" (accepted null), not be reported as refused by the server.
  it.each(dialogues)("%s: the server drops the connection instead of the go-ahead", async (protocol, dialogue, message) => {
    const s = await serve(dialogue, { refuse: false, drop: true });
    const r = await scan(s, protocol);
    expect(r.has_error).toBe(true);
    expect(r.error).toMatch(message);
    expect(r.protocol).toEqual([]);
    expect(r.protocols_detail.map((d) => d.accepted)).toEqual(r.protocols_detail.map(() => null));
    expect(s.stats.drops).toBeGreaterThanOrEqual(1);
    expect(s.stats.upgrades).toBe(0);
    expect(r.probes).toBeLessThan(20);
  });

  /** A peer speaking another protocol: an HTTP error as soon as it connects, then it closes. */
  const notThisProtocol = async (): Promise<StartTlsServer> => {
    const sockets = new Set<Socket>();
    const server = createServer((c) => { sockets.add(c); c.on("error", () => {}); c.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"); });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const s: StartTlsServer = {
      host: "127.0.0.1", port: (server.address() as { port: number }).port, seen: [],
      stats: { connections: 0, upgrades: 0, refusals: 0, dialogueErrors: [], leftovers: 0, drops: 0 },
      stop: () => new Promise<void>((r) => { for (const c of sockets) c.destroy(); server.close(() => r()); }),
    };
    running.push(s);
    return s;
  };
  it.each([
    ["imap", /^IMAP greeting refused: HTTP\/1.1 400 Bad Request$/],
    ["pop3", /^POP3 greeting refused: HTTP\/1.1 400 Bad Request$/],
    ["ftp", /^FTP greeting refused: HTTP\/1.1 400 Bad Request$/],
    ["ldap", /^LDAP: malformed ExtendedResponse \(not an LDAPMessage: first byte 0x48\)$/],
    ["xmpp", /^XMPP STARTTLS dialogue cut short: connection closed by server$/],
    ["postgres", /^PostgreSQL refused SSL \(answered "H"\)$/],
  ] as [StartTlsProtocol, RegExp][])("%s against a peer that is not that protocol", async (protocol, message) => {
    const s = await notThisProtocol();
    const t = Date.now();
    const r = await scan(s, protocol);
    expect(r.has_error).toBe(true);
    expect(r.error).toMatch(message);
    expect(r.protocols_detail.every((d) => d.accepted === null)).toBe(true);
    expect(Date.now() - t).toBeLessThan(2000);
  });
});
