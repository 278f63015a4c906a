/**
 * Lookalike discovery benchmark (issue 28): the registered-permutation discovery
 * (src/modules/ct-log/lookalikes/discovery.ts, job ct-log.lookalike_discovery) for
 * BENCH_ORGS organizations with one typosquat-enabled protected domain each, against the
 * local DNS lab, next to a bare loop of the very same DoH queries.
 *
 *  - The lab is the test counterpart (test/fixtures/dns-lab.ts). The protected domains are
 *    `<brand>.com`; for some of them a permutation inside the day's window is registered in
 *    the lab's com. registry (an insecure zone with an A record), the rest answer NXDOMAIN.
 *  - D1 is a local D1 in workerd through wrangler's getPlatformProxy (the migrations
 *    applied, no persistence). The discovery gets a Drizzle client over a wrapper of the
 *    binding that adds up D1's own `meta.rows_written` of every statement and batch (a
 *    write read through `raw()`, as Drizzle's `.returning().all()` does, is sent as `all()`
 *    so its meta is seen).
 *  - DoH queries are counted by wrapping the fetch handed to the DoH client (the service's
 *    own client, createDohClient, as in the job); the bare loop uses the same client
 *    settings, the same concurrency, and no D1.
 *  - A "day" is the 24 hourly job runs (runScheduledDiscovery at half past each hour plus a
 *    minute): every organization has its one scheduled run in it. Day 1 finds the
 *    registered permutations (rows written: one per new lookalike); days 2.. are the same
 *    day again with nothing changed (target: 0 rows written). Each unchanged day is timed
 *    next to the bare loop of the same queries (alternating, the machine is shared).
 *
 * Run: npm run bench:lookalikes   (BENCH_ORGS, default 50; BENCH_RUNS unchanged runs, default 5;
 *      LOOKALIKE_DISCOVERY_QUERIES_PER_DAY as the service reads it)
 */
import { readdirSync, readFileSync } from "node:fs";
import { getPlatformProxy } from "wrangler";
import { createDb } from "../src/db/client";
import { loadConfig, type Bindings } from "../src/env";
import { createDohClient, MemoryDnsCache } from "../src/platform/dns/doh";
import { discoverySettings, runScheduledDiscovery, scheduledOffsetMs, type OrganizationDiscovery } from "../src/modules/ct-log/lookalikes/discovery";
import { permutationsOf } from "../src/modules/ct-log/lookalikes/permutations";
import { detectLookalike, prepareProtected, protectedDomainOf } from "../src/modules/ct-log/typosquat/detect";
import { startDnsLab } from "../test/fixtures/dns-lab";

