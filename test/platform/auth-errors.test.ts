/**
 * 401 versus 403 and the one error body (docs/decisions.md#errors-and-validation).
 */
import { describe, expect, it } from "vitest";
import { generateSecret } from "../../src/platform/secrets";
import { call, callFresh, createToken, expectErrorShape, signupFresh } from "../helpers";

describe("401 vs 403", () => {
  it("no Authorization header: 401 unauthorized on every protected endpoint", async () => {
    for (const [method, path] of [
      ["GET", "/api/api-tokens"], ["GET", "/api/api-tokens/org"], ["POST", "/api/api-tokens"], ["DELETE", "/api/api-tokens/1"],
      ["POST", "/api/api-tokens/1/renew"], ["GET", "/api/admin/users"], ["GET", "/api/admin/roles"], ["POST", "/api/admin/invitations"],
      ["GET", "/api/admin/invitations"], ["POST", "/api/admin/invitations/1/resend"], ["PUT", "/api/admin/users/1"],
      ["PUT", "/api/admin/users/1/status"], ["DELETE", "/api/admin/users/1"], ["GET", "/api/admin/subscription"],
      ["PUT", "/api/admin/subscription"], ["GET", "/api/admin/audit-logs"], ["GET", "/api/admin/mail-outbox"],
      ["GET", "/api/auth/me"], ["POST", "/api/auth/logout"],
    ]) {
      const r = await callFresh(method, path);
      expectErrorShape(r, 401, "unauthorized");
    }
  });

  it("a malformed header, an unknown well-formed token, or a token of another kind: 401", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["api-tokens:view_own_tokens"]);
    for (const authorization of [
      "Basic dXNlcjpwYXNz", "Bearer", "Bearer ", `Token ${t.token}`, `Bearer ${t.token} extra`, t.token, "Bearer not-a-token",
      `Bearer ${generateSecret("api")}`, `Bearer ${generateSecret("session")}`, `Bearer ${generateSecret("invitation")}`,
    ]) {
      const r = await callFresh("GET", "/api/api-tokens", { headers: { authorization } });
      expectErrorShape(r, 401, "unauthorized");
    }
    // The scheme is case-insensitive.
    expect((await call("GET", "/api/api-tokens", { headers: { authorization: `bearer ${t.token}` } })).status).toBe(200);
  });

  it("a valid token lacking the permission: 403 forbidden (and authentication is checked first)", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["rdap:view_monitoring"]);
    for (const [method, path, body] of [
      ["GET", "/api/api-tokens", undefined], ["POST", "/api/api-tokens", { name: "x", validity_days: 1, scopes: ["rdap:view_monitoring"] }],
      ["GET", "/api/admin/users", undefined], ["GET", "/api/admin/audit-logs", undefined], ["PUT", "/api/admin/subscription", { tier: "pro" }],
    ] as const) {
      const r = await call(method, path, { token: t.token, body });
      expectErrorShape(r, 403, "forbidden");
    }
    // Permission is checked before the body is validated: no information for a caller without it.
    expectErrorShape(await call("POST", "/api/api-tokens", { token: t.token, body: { nonsense: true } }), 403, "forbidden");
  });

  it("a scope of one module never grants another module's permission", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["api-tokens:view_own_tokens"]);
    const me = await call("GET", "/api/auth/me", { token: t.token });
    expect(me.body.permissions).toEqual(["api-tokens:view_own_tokens"]);
    expectErrorShape(await call("GET", "/api/api-tokens/org", { token: t.token }), 403, "forbidden");
  });
});

describe("error body", () => {
  it("every error is exactly {success:false, error:{code, message, details?}} with a JSON content type", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["rdap:view_monitoring"]);
    const samples = [
      [await callFresh("GET", "/api/api-tokens"), 401, "unauthorized"],
      [await call("GET", "/api/admin/users", { token: t.token }), 403, "forbidden"],
      [await call("DELETE", "/api/admin/users/999999999", { token: org.session }), 404, "not_found"],
      [await call("GET", "/api/no-such-endpoint", { token: org.session }), 404, "not_found"],
      [await call("POST", "/api/api-tokens", { token: org.session, body: { name: 5 } }), 400, "validation_error"],
      [await callFresh("POST", "/api/auth/signup", { body: { organization_name: "x", email: org.email, password: "correct horse battery staple" } }), 409, "conflict"],
    ] as const;
    for (const [r, status, code] of samples) {
      expectErrorShape(r, status, code);
      expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    }
    const v = samples[4][0];
    expect(v.body.error.details.length).toBeGreaterThanOrEqual(3);
    expect(v.body.error.details.map((d: any) => d.path).sort()).toEqual(["name", "scopes", "validity_days"]);
  });
});
