/**
 * DNS watcher benchmark (issues 10 and 29): scheduled runs over 1,000 watched domains against
 * the local DNS lab, first in today's configuration (the default 7 record sets, email checks
 * off), then with the email checks on (MTA-STS, TLS-RPT, DANE/TLSA, one DKIM selector, BIMI),
 * each next to a bare loop over the DoH client asking the same questions.
 *
 *  - The lab is the test counterpart (test/fixtures/dns-lab.ts: BIND + Unbound + dnsdist on
 *    free ports). One signed zone `bench.test` holds d0000.bench.test ... with A, AAAA, MX,
 *    TXT (SPF), CAA and _dmarc TXT, so every record set has a real validated answer (NS is
 *    a validated NODATA), and the email records of each domain: `_mta-sts` TXT,
 *    `_smtp._tls` TXT, `s1._domainkey` TXT (a real 2048-bit RSA key, test/dns-watcher/email-keys.ts),
 *    `default._bimi` TXT and `_25._tcp.mx.<domain>` TLSA (3 1 1 of the email tests' MX key),
 *    all signed. Every SPF record includes `_spf.bench.test`, as most domains include their
 *    mail provider's: the watcher asks that target once per run for all domains (reported
 *    apart: "SPF targets"), and the bare loop asks it too.
 *  - MTA-STS policies come from the email tests' policy server (test/fixtures/servers/mta-sts.ts)
 *    mounted on the bench's own HTTP server; MTA_STS_POLICY_URL points at it (plain HTTP on
 *    loopback, let through the egress policy by EGRESS_ALLOWLIST, as an operator would for a
 *    local server). Policy fetches are counted there, not by the service.
 *  - The service runs in workerd with a local D1 (a temporary directory, migrations applied),
 *    started with wrangler's own dev server (unstable_startWorker, as `wrangler dev` does)
 *    without file watching and without the DevTools inspector (see below). The domains are
 *    created through the API by an enterprise organization; each run is the Cron Trigger
 *    fired through the test-scheduled route /__scheduled (wrangler dev 4.86 no longer serves
 *    /cdn-cgi/handler/scheduled itself; `npm start` maps it, see scripts/local-edge.mjs) with
 *    DNS_CHECK_INTERVAL_SECONDS=0. /__scheduled takes no scheduled time (and the dev server's
 *    Worker.scheduled() does not find the Worker: it asks the proxy's Miniflare), so "a day
 *    later" for the policies is made by moving each stored policy's re-read time
 *    (email_json $.policy.next_fetch_at, what policyDue() compares) back to the present
 *    with one D1 statement between two runs. The job logs one summary line per run (its duration and phases, D1
 *    statements and rows written as D1 counts them), which we read from the Worker's output.
 *  - DoH queries are counted outside the service, by a forwarder in front of dnsdist that
 *    both the service and the bare loop use (it also counts TCP connections). History rows
 *    are counted in D1 after each run.
 *  - Runs, email checks off: baselines; nothing changed; one MX set in 100 edited; nothing
 *    changed. Then the email checks are turned on for every domain (PATCH, selector s1) and:
 *    baselines (every policy fetched once); nothing changed; one domain in 100 gets a new
 *    DKIM key and a new MTA-STS id with a policy lowered to `testing`; nothing changed; the
 *    policies' day over (every policy read again once: how a policy edited without a new
 *    id is caught); the run after that (nothing fetched). The bare loop of each configuration runs right
 *    before its first unchanged run and right after its last one; each unchanged run is
 *    compared with the loop next to it (the machine is shared, so load drifts over minutes).
 *    Counts do not depend on load; wall times are printed beside the 1-minute load average.
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
import { generateKeyPairSync } from "node:crypto";
import { promisify } from "node:util";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, get as httpGet, type IncomingMessage, type ServerResponse } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_startWorker } from "wrangler";
import { createDohClient } from "../src/platform/dns/doh";
import type { WatchedRecordType } from "../src/platform/dns/presentation";
import { DEFAULT_RECORD_SETS, EMAIL_RECORD_SETS } from "../src/modules/dns-watcher/record-set-service";
import { emailNames, tlsaName } from "../src/modules/dns-watcher/email/view";
import type { DnsRunSummary } from "../src/modules/dns-watcher/resolver-run";
import { startDnsLab } from "../test/fixtures/dns-lab";
import ctLogFixture from "../test/fixtures/servers/ct-log";
import mtaStsFixture from "../test/fixtures/servers/mta-sts";
import * as K from "../test/dns-watcher/email-keys";

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
/** One domain in 100 is edited (d0000, d0100, ...). */
const isEdited = (i: number) => i % 100 === 0;
const editedCount = names.filter((_, i) => isEdited(i)).length;
/** The DKIM selector every domain declares with the email checks on. */
const SELECTOR = "s1";
/** The shared SPF include target every domain's policy reads (one question per run, whatever the number of domains). */
const SPF_TARGET = { name: "_spf.bench.test", type: "TXT" as const };
const emailSets = (n: string) => [...EMAIL_RECORD_SETS(n), { name: emailNames(n).dkim(SELECTOR), type: "TXT" as const }];
/** The questions of each configuration, as the bare loop asks them: the record sets, the MX host's TLSA (email on), the SPF target. */
const QUESTIONS = {
  off: [...names.flatMap((n) => DEFAULT_RECORD_SETS(n)), SPF_TARGET],
  on: [...names.flatMap((n) => [...DEFAULT_RECORD_SETS(n), ...emailSets(n), { name: tlsaName(`mx.${n}`), type: "TLSA" as const }]), SPF_TARGET],
};
const recordSets = { off: names.length * DEFAULT_RECORD_SETS("x").length, on: names.length * (DEFAULT_RECORD_SETS("x").length + emailSets("x").length) };

