// Plaintext upgrade dialogues that precede the ClientHello. Each leaves the connection at the
// point where the server expects TLS bytes; a refusal is a StartTlsError with the server's words.
import type { Connection } from "./connection";

export type StartTlsProtocol = "smtp" | "imap" | "pop3" | "ftp" | "ldap" | "xmpp" | "postgres";
export const STARTTLS_PROTOCOLS: readonly StartTlsProtocol[] = ["smtp", "imap", "pop3", "ftp", "ldap", "xmpp", "postgres"];

/** Conventional plaintext ports, used to pick a default when --starttls is given without one. */
export const STARTTLS_PORTS: Record<number, StartTlsProtocol> = { 25: "smtp", 587: "smtp", 143: "imap", 110: "pop3", 21: "ftp", 389: "ldap", 5222: "xmpp", 5432: "postgres" };

export class StartTlsError extends Error { override name = "StartTlsError"; }

/** A complete reply: for SMTP/FTP the last line of a multi-line reply is "NNN " (space). */
function lineReply(code: RegExp) {
  return (buf: Buffer): string | undefined => {
    const text = buf.toString("latin1");
    const lines = text.split("\r\n");
    if (lines.length < 2) return undefined;
    for (const l of lines.slice(0, -1)) if (code.test(l) || !/^\d{3}-/.test(l)) return l;
    return undefined;
  };
}
const firstLine = (buf: Buffer): string | undefined => {
  const i = buf.indexOf("\r\n");
  return i < 0 ? (buf.indexOf("\n") < 0 ? undefined : buf.toString("latin1", 0, buf.indexOf("\n"))) : buf.toString("latin1", 0, i);
};

async function reply(c: Connection, check: (b: Buffer) => string | undefined, what: string): Promise<string> {
  const line = await c.until(check, what);
  c.take(c.buf.length);
  return line;
}

async function smtpLike(c: Connection, greetingCode: string, hello: string | null, command: string, okCode: string, name: string) {
  const final = lineReply(/^\d{3} /);
  const greet = await reply(c, final, `${name} greeting`);
  if (!greet.startsWith(greetingCode)) throw new StartTlsError(`${name} greeting refused: ${greet}`);
  if (hello) {
    c.write(hello + "\r\n");
    const ehlo = await reply(c, final, `${name} EHLO reply`);
    if (!ehlo.startsWith("250")) throw new StartTlsError(`${name} EHLO refused: ${ehlo}`);
  }
  c.write(command + "\r\n");
  const ok = await reply(c, final, `${name} ${command} reply`);
  if (!ok.startsWith(okCode)) throw new StartTlsError(`${name} ${command} refused: ${ok}`);
}

// LDAP ExtendedRequest(messageID 1, requestName 1.3.6.1.4.1.1466.20037) in BER (RFC 4511 §4.14).
const LDAP_STARTTLS = Buffer.from("301d02010177188016312e332e362e312e342e312e313436362e3230303337", "hex");

export async function negotiateStartTls(c: Connection, protocol: StartTlsProtocol, domain: string): Promise<void> {
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
      const tagged = (b: Buffer) => b.toString("latin1").split("\r\n").find((l) => l.startsWith("a1 "));
      const ok = await reply(c, tagged, "IMAP STARTTLS reply");
      if (!/^a1 OK/i.test(ok)) throw new StartTlsError(`IMAP STARTTLS refused: ${ok}`);
      return;
    }
    case "ldap": {
      c.write(LDAP_STARTTLS);
      // ExtendedResponse: SEQUENCE { messageID, [APPLICATION 24] { resultCode ENUMERATED ... } }
      const resp = await c.until((b) => (b.length >= 2 && b.length >= 2 + b[1] && b[1] < 0x80 ? b.subarray(0, 2 + b[1]) : undefined), "LDAP ExtendedResponse");
      c.take(resp.length);
      const i = resp.indexOf(Buffer.from([0x0a, 0x01]));
      const code = i >= 0 ? resp[i + 2] : -1;
      if (code !== 0) throw new StartTlsError(`LDAP StartTLS refused: resultCode ${code}`);
      return;
    }
    case "xmpp": {
      c.write(`<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' to='${domain.replace(/[<>'&"]/g, "")}' version='1.0'>`);
      await c.until((b) => (b.includes("</stream:features>") ? true : undefined), "XMPP stream features");
      const features = c.take(c.buf.length).toString("utf8");
      if (!features.includes("urn:ietf:params:xml:ns:xmpp-tls")) throw new StartTlsError("XMPP server does not offer starttls");
      c.write("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
      const ans = await c.until((b) => (/<(proceed|failure)/.test(b.toString("utf8")) && b.includes(">") ? b.toString("utf8") : undefined), "XMPP proceed");
      c.take(c.buf.length);
      if (!ans.includes("<proceed")) throw new StartTlsError(`XMPP starttls refused: ${ans.slice(0, 100)}`);
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
