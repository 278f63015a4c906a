// End to end, as an operator runs it: the Trust-Plane API under `wrangler dev` (workerd,
// local D1), a certificate monitor created through the API, a real scanner-node agent
// process leasing the scan job and scanning a real `openssl s_server`, and the result
// visible through the API as indicators and history.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { generateKeyPairSync, sign } from "node:crypto";
import { createServer, type Server } from "node:http";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { builtCli } from "./helpers/cli";
import { makePki, type TestPki } from "./helpers/pki";
import { freePort, opensslServer, type Running } from "./helpers/servers";

const repo = resolve(__dirname, "../..");
const wrangler = join(repo, "node_modules/.bin/wrangler");
const childEnv = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" };

let pki: TestPki;
let tls: Running;
let api: ChildProcess;
let base: string;
let state: string;
let apiLog = "";
let logListServer: Server;

/**
 * An empty CT log list, signed like Google's, served locally: the API's Cron run then
 * monitors no public CT log (there is no network here).
 */
async function serveEmptyLogList(): Promise<{ url: string; keyPem: string }> {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const body = Buffer.from(JSON.stringify({ version: "e2e", log_list_timestamp: new Date().toISOString(), operators: [] }));
  const sig = sign("sha256", body, privateKey);
  logListServer = createServer((req, res) => res.end(req.url?.endsWith(".sig") ? sig : body));
  const port = await new Promise<number>((r) => logListServer.listen(0, "127.0.0.1", () => r((logListServer.address() as { port: number }).port)));
  return { url: `http://127.0.0.1:${port}/log_list.json`, keyPem: publicKey.export({ type: "spki", format: "pem" }).toString() };
}

beforeAll(async () => {
  pki = makePki();
  tls = await opensslServer({ cert: pki.files.rsa, key: pki.files.rsaKey, chain: pki.files.int, args: ["-tls1_2"] });
  state = mkdtempSync(join(tmpdir(), "tp-e2e-"));
  const migrate = spawnSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], { cwd: repo, env: childEnv, encoding: "utf8" });
  if (migrate.status !== 0) throw new Error(`migrations failed: ${migrate.stderr}${migrate.stdout}`);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const logList = await serveEmptyLogList();
  // wrangler.toml serves the web console's build as static assets: the directory must
  // exist (npm test builds it first; this test does not need its files).
  mkdirSync(join(repo, "dist", "web"), { recursive: true });
  api = spawn(
    wrangler,
    [
      "dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state, "--show-interactive-dev-session=false",
      // GET /__scheduled fires the Cron Trigger (as npm start does; with static assets in
      // front of the Worker, /cdn-cgi/handler/scheduled does not reach it).
      "--test-scheduled",
      // Every target is due at each scheduled run; no public CT log is monitored (no network here).
      "--var", "SCAN_INTERVAL_SECONDS:0", "--var", `CT_LOG_LIST_URL:${logList.url}`, "--var", `CT_LOG_LIST_PUBLIC_KEY:${logList.keyPem}`,
    ],
    { cwd: repo, env: childEnv, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  api.stdout!.on("data", (d) => (apiLog += d));
  api.stderr!.on("data", (d) => (apiLog += d));
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/api/health`)).ok) break;
    } catch { /* not up yet */ }
    if (i > 240) throw new Error(`API did not start:\n${apiLog}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}, 120_000);

afterAll(async () => {
  if (api?.pid) process.kill(-api.pid, "SIGTERM");
  await tls?.stop();
  logListServer?.close();
  if (state) rmSync(state, { recursive: true, force: true });
});

