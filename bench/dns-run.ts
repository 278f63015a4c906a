/**
 * DNS watcher benchmark (issue 10): one scheduled run over 1,000 watched domains (7 record
 * sets each, the default set) against the local DNS lab, next to the same resolutions done
 * by a bare loop over the DoH client.
 *
 *  - The lab is the test counterpart (test/fixtures/dns-lab.ts: BIND + Unbound + dnsdist on
 *    free ports). One signed zone `bench.test` holds d0000.bench.test ... with A, AAAA, MX,
 *    TXT (SPF), CAA and _dmarc TXT, so every record set has a real validated answer (NS is
 *    a validated NODATA). Every SPF record includes `_spf.bench.test`, as most domains
 *    include their mail provider's: the watcher asks that target once per run for all
 *    domains (reported apart: "SPF targets"), and the bare loop asks it too.
 *  - The service runs in workerd with a local D1 (a temporary directory, migrations applied),
 *    started with wrangler's own dev server (unstable_startWorker, as `wrangler dev` does)
 *    without file watching and without the DevTools inspector (see below). The domains are
 *    created through the API by an enterprise organization; each run is the Cron Trigger
 *    fired through the test-scheduled route /__scheduled (wrangler dev 4.86 no longer serves /cdn-cgi/handler/scheduled itself; `npm start` maps it, see scripts/local-edge.mjs) with DNS_CHECK_INTERVAL_SECONDS=0. The job
 *    logs one summary line per run (its duration and phases, D1 statements and rows written
 *    as D1 counts them), which we read from the Worker's output.
 *  - DoH queries are counted outside the service, by a forwarder in front of dnsdist that
 *    both the service and the bare loop use (it also counts TCP connections). History rows
 *    are counted in D1 after each run.
 *  - Runs: 1 baselines; 2 nothing changed; then one MX set in 100 is edited; 3 sees the
 *    edits; 4 nothing changed. The bare loop (createDohClient, the same 7,000 questions,
 *    the same concurrency, no D1) runs right before run 2 and right after run 4; each
 *    unchanged run is compared with the loop next to it (the machine is shared, so load
 *    drifts over minutes).
 *  - What made the first version of this benchmark fail:
 *    * in Node with wrangler's getPlatformProxy, every D1 `prepare()` is a synchronous
 *      cross-thread HTTP round trip: seeding 8,000 rows took minutes and, under load,
 *      tripped an assertion in miniflare's synchronous fetcher (`AssertionError: false ==
 *      true`, fetch-sync.ts: the reply was not there when the waiting thread woke up);
 *    * under `wrangler dev` (the CLI), wrangler's DevTools proxy forwards every network
 *      event of every subrequest (four per fetch) to its controller over a new loopback
 *      connection that workerd keeps open for minutes: 7,000 DoH queries in one run
 *      exhaust workerd's 20,000 file descriptors ("overloaded: ::socket ... Too many open
 *      files", the Worker stops answering) and slow every subrequest several-fold.
 *
 * Run: npm run bench:dns   (BENCH_DOMAINS, at most 1000: the enterprise quota)
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, get as httpGet, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_startWorker } from "wrangler";
import { createDohClient } from "../src/platform/dns/doh";
import { DEFAULT_RECORD_SETS } from "../src/modules/dns-watcher/service";
import type { DnsRunSummary } from "../src/modules/dns-watcher/resolver-run";
import { startDnsLab } from "../test/fixtures/dns-lab";
import ctLogFixture from "../test/fixtures/servers/ct-log";

const DOMAINS = Math.min(1000, Number(process.env.BENCH_DOMAINS ?? 1000));
const CONCURRENCY = 16;
const root = new URL("..", import.meta.url).pathname;
const wrangler = join(root, "node_modules/.bin/wrangler");
const execFileAsync = promisify(execFile);
const started = performance.now();
/** The benchmark's own output (stdout itself is taken over below to read the Worker's log lines). */
const stdout = process.stdout.write.bind(process.stdout);
const say = (line: string) => void stdout(`${line}\n`);
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
const names = Array.from({ length: DOMAINS }, (_, i) => `d${String(i).padStart(4, "0")}.bench.test`);
const recordSets = names.length * DEFAULT_RECORD_SETS("x").length;
/** The shared SPF include target every domain's policy reads (one question per run, whatever the number of domains). */
const SPF_TARGET = { name: "_spf.bench.test", type: "TXT" as const };
const questions = [...names.flatMap((n) => DEFAULT_RECORD_SETS(n)), SPF_TARGET];

