/**
 * Account hardening (issue 13, items 4 and 5): login throttling per account and per
 * address with growing delays, the client address only from a trusted edge, tokens
 * that never outlive their creator, the 403 for revoking another user's token without revoke_all_tokens,
 * and human-entered text (every field the OpenAPI document marks) that refuses control
 * characters, bidi controls, Unicode line separators and lone surrogates.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { ACCOUNT_CEILING, ADDRESS_POLICY, PAIR_POLICY } from "../../src/platform/login-throttle";
import { ALL_PERMISSIONS } from "../../src/platform/permissions";
import { addMember, call, createToken, expectErrorShape, PASSWORD, signup, signupFresh, unique, uniqueIp } from "../helpers";
import { ROUTES, sample, samplePath, sampleQuery, textFields, withValueAt } from "./openapi-routes";

const at = (base: number, offsetMs: number) => ({ "x-trust-plane-now": new Date(base + offsetMs).toISOString() });
const login = (email: string, password: string, headers: Record<string, string> = {}) =>
  call("POST", "/api/auth/login", { body: { email, password }, headers: { "cf-connecting-ip": uniqueIp(), ...headers } });

describe("login throttling per account and client address", () => {
  it("after the threshold every attempt from that address waits, even with the right password; delays double; success resets", async () => {
    const org = await signupFresh();
    const t0 = Date.now();
    const from = { "cf-connecting-ip": uniqueIp() };
    for (let i = 0; i < PAIR_POLICY.threshold; i++) expectErrorShape(await login(org.email, "wrong password!", { ...from, ...at(t0, 0) }), 401, "unauthorized");
    // Locked for 1 s: the right password is refused too, with Retry-After.
    let r = await login(org.email, PASSWORD, { ...from, ...at(t0, 0) });
    expectErrorShape(r, 429, "rate_limited");
    expect(r.headers.get("retry-after")).toBe("1");
    // Past the delay a wrong guess is checked again and doubles it (2 s, then 4 s).
    expectErrorShape(await login(org.email, "wrong password!", { ...from, ...at(t0, 1_500) }), 401, "unauthorized");
    r = await login(org.email, PASSWORD, { ...from, ...at(t0, 1_600) });
    expectErrorShape(r, 429, "rate_limited");
    expect(r.headers.get("retry-after")).toBe("2");
    expectErrorShape(await login(org.email, "wrong password!", { ...from, ...at(t0, 3_600) }), 401, "unauthorized");
    r = await login(org.email, PASSWORD, { ...from, ...at(t0, 3_700) });
    expect(r.headers.get("retry-after")).toBe("4");
    // The lock holds that address only: the owner elsewhere signs in meanwhile.
    expect((await login(org.email, PASSWORD, at(t0, 3_800))).status).toBe(200);
    // After the delay the right password works and forgives everything.
    expect((await login(org.email, PASSWORD, { ...from, ...at(t0, 8_000) })).status).toBe(200);
    expectErrorShape(await login(org.email, "wrong password!", { ...from, ...at(t0, 8_001) }), 401, "unauthorized");
    expect((await login(org.email, PASSWORD, { ...from, ...at(t0, 8_002) })).status).toBe(200);
  });

  it("an unknown account is throttled exactly like a known one", async () => {
    const t0 = Date.now();
    const ghost = `nobody-${unique()}@example.com`;
    const from = { "cf-connecting-ip": uniqueIp() };
    for (let i = 0; i < PAIR_POLICY.threshold; i++) expectErrorShape(await login(ghost, "wrong password!", { ...from, ...at(t0, 0) }), 401, "unauthorized");
    const r = await login(ghost, "wrong password!", { ...from, ...at(t0, 0) });
    expectErrorShape(r, 429, "rate_limited");
    expect(r.headers.get("retry-after")).toBe("1");
  });

  it("20 parallel guesses from one address: exactly the threshold are checked, the rest wait", async () => {
    const org = await signupFresh();
    const t0 = Date.now();
    const from = { "cf-connecting-ip": uniqueIp() };
    const results = await Promise.all(Array.from({ length: 20 }, () => login(org.email, "wrong password!", { ...from, ...at(t0, 0) })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 401).length).toBe(PAIR_POLICY.threshold);
    expect(statuses.filter((s) => s === 429).length).toBe(20 - PAIR_POLICY.threshold);
    expect((await login(org.email, PASSWORD, { ...from, ...at(t0, 0) })).status).toBe(429);
  });

  it("failures from other addresses never lock the owner out", async () => {
    const org = await signupFresh();
    const t0 = Date.now();
    // Below the account's ceiling, spread over addresses: each stays under its own threshold.
    for (let a = 0; a < 8; a++) {
      const from = { "cf-connecting-ip": uniqueIp() };
      for (let i = 0; i < PAIR_POLICY.threshold - 1; i++) expectErrorShape(await login(org.email, "wrong password!", { ...from, ...at(t0, 0) }), 401, "unauthorized");
    }
    expect((await login(org.email, PASSWORD, at(t0, 0))).status).toBe(200);
  });

  it("at the account's ceiling the owner is emailed; a password alone then signs in only from an address the account used before", async () => {
    const org = await signupFresh();
    const t0 = Date.now();
    const office = { "cf-connecting-ip": uniqueIp() };
    expect((await login(org.email, PASSWORD, { ...office, ...at(t0, 0) })).status).toBe(200);
    // A distributed guess: one failure from each of many addresses.
    for (let i = 0; i < ACCOUNT_CEILING.threshold; i++) expectErrorShape(await login(org.email, "wrong password!", at(t0, 1_000 + i)), 401, "unauthorized");
    // From a new address the right password is refused, unchecked (so the answer tells nothing).
    const refused = await login(org.email, PASSWORD, at(t0, 60_000));
    expectErrorShape(refused, 429, "rate_limited");
    expect(refused.body.error.message).toMatch(/only from an address this account used before/);
    expectErrorShape(await login(org.email, "wrong password!", at(t0, 60_001)), 429, "rate_limited");
    // From the office it still works.
    expect((await login(org.email, PASSWORD, { ...office, ...at(t0, 60_002) })).status).toBe(200);
    // The owner was told once, and the audit log says so.
    const mail = await call("GET", "/api/admin/mail-outbox?limit=100", { token: org.session });
    const notices = mail.body.messages.filter((m: any) => m.to === org.email && /many failed sign-ins/.test(m.subject));
    expect(notices.length).toBe(1);
    expect(notices[0].body).toContain(`${ACCOUNT_CEILING.threshold} failed sign-ins`);
    const audit = await call("GET", "/api/admin/audit-logs?limit=50", { token: org.session });
    expect(audit.body.audit_logs.map((l: any) => l.action)).toContain("auth.throttle.account_under_attack");
    // A day without failures later the account is no longer under attack.
    expect((await login(org.email, PASSWORD, at(t0, 25 * 3_600_000))).status).toBe(200);
  }, 90_000);
});

describe("login throttling per client address", () => {
  it("many accounts guessed from one address lock that address, not others", async () => {
    const ip = uniqueIp();
    const t0 = Date.now();
    for (let i = 0; i < ADDRESS_POLICY.threshold; i++) {
      expectErrorShape(await login(`spray-${i}-${unique()}@example.com`, "wrong password!", { "cf-connecting-ip": ip, ...at(t0, 0) }), 401, "unauthorized");
    }
    const org = await signupFresh();
    expectErrorShape(await login(org.email, PASSWORD, { "cf-connecting-ip": ip, ...at(t0, 0) }), 429, "rate_limited");
    // The same account from another address is fine: the account itself has no failures.
    expect((await login(org.email, PASSWORD, at(t0, 0))).status).toBe(200);
  }, 90_000);
});

describe("client address", () => {
  /** One anonymous signup through the Worker with configuration overrides; returns the audit log's client_ip. */
  async function signupClientIp(overrides: Record<string, string>, spoofed: string) {
    const email = `ip-${unique()}@example.com`;
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("http://trust-plane.test/api/auth/signup", {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": spoofed },
        body: JSON.stringify({ organization_name: "IP", email, password: PASSWORD }),
      }),
      { ...(env as any), ...overrides },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(201);
    const { token } = await res.json<any>();
    const logs = await call("GET", "/api/admin/audit-logs", { token });
    return logs.body.audit_logs.find((l: any) => l.action === "auth.signup").client_ip;
  }

  it("CF-Connecting-IP is the client address only when configured as behind Cloudflare", async () => {
    expect(await signupClientIp({ TRUST_CF_CONNECTING_IP: "true" }, "203.0.113.77")).toBe("203.0.113.77");
    // Without that configuration a client-sent header is ignored: no forged address in the audit log.
    expect(await signupClientIp({ TRUST_CF_CONNECTING_IP: "false" }, "203.0.113.78")).toBeNull();
    // Only a literal address is taken, in canonical form.
    expect(await signupClientIp({ TRUST_CF_CONNECTING_IP: "true" }, "not-an-ip")).toBeNull();
    expect(await signupClientIp({ TRUST_CF_CONNECTING_IP: "true" }, "2001:DB8:0:0::7")).toBe("2001:db8::7");
  });
});