/** A TXT value longer than 255 bytes as zone-file strings. */
const strings = (s: string) => (s.match(/.{1,200}/g) ?? []).map((p) => `"${p}"`).join(" ");
/** The DKIM key the edited domains switch to: a fresh 2048-bit RSA key. */
const NEW_DKIM_SPKI = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ type: "spki", format: "der" }).toString("base64");
const MTA_STS_ID = { before: "20261129a", after: "20261129b" };
const policyOf = (fqdn: string, mode: "enforce" | "testing") => `version: STSv1\r\nmode: ${mode}\r\nmx: mx.${fqdn}\r\nmax_age: 604800\r\n`;

/** The zone: `mxEdited` moves the MX preference of 1 domain in 100; `emailEdited` gives them a new DKIM key and a new MTA-STS id. */
const zone = (edits: { mxEdited: boolean; emailEdited: boolean }) =>
  names
    .map((fqdn, i) => {
      const n = fqdn.replace(".bench.test", "");
      const email = edits.emailEdited && isEdited(i);
      return [
        `${n} IN A 192.0.2.${i % 250}`,
        `${n} IN AAAA 2001:db8::${i.toString(16)}`,
        `${n} IN MX ${edits.mxEdited && isEdited(i) ? 30 : 10} mx.${n}`,
        `${n} IN TXT "v=spf1 include:_spf.bench.test -all"`,
        `${n} IN CAA 0 issue "letsencrypt.org"`,
        `_dmarc.${n} IN TXT "v=DMARC1; p=reject; rua=mailto:d@${fqdn}"`,
        `_mta-sts.${n} IN TXT "v=STSv1; id=${email ? MTA_STS_ID.after : MTA_STS_ID.before}"`,
        `_smtp._tls.${n} IN TXT "v=TLSRPTv1; rua=mailto:tls-reports@${fqdn}"`,
        `${SELECTOR}._domainkey.${n} IN TXT ${strings(`v=DKIM1; k=rsa; p=${email ? NEW_DKIM_SPKI : K.RSA2048_SPKI}`)}`,
        `default._bimi.${n} IN TXT "v=BIMI1; l=https://brand.example/logo.svg; a=https://brand.example/vmc.pem"`,
        `_25._tcp.mx.${n} IN TLSA 3 1 1 ${K.MX_SPKI_SHA256}`,
      ].join("\n");
    })
    .concat(`_spf IN TXT "v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32 -all"`)
    .join("\n");

// ---------------------------------------------------------------- counterparts
say(`DNS watcher benchmark: ${DOMAINS} domains; email checks off: ${recordSets.off} record sets; on: ${recordSets.on} record sets + ${DOMAINS} MX hosts' TLSA`);
const lab = await startDnsLab({ zonesDir: new URL("../../shared/data/dns/lab/zones", import.meta.url).pathname });
await lab.putZone("bench.test", "signed", zone({ mxEdited: false, emailEdited: false }));
say(`[${elapsed()}] DNS lab up, zone bench.test signed (${DOMAINS * 11} records)`);