const zone = (editedMx: (i: number) => boolean) =>
  names
    .map((fqdn, i) => {
      const n = fqdn.replace(".bench.test", "");
      return [
        `${n} IN A 192.0.2.${i % 250}`,
        `${n} IN AAAA 2001:db8::${i.toString(16)}`,
        `${n} IN MX ${editedMx(i) ? 30 : 10} mx.${n}`,
        `${n} IN TXT "v=spf1 include:_spf.bench.test -all"`,
        `${n} IN CAA 0 issue "letsencrypt.org"`,
        `_dmarc.${n} IN TXT "v=DMARC1; p=reject; rua=mailto:d@${fqdn}"`,
      ].join("\n");
    })
    .concat(`_spf IN TXT "v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32 -all"`)
    .join("\n");

// ---------------------------------------------------------------- counterparts
say(`DNS watcher benchmark: ${DOMAINS} domains x 7 record sets = ${recordSets} record sets`);
const lab = await startDnsLab({ zonesDir: new URL("../../shared/data/dns/lab/zones", import.meta.url).pathname });
await lab.putZone("bench.test", "signed", zone(() => false));
say(`[${elapsed()}] DNS lab up, zone bench.test signed (${DOMAINS * 6} records)`);

/** The DoH forwarder (counts every query) and the CT log fixture (an empty log list keeps the CT job quiet). */
let dohQueries = 0;
const hub = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  try {
    if (url.pathname === "/dns-query") {
      dohQueries++;
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = req.method === "POST" ? Buffer.concat(chunks) : undefined;
      const upstream = await fetch(lab.dohUrl + url.search, { method: req.method, headers: { accept: "application/dns-message", ...(body ? { "content-type": "application/dns-message" } : {}) }, body });
      res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "" }).end(Buffer.from(await upstream.arrayBuffer()));
      return;
    }
    if (url.pathname.startsWith("/ctlog/")) return void (await ctLogFixture.handle(req, res, url));
    res.writeHead(404).end();
  } catch (err) {
    if (!res.headersSent) res.writeHead(502);
    res.end(String(err));
  }
});
/** TCP connections the forwarder accepted: a client that does not reuse connections shows here. */
let dohConnections = 0;
hub.on("connection", () => void dohConnections++);
await new Promise<void>((r) => hub.listen(0, "127.0.0.1", r));
const hubUrl = `http://127.0.0.1:${(hub.address() as { port: number }).port}`;
const dohUrl = `${hubUrl}/dns-query`;
const ctKey = (await (await fetch(`${hubUrl}/ctlog/__control/loglist-key`)).json()) as { pem: string };
const ctList = (await (await fetch(`${hubUrl}/ctlog/__control/loglists`, { method: "POST", body: JSON.stringify({ name: "bench-empty", logs: [] }) })).json()) as { url: string };

// ---------------------------------------------------------------- the service
const state = mkdtempSync(join(tmpdir(), "bench-dns-"));
const wranglerEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };
execFileSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], { cwd: root, env: wranglerEnv, stdio: "ignore" });
const vars: Record<string, string> = {
  DOH_RESOLVER_URLS: dohUrl,
  DNS_CHECK_INTERVAL_SECONDS: "0",
  DNS_CONCURRENCY: String(CONCURRENCY),
  DNS_MAX_DOMAINS_PER_RUN: String(DOMAINS),
  CT_LOG_LIST_URL: ctList.url,
  CT_LOG_LIST_PUBLIC_KEY: ctKey.pem,
  RATE_LIMIT_ORG_PER_MINUTE: "100000000",
  RATE_LIMIT_TOKEN_PER_MINUTE: "100000000",
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: "100000000",
};

