/**
 * The local edge of `npm start`: a loopback reverse proxy in front of `wrangler dev`
 * doing, locally, what Cloudflare's edge does for a deployed Worker:
 *  - CF-Connecting-IP is the socket's address, whatever the client sent, so the
 *    per-address rate limits, login throttling and the audit log see the real client;
 *  - GET /cdn-cgi/handler/scheduled fires the Cron Trigger (wrangler dev's own handler
 *    for that path cannot reach a Worker that has Static Assets in front of it; the
 *    Worker's `--test-scheduled` route /__scheduled can).
 * Everything else is streamed through unchanged, both ways. Each request is logged as
 * wrangler's dev proxy logs it (method, path without the query, status, duration): the
 * edge forwards past that proxy (start.mjs), and a query string may carry what a log
 * must not.
 *
 * `worker()` names where to forward, asked per request: the Worker's runtime may move to
 * another port when wrangler restarts it (start.mjs).
 */
import { createServer, request, Agent } from "node:http";
import { createServer as createNetServer } from "node:net";

/** A free loopback port (the OS picks it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** What the edge answers (502) while the Worker's runtime is not up: starting, or being replaced. */
export const WORKER_UNAVAILABLE = "The local Worker is not answering (starting or restarting)";

export function startLocalEdge({ port, worker }) {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const server = createServer((req, res) => {
    const started = performance.now();
    res.on("finish", () => {
      const pathname = (req.url ?? "/").split("?")[0];
      console.log(`[edge] ${req.method} ${pathname} ${res.statusCode} ${res.statusMessage ?? ""} (${Math.round(performance.now() - started)}ms)`);
    });
    let path = req.url ?? "/";
    if (path === "/cdn-cgi/handler/scheduled" || path.startsWith("/cdn-cgi/handler/scheduled?")) {
      path = "/__scheduled" + path.slice("/cdn-cgi/handler/scheduled".length);
    }
    const target = new URL(worker());
    const headers = { ...req.headers, host: target.host, "cf-connecting-ip": normalizeAddress(req.socket.remoteAddress) };
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path, headers, agent }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.statusMessage, up.rawHeaders);
      up.pipe(res);
    });
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ success: false, error: { code: "internal_error", message: WORKER_UNAVAILABLE } }));
    });
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve({ close: () => server.close() }));
  });
}

/** `::ffff:127.0.0.1` -> `127.0.0.1`: the address as a Cloudflare edge would report it. */
function normalizeAddress(a) {
  if (!a) return "127.0.0.1";
  return a.startsWith("::ffff:") && a.includes(".") ? a.slice(7) : a;
}
