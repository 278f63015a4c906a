/**
 * The service started the README way (`npm start`) on a free port, its external URLs
 * pointed at the fixture hub (CT logs, RDAP server, DoH resolver) so no scheduled
 * job reaches for the internet. Used by the browser tests' global-setup.ts and by
 * `npm run bench:web`. Plain Node, no vitest.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import type { HubSetup } from "./seed";

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

/**
 * The settings of a service that reads only the hub and collects at every Cron run
 * (intervals 0), so a test sees data within seconds of creating an asset.
 */
export function hubEnv(hubUrl: string, hub: HubSetup): NodeJS.ProcessEnv {
  return {
    SIGNUP_ENABLED: "true",
    SMTP_URL: "",
    CT_LOG_LIST_URL: hub.logListUrl,
    CT_LOG_LIST_PUBLIC_KEY: hub.logListPem,
    CT_POLL_SPREAD_SECONDS: "0",
    CT_START_POSITION: "start",
    RDAP_BOOTSTRAP_URL: `${hubUrl}/rdap/bootstrap.json`,
    RDAP_CHECK_INTERVAL_SECONDS: "0",
    DOH_RESOLVER_URLS: `${hubUrl}/doh/${hub.ns}/dns-query`,
    DNS_CHECK_INTERVAL_SECONDS: "0",
    // MTA-STS policies from the hub's policy server (test/fixtures/servers/mta-sts.ts).
    MTA_STS_POLICY_URL: `${hubUrl}/mta-sts/{domain}/.well-known/mta-sts.txt`,
    SCAN_INTERVAL_SECONDS: "0",
    // Incident tools: their local receivers on the hub (test/fixtures/servers/providers.ts).
    PAGERDUTY_EVENTS_URL: `${hubUrl}/providers/pagerduty/v2/enqueue`,
    PAGERDUTY_EU_EVENTS_URL: `${hubUrl}/providers/pagerduty/eu/v2/enqueue`,
    OPSGENIE_API_URL: `${hubUrl}/providers/opsgenie`,
    OPSGENIE_EU_API_URL: `${hubUrl}/providers/opsgenie/eu`,
    // Every client signs up from 127.0.0.1: the anonymous bucket is per client IP.
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: "100000",
    // The hub is on loopback, which the egress policy refuses for user-given URLs
    // (webhooks): allow exactly the hub, as the Worker tests do.
    EGRESS_ALLOWLIST: new URL(hubUrl).host,
    // An organization "created weeks ago" (its weekly reports) signs up with X-Trust-Plane-Now.
    ALLOW_CLOCK_OVERRIDE: "true",
  };
}

export interface RunningService {
  baseUrl: string;
  /** What npm start printed (the end of it), for a failure message. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * `npm start` with `env` over the current environment and state in `stateDir`; resolves once /api/health answers.
 * `host`: the name the service is reached and addressed by (PUBLIC_BASE_URL); `localhost` where the
 * browser needs a domain rather than an address (a WebAuthn relying party id cannot be an IP address).
 */
export async function startService(opts: { stateDir: string; env: NodeJS.ProcessEnv; timeoutMs?: number; host?: "127.0.0.1" | "localhost" }): Promise<RunningService> {
  const port = await freePort();
  const baseUrl = `http://${opts.host ?? "127.0.0.1"}:${port}`;
  // PUBLIC_BASE_URL is left to npm start's default (the address it serves), which the browser tests' invitation links rely on.
  const { PUBLIC_BASE_URL: _unset, ...inherited } = process.env;
  const publicBase = opts.host === "localhost" ? { PUBLIC_BASE_URL: baseUrl } : {};
  const env = { ...inherited, ...opts.env, ...publicBase, PORT: String(port), TRUST_PLANE_STATE_DIR: opts.stateDir };
  const server: ChildProcess = spawn("npm", ["start"], { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  const keep = (d: Buffer) => {
    log = (log + d).slice(-20_000);
  };
  server.stdout?.on("data", keep);
  server.stderr?.on("data", keep);
  const stop = async () => {
    if (!server.pid || server.exitCode !== null) return;
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
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 150_000);
  for (;;) {
    if (server.exitCode !== null) throw new Error(`npm start exited with ${server.exitCode}:\n${log.slice(-4000)}`);
    try {
      if ((await fetch(`${baseUrl}/api/health`)).ok) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`npm start did not answer on ${baseUrl}:\n${log.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return { baseUrl, log: () => log, stop };
}
