#!/usr/bin/env node
/**
 * Platform benchmark (issue 2): requests per second and p50/p99 latency of an
 * authenticated GET /api/api-tokens at 1 and 32 concurrent connections, next to an
 * unauthenticated GET /api/health in the same run, against the service started the
 * README way (`npm start`). Rate limits are raised for the run so the benchmark
 * measures the work, not 429s. Run: npm run bench:api
 */
import { load, startService } from "./lib/server.mjs";

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const port = Number(process.env.BENCH_PORT ?? 8791);
const svc = await startService({
  port,
  env: { RATE_LIMIT_ORG_PER_MINUTE: "100000000", RATE_LIMIT_TOKEN_PER_MINUTE: "100000000", RATE_LIMIT_ANONYMOUS_PER_MINUTE: "100000000" },
});
try {
  const email = `bench-${Date.now()}@example.com`;
  const signup = await (
    await fetch(`${svc.base}/api/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ organization_name: "Bench", email, password: "benchmark password 1" }),
    })
  ).json();
  const created = await (
    await fetch(`${svc.base}/api/api-tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${signup.token}` },
      body: JSON.stringify({ name: "bench", validity_days: 1, scopes: ["api-tokens:view_own_tokens"] }),
    })
  ).json();
  const auth = { authorization: `Bearer ${created.token}` };
  const session = { authorization: `Bearer ${signup.token}` };
  // Warm-up: compile paths, open connections.
  await load({ url: `${svc.base}/api/api-tokens`, headers: auth, concurrency: 8, seconds: 2 });

  const rows = [];
  for (const concurrency of [1, 32]) {
    const health = await load({ url: `${svc.base}/api/health`, concurrency, seconds });
    const tokens = await load({ url: `${svc.base}/api/api-tokens`, headers: auth, concurrency, seconds });
    const sessions = await load({ url: `${svc.base}/api/api-tokens`, headers: session, concurrency, seconds });
    rows.push({ concurrency, health, tokens, sessions });
  }
  const f = (n) => n.toFixed(1);
  console.log(`\nTrust-Plane API benchmark (${seconds}s per case, wrangler dev on workerd, local D1)\n`);
  console.log("conc | endpoint                      |   req/s | p50 ms | p99 ms | non-2xx");
  console.log("-----|-------------------------------|---------|--------|--------|--------");
  for (const r of rows) {
    for (const [name, m] of [["GET /api/health (anon)", r.health], ["GET /api/api-tokens (auth)", r.tokens], ["GET /api/api-tokens (session)", r.sessions]]) {
      console.log(`${String(r.concurrency).padStart(4)} | ${name.padEnd(29)} | ${f(m.rps).padStart(7)} | ${f(m.p50).padStart(6)} | ${f(m.p99).padStart(6)} | ${m.errors}`);
    }
    console.log(`     | ratio authenticated/health throughput: API token ${(r.tokens.rps / r.health.rps).toFixed(2)}, session ${(r.sessions.rps / r.health.rps).toFixed(2)}`);
  }
} finally {
  svc.stop();
}
