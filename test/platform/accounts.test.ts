/**
 * Accounts: signup, login, logout, me, invitation acceptance.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/env";
import { ALL_PERMISSIONS, ASSIGNABLE_ROLES } from "../../src/platform/permissions";
import {
  PASSWORD, addMember, call, callFresh, createToken, expectErrorShape, invitationTokenFor, login, signupFresh, unique, uniqueIp,
} from "../helpers";

const DB = (env as any).DB as D1Database;

describe("signup", () => {
  it("creates an organization (tier free) and its signup user: 201 with ids, session token, expiry ~12 h", async () => {
    const email = `Signup-${unique()}@Example.com`;
    const before = Date.now();
    const r = await callFresh("POST", "/api/auth/signup", { body: { organization_name: "Acme", email, password: PASSWORD } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["expires_at", "organization_id", "token", "user_id"]);
    expect(Number.isInteger(r.body.organization_id)).toBe(true);
    expect(Number.isInteger(r.body.user_id)).toBe(true);
    expect(r.body.token).toMatch(/^tps_[0-9A-Za-z]{38}$/);
    const exp = Date.parse(r.body.expires_at);
    expect(Math.abs(exp - (before + 12 * 3600_000))).toBeLessThan(10_000);
    const me = await call("GET", "/api/auth/me", { token: r.body.token });
    expect(me.status).toBe(200);
    expect(me.body.organization).toMatchObject({ id: r.body.organization_id, name: "Acme", tier: "free" });
    // Emails are case-insensitive: stored lowercased.
    expect(me.body.user).toMatchObject({ id: r.body.user_id, email: email.toLowerCase(), is_signup_user: true, status: "active" });
  });

  it("rejects a password shorter than 12 characters: 400 validation_error naming `password`", async () => {
    const r = await callFresh("POST", "/api/auth/signup", {
      body: { organization_name: "Short", email: `short-${unique()}@example.com`, password: "elevenchars" },
    });
    expectErrorShape(r, 400, "validation_error");
    expect(r.body.error.details.map((d: any) => d.path)).toContain("password");
  });

  it("accepts a password of exactly 12 characters", async () => {
    const r = await callFresh("POST", "/api/auth/signup", {
      body: { organization_name: "Twelve", email: `twelve-${unique()}@example.com`, password: "twelve-chars" },
    });
    expect(r.status).toBe(201);
  });

  it("refuses a duplicate email (any case): 409 conflict", async () => {
    const email = `dup-${unique()}@example.com`;
    const first = await callFresh("POST", "/api/auth/signup", { body: { organization_name: "A", email, password: PASSWORD } });
    expect(first.status).toBe(201);
    const again = await callFresh("POST", "/api/auth/signup", {
      body: { organization_name: "B", email: email.toUpperCase(), password: PASSWORD },
    });
    expectErrorShape(again, 409, "conflict");
  });

  it("SIGNUP_ENABLED=false: config parses it and signup answers 403", async () => {
    expect(loadConfig({ SIGNUP_ENABLED: "false" } as any).signupEnabled).toBe(false);
    expect(loadConfig({ SIGNUP_ENABLED: "true" } as any).signupEnabled).toBe(true);
    expect(loadConfig({} as any).signupEnabled).toBe(true);
    // The same app with the binding overridden (bindings of the test worker are fixed).
    const app = createApp();
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request("http://trust-plane.test/api/auth/signup", {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": uniqueIp() },
        body: JSON.stringify({ organization_name: "Closed", email: `closed-${unique()}@example.com`, password: PASSWORD }),
      }),
      { ...env, SIGNUP_ENABLED: "false" } as any,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(403);
    const body: any = await res.json();
    expect(body).toMatchObject({ success: false, error: { code: "forbidden" } });
  });
});

describe("login and logout", () => {
  it("logs in with the right password: 200 {token, expires_at} and the session works", async () => {
    const org = await signupFresh();
    const r = await login(org.email);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["expires_at", "token"]);
    expect(r.body.token).toMatch(/^tps_/);
    expect(r.body.token).not.toBe(org.session);
    const me = await call("GET", "/api/auth/me", { token: r.body.token });
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(org.userId);
  });

  it("wrong password, unknown email and a disabled user are all 401 with the same message", async () => {
    const org = await signupFresh();
    const member = await addMember(org.session, [{ module_name: "rdap", role_name: "Viewer" }]);
    const dis = await call("PUT", `/api/admin/users/${member.userId}/status`, { token: org.session, body: { status: "disabled" } });
    expect(dis.status).toBe(200);

    const wrong = await login(org.email, "not the right password");
    const unknown = await login(`nobody-${unique()}@example.com`);
    const disabled = await login(member.email);
    for (const r of [wrong, unknown, disabled]) expectErrorShape(r, 401, "unauthorized");
    expect(unknown.body.error.message).toBe(wrong.body.error.message);
    expect(disabled.body.error.message).toBe(wrong.body.error.message);
  });

  it("logout ends the calling session: 401 afterwards, other sessions unaffected", async () => {
    const org = await signupFresh();
    const second = (await login(org.email)).body.token as string;
    const out = await call("POST", "/api/auth/logout", { token: org.session });
    expect(out.status).toBe(200);
    expectErrorShape(await call("GET", "/api/auth/me", { token: org.session }), 401, "unauthorized");
    expect((await call("GET", "/api/auth/me", { token: second })).status).toBe(200);
  });

  it("an expired session is 401 token_expired", async () => {
    const org = await signupFresh();
    const s = (await login(org.email)).body.token as string;
    await DB.prepare("UPDATE sessions SET expires_at = ? WHERE user_id = ?").bind(new Date(Date.now() - 1000).toISOString(), org.userId).run();
    expectErrorShape(await call("GET", "/api/auth/me", { token: s }), 401, "token_expired");
  });
});

describe("me", () => {
  it("a session of the signup user has every permission (Administrator of every module)", async () => {
    const org = await signupFresh();
    const me = await call("GET", "/api/auth/me", { token: org.session });
    expect(me.status).toBe(200);
    expect(me.body.credential).toBe("session");
    expect(me.body.permissions).toEqual([...ALL_PERMISSIONS].sort());
    expect(me.body.permissions).toHaveLength(65);
    const roles = me.body.user.permissions as { module: string; role: string }[];
    expect(roles.every((r) => r.role === "Administrator")).toBe(true);
    expect(roles.map((r) => r.module).sort()).toEqual(["admin", "api-tokens", "cert-watcher", "ct-log", "dns-watcher", "lists", "rdap"]);
  });

  it("an API token reports exactly its scopes as permissions", async () => {
    const org = await signupFresh();
    const scopes = ["rdap:view_monitoring", "ct-log:view_alerts", "lists:view_lists"];
    const t = await createToken(org.session, scopes);
    const me = await call("GET", "/api/auth/me", { token: t.token });
    expect(me.status).toBe(200);
    expect(me.body.credential).toBe("api_token");
    expect(me.body.permissions).toEqual([...scopes].sort());
  });

  it("without a bearer: 401", async () => {
    expectErrorShape(await callFresh("GET", "/api/auth/me"), 401, "unauthorized");
  });
});

describe("invitation acceptance", () => {
  async function invite(session: string, roles: { module_name: string; role_name: string }[]) {
    const email = `inv-${unique()}@example.com`;
    const r = await call("POST", "/api/admin/invitations", { token: session, body: { email, roles } });
    expect(r.status).toBe(201);
    return { email, id: r.body.id as number, token: await invitationTokenFor(session, email) };
  }

  it("accept: 201, a session, and the new user holds exactly the invited roles' permissions", async () => {
    const org = await signupFresh();
    const roles = [
      { module_name: "rdap", role_name: "Editor" },
      { module_name: "api-tokens", role_name: "Token Manager" },
    ];
    const inv = await invite(org.session, roles);
    const acc = await callFresh("POST", "/api/auth/invitations/accept", { body: { token: inv.token, password: PASSWORD } });
    expect(acc.status).toBe(201);
    expect(acc.body).toMatchObject({ organization_id: org.organizationId, invitation_id: inv.id });
    expect(acc.body.token).toMatch(/^tps_/);
    const me = await call("GET", "/api/auth/me", { token: acc.body.token });
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ id: acc.body.user_id, email: inv.email, is_signup_user: false });
    expect(me.body.user.permissions).toEqual([
      { module: "rdap", role: "Editor" },
      { module: "api-tokens", role: "Token Manager" },
    ]);
    const expected = new Set<string>(["lists:view_lists"]);
    for (const p of ASSIGNABLE_ROLES.rdap.find((d) => d.name === "Editor")!.permissions) expected.add(p);
    for (const p of ASSIGNABLE_ROLES["api-tokens"].find((d) => d.name === "Token Manager")!.permissions) expected.add(p);
    expect(me.body.permissions).toEqual([...expected].sort());
    expect(me.body.permissions).not.toContain("admin:manage_users");
    // The accepted user can log in with the password they chose.
    expect((await login(inv.email)).status).toBe(200);
  });

  it("accepting twice: 400 invitation_invalid", async () => {
    const org = await signupFresh();
    const inv = await invite(org.session, []);
    expect((await callFresh("POST", "/api/auth/invitations/accept", { body: { token: inv.token, password: PASSWORD } })).status).toBe(201);
    const again = await callFresh("POST", "/api/auth/invitations/accept", { body: { token: inv.token, password: PASSWORD } });
    expectErrorShape(again, 400, "invitation_invalid");
  });

  it("an expired invitation: 400 invitation_invalid", async () => {
    const org = await signupFresh();
    const inv = await invite(org.session, []);
    await DB.prepare("UPDATE invitations SET expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 1000).toISOString(), inv.id).run();
    const r = await callFresh("POST", "/api/auth/invitations/accept", { body: { token: inv.token, password: PASSWORD } });
    expectErrorShape(r, 400, "invitation_invalid");
  });

  it("a garbage or well-formed unknown token: 400 invitation_invalid", async () => {
    for (const token of ["garbage", "tpi_", "tpm_" + "a".repeat(38)]) {
      expectErrorShape(await callFresh("POST", "/api/auth/invitations/accept", { body: { token, password: PASSWORD } }), 400, "invitation_invalid");
    }
    // Right shape and checksum, but no such invitation.
    const { generateSecret } = await import("../../src/platform/secrets");
    const r = await callFresh("POST", "/api/auth/invitations/accept", { body: { token: generateSecret("invitation"), password: PASSWORD } });
    expectErrorShape(r, 400, "invitation_invalid");
  });

  it("a short password on acceptance: 400 validation_error, invitation still usable", async () => {
    const org = await signupFresh();
    const inv = await invite(org.session, []);
    const short = await callFresh("POST", "/api/auth/invitations/accept", { body: { token: inv.token, password: "short" } });
    expectErrorShape(short, 400, "validation_error");
    expect(short.body.error.details.map((d: any) => d.path)).toContain("password");
    expect((await callFresh("POST", "/api/auth/invitations/accept", { body: { token: inv.token, password: PASSWORD } })).status).toBe(201);
  });
});
