// One probe = one TCP connection: optional STARTTLS, one ClientHello, and the server's answer
// read up to what the caller needs. The outcome says accepted / rejected / unknown; a timeout
// is never "rejected" (a slow or rate-limiting server must not shrink the findings).
import { anatomyOf } from "@trust-plane/tls-frameworks";
import { Connection, ConnectError, ConnectionClosed, ProbeTimeout } from "./connection";
import { negotiateStartTls, StartTlsError, type StartTlsProtocol } from "./starttls";
import { ephemeralKeys, ServerHandshakeDecrypter, TLS13_DECRYPTABLE } from "./tls13-keys";
import {
  buildClientHello, CONTENT, HS, parseAlert, parseCertificateMessage, parseCertificateMessage13, parseServerHello,
  parseServerKeyExchange, splitHandshakes, splitRecords, TlsParseError, VERSION,
  type Alert, type ClientHelloSpec, type ServerHello, type ServerKeyExchange,
} from "./wire";

export interface Endpoint {
  host: string;
  port: number;
  /** SNI and STARTTLS domain; may be empty. */
  serverName: string;
  starttls: StartTlsProtocol | null;
  timeoutMs: number;
}

export type ProbeOutcome =
  | { kind: "accepted"; serverHello: ServerHello; certificates?: Buffer[]; serverKeyExchange?: ServerKeyExchange }
  | { kind: "rejected"; reason: string; alert?: Alert }
  | { kind: "unknown"; reason: string; fault: FaultKind };

/** Why a probe could not tell: no answer in time, no connection, a failed STARTTLS dialogue, an answer that is not TLS. */
export type FaultKind = "timeout" | "connect" | "starttls" | "protocol";

export interface ProbeOptions {
  /**
   * "hello": stop at ServerHello/HRR. "certificate": also read the served chain and
   * ServerKeyExchange (TLS <= 1.2 cleartext; TLS 1.3 by decrypting the handshake flight).
   */
  readUntil: "hello" | "certificate";
}

export async function probe(ep: Endpoint, spec: Omit<ClientHelloSpec, "serverName" | "keyShares"> & { keyShares?: "none" | "ephemeral" }, opts: ProbeOptions = { readUntil: "hello" }): Promise<ProbeOutcome> {
  let conn: Connection | undefined;
  try {
    conn = await Connection.open(ep.host, ep.port, ep.timeoutMs);
    if (ep.starttls) await negotiateStartTls(conn, ep.starttls, ep.serverName || ep.host);
    const keys = spec.version === "TLSv1.3" && spec.keyShares === "ephemeral" ? ephemeralKeys() : undefined;
    const hello = buildClientHello({ ...spec, serverName: ep.serverName, keyShares: keys?.shares ?? [] });
    conn.write(hello);
    return await readAnswer(conn, hello.subarray(5), keys, opts);
  } catch (e) {
    return classify(e);
  } finally {
    conn?.close();
  }
}

function classify(e: unknown): ProbeOutcome {
  if (e instanceof ProbeTimeout) return { kind: "unknown", fault: "timeout", reason: e.message };
  if (e instanceof ConnectError) return { kind: "unknown", fault: "connect", reason: e.message };
  if (e instanceof StartTlsError) return { kind: "unknown", fault: "starttls", reason: e.message };
  if (e instanceof ConnectionClosed) return { kind: "rejected", reason: e.message };
  if (e instanceof TlsParseError) return { kind: "unknown", fault: "protocol", reason: e.message };
  return { kind: "unknown", fault: "protocol", reason: `unexpected failure: ${(e as Error)?.message ?? String(e)}` };
}