/** The DoH forwarder (counts every query), the MTA-STS policy server (counts every policy fetch) and the CT log fixture (an empty log list keeps the CT job quiet). */
let dohQueries = 0;
const policyFetches = new Map<string, number>();
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
    if (url.pathname.startsWith(`${mtaStsFixture.prefix}/`)) {
      const m = /^\/mta-sts\/([^/]+)\/\.well-known\/mta-sts\.txt$/.exec(url.pathname);
      if (m) policyFetches.set(m[1], (policyFetches.get(m[1]) ?? 0) + 1);
      return void (await mtaStsFixture.handle(req, res, url));
    }
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
const hubPort = (hub.address() as { port: number }).port;
const hubUrl = `http://127.0.0.1:${hubPort}`;
const dohUrl = `${hubUrl}/dns-query`;
const ctKey = (await (await fetch(`${hubUrl}/ctlog/__control/loglist-key`)).json()) as { pem: string };
const ctList = (await (await fetch(`${hubUrl}/ctlog/__control/loglists`, { method: "POST", body: JSON.stringify({ name: "bench-empty", logs: [] }) })).json()) as { url: string };
const setPolicy = async (domain: string, mode: "enforce" | "testing") => {
  const res = await fetch(`${hubUrl}/mta-sts/__control/policy`, { method: "POST", body: JSON.stringify({ domain, body: policyOf(domain, mode) }) });
  if (!res.ok) throw new Error(`policy of ${domain}: ${res.status}`);
};

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
  MTA_STS_POLICY_URL: `${hubUrl}/mta-sts/{domain}/.well-known/mta-sts.txt`,
  // The policy server is on loopback, which the egress policy refuses unless the operator allows it.
  EGRESS_ALLOWLIST: `127.0.0.1:${hubPort}`,
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
  /** 1-minute load average when the run started. */
  load: number;
  connections: number;
  seconds: number;
  cronSeconds: number;
  queries: number;
  /** MTA-STS policy fetches counted at the policy server, and the domains they were for. */
  policyFetches: number;
  policyDomains: string[];
  history: number;
  summary: DnsRunSummary;
}
async function scheduledRun(label: string): Promise<RunFigures> {
  const before = summaries().length;
  const historyBefore = (await d1("SELECT COUNT(*) AS n FROM dns_history"))[0].n;
  dohQueries = 0;
  policyFetches.clear();
  const connections0 = dohConnections;
  const load = loadavg()[0];
  const t0 = performance.now();
  const status = await fireCron();
  const cronSeconds = (performance.now() - t0) / 1000;
  for (let i = 0; i < 100 && summaries().length === before; i++) await new Promise((r) => setTimeout(r, 50)); // the log line may trail the response
  const summary = summaries()[before];
  if (!summary) throw new Error(`${label}: no dns-watcher.resolve summary in the log (cron answered ${status})`);
  const history = (await d1("SELECT COUNT(*) AS n FROM dns_history"))[0].n - historyBefore;
  const policyDomains = [...policyFetches.keys()].sort();
  say(`[${elapsed()}] ${label}: ${summary.duration_ms / 1000} s, ${dohQueries} DoH queries, ${policyDomains.length} policy fetches, ${summary.rows_written} rows written`);
  return {
    label, load, connections: dohConnections - connections0, seconds: summary.duration_ms / 1000, cronSeconds, queries: dohQueries,
    policyFetches: [...policyFetches.values()].reduce((a, b) => a + b, 0), policyDomains, history, summary,
  };
}

interface BareFigures {
  label: string;
  load: number;
  seconds: number;
  queries: number;
}
async function bareLoop(label: string, questions: readonly { name: string; type: WatchedRecordType }[]): Promise<BareFigures> {
  const client = createDohClient({ resolverUrls: [dohUrl], timeoutMs: 5000 });
  dohQueries = 0;
  const load = loadavg()[0];
  const t0 = performance.now();
  await inPool(questions, CONCURRENCY, async (q) => void (await client.query(q.name, q.type, { dnssecOk: true }).catch(() => undefined)));
  return { label, load, seconds: (performance.now() - t0) / 1000, queries: dohQueries };
}

