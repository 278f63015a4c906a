/**
 * Account hardening (issue 13, items 4 and 5): login throttling per account and per
 * address with growing delays, the client address only from a trusted edge, tokens
 * that never outlive their creator, the spec's 403 for revoking another user's token,
 * and names that refuse control characters, bidi overrides and lone surrogates.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { ACCOUNT_POLICY, ADDRESS_POLICY } from "../../src/platform/login-throttle";
import { addMember, call, createToken, expectErrorShape, PASSWORD, signup, signupFresh, unique, uniqueIp } from "../helpers";

const at = (base: number, offsetMs: number) => ({ "x-trust-plane-now": new Date(base + offsetMs).toISOString() });
const login = (email: string, password: string, headers: Record<string, string> = {}) =>
  call("POST", "/api/auth/login", { body: { email, password }, headers: { "cf-connecting-ip": uniqueIp(), ...headers } });

describe("login throttling per account", () => {
  it("after the threshold every attempt waits, even with the right password; delays double; success resets", async () => {
    const org = await signupFresh();
    const t0 = Date.now();
    for (let i = 0; i < ACCOUNT_POLICY.threshold; i++) expectErrorShape(await login(org.email, "wrong password!", at(t0, 0)), 401, "unauthorized");
    // Locked for 1 s: the right password is refused too, with Retry-After.
    let r = await login(org.email, PASSWORD, at(t0, 0));
    expectErrorShape(r, 429, "rate_limited");
    expect(r.headers.get("retry-after")).toBe("1");
    // Past the delay a wrong guess is checked again and doubles it (2 s, then 4 s).
    expectErrorShape(await login(org.email, "wrong password!", at(t0, 1_500)), 401, "unauthorized");
    r = await login(org.email, PASSWORD, at(t0, 1_600));
    expectErrorShape(r, 429, "rate_limited");
    expect(r.headers.get("retry-after")).toBe("2");
    expectErrorShape(await login(org.email, "wrong password!", at(t0, 3_600)), 401, "unauthorized");
    r = await login(org.email, PASSWORD, at(t0, 3_700));
    expect(r.headers.get("retry-after")).toBe("4");
    // After the delay the right password works and forgives everything.
    expect((await login(org.email, PASSWORD, at(t0, 8_000))).status).toBe(200);
    expectErrorShape(await login(org.email, "wrong password!", at(t0, 8_001)), 401, "unauthorized");
    expect((await login(org.email, PASSWORD, at(t0, 8_002))).status).toBe(200);
  });

  it("an unknown account is throttled exactly like a known one", async () => {
    const t0 = Date.now();
    const ghost = `nobody-${unique()}@example.com`;
    for (let i = 0; i < ACCOUNT_POLICY.threshold; i++) expectErrorShape(await login(ghost, "wrong password!", at(t0, 0)), 401, "unauthorized");
    const r = await login(ghost, "wrong password!", at(t0, 0));
    expectErrorShape(r, 429, "rate_limited");
    expect(r.headers.get("retry-after")).toBe("1");
  });

  it("20 parallel guesses: exactly the threshold are checked, the rest wait", async () => {
    const org = await signupFresh();
    const t0 = Date.now();
    const results = await Promise.all(Array.from({ length: 20 }, () => login(org.email, "wrong password!", at(t0, 0))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 401).length).toBe(ACCOUNT_POLICY.threshold);
    expect(statuses.filter((s) => s === 429).length).toBe(20 - ACCOUNT_POLICY.threshold);
    expect((await login(org.email, PASSWORD, at(t0, 0))).status).toBe(429);
  });
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
  });
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

  it("revoking another user's token with only delete_tokens is 403 (spec permission column); nothing is revoked", async () => {
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

describe("names, descriptions and notes refuse invisible and reordering characters", () => {
  const BAD = { nul: "bad\u0000name", bidi: "invoice\u202Egpj.exe", isolate: "a\u2066b", surrogate: "lone \ud800 half", c1: "x\u0085y" };

  it("400 naming the field on every schema that carries such text", async () => {
    const org = await signup();
    const list = await call("POST", "/api/lists", { token: org.session, body: { name: "ok", list_type: "ip" } });
    for (const [what, text] of Object.entries(BAD)) {
      const cases: [string, string, unknown, string][] = [
        ["POST", "/api/lists", { name: `l${what}`, list_type: "ip", description: text }, "description"],
        ["PUT", `/api/lists/${list.body.id}`, { description: text }, "description"],
        ["POST", "/api/ct-log/alert-rules", { name: text, expression: "true" }, "name"],
        ["POST", "/api/rdap/alert-templates", { name: text, subject: "s", body: "b" }, "name"],
        ["POST", "/api/rdap/alert-templates", { name: "t", subject: text, body: "b" }, "subject"],
        ["POST", "/api/notification-channels", { name: text, kind: "email", recipients: ["a@example.com"] }, "name"],
        ["POST", "/api/api-tokens", { name: text, validity_days: 1, scopes: ["lists:view_lists"] }, "name"],
      ];
      for (const [method, path, body, field] of cases) {
        const r = await call(method, path, { token: org.session, body });
        expectErrorShape(r, 400, "validation_error");
        expect(r.body.error.details.map((d: any) => d.path), `${what} ${method} ${path}`).toContain(field);
      }
      const s = await call("POST", "/api/auth/signup", { body: { organization_name: text, email: `x-${unique()}@example.com`, password: PASSWORD } });
      expectErrorShape(s, 400, "validation_error");
    }
    // Nothing was saved; multi-line text (descriptions, template bodies) keeps its line breaks and tabs.
    expect((await call("GET", "/api/lists", { token: org.session })).body.lists.length).toBe(1);
    expect((await call("PUT", `/api/lists/${list.body.id}`, { token: org.session, body: { description: "line one\n\tline two" } })).status).toBe(200);
    expect((await call("POST", "/api/rdap/alert-templates", { token: org.session, body: { name: "Überwachung 監視 مراقبة", subject: "s", body: "a\r\nb" } })).status).toBe(201);
  });
});