async function readAnswer(conn: Connection, clientHelloMsg: Buffer, keys: ReturnType<typeof ephemeralKeys> | undefined, opts: ProbeOptions): Promise<ProbeOutcome> {
  let hsStream = Buffer.alloc(0);
  let serverHello: ServerHello | undefined;
  let serverHelloMsg: Buffer | undefined;
  let certificates: Buffer[] | undefined;
  let ske: ServerKeyExchange | undefined;
  let decrypter: ServerHandshakeDecrypter | undefined;
  let encStream = Buffer.alloc(0);
  const result = (): ProbeOutcome => ({ kind: "accepted", serverHello: serverHello!, certificates, serverKeyExchange: ske });

  const step = (buf: Buffer): ProbeOutcome | undefined => {
    if (buf.length === 0) return undefined;
    // A server that answers HTTP or anything but TLS: detect on the first bytes.
    const { records, rest } = splitRecords(buf);
    conn.take(buf.length - rest.length);
    for (const rec of records) {
      if (rec.type === CONTENT.alert) {
        if (serverHello) return result(); // alert after ServerHello (e.g. our missing Finished): still accepted
        const alert = parseAlert(rec.payload);
        return { kind: "rejected", reason: `alert ${alert.name}`, alert };
      }
      if (rec.type === CONTENT.changeCipherSpec) continue;
      if (rec.type === CONTENT.applicationData) {
        if (!decrypter) {
          if (serverHello) return result();
          throw new TlsParseError("application data before ServerHello");
        }
        const header = Buffer.from([rec.type, rec.version >> 8, rec.version & 0xff, rec.payload.length >> 8, rec.payload.length & 0xff]);
        const inner = decrypter.decrypt(header, rec.payload);
        if (inner.type === CONTENT.alert) return result();
        if (inner.type !== CONTENT.handshake) continue;
        encStream = Buffer.concat([encStream, inner.plaintext]);
        const { messages, rest: encRest } = splitHandshakes(encStream);
        encStream = Buffer.from(encRest);
        for (const m of messages) {
          if (m.type === HS.certificate) { certificates = parseCertificateMessage13(m.body); return result(); }
          if (m.type === HS.finished) return result(); // PSK-only: no certificate
        }
        continue;
      }
      if (rec.type !== CONTENT.handshake) throw new TlsParseError(`unexpected record type ${rec.type}`);
      hsStream = Buffer.concat([hsStream, rec.payload]);
      const { messages, rest: hsRest } = splitHandshakes(hsStream);
      hsStream = Buffer.from(hsRest);
      for (const m of messages) {
        if (!serverHello) {
          if (m.type !== HS.serverHello) throw new TlsParseError(`expected ServerHello, got handshake type ${m.type}`);
          serverHello = parseServerHello(m.body);
          serverHelloMsg = Buffer.concat([Buffer.from([m.type, m.body.length >> 16, (m.body.length >> 8) & 0xff, m.body.length & 0xff]), m.body]);
          if (opts.readUntil === "hello" || serverHello.isHelloRetryRequest) return result();
          if (serverHello.version === VERSION["TLSv1.3"]) {
            const params = TLS13_DECRYPTABLE[serverHello.cipherSuite];
            if (!keys || !params || serverHello.selectedGroup === undefined || !serverHello.keyShare) return result();
            const shared = keys.sharedSecret(serverHello.selectedGroup, serverHello.keyShare);
            decrypter = new ServerHandshakeDecrypter(params, shared, Buffer.concat([clientHelloMsg, serverHelloMsg]));
          }
          continue;
        }
        if (m.type === HS.certificate) certificates = parseCertificateMessage(m.body);
        else if (m.type === HS.serverKeyExchange) ske = parseServerKeyExchange(m.body, anatomyOf(serverHello.cipherSuite).keyExchange);
        else if (m.type === HS.serverHelloDone) return result();
      }
    }
    return undefined;
  };

  try {
    return await conn.until(step, "server handshake");
  } catch (e) {
    // The server hung up or stalled after its ServerHello: what we have is still an acceptance.
    if (serverHello && (e instanceof ConnectionClosed || e instanceof ProbeTimeout)) return result();
    throw e;
  }
}
