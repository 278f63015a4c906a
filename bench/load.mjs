#!/usr/bin/env node
/**
 * Load benchmark (issue 13): the service started the README way (`npm start`, wrangler
 * dev on workerd, local D1) on loopback, 64 connections for 30 s mixing reads and
 * writes over two organizations, next to GET /api/health in the same run.
 *
 * Reported: requests/s, p50/p99, status counts, 5xx (target 0), 429s and whether each
 * carries Retry-After, and "nothing lost": every 201 is read back afterwards, and every
 * monitor's notes are the last PATCH acknowledged for it. /api/health is measured
 * alone before the mixed phase and again on a few connections during it.
 *
 * Every 5xx is a failure, including the local edge's 502 WORKER_UNAVAILABLE
 * (scripts/local-edge.mjs): it answers so when the workerd runtime behind it is being
 * replaced (wrangler reloads it) or not up yet.
 * For a client that is the service being unavailable, so it fails the run like any
 * other 5xx; the output counts them apart, next to the runtime reloads the service log
 * shows, so a run can tell a restart from an error of the service's own code.
 *
 * Rate limits decide only where the benchmark wants them to: each of 60 connections has
 * its own token (30 per organization), whose share stays below the per-token limit on
 * this hardware; 4 connections share one "hot" token, and after the mixed phase a burst
 * of limit+64 requests on it empties its bucket on purpose, so the run shows 429s (each
 * must carry Retry-After) while the other tokens keep working.
 *
 *   npm run bench:load            (BENCH_SECONDS, BENCH_PORT, BENCH_CONNECTIONS override)
 */
import { load, startService } from "./lib/server.mjs";
import { WORKER_UNAVAILABLE } from "../scripts/local-edge.mjs";

const seconds = Number(process.env.BENCH_SECONDS ?? 30);
const port = Number(process.env.BENCH_PORT ?? 8806);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const HOT = 4;
/** Connections probing /api/health during the mixed phase (besides the 64). */
const HEALTH_DURING = 4;
/** Per-token bucket of this run: well above what one connection's share needs, small enough to empty on purpose. */
const TOKEN_PER_MINUTE = Number(process.env.BENCH_TOKEN_PER_MINUTE ?? 240);

const svc = await startService({
  port,
  env: {
    RATE_LIMIT_ORG_PER_MINUTE: "10000000",
    RATE_LIMIT_TOKEN_PER_MINUTE: String(TOKEN_PER_MINUTE),
    // npm start's local edge sets CF-Connecting-IP from the socket (docs/security.md,
    // "Client address"): every connection of this benchmark comes from 127.0.0.1, so all its
    // anonymous calls (the health probes) share one per-address bucket, which needs room.
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: "10000000",
  },
});

