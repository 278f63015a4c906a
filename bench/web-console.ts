/**
 * bench:web — cold load of the console's overview in headless chromium over loopback.
 *
 *  - The service runs the README way (`npm start`, fresh local state, CT/RDAP/DoH
 *    pointed at the local fixture hub so no scheduled job reaches for the internet).
 *  - Each run is a fresh browser context (empty cache) with a logged-in session cookie.
 *  - Figures: JS and CSS shipped for the first page (gzip of the bytes received, and
 *    raw), time from navigation start to the score being visible (to the overview's
 *    content when the service has no security-overview API yet), and, as the baseline
 *    in the same browser and run, the time to load GET /api/health.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { startHub } from "../test/fixtures/hub.js";

const RUNS = Number(process.env.RUNS ?? 15);
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];

async function main() {
  const hub = await startHub();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const stateDir = mkdtempSync(join(tmpdir(), "trust-plane-bench-web-"));
  const server = spawn("npm", ["start"], {
    detached: true,
    stdio: "ignore",
    env: {
      ...process.env,
      PORT: String(port),
      TRUST_PLANE_STATE_DIR: stateDir,
      CT_LOG_LIST_URL: String(hub.provided.ctLogListUrl),
      CT_LOG_LIST_PUBLIC_KEY: String(hub.provided.ctLogListKeyPem),
      RDAP_BOOTSTRAP_URL: `${hub.url}/rdap/bootstrap.json`,
      DOH_RESOLVER_URLS: `${hub.url}/doh/bench/dns-query`,
    },
  });
  const stop = () => {
    try {
      process.kill(-server.pid!, "SIGTERM");
    } catch {
      /* gone */
    }
  };
  process.on("exit", stop);
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/api/health`)).ok) break;
      } catch {
        /* not yet */
      }
      if (i > 400) throw new Error("npm start did not come up");
      await new Promise((r) => setTimeout(r, 300));
    }

    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ARGS, headless: true });
    // One organization with a little data; every run logs in afresh.
    const email = `bench-${Date.now()}@example.com`;
    const setup = await browser.newContext({ baseURL: base });
    const headers = { "X-TrustPlane-Console": "1" };
    const signup = await setup.request.post("/api/auth/signup", { headers, data: { organization_name: "Bench", email, password: "correct horse battery staple" } });
    if (!signup.ok()) throw new Error(`signup failed: ${signup.status()} ${await signup.text()}`);
    await setup.request.post("/api/ct-log/filters", { headers, data: { pattern: "example.com", match_type: "wide" } });
    const hasOverview = (await setup.request.get("/api/dashboard/security-overview", { headers })).status() === 200;
    await setup.close();

    const pageMs: number[] = [];
    const healthMs: number[] = [];
    let jsGzip = 0;
    let cssGzip = 0;
    let jsRaw = 0;
    let cssRaw = 0;
    for (let run = 0; run < RUNS; run++) {
      // Baseline: /api/health in a fresh context of the same browser.
      const hctx = await browser.newContext({ baseURL: base });
      const hp = await hctx.newPage();
      const h0 = performance.now();
      await hp.goto("/api/health", { waitUntil: "load" });
      healthMs.push(performance.now() - h0);
      await hctx.close();

      const ctx = await browser.newContext({ baseURL: base });
      const login = await ctx.request.post("/api/auth/login", { headers, data: { email, password: "correct horse battery staple" } });
      if (!login.ok()) throw new Error(`login failed: ${login.status()} ${await login.text()}`);
      const page = await ctx.newPage();
      const bodies: Promise<void>[] = [];
      let js = 0;
      let css = 0;
      let jsR = 0;
      let cssR = 0;
      page.on("response", (res) => {
        const type = res.headers()["content-type"] ?? "";
        if (!/javascript|text\/css/.test(type)) return;
        bodies.push(
          res.body().then((b) => {
            const gz = gzipSync(b, { level: 9 }).length;
            if (type.includes("css")) (css += gz), (cssR += b.length);
            else (js += gz), (jsR += b.length);
          }),
        );
      });
      const t0 = performance.now();
      await page.goto("/", { waitUntil: "commit" });
      // The score (or, on a build without the overview API, its "not available" answer).
      const shown = hasOverview ? page.getByTestId("overall-score") : page.getByText("The security overview is not available");
      await shown.waitFor({ state: "visible" }).catch(async (e) => {
        const shot = join(tmpdir(), "bench-web-failure.png");
        await page.screenshot({ path: shot });
        throw new Error(`${e.message}\n(page at ${page.url()}; screenshot in ${shot})`);
      });
      pageMs.push(performance.now() - t0);
      await Promise.all(bodies);
      [jsGzip, cssGzip, jsRaw, cssRaw] = [js, css, jsR, cssR];
      await ctx.close();
    }
    await browser.close();

    const target = hasOverview ? "score visible" : "overview content visible (no security-overview API on this build)";
    console.log(`\nWeb console cold load, ${RUNS} runs, headless chromium over loopback, npm start (wrangler dev, workerd)\n`);
    console.log(`  first page shipped: JS ${(jsGzip / 1024).toFixed(1)} KB gzip (${(jsRaw / 1024).toFixed(1)} KB raw), CSS ${(cssGzip / 1024).toFixed(1)} KB gzip (${(cssRaw / 1024).toFixed(1)} KB raw); total ${((jsGzip + cssGzip) / 1024).toFixed(1)} KB gzip (target < 150 KB)`);
    console.log(`  overview, ${target}: median ${median(pageMs).toFixed(0)} ms, p90 ${p90(pageMs).toFixed(0)} ms (target < 1000 ms)`);
    console.log(`  baseline GET /api/health:  median ${median(healthMs).toFixed(0)} ms, p90 ${p90(healthMs).toFixed(0)} ms`);
    console.log(`  ratio overview / health (median): ${(median(pageMs) / median(healthMs)).toFixed(1)}x\n`);
  } finally {
    stop();
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