/** The job's summary lines (src/modules/dns-watcher/jobs.ts), caught on their way to stdout; the Worker's other output is kept as a tail. */
const runSummaries: DnsRunSummary[] = [];
let tail = "";
process.stdout.write = ((chunk: string | Uint8Array) => {
  const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
  const m = /dns-watcher\.resolve (\{.*\})/.exec(text);
  if (m) runSummaries.push(JSON.parse(m[1]) as DnsRunSummary);
  else tail = (tail + text).slice(-200_000);
  return true;
}) as typeof process.stdout.write;
const summaries = () => runSummaries;

// wrangler's dev server, started in this process the way `wrangler dev` starts it, minus two things that would
// distort the measurement: file watching (an edit would reload the Worker mid-run) and the DevTools inspector
// (wrangler forwards every DevTools network event of every subrequest to its controller over a new loopback
// connection; a run of 7,000 DoH queries exhausts workerd's file descriptors with them).
const service = await unstable_startWorker({
  config: join(root, "wrangler.toml"),
  bindings: Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, { type: "plain_text" as const, value: v }])),
  dev: { inspector: false, watch: false, testScheduled: true, persist: state, logLevel: "log", server: { hostname: "127.0.0.1", port: 0 } },
});
await service.ready;
const base = (await service.url).origin;
/** A query on the service's local D1 (asynchronous: a blocked event loop would miss the server closing idle connections). */
const d1 = async (query: string): Promise<Record<string, number>[]> =>
  JSON.parse((await execFileAsync(wrangler, ["d1", "execute", "DB", "--local", "--persist-to", state, "--json", "--command", query], { cwd: root, env: wranglerEnv, encoding: "utf8" })).stdout)[0].results;
const api = async (method: string, path: string, token?: string, body?: unknown) => {
  const res = await fetch(base + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json().catch(() => null)) as any;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};
async function inPool<T>(items: readonly T[], n: number, work: (t: T) => Promise<void>) {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (i < items.length) await work(items[i++]);
  }));
}

/** Fires the Cron Trigger and waits for the scheduled handler to finish (node:http: no 300 s header timeout as in fetch). */
function fireCron(): Promise<number> {
  return new Promise((resolve, reject) => {
    httpGet(`${base}/__scheduled`, { agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    }).on("error", reject);
  });
}

interface RunFigures {
  label: string;
  connections: number;
  seconds: number;
  cronSeconds: number;
  queries: number;
  history: number;
  summary: DnsRunSummary;
}
async function scheduledRun(label: string): Promise<RunFigures> {
  const before = summaries().length;
  const historyBefore = (await d1("SELECT COUNT(*) AS n FROM dns_history"))[0].n;
  dohQueries = 0;
  const connections0 = dohConnections;
  const t0 = performance.now();
  const status = await fireCron();
  const cronSeconds = (performance.now() - t0) / 1000;
  for (let i = 0; i < 100 && summaries().length === before; i++) await new Promise((r) => setTimeout(r, 50)); // the log line may trail the response
  const summary = summaries()[before];
  if (!summary) throw new Error(`${label}: no dns-watcher.resolve summary in the log (cron answered ${status})`);
  const history = (await d1("SELECT COUNT(*) AS n FROM dns_history"))[0].n - historyBefore;
  return { label, connections: dohConnections - connections0, seconds: summary.duration_ms / 1000, cronSeconds, queries: dohQueries, history, summary };
}

async function bareLoop(label: string): Promise<{ label: string; seconds: number; queries: number }> {
  const client = createDohClient({ resolverUrls: [dohUrl], timeoutMs: 5000 });
  dohQueries = 0;
  const t0 = performance.now();
  await inPool(questions, CONCURRENCY, async (q) => void (await client.query(q.name, q.type, { dnssecOk: true }).catch(() => undefined)));
  return { label, seconds: (performance.now() - t0) / 1000, queries: dohQueries };
}