async function api(method, path, token, body) {
  const res = await fetch(`${svc.base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, body: json ?? text.slice(0, 200), headers: res.headers };
}

/** Setup calls: the local edge answers a request during a runtime swap with 502 (see below); retry those. */
async function setupCall(method, path, token, body) {
  for (let attempt = 0; ; attempt++) {
    const res = await api(method, path, token, body);
    if (res.status !== 502 || attempt >= 5) return res;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function organization(name) {
  const s = await setupCall("POST", "/api/auth/signup", undefined, { organization_name: name, email: `${name}-${Date.now()}@example.com`, password: "benchmark password 1" });
  if (s.status !== 201) throw new Error(`signup ${s.status} ${JSON.stringify(s.body)}`);
  await setupCall("PUT", "/api/admin/subscription", s.body.token, { tier: "enterprise" });
  const list = await setupCall("POST", "/api/lists", s.body.token, { name: "bench", list_type: "domain" });
  const tokens = [];
  for (let i = 0; i < 31; i++) {
    const t = await setupCall("POST", "/api/api-tokens", s.body.token, {
      name: `bench ${i}`,
      validity_days: 1,
      scopes: ["rdap:view_monitoring", "rdap:create_monitoring", "rdap:update_monitoring", "rdap:view_alert_templates", "rdap:create_alert_templates", "lists:view_lists", "lists:manage_lists", "api-tokens:view_own_tokens"],
    });
    tokens.push(t.body.token);
  }
  return { name, session: s.body.token, listId: list.body.id, tokens, created: { monitors: new Set(), templates: new Set() }, monitorIds: [], edits: new Map() };
}


const stats = { latencies: [], statuses: {}, missingRetryAfter: 0, errors: 0, samples5xx: [], runtimeRestarts: 0 };
let seq = 0;

async function oneRequest(org, token) {
  const r = Math.random();
  const n = `${Date.now().toString(36)}-${seq++}`;
  if (r < 0.15) {
    const res = await api("POST", "/api/rdap/domains", token, { domain_name: `load-${n}.example.com`, notes: "bench" });
    if (res.status === 201) {
      org.created.monitors.add(res.body.id);
      org.monitorIds.push(res.body.id);
    }
    return res;
  }
  if (r < 0.3) {
    const res = await api("POST", "/api/rdap/alert-templates", token, { name: `t ${n}`, subject: "s {{domain}}", body: "b" });
    if (res.status === 201) org.created.templates.add(res.body.id);
    return res;
  }
  if (r < 0.4 && org.monitorIds.length) {
    const id = org.monitorIds[Math.floor(Math.random() * org.monitorIds.length)];
    const notes = `edited ${n}`;
    const start = performance.now();
    const res = await api("PATCH", `/api/rdap/domains/${id}`, token, { notes });
    // Every acknowledged edit, with when it was in flight: checked against what is stored afterwards.
    if (res.status === 200) org.edits.set(id, [...(org.edits.get(id) ?? []), { notes, start, end: performance.now() }]);
    return res;
  }
  if (r < 0.6) return api("GET", "/api/rdap/domains?limit=20&sort_by=created_at&sort_order=desc", token);
  if (r < 0.75) return api("GET", `/api/lists/${org.listId}`, token);
  if (r < 0.9) return api("GET", "/api/rdap/alert-templates", token);
  return api("GET", "/api/api-tokens", token);
}

async function worker(org, token, end) {
  while (performance.now() < end) {
    const t0 = performance.now();
    try {
      const res = await oneRequest(org, token);
      stats.statuses[res.status] = (stats.statuses[res.status] ?? 0) + 1;
      if (res.status === 429 && !res.headers.get("retry-after")) stats.missingRetryAfter++;
      if (res.status === 502 && res.body?.error?.message === WORKER_UNAVAILABLE) stats.runtimeRestarts++;
      else if (res.status >= 500 && stats.samples5xx.length < 3) stats.samples5xx.push(`${res.status} ${JSON.stringify(res.body)} ${res.headers.get("content-type")}`);
    } catch {
      stats.errors++;
    }
    stats.latencies.push(performance.now() - t0);
  }
}

try {
  // Warm-up: compile paths, open connections (the local edge may answer 502 while the runtime settles).
  await load({ url: `${svc.base}/api/health`, concurrency: 8, seconds: 3 });
  const orgs = [await organization("bench-a"), await organization("bench-b")];
  const hotToken = orgs[0].tokens.pop();
  orgs[1].tokens.pop();

  const health = await load({ url: `${svc.base}/api/health`, concurrency: connections, seconds: Math.min(seconds, 10) });

  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  const workers = [];
  for (let i = 0; i < connections - HOT; i++) {
    const org = orgs[i % 2];
    workers.push(worker(org, org.tokens[Math.floor(i / 2) % org.tokens.length], end));
  }
  for (let i = 0; i < HOT; i++) workers.push(worker(orgs[0], hotToken, end));
  // The liveness probe while the service is loaded: what a load balancer would see.
  const healthDuring = load({ url: `${svc.base}/api/health`, concurrency: HEALTH_DURING, seconds });
  await Promise.all(workers);
  const elapsed = (performance.now() - t0) / 1000;
  const healthLoaded = await healthDuring;

  // Empty the hot token's bucket: every 429 must say when to retry.
  const burst = { statuses: {}, missingRetryAfter: 0 };
  let left = TOKEN_PER_MINUTE + 64;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (left-- > 0) {
        const res = await api("GET", "/api/api-tokens", hotToken);
        burst.statuses[res.status] = (burst.statuses[res.status] ?? 0) + 1;
        if (res.status === 429 && !res.headers.get("retry-after")) burst.missingRetryAfter++;
      }
    }),
  );

  // Nothing lost: every 201 is readable afterwards, and every edited monitor holds an
  // acknowledged edit that no other acknowledged edit certainly followed (one that
  // started after it had been answered).
  let lost = 0;
  let checked = 0;
  let editsChecked = 0;
  const staleEdits = [];
  for (const org of orgs) {
    const monitors = new Map();
    for (let offset = 0; ; offset += 1000) {
      const page = await api("GET", `/api/rdap/domains?limit=1000&offset=${offset}`, org.session);
      for (const d of page.body.domains) monitors.set(d.id, d.notes);
      if (page.body.domains.length < 1000) break;
    }
    const templates = new Set((await api("GET", "/api/rdap/alert-templates", org.session)).body.templates.map((t) => t.id));
    for (const id of org.created.monitors) (checked++, monitors.has(id) || lost++);
    for (const id of org.created.templates) (checked++, templates.has(id) || lost++);
    for (const [id, edits] of org.edits) {
      editsChecked++;
      const stored = edits.find((e) => e.notes === monitors.get(id));
      if (!stored || edits.some((e) => e.start > stored.end)) {
        staleEdits.push(`monitor ${id}: stored ${JSON.stringify(monitors.get(id))}, last acknowledged ${JSON.stringify(edits.at(-1).notes)}`);
      }
    }
  }

  const lat = stats.latencies.sort((a, b) => a - b);
  const pct = (p) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))];
  const total = lat.length;
  const fivexx = Object.entries(stats.statuses).filter(([s]) => Number(s) >= 500).reduce((a, [, n]) => a + n, 0);
  // The service's own errors and the local edge's 502 during a runtime swap both carry
  // the JSON error body; the edge's message tells them apart.
  // Both are failures (see the header); told apart only to say where to look.
  const fromService = fivexx - stats.runtimeRestarts;
  const reloads = (svc.log().match(/Reloading local server/g) ?? []).length;
  const f = (n) => n.toFixed(1);
  console.log(`\nTrust-Plane load benchmark: ${connections} connections, ${seconds} s, two organizations, wrangler dev (workerd) + local D1 on loopback\n`);
  console.log("workload                              |   req/s | p50 ms | p99 ms | requests");
  console.log("--------------------------------------|---------|--------|--------|---------");
  console.log(`GET /api/health (baseline, same run)  | ${f(health.rps).padStart(7)} | ${f(health.p50).padStart(6)} | ${f(health.p99).padStart(6)} | ${health.requests}`);
  console.log(`mixed reads/writes (2 orgs)           | ${f(total / elapsed).padStart(7)} | ${f(pct(50)).padStart(6)} | ${f(pct(99)).padStart(6)} | ${total}`);
  console.log(`GET /api/health during mixed (${HEALTH_DURING} conn) | ${f(healthLoaded.rps).padStart(7)} | ${f(healthLoaded.p50).padStart(6)} | ${f(healthLoaded.p99).padStart(6)} | ${healthLoaded.requests}`);
  console.log(`\nratio mixed/health throughput: ${(total / elapsed / health.rps).toFixed(2)}; p50 ratio ${(pct(50) / health.p50).toFixed(2)}`);
  console.log(`statuses: ${JSON.stringify(stats.statuses)}; transport errors: ${stats.errors}`);
  console.log(`5xx in all: ${fivexx} (target 0)`);
  console.log(`  from the service's code (JSON error body): ${fromService}${stats.samples5xx.length ? `; e.g. ${stats.samples5xx.join(" | ")}` : ""}`);
  console.log(`  runtime being replaced (the local edge's 502): ${stats.runtimeRestarts}; runtime reloads in the service log: ${reloads}`);
  console.log(`health probe during the mixed phase: ${JSON.stringify(healthLoaded.statuses)}; failed: ${healthLoaded.errors}`);
  console.log(`429 in the mixed phase: ${stats.statuses[429] ?? 0}; without Retry-After: ${stats.missingRetryAfter}`);
  console.log(`burst of ${TOKEN_PER_MINUTE + 64} on one token (limit ${TOKEN_PER_MINUTE}/min): ${JSON.stringify(burst.statuses)}; 429 without Retry-After: ${burst.missingRetryAfter}`);
  console.log(`created (201) and read back: ${checked - lost}/${checked}; lost: ${lost}`);
  console.log(`edited monitors (PATCH 200) holding their last acknowledged notes: ${editsChecked - staleEdits.length}/${editsChecked}${staleEdits.length ? `; e.g. ${staleEdits.slice(0, 3).join(" | ")}` : ""}`);
  if (fivexx && process.env.BENCH_LOG) (await import("node:fs")).writeFileSync(process.env.BENCH_LOG, svc.log());
  const failed =
    fivexx || stats.missingRetryAfter || burst.missingRetryAfter || !burst.statuses[429] || lost || staleEdits.length || stats.errors || healthLoaded.errors || !editsChecked;
  if (failed) process.exitCode = 1;
} finally {
  svc.stop();
}
