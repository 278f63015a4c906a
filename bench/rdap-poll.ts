/**
 * RDAP poll benchmark (issue 4): 1,000 monitored domains over 20 TLDs, polled by the
 * Cron Trigger against a local RDAP server.
 *
 *  - The local RDAP server is the test fixture (test/fixtures/servers/rdap.ts: real
 *    RFC 9083 answers from shared/data/rdap, re-labelled per name), run standalone here
 *    with a bootstrap file sending the 20 TLDs to it.
 *  - The service runs the README way (`npm start`, wrangler dev on workerd, local D1)
 *    with RDAP_BOOTSTRAP_URL pointing at that server and RDAP_CHECK_INTERVAL_SECONDS=0.
 *  - An enterprise organization (PUT /api/admin/subscription) creates the monitors
 *    through the API; the scheduled handler is fired (GET /__scheduled, npm start's --test-scheduled)
 *    until every monitor has been checked: wall time and peak RSS of the workerd
 *    processes (sampled every 50 ms) during the scheduled work.
 *  - A second full poll of the unchanged registrations: new rows and bytes in the
 *    snapshot tables, read from the local D1 with `wrangler d1 execute --local`
 *    (target: zero).
 *
 * Run: npx tsx bench/rdap-poll.ts   (BENCH_DOMAINS, BENCH_PORT to change the defaults)
 */
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
// @ts-expect-error bench/lib/server.mjs is plain JavaScript without a declaration file.
import { startService as startServiceUntyped } from "./lib/server.mjs";
import rdapFixture from "../test/fixtures/servers/rdap";

const startService = startServiceUntyped as (o: { port: number; env?: Record<string, string> }) => Promise<{ base: string; stop(): void; log(): string }>;
const DOMAINS = Number(process.env.BENCH_DOMAINS ?? 1000);
const PORT = Number(process.env.BENCH_PORT ?? 8796);
const TLDS = ["com", "fr", "cz", "no", "click", "moscow", "net", "org", "info", "biz", "io", "dev", "app", "xyz", "shop", "online", "site", "store", "tech", "eu"];
const root = new URL("..", import.meta.url).pathname;

// ---------------------------------------------------------------- local servers
type Fixture = { prefix: string; handle: (req: any, res: any, url: URL) => unknown };
const mounted: Fixture[] = [rdapFixture as Fixture];
try {
  // The CT log fixture only serves an empty signed log list, so the CT module's job (which
  // shares each Cron run) does not try the public CT logs of its bundled list offline.
  mounted.push((await import("../test/fixtures/servers/ct-log")).default as Fixture);
} catch (err) {
  console.warn(`(CT log fixture not available: ${String(err)}; Cron runs include the CT job's offline retries)`);
}
let rdapRequests = 0;
const hub = createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
  if (url.pathname === "/rdap/bootstrap.json") {
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({ version: "1.0", publication: "2024-02-07T04:00:02Z", services: [[TLDS, [`http://${req.headers.host}/rdap/`]]] }),
    );
    return;
  }
  if (url.pathname.startsWith("/rdap/domain/")) rdapRequests++;
  const f = mounted.find((m) => url.pathname.startsWith(m.prefix + "/"));
  if (!f) return void res.writeHead(404).end();
  try {
    await f.handle(req, res, url);
  } catch (err) {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(err));
  }
});
await new Promise<void>((r) => hub.listen(0, "127.0.0.1", r));
const hubUrl = `http://127.0.0.1:${(hub.address() as { port: number }).port}`;

const neighbourEnv: Record<string, string> = {};
if (mounted.length > 1) {
  try {
    const key = (await (await fetch(`${hubUrl}/ctlog/__control/loglist-key`)).json()) as { pem: string };
    const list = (await (
      await fetch(`${hubUrl}/ctlog/__control/loglists`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "bench-empty", logs: [] }) })
    ).json()) as { url: string };
    Object.assign(neighbourEnv, { CT_LOG_LIST_URL: list.url, CT_LOG_LIST_PUBLIC_KEY: key.pem });
  } catch (err) {
    console.warn(`(no empty CT log list: ${String(err)})`);
  }
}

// ---------------------------------------------------------------- memory sampling
/** workerd processes descending from `ancestor`. */
function workerdPids(ancestor: number): number[] {
  const parent = new Map<number, number>();
  const name = new Map<number, string>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      name.set(Number(d), stat.slice(stat.indexOf("(") + 1, close));
      parent.set(Number(d), Number(stat.slice(close + 2).split(" ")[1]));
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  for (const [pid, comm] of name) {
    if (!comm.startsWith("workerd")) continue;
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === ancestor) {
        out.push(pid);
        break;
      }
    }
  }
  return out;
}
function rssBytes(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      /* gone */
    }
  }
  return total;
}
/** The `npm start` process of our port: the service's process tree root. */
function servicePid(): number {
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, "utf8");
      const envs = readFileSync(`/proc/${d}/environ`, "utf8").split("\0");
      if (cmd.includes("scripts/start.mjs") && envs.includes(`PORT=${PORT}`)) return Number(d);
    } catch {
      /* not ours */
    }
  }
  throw new Error("service process not found");
}