describe("API tokens", () => {
  it("a token cannot create a token that expires after itself; a session can", async () => {
    const org = await signup();
    const creator = await createToken(org.session, ["api-tokens:create_tokens", "lists:view_lists"], 2);
    const shorter = await call("POST", "/api/api-tokens", { token: creator.token, body: { name: "child", validity_days: 1, scopes: ["lists:view_lists"] } });
    expect(shorter.status).toBe(201);
    expect(shorter.body.expires_at <= creator.expires_at).toBe(true);
    for (const days of [2, 30]) {
      const longer = await call("POST", "/api/api-tokens", { token: creator.token, body: { name: "child", validity_days: days, scopes: ["lists:view_lists"] } });
      expectErrorShape(longer, 403, "forbidden");
    }
    expect((await call("POST", "/api/api-tokens", { token: org.session, body: { name: "s", validity_days: 30, scopes: ["lists:view_lists"] } })).status).toBe(201);
  });

  it("revoking another user's token with only delete_tokens is 403 (revoke_all_tokens is needed); nothing is revoked", async () => {
    const org = await signup();
    const alice = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Manager" }]);
    const bob = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Manager" }]);
    const bobs = await createToken(bob.session, ["api-tokens:view_own_tokens"]);
    expectErrorShape(await call("DELETE", `/api/api-tokens/${bobs.id}`, { token: alice.session }), 403, "forbidden");
    expect((await call("GET", "/api/api-tokens", { token: bobs.token })).status).toBe(200);
    // Another organization's token stays 404.
    const other = await signup();
    expectErrorShape(await call("DELETE", `/api/api-tokens/${bobs.id}`, { token: other.session }), 404, "not_found");
  });
});

