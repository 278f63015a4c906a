// Plaintext upgrade dialogues that precede the ClientHello. Each leaves the connection at the
// point where the server expects TLS bytes; a refusal is a StartTlsError with the server's words.
import type { StartTlsProtocol } from "@trust-plane/scan-contract/vocabulary";
import { ConnectionClosed, type Connection } from "./connection";

export { STARTTLS_PROTOCOLS, type StartTlsProtocol } from "@trust-plane/scan-contract/vocabulary";

export class StartTlsError extends Error { override name = "StartTlsError"; }

/** A reply read off the wire: its text (the final line) and how many bytes it took. */
interface Reply { line: string; length: number }

/** Complete lines in buf (CRLF, or a bare LF from sloppy servers) with the offset after each. */
function completeLines(buf: Buffer): { line: string; end: number }[] {
  const out: { line: string; end: number }[] = [];
  let at = 0;
  for (let i = buf.indexOf(0x0a); i >= 0; i = buf.indexOf(0x0a, at)) {
    out.push({ line: buf.toString("latin1", at, i > at && buf[i - 1] === 0x0d ? i - 1 : i), end: i + 1 });
    at = i + 1;
  }
  return out;
}

/**
 * An SMTP/FTP reply (RFC 5321 §4.2.1, RFC 959 §4.2): one line "NNN text", or a multi-line reply
 * opened by "NNN-" and closed by the first line that starts with the same code and a space.
 * Lines in between are free text in FTP (they need not carry the code), so only the closing
 * line ends the reply. Resolves with the closing line.
 */
function codeReply(buf: Buffer): Reply | undefined {
  const lines = completeLines(buf);
  if (!lines.length) return undefined;
  const first = /^(\d{3})-/.exec(lines[0].line);
  if (!first) return { line: lines[0].line, length: lines[0].end };
  const close = lines.find((l, i) => i > 0 && (l.line.startsWith(first[1] + " ") || l.line === first[1]));
  return close && { line: close.line, length: close.end };
}

/** The first complete line (POP3 status lines, the IMAP greeting). */
function firstLine(buf: Buffer): Reply | undefined {
  const l = completeLines(buf)[0];
  return l && { line: l.line, length: l.end };
}

/** Reads one reply and consumes exactly its bytes. */
async function reply(c: Connection, check: (b: Buffer) => Reply | undefined, what: string): Promise<string> {
  const r = await c.until(check, what);
  c.take(r.length);
  return r.line;
}

async function smtpLike(c: Connection, greetingCode: string, hello: string | null, command: string, okCode: string, name: string) {
  const greet = await reply(c, codeReply, `${name} greeting`);
  if (!greet.startsWith(greetingCode)) throw new StartTlsError(`${name} greeting refused: ${greet}`);
  if (hello) {
    c.write(hello + "\r\n");
    const ehlo = await reply(c, codeReply, `${name} EHLO reply`);
    if (!ehlo.startsWith("250")) throw new StartTlsError(`${name} EHLO refused: ${ehlo}`);
  }
  c.write(command + "\r\n");
  const ok = await reply(c, codeReply, `${name} ${command} reply`);
  if (!ok.startsWith(okCode)) throw new StartTlsError(`${name} ${command} refused: ${ok}`);
}

/** The IMAP tagged completion for `tag`, skipping untagged ("* ...") lines; only once the line is complete. */
function imapTagged(tag: string) {
  return (buf: Buffer): Reply | undefined => {
    const l = completeLines(buf).find((x) => x.line.startsWith(tag + " "));
    return l && { line: l.line, length: l.end };
  };
}

// -- LDAP (RFC 4511) in BER (X.690): definite lengths, short or long form. ----------------------

interface Tlv { tag: number; start: number; end: number }
/** One TLV at `at`: content [start, end). undefined while incomplete; StartTlsError when not BER we accept. */
function berTlv(b: Buffer, at: number): Tlv | undefined {
  if (b.length < at + 2) return undefined;
  const first = b[at + 1];
  let len = first, start = at + 2;
  if (first & 0x80) {
    const n = first & 0x7f;
    // 0x80 is the indefinite form, forbidden in LDAP (RFC 4511 §5.1); more than 4 length bytes is absurd here.
    if (n === 0 || n > 4) throw new StartTlsError(`LDAP: unsupported BER length byte 0x${first.toString(16)}`);
    if (b.length < at + 2 + n) return undefined;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[at + 2 + i];
    start = at + 2 + n;
  }
  if (b.length < start + len) return undefined;
  return { tag: b[at], start, end: start + len };
}