async function call(method: string, path: string, token?: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

it("a monitor created through the API is scanned by a real agent process; indicators and history appear", async () => {
  const signup = await call("POST", "/api/auth/signup", undefined, { organization_name: "E2E", email: "e2e@example.com", password: "end to end passphrase" });
  expect(signup.status, JSON.stringify(signup.body) + apiLog.slice(-3000)).toBe(201);
  const session = signup.body.token as string;

  const monitor = await call("POST", "/api/cert-watcher/monitors", session, {
    cn: "localhost", port: tls.port, ip_addresses: ["127.0.0.1"], root_ca: pki.caPem, notes: "e2e",
  });
  expect(monitor.status).toBe(201);
  const agentReg = await call("POST", "/api/cert-watcher/agents", session, { name: "e2e agent" });
  expect(agentReg.status).toBe(201);
  expect(agentReg.body.token).toMatch(/^tpa_/);

  // The Cron Trigger turns the due target into a scan job.
  expect((await fetch(`${base}/__scheduled`)).ok).toBe(true);

  // The shipped agent: compiled JavaScript under plain node, as `npm --prefix scanner-node start` runs it.
  const agent = spawn(process.execPath, [builtCli(), "agent", "--api", base, "--token", agentReg.body.token, "--concurrency", "2"], {
    cwd: resolve(__dirname, ".."), env: childEnv, stdio: ["ignore", "pipe", "pipe"],
  });
  let agentLog = "";
  agent.stdout!.on("data", (d) => (agentLog += d));
  agent.stderr!.on("data", (d) => (agentLog += d));
  // Listen from the start: an agent that dies early must fail the test, not hang it.
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((r) => agent.on("exit", (code) => r((exitCode = code))));

  let detail: any;
  for (let i = 0; i < 120 && exitCode === undefined; i++) {
    detail = (await call("GET", `/api/cert-watcher/monitors/${monitor.body.id}`, session)).body;
    if (detail.last_scan_time) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(exitCode, `the agent exited early:\n${agentLog}`).toBeUndefined();
  // Graceful shutdown on SIGTERM: the process exits by itself, with success.
  agent.kill("SIGTERM");
  expect(await exited, agentLog).toBe(0);

  expect(detail.last_scan_time, `no scan arrived; agent said:\n${agentLog}`).toBeTruthy();
  expect(detail.indicators).toMatchObject({
    validity_status: "valid",
    protocol_status: "modern",
    validation_status: "trusted",
    error_count: 0,
    target_count: 1,
  });
  expect(detail.indicators.min_days_left).toBeGreaterThan(100);

  const history = await call("GET", `/api/cert-watcher/history/${monitor.body.id}`, session);
  expect(history.status).toBe(200);
  expect(history.body.total).toBe(1);
  const scan = history.body.scans[0];
  expect(scan).toMatchObject({ has_error: false, ip_address: "127.0.0.1", protocol: ["TLSv1.2"], chain_length: 2, validation_status: "trusted" });
  expect(scan.intermediates[0].subject).toContain("Scanner Test Intermediate");
  expect(scan.frameworks.map((f: { id: string }) => f.id).sort()).toEqual(
    ["fips-140", "mozilla-intermediate", "mozilla-modern", "nist-sp-800-52r2", "pci-dss-4.0.1"],
  );
  // TLS 1.2 only: the modern (TLS 1.3 only) profile fails and says why.
  const modern = scan.frameworks.find((f: { id: string }) => f.id === "mozilla-modern");
  expect(modern.status).toBe("fail");
  expect(modern.reasons.length).toBeGreaterThan(0);
}, 120_000);

it("the target's collection state: a stopped TLS server makes it failing (connect) after two scans, its return makes it ok", async () => {
  const signup = await call("POST", "/api/auth/signup", undefined, { organization_name: "E2E collection", email: "e2e-coll@example.com", password: "end to end passphrase" });
  const session = signup.body.token as string;
  const server = await opensslServer({ cert: pki.files.rsa, key: pki.files.rsaKey, chain: pki.files.int, args: ["-tls1_2"] });
  const port = server.port;
  const monitor = await call("POST", "/api/cert-watcher/monitors", session, { cn: "localhost", port, ip_addresses: ["127.0.0.1"], root_ca: pki.caPem });
  const token = (await call("POST", "/api/cert-watcher/agents", session, { name: "e2e collection agent" })).body.token as string;
  const agent = spawn(process.execPath, [builtCli(), "agent", "--api", base, "--token", token, "--timeout", "1000"], {
    cwd: resolve(__dirname, ".."), env: childEnv, stdio: ["ignore", "pipe", "pipe"],
  });
  let agentLog = "";
  agent.stdout!.on("data", (d) => (agentLog += d));
  agent.stderr!.on("data", (d) => (agentLog += d));
  const target = async () => (await call("GET", `/api/cert-watcher/monitors/${monitor.body.id}`, session)).body.targets[0];
  /** Fires the schedule (every target is due: SCAN_INTERVAL_SECONDS=0) and waits for the agent's answer. */
  const scanned = async () => {
    const before = (await target()).collection.last_attempt_at;
    expect((await fetch(`${base}/__scheduled`)).ok).toBe(true);
    for (let i = 0; i < 160; i++) {
      const t = await target();
      if (t.collection.last_attempt_at !== before) return t;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`no attempt recorded; agent said:\n${agentLog}`);
  };
  let stopped = false;
  try {
    expect((await scanned()).collection).toMatchObject({ state: "ok", consecutive_failures: 0, error: null });
    await server.stop();
    stopped = true;
    const once = await scanned();
    expect(once.collection).toMatchObject({ state: "ok", consecutive_failures: 1, error: { class: "connect", message: `TLS scan of 127.0.0.1:${port} (localhost): connect to 127.0.0.1:${port} failed: ECONNREFUSED` } });
    const twice = await scanned();
    expect(twice.collection).toMatchObject({ state: "failing", consecutive_failures: 2, failing_since: once.collection.last_attempt_at, error: { class: "connect" } });
    const back = await opensslServer({ cert: pki.files.rsa, key: pki.files.rsaKey, chain: pki.files.int, args: ["-tls1_2"], port });
    stopped = false;
    try {
      expect((await scanned()).collection).toMatchObject({ state: "ok", consecutive_failures: 0, failing_since: null, error: null });
    } finally {
      await back.stop();
    }
  } finally {
    agent.kill("SIGTERM");
    if (!stopped) await server.stop().catch(() => undefined);
  }
}, 120_000);