describe("names, descriptions, notes and expressions refuse invisible and reordering characters", () => {
  // One of each refused kind (src/platform/text.ts).
  const BAD: Record<string, string> = {
    nul: "bad\u0000name",
    c1: "x\u0085y",
    override: "invoice\u202Egpj.exe",
    isolate: "a\u2066b",
    lrm: "a\u200Eb",
    rlm: "a\u200Fb",
    alm: "a\u061Cb",
    "line separator": "a\u2028b",
    "paragraph separator": "a\u2029b",
    surrogate: "lone \ud800 half",
  };
  const SINGLE_LINE_ONLY: Record<string, string> = { newline: "a\nb", tab: "a\tb", cr: "a\rb" };
  /** Every route and body field the OpenAPI document marks as guarded text. */
  const guarded = ROUTES.flatMap((r) => textFields(r.body).map((f) => ({ route: r, field: f })));

  it("the document marks the guarded fields, across the modules", () => {
    const named = new Set(guarded.map((g) => `${g.route.method} ${g.route.path} ${g.field.path.join(".")}`));
    // A sample that must be there; the test below covers whatever else the document marks.
    for (const expected of [
      "POST /api/lists description", "PUT /api/lists/{list_id} description", "POST /api/auth/signup organization_name", "POST /api/api-tokens name",
      "POST /api/ct-log/alert-rules expression", "POST /api/ct-log/alert-rules/test expression", "POST /api/rdap/alert-templates subject",
      "POST /api/notification-channels name", "POST /api/cert-watcher/agents name",
    ]) {
      expect(named, expected).toContain(expected);
    }
    expect(guarded.length).toBeGreaterThan(30);
  });

  it("each guarded field of each route is a 400 naming it, for every refused kind", async () => {
    const failures: string[] = [];
    // ~10 requests per field: a fresh organization every 15 fields keeps each token's and
    // organization's rate-limit bucket (600 and 1,200 a minute) far from empty.
    let token = "";
    let session = "";
    for (const [i, { route, field }] of guarded.entries()) {
      if (i % 15 === 0) {
        session = (await signup()).session;
        token = (await createToken(session, [...ALL_PERMISSIONS], 1, "text")).token;
      }
      const kinds = { ...BAD, ...(field.multiline ? {} : SINGLE_LINE_ONLY) };
      const path = samplePath(route) + sampleQuery(route);
      const results = await Promise.all(
        Object.entries(kinds).map(async ([kind, text]) => {
          const body = withValueAt(sample(route.body ?? undefined), field.path, text);
          const isPublic = route.permission === "none";
          // Sign-in settings answer login sessions only.
          const r = await call(route.method, path, { token: isPublic ? undefined : route.permission === "session" ? session : token, body });
          return { kind, r };
        }),
      );
      const where = field.path.join(".");
      for (const { kind, r } of results) {
        const paths = r.body?.error?.details?.map((d: any) => d.path) ?? [];
        if (r.status !== 400 || r.body?.error?.code !== "validation_error" || !paths.includes(where)) {
          failures.push(`${route.method} ${route.path} ${where} (${kind}): ${r.status} ${JSON.stringify(r.body)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it("nothing is saved; multi-line text keeps line breaks and tabs; other scripts are fine", async () => {
    const org = await signup();
    const list = await call("POST", "/api/lists", { token: org.session, body: { name: "ok", list_type: "ip" } });
    for (const text of Object.values(BAD)) {
      expectErrorShape(await call("POST", "/api/lists", { token: org.session, body: { name: "other", list_type: "ip", description: text } }), 400, "validation_error");
      expectErrorShape(await call("POST", "/api/ct-log/alert-rules", { token: org.session, body: { name: "r", expression: `cert.subject == "${text}"` } }), 400, "validation_error");
    }
    expect((await call("GET", "/api/lists", { token: org.session })).body.lists.length).toBe(1);
    expect((await call("GET", "/api/ct-log/alert-rules", { token: org.session })).body.rules).toEqual([]);
    expect((await call("PUT", `/api/lists/${list.body.id}`, { token: org.session, body: { description: "line one\n\tline two" } })).status).toBe(200);
    expect((await call("POST", "/api/rdap/alert-templates", { token: org.session, body: { name: "Überwachung 監視 مراقبة", subject: "s", body: "a\r\nb" } })).status).toBe(201);
    // A rule may span lines and hold any script inside its string literals.
    expect((await call("POST", "/api/ct-log/alert-rules", { token: org.session, body: { name: "r", expression: 'cert.subject == "例え.jp"\n\t|| cert.subject == "مثال.example"' } })).status).toBe(201);
  }, 90_000);
});
