/**
 * Starts what the browser tests run against: the fixture hub (local CT logs, RDAP
 * server, DoH resolver: test/fixtures), then the service exactly as the README
 * says (`npm start`), on a free port, with a fresh local state directory and its
 * external URLs pointed at the hub. The tests receive the base URL by `inject`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startHub } from "../../test/fixtures/hub.js";
import { assertSharedData } from "../../test/fixtures/shared-data-dir.js";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    hubUrl: string;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function postJson(url: string, body: unknown): Promise<any> {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

export default async function setup(project: TestProject) {
  assertSharedData();
  const hub = await startHub();
  // Two CT logs the service reads from their current end: real entries appended by the
  // tests later become matches (navigli2025h2 static-ct tiles; pilot over RFC 6962).
  await postJson(`${hub.url}/ctlog/__control/logs`, { name: "webtiles", from: "navigli2025h2", size: 256 });
  await postJson(`${hub.url}/ctlog/__control/logs`, { name: "webrfc", from: "pilot", size: 2, leafIndexExtension: false });
  const { url: logListUrl } = await postJson(`${hub.url}/ctlog/__control/loglists`, {
    name: "web",
    logs: [
      { log: "webtiles", protocol: "static-ct" },
      { log: "webrfc", protocol: "rfc6962" },
    ],
  });
  const { pem } = (await (await fetch(`${hub.url}/ctlog/__control/loglist-key`)).json()) as { pem: string };
  // chixbbq.org forbids every CA: its certificates are CAA violations.
  await postJson(`${hub.url}/doh/__control/zone`, { ns: "web", records: [{ name: "chixbbq.org", type: "CAA", ttl: 300, data: { flags: 0, tag: "issue", value: ";" } }] });

  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const stateDir = mkdtempSync(join(tmpdir(), "trust-plane-web-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    TRUST_PLANE_STATE_DIR: stateDir,
    PUBLIC_BASE_URL: baseUrl,
    SIGNUP_ENABLED: "true",
    SMTP_URL: "",
    CT_LOG_LIST_URL: logListUrl,
    CT_LOG_LIST_PUBLIC_KEY: pem,
    CT_POLL_SPREAD_SECONDS: "0",
    CT_START_POSITION: "start",
    RDAP_BOOTSTRAP_URL: `${hub.url}/rdap/bootstrap.json`,
    RDAP_CHECK_INTERVAL_SECONDS: "0",
    DOH_RESOLVER_URLS: `${hub.url}/doh/web/dns-query`,
    DNS_CHECK_INTERVAL_SECONDS: "0",
    SCAN_INTERVAL_SECONDS: "0",
    // Every test signs up from 127.0.0.1: the anonymous bucket is per client IP.
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: "100000",
    // The hub is on loopback, which the egress policy refuses for user-given URLs
    // (webhooks): allow exactly the hub, as the Worker tests do.
    EGRESS_ALLOWLIST: new URL(hub.url).host,
    // An organization "created last week" (reports.e2e.ts) signs up with X-Trust-Plane-Now.
    ALLOW_CLOCK_OVERRIDE: "true",
  };
  const server: ChildProcess = spawn("npm", ["start"], { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  server.stdout?.on("data", (d) => (log += d));
  server.stderr?.on("data", (d) => (log += d));
  const deadline = Date.now() + 150_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`npm start exited with ${server.exitCode}:\n${log.slice(-4000)}`);
    try {
      if ((await fetch(`${baseUrl}/api/health`)).ok) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`npm start did not answer on ${baseUrl}:\n${log.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  project.provide("baseUrl", baseUrl);
  project.provide("hubUrl", hub.url);

  return async () => {
    if (server.pid && server.exitCode === null) {
      const exited = new Promise((r) => server.once("exit", r));
      try {
        process.kill(-server.pid, "SIGTERM");
      } catch {
        /* already gone */
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      try {
        process.kill(-server.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
    await hub.close();
    rmSync(stateDir, { recursive: true, force: true });
  };
}