const ORGS = Number(process.env.BENCH_ORGS ?? 50);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** Protected domains (one in this many) with a registered permutation. */
const REGISTERED_EVERY = 5;
const root = new URL("..", import.meta.url).pathname;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const started = performance.now();
const say = (line: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${line}`);
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const BRANDS = ["acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "wonka", "soylent", "tyrell"];
const protectedDomains = Array.from({ length: ORGS }, (_, i) => `${BRANDS[i % BRANDS.length]}${i < BRANDS.length ? "" : `shop${Math.floor(i / BRANDS.length)}`}.com`);

// ---------------------------------------------------------------- the DNS lab and the counting fetch
const lab = await startDnsLab({ zonesDir: new URL("../../shared/data/dns/lab/zones", import.meta.url).pathname });
let dohQueries = 0;
const countingFetch: typeof fetch = (input, init) => {
  dohQueries++;
  return fetch(input, init);
};
const env = { DOH_RESOLVER_URLS: lab.dohUrl, ...(process.env.LOOKALIKE_DISCOVERY_QUERIES_PER_DAY ? { LOOKALIKE_DISCOVERY_QUERIES_PER_DAY: process.env.LOOKALIKE_DISCOVERY_QUERIES_PER_DAY } : {}) } as unknown as Bindings;
const settings = discoverySettings(loadConfig(env));
say(`DNS lab up; ${ORGS} organizations x 1 protected domain; ${settings.queriesPerDay} queries per organization per day, concurrency ${settings.concurrency}`);

// ---------------------------------------------------------------- D1, with rows written counted
const proxy = await getPlatformProxy<{ DB: D1Database }>({ configPath: `${root}wrangler.toml`, persist: false });
const raw = proxy.env.DB;
for (const f of readdirSync(`${root}migrations`).filter((x) => x.endsWith(".sql")).sort()) {
  for (const stmt of readFileSync(`${root}migrations/${f}`, "utf8").split("--> statement-breakpoint")) if (stmt.trim()) await raw.prepare(stmt).run();
}
let rowsWritten = 0;
let statements = 0;
const isWrite = (sql: string) => /^\s*(insert|update|delete|replace)\b/i.test(sql);
const countMeta = (r: { meta?: { rows_written?: number } } | null | undefined) => void (rowsWritten += Number(r?.meta?.rows_written ?? 0));
/** A D1 statement that counts its rows written (D1's own count). */
function counted(stmt: D1PreparedStatement, sql: string): D1PreparedStatement {
  return new Proxy(stmt, {
    get(target, prop) {
      if (prop === "bind") return (...args: unknown[]) => counted(target.bind(...args), sql);
      if (prop === "run" || prop === "all") return async () => {
        statements++;
        const r = await (target[prop] as () => Promise<D1Result>).call(target);
        countMeta(r);
        return r;
      };
      if (prop === "raw") return async (options?: { columnNames?: boolean }) => {
        statements++;
        if (!isWrite(sql)) return target.raw(options as { columnNames: false });
        const r = await target.all();
        countMeta(r);
        return (r.results as Record<string, unknown>[]).map((row) => Object.values(row));
      };
      if (prop === "first") return async (col?: string) => {
        statements++;
        const r = await target.all();
        countMeta(r);
        const row = (r.results as Record<string, unknown>[])[0] ?? null;
        return col && row ? row[col] : row;
      };
      const v = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
const unwrapped = new WeakMap<object, D1PreparedStatement>();
const countingD1 = new Proxy(raw, {
  get(target, prop) {
    if (prop === "prepare") return (sql: string) => {
      const inner = target.prepare(sql);
      const c = counted(inner, sql);
      unwrapped.set(c, inner);
      return c;
    };
    if (prop === "batch") return async (stmts: D1PreparedStatement[]) => {
      statements += stmts.length;
      const out = await target.batch(stmts.map((s) => unwrapped.get(s) ?? s));
      for (const r of out) countMeta(r);
      return out;
    };
    const v = Reflect.get(target, prop);
    return typeof v === "function" ? v.bind(target) : v;
  },
}) as D1Database;
const db = createDb(countingD1);

// ---------------------------------------------------------------- organizations, filters, the registered permutations
const dayStart = Math.floor(Date.now() / DAY_MS) * DAY_MS;
const orgIds: number[] = [];
for (const [i, domain] of protectedDomains.entries()) {
  const org = (await raw.prepare("INSERT INTO organizations (name, tier) VALUES (?, 'enterprise') RETURNING id").bind(`Bench lookalikes ${i}`).first<{ id: number }>())!.id;
  const at = new Date(dayStart - DAY_MS).toISOString();
  await raw.prepare("INSERT INTO ct_filters (organization_id, pattern, match_type, typosquat_enabled, created_at, updated_at) VALUES (?, ?, 'wide', 1, ?, ?)").bind(org, domain, at, at).run();
  orgIds.push(org);
}
/** The window of permutations the organization's scheduled run of today asks (discovery.ts: the walk's start of the day). */
function todaysWindow(domain: string): string[] {
  const perms = permutationsOf(prepareProtected(protectedDomainOf(domain)!));
  const seen = new Set<string>();
  const list = perms.filter((p) => !seen.has(p.domain) && seen.add(p.domain)).map((p) => p.domain);
  const start = ((dayStart / DAY_MS) * Math.max(1, settings.queriesPerDay)) % list.length;
  return Array.from({ length: Math.min(settings.queriesPerDay, list.length) }, (_, i) => list[(start + i) % list.length]);
}
const registered: string[] = [];
for (let i = 0; i < protectedDomains.length; i += REGISTERED_EVERY) {
  const domain = protectedDomains[i];
  const pick = todaysWindow(domain).find((d) => /^[a-z0-9-]+\.com$/.test(d) && detectLookalike(protectedDomainOf(domain)!, d));
  if (!pick) continue;
  await lab.putZone(pick, "insecure", "@ IN A 192.0.2.10");
  registered.push(pick);
}
say(`${registered.length} permutations registered in the lab's com. registry: ${registered.join(", ")}`);

// ---------------------------------------------------------------- a day of scheduled runs, and the bare loop
interface DayFigures {
  seconds: number;
  queries: number;
  rowsWritten: number;
  statements: number;
  orgs: OrganizationDiscovery[];
}
async function discoveryDay(): Promise<DayFigures> {
  const q0 = dohQueries;
  const w0 = rowsWritten;
  const s0 = statements;
  const orgs: OrganizationDiscovery[] = [];
  const t0 = performance.now();
  for (let h = 0; h < 24; h++) {
    orgs.push(...(await runScheduledDiscovery({ db, settings, now: new Date(dayStart + h * HOUR_MS + 1_800_000 + 60_000), fetch: countingFetch })));
  }
  return { seconds: (performance.now() - t0) / 1000, queries: dohQueries - q0, rowsWritten: rowsWritten - w0, statements: statements - s0, orgs };
}
/** The same NS questions, the same client settings and concurrency, one client per organization as in the job; no D1. */
async function bareLoop(): Promise<{ seconds: number; queries: number }> {
  const q0 = dohQueries;
  const t0 = performance.now();
  for (const domain of protectedDomains) {
    const names = todaysWindow(domain);
    const resolver = createDohClient({ resolverUrls: settings.resolverUrls, timeoutMs: settings.timeoutMs, cache: new MemoryDnsCache({ now: () => Date.now() }), fetch: countingFetch, deadline: Date.now() + settings.runDeadlineMs, breakAfterFailures: 8 });
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, names.length) }, async () => {
      while (next < names.length) await resolver.query(names[next++], "NS").catch(() => undefined);
    }));
  }
  return { seconds: (performance.now() - t0) / 1000, queries: dohQueries - q0 };
}

