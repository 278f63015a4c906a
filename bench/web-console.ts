/**
 * bench:web — cold load of the console's overview in headless chromium over loopback,
 * for an organization with real data behind it (not an empty overview).
 *
 *  - The fixture hub (CT logs, RDAP server, DoH resolver) and the service the README
 *    way (`npm start`, fresh local state): web/e2e/service.ts, as the browser tests.
 *  - Seeding, through the API and the hub as the browser tests do (web/e2e/seed.ts):
 *    4 CT filters and the CT matches ingested from real log entries (CAA violations,
 *    lookalike domains), a watched DNS zone edited between two runs, two RDAP domains
 *    (one registration changed), 3 certificate monitors with 4 scans posted by an agent,
 *    alert rules that fire to a webhook, and, the organization having signed up five
 *    weeks ago, the 4 weekly reports of the catch-up window.
 *  - The service is then restarted on the same state with the default collection
 *    intervals (the seeding needs every Cron run to collect), so that the Cron runs
 *    during the measurement do what a production minute does, not a full collection.
 *  - One warm-up load (the Worker's first requests after a start), then RUNS runs, each
 *    in fresh browser contexts (empty cache): GET /api/health, then the overview
 *    logged in.
 *  - Figures: JS and CSS of the first page (gzip of the bytes received, and raw); time
 *    from navigation start to the frame that shows the score (in the page: a
 *    MutationObserver and requestAnimationFrame, no polling from outside); and, the
 *    baseline, navigation start to the load event of /api/health in the same browser.
 *    Median and p90 of each; and, to show where the time goes, the page's own
 *    GET /api/dashboard/security-overview (resource timing, request to response end).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { startHub } from "../test/fixtures/hub.js";
import { assertSharedData } from "../test/fixtures/shared-data-dir.js";
import { CONSOLE, PASSWORD, contextApi, launch } from "../web/e2e/browser.js";
import { CATCH_UP_REPORTS, prepareHub, seedOrganization, weeksAgo } from "../web/e2e/seed.js";
import { hubEnv, startService, type RunningService } from "../web/e2e/service.js";

const RUNS = Number(process.env.RUNS ?? 15);
const TARGET_KB = 150;
const TARGET_MS = 1000;

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
const p90 = (xs: number[]) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];
const kb = (n: number) => (n / 1024).toFixed(1);

// Set in the page before any of its scripts: the time of the frame that shows the score.
const SCORE_WATCH = `
  new MutationObserver((_, observer) => {
    if (!document.querySelector('[data-testid="overall-score"]')) return;
    observer.disconnect();
    requestAnimationFrame(() => { window.__scoreShownAt = performance.now(); });
  }).observe(document, { childList: true, subtree: true });
`;

async function main() {
  assertSharedData();
  const hub = await startHub();
  const logs = await prepareHub(hub.url, "bench");
  const stateDir = mkdtempSync(join(tmpdir(), "trust-plane-bench-web-"));
  let service: RunningService | undefined;
  const browser = await launch();
  try {
    // 1. Seed on a service that collects at every Cron run.
    service = await startService({ stateDir, env: hubEnv(hub.url, logs) });
    const seedStart = performance.now();
    const email = `bench-${Date.now()}@example.com`;
    const setup = await browser.newContext({ baseURL: service.baseUrl });
    const signup = await setup.request.post("/api/auth/signup", {
      headers: { ...CONSOLE, "x-trust-plane-now": weeksAgo(5).toISOString() },
      data: { organization_name: "Bench Corp", email, password: PASSWORD },
    });
    if (signup.status() !== 201) throw new Error(`signup failed: ${signup.status()} ${await signup.text()}`);
    // A session that is valid now (the signup's own was issued five weeks ago).
    const login = await setup.request.post("/api/auth/login", { headers: CONSOLE, data: { email, password: PASSWORD } });
    if (!login.ok()) throw new Error(`login failed: ${login.status()} ${await login.text()}`);
    const seeded = await seedOrganization({ api: contextApi(setup), baseUrl: service.baseUrl, hubUrl: hub.url, hub: logs, suffix: "bench", reports: CATCH_UP_REPORTS });
    await setup.close();
    const seedSeconds = (performance.now() - seedStart) / 1000;

    // 2. The same state, served with the default collection intervals.
    await service.stop();
    const quiet = hubEnv(hub.url, logs);
    for (const k of ["RDAP_CHECK_INTERVAL_SECONDS", "DNS_CHECK_INTERVAL_SECONDS", "SCAN_INTERVAL_SECONDS", "CT_POLL_SPREAD_SECONDS"]) delete quiet[k];
    service = await startService({ stateDir, env: quiet });
    const base = service.baseUrl;

    // What the measured page holds, as the API says.
    const probe = await browser.newContext({ baseURL: base });
    await probe.request.post("/api/auth/login", { headers: CONSOLE, data: { email, password: PASSWORD } });
    const api = contextApi(probe);
    const overview = (await api("GET", "/api/dashboard/security-overview")).body?.data;
    if (!overview) throw new Error("GET /api/dashboard/security-overview gave no overview: this build has no security overview to time");
    const dnsChanges = (await api("GET", `/api/dns-watcher/domains/${seeded.dnsDomain}/history`)).body.total;
    const scans = (await api("GET", "/api/cert-watcher/recent-scans")).body.total;
    await probe.close();

    // 3. The measurement.
    const loadOverview = async () => {
      const ctx = await browser.newContext({ baseURL: base });
      const r = await ctx.request.post("/api/auth/login", { headers: CONSOLE, data: { email, password: PASSWORD } });
      if (!r.ok()) throw new Error(`login failed: ${r.status()} ${await r.text()}`);
      await ctx.addInitScript(SCORE_WATCH);
      const page = await ctx.newPage();
      const bodies: Promise<void>[] = [];
      const shipped = { js: 0, css: 0, jsRaw: 0, cssRaw: 0 };
      page.on("response", (res) => {
        const type = res.headers()["content-type"] ?? "";
        if (!/javascript|text\/css/.test(type)) return;
        bodies.push(
          res.body().then((b) => {
            const gz = gzipSync(b, { level: 9 }).length;
            if (type.includes("css")) (shipped.css += gz), (shipped.cssRaw += b.length);
            else (shipped.js += gz), (shipped.jsRaw += b.length);
          }),
        );
      });
      await page.goto("/", { waitUntil: "commit" });
      const ms = await page
        // A function, not a string: the console's CSP (no 'unsafe-eval') refuses a string predicate.
        .waitForFunction(() => (globalThis as any).__scoreShownAt, undefined, { timeout: 30_000 })
        .then((h) => h.jsonValue() as Promise<number>)
        .catch(async (e) => {
          const shot = join(tmpdir(), "bench-web-failure.png");
          await page.screenshot({ path: shot });
          throw new Error(`${e.message}\n(page at ${page.url()}; screenshot in ${shot})`);
        });
      // Where the time goes: the overview API call as the page made it (resource timing).
      const apiMs = await page.evaluate(() => {
        const e = (globalThis as any).performance.getEntriesByType("resource").find((r: any) => r.name.includes("/api/dashboard/security-overview"));
        return e ? e.responseEnd - e.startTime : NaN;
      });
      const shown = await page.getByTestId("overall-score").innerText();
      if (shown.trim() !== String(overview.overall_score)) throw new Error(`the page shows the score ${shown}, the API ${overview.overall_score}`);
      await Promise.all(bodies);
      await ctx.close();
      return { ms, apiMs, shipped };
    };
    const loadHealth = async () => {
      const ctx = await browser.newContext({ baseURL: base });
      const page = await ctx.newPage();
      await page.goto("/api/health", { waitUntil: "load" });
      const h = await page.waitForFunction(() => {
        const n = (globalThis as any).performance.getEntriesByType("navigation")[0];
        return n && n.loadEventEnd > 0 && n.loadEventEnd;
      });
      const ms = (await h.jsonValue()) as number;
      await ctx.close();
      return ms;
    };

    await loadHealth();
    await loadOverview();
    const pageMs: number[] = [];
    const overviewApiMs: number[] = [];
    const healthMs: number[] = [];
    let shipped = { js: 0, css: 0, jsRaw: 0, cssRaw: 0 };
    for (let run = 0; run < RUNS; run++) {
      healthMs.push(await loadHealth());
      const o = await loadOverview();
      pageMs.push(o.ms);
      overviewApiMs.push(o.apiMs);
      shipped = o.shipped;
    }

    const total = shipped.js + shipped.css;
    console.log(`\nWeb console cold load, ${RUNS} runs (after one warm-up), headless chromium over loopback, npm start (wrangler dev, workerd)\n`);
    console.log(
      `  page measured: score ${overview.overall_score} (${overview.grade}), ${overview.findings.length} findings, ${seeded.reports} weekly reports in the trend; ` +
        `behind it ${seeded.ctMatches} CT matches, ${dnsChanges} DNS history entries, an RDAP change, ${scans} latest scans (seeded in ${seedSeconds.toFixed(0)} s)`,
    );
    console.log(
      `  first page shipped: JS ${kb(shipped.js)} KB gzip (${kb(shipped.jsRaw)} KB raw), CSS ${kb(shipped.css)} KB gzip (${kb(shipped.cssRaw)} KB raw); ` +
        `total ${kb(total)} KB gzip (target < ${TARGET_KB} KB)`,
    );
    console.log(`  overview, navigation start -> score shown: median ${median(pageMs).toFixed(0)} ms, p90 ${p90(pageMs).toFixed(0)} ms (target < ${TARGET_MS} ms)`);
    console.log(`    of which GET /api/dashboard/security-overview (request to response end): median ${median(overviewApiMs).toFixed(0)} ms, p90 ${p90(overviewApiMs).toFixed(0)} ms`);
    console.log(`  baseline GET /api/health, navigation start -> load: median ${median(healthMs).toFixed(0)} ms, p90 ${p90(healthMs).toFixed(0)} ms`);
    console.log(`  ratio overview / health (median): ${(median(pageMs) / median(healthMs)).toFixed(1)}x\n`);
  } finally {
    await browser.close();
    await service?.stop();
    await hub.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