// ---------------------------------------------------------------- helpers
function d1(query: string): Record<string, number>[] {
  const out = execFileSync(`${root}node_modules/.bin/wrangler`, ["d1", "execute", "DB", "--local", "--json", "--command", query], {
    cwd: root,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return JSON.parse(out)[0].results;
}
function storage() {
  const [s] = d1("SELECT COUNT(*) AS rows, COALESCE(SUM(size_bytes), 0) AS bytes FROM rdap_snapshots");
  const [h] = d1("SELECT (SELECT COUNT(*) FROM rdap_history) AS history, (SELECT COUNT(*) FROM rdap_change_facts) AS facts");
  return { snapshots: s.rows, bytes: s.bytes, history: h.history, facts: h.facts };
}
async function pool<T>(items: T[], n: number, fn: (t: T) => Promise<void>) {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (i < items.length) await fn(items[i++]);
  }));
}

// ---------------------------------------------------------------- the run
const svc = await startService({
  port: PORT,
  env: {
    RDAP_BOOTSTRAP_URL: `${hubUrl}/rdap/bootstrap.json`,
    RDAP_CHECK_INTERVAL_SECONDS: "0",
    RATE_LIMIT_ORG_PER_MINUTE: "100000000",
    RATE_LIMIT_TOKEN_PER_MINUTE: "100000000",
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: "100000000",
    ...neighbourEnv,
  },
});
const api = async (method: string, path: string, token?: string, body?: unknown) => {
  const res = await fetch(svc.base + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json().catch(() => null)) as any;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};
const created: number[] = [];
let token = "";
try {
  const run = Date.now().toString(36);
  const signup = await api("POST", "/api/auth/signup", undefined, { organization_name: "RDAP bench", email: `rdap-bench-${run}@example.com`, password: "benchmark password 1" });
  token = signup.token;
  await api("PUT", "/api/admin/subscription", token, { tier: "enterprise" });
  const names = Array.from({ length: DOMAINS }, (_, i) => `bench-${run}-${i}.${TLDS[i % TLDS.length]}`);
  const t0 = performance.now();
  await pool(names, 16, async (n) => {
    created.push((await api("POST", "/api/rdap/domains", token, { domain_name: n })).id);
  });
  console.log(`created ${created.length} monitors over ${TLDS.length} TLDs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const service = servicePid();
  const idleRss = rssBytes(workerdPids(service));
  let peakRss = idleRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssBytes(workerdPids(service)))), 50);

  const checkedSince = async (since: string) => {
    const list = await api("GET", "/api/rdap/domains?limit=1000", token);
    return (list.domains as any[]).filter((d) => d.last_checked_at !== null && d.last_checked_at >= since && d.last_check_status === "success").length;
  };
  async function fullPoll(label: string) {
    const since = new Date().toISOString();
    const requests0 = rdapRequests;
    const start = performance.now();
    let runs = 0;
    let done = 0;
    while (done < DOMAINS && runs < 50) {
      const r = await fetch(`${svc.base}/__scheduled`);
      await r.arrayBuffer();
      runs++;
      done = await checkedSince(since);
    }
    const seconds = (performance.now() - start) / 1000;
    return { label, runs, done, seconds, lookups: rdapRequests - requests0 };
  }

  const before = storage();
  peakRss = idleRss;
  const first = await fullPoll("first poll (all new)");
  const peakFirst = peakRss;
  const afterFirst = storage();
  peakRss = idleRss;
  const second = await fullPoll("second poll (unchanged)");
  const peakSecond = peakRss;
  const afterSecond = storage();
  clearInterval(sampler);

  const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
  console.log(`\nRDAP poll benchmark: ${DOMAINS} domains, ${TLDS.length} TLDs, local RDAP server, wrangler dev (workerd) + local D1\n`);
  console.log("poll                    | Cron runs | lookups | wall s | domains/s | peak workerd RSS MB (idle before)");
  console.log("------------------------|-----------|---------|--------|-----------|----------------------------------");
  for (const [p, peak] of [[first, peakFirst], [second, peakSecond]] as const) {
    console.log(
      `${p.label.padEnd(23)} | ${String(p.runs).padStart(9)} | ${String(p.lookups).padStart(7)} | ${p.seconds.toFixed(1).padStart(6)} | ${(p.done / p.seconds).toFixed(0).padStart(9)} | ${mb(peak)} (${mb(idleRss)})`,
    );
  }
  const newRows = afterSecond.snapshots - afterFirst.snapshots;
  const newBytes = afterSecond.bytes - afterFirst.bytes;
  console.log(`\nstorage after first poll : +${afterFirst.snapshots - before.snapshots} snapshot rows (+${afterFirst.bytes - before.bytes} bytes), +${afterFirst.history - before.history} history rows, +${afterFirst.facts - before.facts} facts rows`);
  console.log(`storage after second poll: +${newRows} snapshot rows, +${newBytes} bytes, +${afterSecond.history - afterFirst.history} history rows, +${afterSecond.facts - afterFirst.facts} facts rows`);
  console.log(`snapshot storage per unchanged poll: ${newBytes} bytes (${(newBytes / DOMAINS).toFixed(1)} bytes/domain; target 0) -> ${newRows === 0 && newBytes === 0 ? "MET" : "NOT MET"}`);
  if (first.done < DOMAINS || second.done < DOMAINS) console.log(`WARNING: only ${first.done} / ${second.done} of ${DOMAINS} checked successfully`);
} finally {
  // Leave the local database as found: with a 0 s interval these monitors would be polled by every later Cron run.
  if (token) await pool(created, 16, async (id) => void (await api("DELETE", `/api/rdap/domains/${id}`, token).catch(() => null)));
  svc.stop();
  hub.closeAllConnections();
  hub.close();
}
