#!/usr/bin/env node
/**
 * Platform benchmark (issue 2): requests per second and p50/p99 latency of an
 * authenticated GET /api/api-tokens at 1 and 32 concurrent connections, next to an
 * unauthenticated GET /api/health in the same run, against the service started the
 * README way (`npm start`). Rate limits are raised for the run so the benchmark
 * measures the work, not 429s.
 *
 * Then the identity check: the same read by a session of an organization that requires a
 * second factor, whose user signed in with password + authenticator code, and which has
 * single sign-on configured (discovery served by a small local document, allowed through
 * the egress allow-list), against a session of a plain organization, alternated for
 * BENCH_ROUNDS rounds: the ratio's median and p90. Run: npm run bench:api
 */
import { createServer } from "node:http";
import * as OTPAuth from "otpauth";
import { load, startService } from "./lib/server.mjs";

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const port = Number(process.env.BENCH_PORT ?? 8791);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const issuer = await discoveryDocument();
const svc = await startService({
  port,
  env: {
    RATE_LIMIT_ORG_PER_MINUTE: "100000000",
    RATE_LIMIT_TOKEN_PER_MINUTE: "100000000",
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: "100000000",
    EGRESS_ALLOWLIST: new URL(issuer.url).host,
  },
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

  // Identity: a session of an organization with MFA required and SSO configured.
  const mfaSession = { authorization: `Bearer ${await sessionWithMfaAndSso(svc.base, issuer.url)}` };
  const ratios = [];
  const roundSeconds = Math.max(2, Math.round(seconds / 2));
  for (let i = 0; i < rounds; i++) {
    // Alternated, so drift of the shared machine falls on both sides.
    const [first, second] = i % 2 ? [mfaSession, session] : [session, mfaSession];
    const a = await load({ url: `${svc.base}/api/api-tokens`, headers: first, concurrency: 8, seconds: roundSeconds });
    const b = await load({ url: `${svc.base}/api/api-tokens`, headers: second, concurrency: 8, seconds: roundSeconds });
    const [plain, mfa] = i % 2 ? [b, a] : [a, b];
    if (mfa.errors || plain.errors) throw new Error(`non-2xx answers: ${JSON.stringify({ plain: plain.statuses, mfa: mfa.statuses })}`);
    ratios.push({ ratio: mfa.rps / plain.rps, plain: plain.rps, mfa: mfa.rps });
  }
  const sorted = ratios.map((r) => r.ratio).sort((x, y) => x - y);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  console.log(`\nIdentity: GET /api/api-tokens by session, 8 connections, ${rounds} alternated rounds of ${roundSeconds}s`);
  for (const r of ratios) console.log(`  plain organization ${f(r.plain)} req/s, MFA required + SSO configured ${f(r.mfa)} req/s, ratio ${r.ratio.toFixed(3)}`);
  console.log(`  ratio MFA+SSO / plain: p10 ${at(0.1).toFixed(3)}, median ${at(0.5).toFixed(3)}, p90 ${at(0.9).toFixed(3)} (target: a median of at least 0.90)`);
} finally {
  svc.stop();
  issuer.close();
}

/** A minimal OpenID discovery document on loopback: enough for the configuration to be saved. */
async function discoveryDocument() {
  const server = createServer((req, res) => {
    const url = `http://127.0.0.1:${server.address().port}`;
    if (req.url !== "/.well-known/openid-configuration") return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        issuer: url,
        authorization_endpoint: `${url}/authorize`,
        token_endpoint: `${url}/token`,
        jwks_uri: `${url}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        code_challenge_methods_supported: ["S256"],
      }),
    );
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

/** Signs up an organization, sets up an authenticator app, requires MFA, configures SSO; a session signed in with password + code. */
async function sessionWithMfaAndSso(base, issuerUrl) {
  const call = async (method, path, body, token) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await r.json();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };
  const email = `bench-mfa-${Date.now()}@bench-mfa.example`;
  const password = "benchmark password 2";
  const { token } = await call("POST", "/api/auth/signup", { organization_name: "Bench MFA", email, password });
  const app = OTPAuth.URI.parse((await call("POST", "/api/auth/mfa/totp", undefined, token)).otpauth_uri);
  await call("POST", "/api/auth/mfa/totp/verify", { code: app.generate() }, token);
  await call("PUT", "/api/admin/security-policy", { require_mfa: true }, token);
  await call("PUT", "/api/admin/sso", { issuer: issuerUrl, client_id: "bench", client_secret: "bench secret", email_domains: ["bench-mfa.example"] }, token);
  const step = await call("POST", "/api/auth/login", { email, password });
  // The enrollment used this step's code; the next step's is accepted once too.
  const signedIn = await call("POST", "/api/auth/login/mfa", { mfa_token: step.mfa_token, code: app.generate({ timestamp: Date.now() + 30_000 }) });
  return signedIn.token;
}
