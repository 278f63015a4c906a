// Real local servers for the scanner tests and the benchmark: openssl s_server, gnutls-serv,
// nginx (unprivileged, temp prefix), a STARTTLS SMTP server in Node, and faulty servers
// (garbage, HTTP, hang, reset, oversized record).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, Socket, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TLSSocket, createSecureContext } from "node:tls";

export interface Running { port: number; host: string; stop(): Promise<void> }

export async function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, host, () => { const p = (s.address() as { port: number }).port; s.close(() => res(p)); });
  });
}

export async function waitForPort(port: number, host = "127.0.0.1", timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const ok = await new Promise<boolean>((res) => {
      const s = new Socket();
      s.once("error", () => { s.destroy(); res(false); });
      s.connect(port, host, () => { s.destroy(); res(true); });
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`port ${host}:${port} did not open`);
}

function spawnServer(cmd: string, args: string[], port: number, host = "127.0.0.1"): Promise<Running> {
  const child: ChildProcess = spawn(cmd, args, { stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d) => { stderr += d; });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return waitForPort(port, host).then(
    () => ({ port, host, stop: async () => { child.kill("SIGTERM"); await exited; } }),
    (e) => { child.kill("SIGKILL"); throw new Error(`${cmd} failed to start: ${(e as Error).message}\n${stderr}`); },
  );
}

/** openssl s_server with extra options (e.g. ["-tls1_2", "-cipher", "..."]). */
export async function opensslServer(opts: { cert: string; key: string; chain?: string; args?: string[]; host?: string; port?: number }): Promise<Running> {
  const host = opts.host ?? "127.0.0.1";
  const port = opts.port ?? (await freePort(host));
  const args = ["s_server", "-accept", `${host}:${port}`, "-cert", opts.cert, "-key", opts.key, "-naccept", "1000000", "-quiet", "-www",
    ...(opts.chain ? ["-cert_chain", opts.chain] : []), ...(opts.args ?? [])];
  return spawnServer("openssl", args, port, host);
}

/** gnutls-serv with a GnuTLS priority string (for suites OpenSSL 3 no longer has: 3DES, RC4). */
export async function gnutlsServer(opts: { cert: string; key: string; priority: string }): Promise<Running> {
  const port = await freePort();
  return spawnServer("gnutls-serv", ["--port", String(port), "--x509certfile", opts.cert, "--x509keyfile", opts.key, "--priority", opts.priority, "--disable-client-cert", "-q"], port);
}

/** nginx as an unprivileged process with a temp prefix and config. */
export async function nginxServer(opts: { cert: string; key: string; protocols: string; ciphers: string; curves?: string; preferServer?: boolean; host?: string }): Promise<Running> {
  const host = opts.host ?? "127.0.0.1";
  const port = await freePort(host);
  const dir = mkdtempSync(join(tmpdir(), "scanner-nginx-"));
  writeFileSync(join(dir, "nginx.conf"), `
daemon off; master_process off; worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 1024; }
http {
  access_log off; client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  server {
    listen ${host}:${port} ssl; server_name localhost;
    ssl_certificate ${opts.cert}; ssl_certificate_key ${opts.key};
    ssl_protocols ${opts.protocols}; ssl_ciphers ${opts.ciphers}; ssl_prefer_server_ciphers ${opts.preferServer ? "on" : "off"};
    ${opts.curves ? `ssl_ecdh_curve ${opts.curves};` : ""}
    location / { return 200 "ok"; }
  }
}`);
  return spawnServer("nginx", ["-p", dir, "-c", join(dir, "nginx.conf"), "-e", join(dir, "error.log")], port, host);
}

function nodeServer(onConn: (s: Socket) => void, host = "127.0.0.1"): Promise<Running> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => { sockets.add(s); s.on("close", () => sockets.delete(s)); s.on("error", () => {}); onConn(s); });
  return new Promise((res) => server.listen(0, host, () => res({
    port: (server.address() as { port: number }).port, host,
    stop: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  })));
}

export const garbageServer = () => nodeServer((s) => s.once("data", () => s.write(Buffer.from("\x00\xff\x13\x37garbage-not-tls\x00\x01\x02"))));
export const httpServer = () => nodeServer((s) => s.once("data", () => s.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")));
export const hangServer = () => nodeServer(() => { /* accept and never answer */ });
export const resetServer = () => nodeServer((s) => s.once("data", () => s.resetAndDestroy()));
/** A TLS handshake record header announcing 60000 bytes (over the 2^14+2048 limit). */
export const oversizedServer = () => nodeServer((s) => s.once("data", () => s.write(Buffer.from([22, 3, 3, 0xea, 0x60, 2, 0, 0]))));
/** A ServerHello record cut short, then the connection closed. */
export const truncatedServer = () => nodeServer((s) => s.once("data", () => s.end(Buffer.from([22, 3, 3, 0, 10, 2, 0, 0, 70, 3, 3]))));

/** Minimal SMTP server with STARTTLS, upgrading the socket with tls.TLSSocket (Node, TLS 1.2-1.3). */
export function smtpStartTlsServer(opts: { cert: string; key: string; chain?: string }): Promise<Running> {
  const context = createSecureContext({
    cert: readFileSync(opts.cert, "utf8") + (opts.chain ? readFileSync(opts.chain, "utf8") : ""), key: readFileSync(opts.key),
  });
  return nodeServer((s) => {
    s.write("220 mail.scan.test ESMTP test\r\n");
    let buf = "";
    const onData = (d: Buffer) => {
      buf += d.toString("latin1");
      let i: number;
      while ((i = buf.indexOf("\r\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (/^EHLO/i.test(line)) s.write("250-mail.scan.test\r\n250-PIPELINING\r\n250 STARTTLS\r\n");
        else if (/^STARTTLS/i.test(line)) {
          s.off("data", onData);
          s.write("220 2.0.0 Ready to start TLS\r\n");
          const t = new TLSSocket(s, { isServer: true, secureContext: context });
          t.on("error", () => s.destroy());
          return;
        } else if (/^QUIT/i.test(line)) s.end("221 bye\r\n");
        else s.write("502 unknown command\r\n");
      }
    };
    s.on("data", onData);
  });
}