try {
  const signup = await api("POST", "/api/auth/signup", undefined, { organization_name: "DNS bench", email: "dns-bench@example.com", password: "benchmark password 1" });
  await api("PUT", "/api/admin/subscription", signup.token, { tier: "enterprise" });
  await inPool(names, 8, async (n) => void (await api("POST", "/api/dns-watcher/domains", signup.token, { domain_name: n })));
  say(`[${elapsed()}] service on ${base} (wrangler dev server, local D1), ${DOMAINS} domains created through the API`);

  const run1 = await scheduledRun("run 1: baselines");
  const bare1 = await bareLoop("bare DoH loop (before run 2)");
  const run2 = await scheduledRun("run 2: nothing changed");
  await lab.putZone("bench.test", "signed", zone((i) => i % 100 === 0));
  const edited = Math.ceil(DOMAINS / 100);
  const run3 = await scheduledRun(`run 3: ${edited} MX set${edited === 1 ? "" : "s"} edited`);
  const run4 = await scheduledRun("run 4: nothing changed");
  const bare2 = await bareLoop("bare DoH loop (after run 4)");
  say(`[${elapsed()}] done\n`);

  const pad = (s: string, n: number) => s.padEnd(n);
  const num = (v: number, d = 2) => v.toFixed(d).padStart(8);
  /** Queries for the record sets: all queries but the SPF include/redirect target questions. */
  const setQueries = (r: RunFigures) => r.queries - r.summary.spf_target_queries;
  say(`${pad("", 30)}   wall s   cron s  queries  per set  SPF targets  history  statements  rows written  per domain  events`);
  for (const r of [run1, run2, run3, run4]) {
    const s = r.summary;
    say(
      `${pad(r.label, 30)} ${num(r.seconds)} ${num(r.cronSeconds)} ${String(r.queries).padStart(8)} ${num(setQueries(r) / recordSets, 3)} ${String(s.spf_target_queries).padStart(12)} ${String(r.history).padStart(8)} ${String(s.write_statements).padStart(11)} ${String(s.rows_written).padStart(13)} ${num(s.rows_written / DOMAINS)} ${String(s.events_emitted).padStart(7)}`,
    );
  }
  for (const r of [run1, run2, run3, run4]) say(`  ${r.label}: ${r.connections} connections to the resolver; ${Object.entries(r.summary.phases_ms).map(([k, v]) => `${k} ${(v / 1000).toFixed(2)} s`).join(", ")}`);
  for (const b of [bare1, bare2]) say(`${pad(b.label, 30)} ${num(b.seconds)} ${pad("", 8)} ${String(b.queries).padStart(8)} ${num((b.queries - 1) / recordSets, 3)} ${String(1).padStart(12)}`);

  // The machine is shared: each unchanged run is compared with the bare loop run next to it.
  const unchanged = [run2, run4];
  say(`\nFigures (unchanged runs 2 and 4, each next to the bare loop run beside it: ${bare1.seconds.toFixed(2)} s, ${bare2.seconds.toFixed(2)} s):`);
  say(`  wall time, scheduled run / bare DoH loop:  ${(run2.seconds / bare1.seconds).toFixed(2)}x, ${(run4.seconds / bare2.seconds).toFixed(2)}x`);
  say(`  DoH queries per record set:                ${unchanged.map((r) => (setQueries(r) / recordSets).toFixed(3)).join(", ")}   (target 1.000)`);
  say(`  SPF include/redirect target questions:     ${unchanged.map((r) => r.summary.spf_target_queries).join(", ")}   (one per distinct target: 1)`);
  say(`  history rows written:                      ${unchanged.map((r) => r.history).join(", ")}   (target 0)`);
  say(`  D1 rows written per domain:                ${unchanged.map((r) => (r.summary.rows_written / DOMAINS).toFixed(2)).join(", ")}   (target <= 1), in ${unchanged.map((r) => r.summary.write_statements).join(", ")} statement(s)`);
  say(`  run 3: ${setQueries(run3) - recordSets} queries beyond one per record set for ${edited} edited MX sets (target: one confirmation each), ${run3.history} history rows, ${run3.summary.events_emitted} events`);
  say(`  run 1 (baselines) / bare DoH loop:         ${(run1.seconds / bare1.seconds).toFixed(2)}x, ${(run1.summary.rows_written / DOMAINS).toFixed(2)} rows written per domain in ${run1.summary.write_statements} statements`);
} catch (err) {
  say(String((err as Error).stack ?? err));
  process.exitCode = 1;
} finally {
  const saved = join(tmpdir(), `bench-dns-wrangler-${Date.now()}.log`);
  writeFileSync(saved, tail);
  say(`Worker output (last 200 kB): ${saved}`);
  await service.dispose();
  hub.closeAllConnections();
  hub.close();
  await lab.stop();
  rmSync(state, { recursive: true, force: true });
}