try {
  const first = await discoveryDay();
  const found = first.orgs.flatMap((o) => o.new_lookalikes);
  const failed = first.orgs.reduce((n, o) => n + o.failed, 0);
  say(`day 1 (first run): ${first.orgs.length} organizations, ${first.queries} DoH queries, ${found.length} new lookalikes (${found.join(", ")}), ${failed} unanswered, ${first.rowsWritten} D1 rows written in ${first.statements} statements, ${first.seconds.toFixed(2)} s`);
  if (first.orgs.length !== ORGS) say(`  WARNING: ${ORGS - first.orgs.length} organizations had no scheduled run in the day`);
  const firstError = first.orgs.find((o) => o.error)?.error;
  if (firstError) say(`  first failure: ${firstError.message}`);

  const unchanged: DayFigures[] = [];
  const bare: { seconds: number; queries: number }[] = [];
  for (let r = 0; r < RUNS; r++) {
    // Alternate which goes first, so that a drift of the machine's load is shared.
    if (r % 2) bare.push(await bareLoop());
    unchanged.push(await discoveryDay());
    if (!(r % 2)) bare.push(await bareLoop());
    const u = unchanged[r];
    say(`unchanged run ${r + 1}: ${u.queries} DoH queries, ${u.orgs.flatMap((o) => o.new_lookalikes).length} new, ${u.rowsWritten} D1 rows written in ${u.statements} statements, ${u.seconds.toFixed(2)} s; bare loop ${bare[r].queries} queries ${bare[r].seconds.toFixed(2)} s`);
  }

  const perDomainPerDay = first.queries / ORGS;
  const ratios = unchanged.map((u, i) => u.seconds / bare[i].seconds);
  const fmt = (xs: number[], d = 2) => `median ${quantile(xs, 0.5).toFixed(d)}, p90 ${quantile(xs, 0.9).toFixed(d)}`;
  console.log(`\nLookalike discovery, ${ORGS} protected domains (one per organization), ${RUNS} unchanged runs:`);
  console.log(`  DoH queries per protected domain per day: ${perDomainPerDay.toFixed(1)} (counted: ${first.queries} for the day's 24 hourly runs; budget ${settings.queriesPerDay} per organization per day)`);
  console.log(`  D1 rows written, first run: ${first.rowsWritten}; per unchanged run: ${unchanged.map((u) => u.rowsWritten).join(", ")} (target 0: ${unchanged.every((u) => u.rowsWritten === 0) ? "met" : "MISSED"})`);
  console.log(`  D1 statements per unchanged run: ${unchanged.map((u) => u.statements).join(", ")}`);
  console.log(`  wall time of a day's discovery: ${fmt(unchanged.map((u) => u.seconds))} s; bare loop of the same queries: ${fmt(bare.map((b) => b.seconds))} s`);
  console.log(`  discovery / bare loop (per run pair): ${fmt(ratios)}`);
} finally {
  await proxy.dispose();
  await lab.stop();
}