try {
  const signup = await api("POST", "/api/auth/signup", undefined, { organization_name: "DNS bench", email: "dns-bench@example.com", password: "benchmark password 1" });
  await api("PUT", "/api/admin/subscription", signup.token, { tier: "enterprise" });
  const ids: number[] = [];
  await inPool(names, 8, async (n) => void ids.push((await api("POST", "/api/dns-watcher/domains", signup.token, { domain_name: n })).id as number));
  await inPool(names, 16, (n) => setPolicy(n, "enforce"));
  say(`[${elapsed()}] service on ${base} (wrangler dev server, local D1), ${DOMAINS} domains created through the API, ${DOMAINS} MTA-STS policies served`);

  // Today's configuration: email checks off.
  const off1 = await scheduledRun("off 1: baselines");
  const bareOff1 = await bareLoop("bare DoH loop, off questions (before off 2)", QUESTIONS.off);
  const off2 = await scheduledRun("off 2: nothing changed");
  await lab.putZone("bench.test", "signed", zone({ mxEdited: true, emailEdited: false }));
  const off3 = await scheduledRun(`off 3: ${editedCount} MX sets edited`);
  const off4 = await scheduledRun("off 4: nothing changed");
  const bareOff2 = await bareLoop("bare DoH loop, off questions (after off 4)", QUESTIONS.off);

  // The email checks on, for every domain, with one DKIM selector.
  await inPool(ids, 8, async (id) => void (await api("PATCH", `/api/dns-watcher/domains/${id}`, signup.token, { email_checks: true, dkim_selectors: [SELECTOR] })));
  say(`[${elapsed()}] email checks turned on for ${DOMAINS} domains (selector ${SELECTOR})`);
  const on1 = await scheduledRun("on 1: baselines");
  const bareOn1 = await bareLoop("bare DoH loop, on questions (before on 2)", QUESTIONS.on);
  const on2 = await scheduledRun("on 2: nothing changed");
  const editedNames = names.filter((_, i) => isEdited(i));
  await Promise.all(editedNames.map((n) => setPolicy(n, "testing")));
  await lab.putZone("bench.test", "signed", zone({ mxEdited: true, emailEdited: true }));
  const on3 = await scheduledRun(`on 3: ${editedCount} DKIM keys + MTA-STS ids edited`);
  const on4 = await scheduledRun("on 4: nothing changed");
  const bareOn2 = await bareLoop("bare DoH loop, on questions (after on 4)", QUESTIONS.on);
  // A day later for the policies: their stored re-read time is moved back to now (see the header: /__scheduled takes no scheduled time).
  await d1(`UPDATE dns_domains SET email_json = json_set(email_json, '$.policy.next_fetch_at', '${new Date(Date.now() - 1000).toISOString()}') WHERE email_json IS NOT NULL`);
  const on5 = await scheduledRun("on 5: the policies' day is over");
  const on6 = await scheduledRun("on 6: the run after on 5");
  say(`[${elapsed()}] done\n`);

  const pad = (s: string, n: number) => s.padEnd(n);
  const num = (v: number, d = 2, w = 8) => v.toFixed(d).padStart(w);
  const col = (v: number | string, w: number) => String(v).padStart(w);
  const runs = [off1, off2, off3, off4, on1, on2, on3, on4, on5, on6];
  const sets = (r: RunFigures) => (r.label.startsWith("off") ? recordSets.off : recordSets.on);
  /** Queries per domain: every query of the run (record sets, TLSA, confirmations, the SPF target) over the domains. */
  const perDomain = (r: RunFigures) => r.queries / DOMAINS;
  say(`${pad("", 44)} load  wall s  cron s  queries  /domain  /set+tlsa  SPF tgt  TLSA  policy  history  stmts  rows  rows/domain  events`);
  for (const r of runs) {
    const s = r.summary;
    const setsAndTlsa = sets(r) + s.tlsa_queries;
    say(
      `${pad(r.label, 44)} ${num(r.load, 1, 4)} ${num(r.seconds, 1, 7)} ${num(r.cronSeconds, 1, 7)} ${col(r.queries, 8)} ${num(perDomain(r), 2, 8)} ${num((r.queries - s.spf_target_queries) / setsAndTlsa, 3, 10)} ${col(s.spf_target_queries, 8)} ${col(s.tlsa_queries, 5)} ${col(r.policyFetches, 7)} ${col(r.history, 8)} ${col(s.write_statements, 6)} ${col(s.rows_written, 5)} ${num(s.rows_written / DOMAINS, 2, 12)} ${col(s.events_emitted, 7)}`,
    );
  }
  for (const r of runs) say(`  ${r.label}: ${r.connections} connections to the forwarder/policy server; ${Object.entries(r.summary.phases_ms).map(([k, v]) => `${k} ${(v / 1000).toFixed(2)} s`).join(", ")}; service counted ${r.summary.policy_fetches} policy fetches (${r.summary.policy_fetch_failures} failed), ${r.summary.confirmations} confirmations, ${r.summary.email_regressions} email regressions`);
  for (const b of [bareOff1, bareOff2, bareOn1, bareOn2]) say(`${pad(b.label, 44)} ${num(b.load, 1, 4)} ${num(b.seconds, 1, 7)} ${pad("", 7)} ${col(b.queries, 8)} ${num(b.queries / DOMAINS, 2, 8)}`);

  // The machine is shared: each unchanged run is compared with the bare loop run next to it.
  const check = (ok: boolean) => (ok ? "" : "   MISSED");
  const unchanged = { off: [off2, off4], on: [on2, on4] };
  const bare = { off: [bareOff1, bareOff2], on: [bareOn1, bareOn2] };
  const list = (rs: RunFigures[], f: (r: RunFigures) => string) => rs.map(f).join(", ");
  say(`\nUnchanged runs (off 2 and 4, on 2 and 4), each next to the bare loop run beside it:`);
  for (const c of ["off", "on"] as const) {
    const rs = unchanged[c];
    const questions = QUESTIONS[c].length;
    say(`  email checks ${c}:`);
    say(`    wall time, scheduled run / bare DoH loop:  ${rs.map((r, i) => `${(r.seconds / bare[c][i].seconds).toFixed(2)}x (${r.seconds.toFixed(1)} s / ${bare[c][i].seconds.toFixed(1)} s, load ${r.load.toFixed(1)})`).join(", ")}`);
    say(`    DoH queries per domain:                    ${list(rs, (r) => perDomain(r).toFixed(3))}   (the bare loop's: ${(questions / DOMAINS).toFixed(3)})${check(rs.every((r) => r.queries === questions))}`);
    say(`    SPF include target questions:              ${list(rs, (r) => String(r.summary.spf_target_queries))}   (one per distinct target: 1)`);
    say(`    MTA-STS policy fetches:                    ${list(rs, (r) => String(r.policyFetches))}   (target 0: the ids did not change and the day is not over)${check(rs.every((r) => r.policyFetches === 0))}`);
    say(`    history rows written:                      ${list(rs, (r) => String(r.history))}   (target 0)${check(rs.every((r) => r.history === 0))}`);
    say(`    D1 rows written per domain:                ${list(rs, (r) => (r.summary.rows_written / DOMAINS).toFixed(2))}   (target <= 1), in ${list(rs, (r) => String(r.summary.write_statements))} statement(s)${check(rs.every((r) => r.summary.rows_written <= DOMAINS))}`);
  }
  const expectedOn3 = new Set(editedNames);
  say(`\nAfter an edit (1 domain in 100):`);
  say(`  off 3 (${editedCount} MX sets): ${off3.queries - QUESTIONS.off.length} queries beyond the unchanged run's (target: one confirmation each: ${editedCount}), ${off3.history} history rows, ${off3.summary.events_emitted} events, ${(off3.summary.rows_written / DOMAINS).toFixed(2)} rows written per domain`);
  say(
    `  on 3 (${editedCount} DKIM keys + ${editedCount} MTA-STS ids): ${on3.queries - QUESTIONS.on.length} queries beyond the unchanged run's (target: one confirmation each: ${2 * editedCount})${check(on3.queries - QUESTIONS.on.length === 2 * editedCount)}, ` +
      `${on3.policyFetches} policy fetches, ${on3.policyDomains.every((d) => expectedOn3.has(d)) && on3.policyDomains.length === editedCount ? "exactly the edited domains" : `for ${on3.policyDomains.slice(0, 5).join(", ")}...`}${check(on3.policyFetches === editedCount)}, ` +
      `${on3.history} history rows (${on3.summary.email_regressions} email regressions), ${on3.summary.events_emitted} events, ${(on3.summary.rows_written / DOMAINS).toFixed(2)} rows written per domain`,
  );
  say(`\nThe daily re-read of the policies:`);
  say(`  on 5 (the day over): ${on5.policyFetches} policy fetches for ${on5.policyDomains.length} domains (target: each once: ${DOMAINS})${check(on5.policyFetches === DOMAINS && on5.policyDomains.length === DOMAINS)}, ${on5.history} history rows, ${(on5.summary.rows_written / DOMAINS).toFixed(2)} rows written per domain`);
  say(`  on 6 (the run after): ${on6.policyFetches} policy fetches (target 0)${check(on6.policyFetches === 0)}, ${(on6.summary.rows_written / DOMAINS).toFixed(2)} rows written per domain`);
  say(`  on 1 (baselines): ${on1.policyFetches} policy fetches, ${(on1.summary.rows_written / DOMAINS).toFixed(2)} rows written per domain in ${on1.summary.write_statements} statements`);
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