/** LDAPMessage ::= SEQUENCE { messageID, ExtendedResponse [APPLICATION 24] { resultCode, matchedDN, diagnosticMessage, ... } } */
function ldapExtendedResponse(b: Buffer): { length: number; messageId: number; resultCode: number; diagnostic: string } | undefined {
  const bad = (why: string) => new StartTlsError(`LDAP: malformed ExtendedResponse (${why})`);
  // Decide on the first byte: a peer that is not LDAP should not leave us waiting for a length it never meant.
  if (b.length && b[0] !== 0x30) throw bad(`not an LDAPMessage: first byte 0x${b[0].toString(16).padStart(2, "0")}`);
  const msg = berTlv(b, 0);
  if (!msg) return undefined;
  const id = berTlv(b, msg.start);
  if (!id || id.tag !== 0x02 || id.end > msg.end) throw bad("no messageID");
  let messageId = 0;
  for (let i = id.start; i < id.end; i++) messageId = messageId * 256 + b[i];
  const op = berTlv(b, id.end);
  if (!op || op.end > msg.end) throw bad("no protocolOp");
  if (op.tag !== 0x78) throw bad(`protocolOp tag 0x${op.tag.toString(16)}, not ExtendedResponse`);
  const code = berTlv(b, op.start);
  if (!code || code.tag !== 0x0a || code.end > op.end || code.end === code.start) throw bad("no resultCode");
  let resultCode = 0;
  for (let i = code.start; i < code.end; i++) resultCode = resultCode * 256 + b[i];
  const matched = berTlv(b, code.end);
  const diag = matched && matched.end <= op.end ? berTlv(b, matched.end) : undefined;
  const diagnostic = diag && diag.tag === 0x04 && diag.end <= op.end ? b.toString("utf8", diag.start, diag.end) : "";
  return { length: msg.end, messageId, resultCode, diagnostic };
}

// -- XMPP (RFC 6120): the few top-level elements of the STARTTLS exchange. ----------------------

/** A complete element named `name` (any namespace prefix), self-closed or with its end tag. */
function xmlElement(text: string, name: string): { xml: string; end: number } | undefined {
  const open = new RegExp(`<(?:[\\w.-]+:)?${name}\\b[^>]*?(/?)>`).exec(text);
  if (!open) return undefined;
  const afterOpen = open.index + open[0].length;
  if (open[1] === "/") return { xml: open[0], end: afterOpen };
  const close = new RegExp(`</(?:[\\w.-]+:)?${name}\\s*>`).exec(text.slice(afterOpen));
  if (!close) return undefined;
  const end = afterOpen + close.index + close[0].length;
  return { xml: text.slice(open.index, end), end };
}

// LDAP ExtendedRequest(messageID 1, requestName 1.3.6.1.4.1.1466.20037) in BER (RFC 4511 §4.14).
const LDAP_STARTTLS = Buffer.from("301d02010177188016312e332e362e312e342e312e313436362e3230303337", "hex");

/** Protocol names as they appear in error messages. */
const LABEL: Record<StartTlsProtocol, string> = { smtp: "SMTP", imap: "IMAP", pop3: "POP3", ftp: "FTP", ldap: "LDAP", xmpp: "XMPP", postgres: "PostgreSQL" };

export async function negotiateStartTls(c: Connection, protocol: StartTlsProtocol, domain: string): Promise<void> {
  try {
    await dialogue(c, protocol, domain);
  } catch (e) {
    // A connection dropped before TLS began says nothing about TLS: as a plain ConnectionClosed the
    // probe would read it as "this version/suite refused" and silently shorten the enumeration.
    if (e instanceof ConnectionClosed) throw new StartTlsError(`${LABEL[protocol]} STARTTLS dialogue cut short: ${e.message}`);
    throw e;
  }
}

async function dialogue(c: Connection, protocol: StartTlsProtocol, domain: string): Promise<void> {
  switch (protocol) {
    case "smtp": return smtpLike(c, "220", "EHLO tls-scanner.invalid", "STARTTLS", "220", "SMTP");
    case "ftp": return smtpLike(c, "220", null, "AUTH TLS", "234", "FTP");
    case "pop3": {
      const greet = await reply(c, firstLine, "POP3 greeting");
      if (!greet.startsWith("+OK")) throw new StartTlsError(`POP3 greeting refused: ${greet}`);
      c.write("STLS\r\n");
      const ok = await reply(c, firstLine, "POP3 STLS reply");
      if (!ok.startsWith("+OK")) throw new StartTlsError(`POP3 STLS refused: ${ok}`);
      return;
    }
    case "imap": {
      const greet = await reply(c, firstLine, "IMAP greeting");
      if (!/^\* (OK|PREAUTH)/i.test(greet)) throw new StartTlsError(`IMAP greeting refused: ${greet}`);
      c.write("a1 STARTTLS\r\n");
      const ok = await reply(c, imapTagged("a1"), "IMAP STARTTLS reply");
      if (!/^a1 OK/i.test(ok)) throw new StartTlsError(`IMAP STARTTLS refused: ${ok}`);
      return;
    }
    case "ldap": {
      c.write(LDAP_STARTTLS);
      const resp = await c.until(ldapExtendedResponse, "LDAP ExtendedResponse");
      c.take(resp.length);
      // messageID 0 is an unsolicited notification (e.g. Notice of Disconnection, RFC 4511 §4.4.1).
      if (resp.messageId !== 1) throw new StartTlsError(`LDAP StartTLS refused: unsolicited notification, resultCode ${resp.resultCode}${resp.diagnostic ? ` (${resp.diagnostic})` : ""}`);
      if (resp.resultCode !== 0) throw new StartTlsError(`LDAP StartTLS refused: resultCode ${resp.resultCode}${resp.diagnostic ? ` (${resp.diagnostic})` : ""}`);
      return;
    }
    case "xmpp": {
      c.write(`<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' to='${domain.replace(/[<>'&"]/g, "")}' version='1.0'>`);
      // The server answers with its own stream header, then <stream:features> (or a <stream:error>).
      const features = await c.until((b) => {
        const text = b.toString("utf8");
        const err = xmlElement(text, "error");
        if (err) return { error: err.xml.slice(0, 200) };
        const f = xmlElement(text, "features");
        return f && { xml: f.xml, end: Buffer.byteLength(text.slice(0, f.end)) };
      }, "XMPP stream features");
      if ("error" in features) throw new StartTlsError(`XMPP stream error: ${features.error}`);
      c.take(features.end);
      if (!features.xml.includes("urn:ietf:params:xml:ns:xmpp-tls")) throw new StartTlsError("XMPP server does not offer starttls");
      c.write("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
      // Only a complete <proceed/> (self-closed or with its end tag) hands the stream to TLS.
      const ans = await c.until((b) => {
        const text = b.toString("utf8");
        const e = xmlElement(text, "proceed") ?? xmlElement(text, "failure") ?? xmlElement(text, "error");
        return e && { xml: e.xml, end: Buffer.byteLength(text.slice(0, e.end)) };
      }, "XMPP proceed");
      c.take(ans.end);
      if (!/^<proceed\b/.test(ans.xml)) throw new StartTlsError(`XMPP starttls refused: ${ans.xml.slice(0, 100)}`);
      return;
    }
    case "postgres": {
      // SSLRequest: length 8, code 80877103; the answer is one byte, 'S' (go ahead) or 'N'.
      c.write(Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]));
      const b = await c.until((x) => (x.length >= 1 ? x[0] : undefined), "PostgreSQL SSLRequest answer");
      c.take(1);
      if (b !== 0x53) throw new StartTlsError(`PostgreSQL refused SSL (answered ${JSON.stringify(String.fromCharCode(b))})`);
      return;
    }
  }
}
