/**
 * API tokens: their states (active, expired, revoked) and docs/decisions.md#api-tokens.
 *
 * Time-dependent behaviour (expiry, renewal, last use) is tested by moving the
 * request's clock (X-Trust-Plane-Now, src/platform/clock.ts), never by ageing rows.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PASSWORD, addMember, call, createToken, expectErrorShape, login, pollUntil, signupFresh } from "../helpers";

const DB = (env as any).DB as D1Database;
const DAY = 86_400_000;
const tokenRow = (id: number) =>
  DB.prepare("SELECT * FROM api_tokens WHERE id = ?").bind(id).first<{ last_used_at: string | null; expires_at: string; token_hash: string }>();
/** A call made at `at` (the request's clock). */
const callAt = (at: number, method: string, path: string, token: string, body?: unknown) =>
  call(method, path, { token, body, headers: { "x-trust-plane-now": new Date(at).toISOString() } });

describe("create", () => {
  it("201 with the full token once; listings show token_prefix (first 12 chars) and never the token", async () => {
    const org = await signupFresh();
    const before = Date.now();
    const r = await call("POST", "/api/api-tokens", {
      token: org.session,
      body: { name: "ci", validity_days: 7, scopes: ["rdap:view_monitoring", "api-tokens:view_own_tokens"] },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: "ci", scopes: ["rdap:view_monitoring", "api-tokens:view_own_tokens"] });
    expect(typeof r.body.message).toBe("string");
    expect(r.body.token).toMatch(/^tpm_[0-9A-Za-z]{38}$/);
    expect(Math.abs(Date.parse(r.body.expires_at) - (before + 7 * DAY))).toBeLessThan(10_000);

    for (const [path, bearer] of [["/api/api-tokens", org.session], ["/api/api-tokens/org", org.session], ["/api/api-tokens", r.body.token]]) {
      const list = await call("GET", path, { token: bearer });
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.body)).not.toContain(r.body.token);
      const item = list.body.tokens.find((t: any) => t.id === r.body.id);
      expect(item).toBeDefined();
      expect(item).not.toHaveProperty("token");
      expect(item.token_prefix).toBe(r.body.token.slice(0, 12));
      expect(item).toMatchObject({ name: "ci", validity_days: 7, revoked_at: null, status: "active", expires_at: r.body.expires_at });
      for (const k of ["id", "name", "token_prefix", "scopes", "expires_at", "last_used_at", "created_at", "revoked_at"]) expect(item).toHaveProperty(k);
    }
    // Only a hash is stored.
    const row = await tokenRow(r.body.id);
    expect(JSON.stringify(row)).not.toContain(r.body.token);
    expect(row!.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("an unknown scope: 400 validation_error with details naming it", async () => {
    const org = await signupFresh();
    const r = await call("POST", "/api/api-tokens", {
      token: org.session,
      body: { name: "x", validity_days: 1, scopes: ["rdap:view_monitoring", "rdap:fly"] },
    });
    expectErrorShape(r, 400, "validation_error");
    expect(r.body.error.details).toEqual([expect.objectContaining({ path: "scopes.1" })]);
    expect(r.body.error.details[0].message).toContain("rdap:fly");
  });

  it("a scope beyond the creator's permissions: 403 forbidden", async () => {
    const org = await signupFresh();
    const creator = await createToken(org.session, ["api-tokens:create_tokens"]);
    const r = await call("POST", "/api/api-tokens", {
      token: creator.token,
      body: { name: "x", validity_days: 1, scopes: ["rdap:view_monitoring"] },
    });
    expectErrorShape(r, 403, "forbidden");
    // Within its own scopes it may create.
    const ok = await call("POST", "/api/api-tokens", { token: creator.token, body: { name: "y", validity_days: 1, scopes: ["api-tokens:create_tokens"] } });
    expect(ok.status).toBe(201);
    // A Viewer's session cannot mint Editor scopes either.
    const viewer = await addMember(org.session, [
      { module_name: "rdap", role_name: "Viewer" },
      { module_name: "api-tokens", role_name: "Token Manager" },
    ]);
    expectErrorShape(
      await call("POST", "/api/api-tokens", { token: viewer.session, body: { name: "z", validity_days: 1, scopes: ["rdap:create_monitoring"] } }),
      403,
      "forbidden",
    );
    expect((await call("POST", "/api/api-tokens", { token: viewer.session, body: { name: "z", validity_days: 1, scopes: ["rdap:view_monitoring"] } })).status).toBe(201);
  });

  it("validity_days must be 1-30; name and scopes are required", async () => {
    const org = await signupFresh();
    const post = (body: unknown) => call("POST", "/api/api-tokens", { token: org.session, body });
    for (const [body, path] of [
      [{ name: "x", validity_days: 0, scopes: ["rdap:view_monitoring"] }, "validity_days"],
      [{ name: "x", validity_days: 31, scopes: ["rdap:view_monitoring"] }, "validity_days"],
      [{ name: "x", validity_days: 1.5, scopes: ["rdap:view_monitoring"] }, "validity_days"],
      [{ validity_days: 5, scopes: ["rdap:view_monitoring"] }, "name"],
      [{ name: "", validity_days: 5, scopes: ["rdap:view_monitoring"] }, "name"],
      [{ name: "x", scopes: ["rdap:view_monitoring"] }, "validity_days"],
      [{ name: "x", validity_days: 5 }, "scopes"],
      [{ name: "x", validity_days: 5, scopes: [] }, "scopes"],
    ] as const) {
      const r = await post(body);
      expectErrorShape(r, 400, "validation_error");
      expect(r.body.error.details.map((d: any) => d.path)).toContain(path);
    }
    expect((await post({ name: "x", validity_days: 1, scopes: ["rdap:view_monitoring"] })).status).toBe(201);
    expect((await post({ name: "x", validity_days: 30, scopes: ["rdap:view_monitoring"] })).status).toBe(201);
  });
});

describe("listing", () => {
  it("own listing shows only the caller's tokens; /org shows everyone's with user_id and user_email", async () => {
    const org = await signupFresh();
    const member = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Manager" }]);
    const mine = await createToken(org.session, ["rdap:view_monitoring"], 5, "admin-token");
    const theirs = await createToken(member.session, ["api-tokens:view_own_tokens"], 5, "member-token");

    const own = await call("GET", "/api/api-tokens", { token: member.session });
    expect(own.body.tokens.map((t: any) => t.id)).toEqual([theirs.id]);
    const orgList = await call("GET", "/api/api-tokens/org", { token: org.session });
    expect(orgList.status).toBe(200);
    const byId = new Map(orgList.body.tokens.map((t: any) => [t.id, t]));
    expect(byId.get(mine.id)).toMatchObject({ user_id: org.userId, user_email: org.email, name: "admin-token" });
    expect(byId.get(theirs.id)).toMatchObject({ user_id: member.userId, user_email: member.email, name: "member-token" });
  });

  it("a Token Manager (no view_all_tokens) gets 403 on /org; a Token Admin gets 200", async () => {
    const org = await signupFresh();
    const manager = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Manager" }]);
    expectErrorShape(await call("GET", "/api/api-tokens/org", { token: manager.session }), 403, "forbidden");
    const admin = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Admin" }]);
    expect((await call("GET", "/api/api-tokens/org", { token: admin.session })).status).toBe(200);
  });
});

describe("revoke", () => {
  it("own token with delete_tokens: 200; it is 401 afterwards and stays listed as revoked", async () => {
    const org = await signupFresh();
    const manager = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Manager" }]);
    const t = await createToken(manager.session, ["api-tokens:view_own_tokens"]);
    expect((await call("GET", "/api/api-tokens", { token: t.token })).status).toBe(200);
    const del = await call("DELETE", `/api/api-tokens/${t.id}`, { token: manager.session });
    expect(del.status).toBe(200);
    expect(typeof del.body.message).toBe("string");
    expectErrorShape(await call("GET", "/api/api-tokens", { token: t.token }), 401, "unauthorized");
    const list = await call("GET", "/api/api-tokens", { token: manager.session });
    const item = list.body.tokens.find((x: any) => x.id === t.id);
    expect(item.status).toBe("revoked");
    expect(item.revoked_at).toBeTruthy();
    expect(Math.abs(Date.parse(item.revoked_at) - Date.now())).toBeLessThan(10_000);
  });

  it("another user's token needs revoke_all_tokens (Token Manager 403, view_all only 403, Token Admin 200)", async () => {
    const org = await signupFresh();
    const owner = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Manager" }]);
    const manager = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Manager" }]);
    const tokenAdmin = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Admin" }]);
    const t = await createToken(owner.session, ["api-tokens:view_own_tokens"]);
    // Revoking: another user's token needs revoke_all_tokens, so
    // delete_tokens alone is 403 (issue 13). Within one organization ids are not secret;
    // another organization's token stays 404 (isolation tests).
    expectErrorShape(await call("DELETE", `/api/api-tokens/${t.id}`, { token: manager.session }), 403, "forbidden");
    const viewer = await createToken(org.session, ["api-tokens:view_all_tokens", "api-tokens:delete_tokens"]);
    expectErrorShape(await call("DELETE", `/api/api-tokens/${t.id}`, { token: viewer.token }), 403, "forbidden");
    expect((await call("GET", "/api/api-tokens", { token: t.token })).status).toBe(200);
    expect((await call("DELETE", `/api/api-tokens/${t.id}`, { token: tokenAdmin.session })).status).toBe(200);
    expectErrorShape(await call("GET", "/api/api-tokens", { token: t.token }), 401, "unauthorized");
  });

  it("without delete_tokens or revoke_all_tokens: 403; unknown id: 404", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["api-tokens:view_own_tokens"]);
    expectErrorShape(await call("DELETE", `/api/api-tokens/${t.id}`, { token: t.token }), 403, "forbidden");
    expectErrorShape(await call("DELETE", `/api/api-tokens/999999999`, { token: org.session }), 404, "not_found");
    expectErrorShape(await call("DELETE", `/api/api-tokens/abc`, { token: org.session }), 400, "validation_error");
  });
});

describe("renew", () => {
  it("with itself: 200 and expires_at = now + its validity_days", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["rdap:view_monitoring"], 3);
    // An hour before it expires, renewal moves the expiry to that moment + 3 days.
    const at = Date.parse(t.expires_at) - 3600_000;
    const r = await callAt(at, "POST", `/api/api-tokens/${t.id}/renew`, t.token);
    expect(r.status).toBe(200);
    expect(typeof r.body.message).toBe("string");
    expect(r.body.expires_at).toBe(new Date(at + 3 * DAY).toISOString());
    expect((await tokenRow(t.id))!.expires_at).toBe(r.body.expires_at);
    // Past its old expiry it works; at the new one it does not.
    expect((await callAt(at + 2 * 3600_000, "GET", "/api/rdap/domains", t.token)).status).toBe(200);
    expectErrorShape(await callAt(at + 3 * DAY, "GET", "/api/rdap/domains", t.token), 401, "token_expired");
  });

  it("with another token or a session: 403", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["rdap:view_monitoring"]);
    const other = await createToken(org.session, ["api-tokens:view_own_tokens", "api-tokens:view_all_tokens"]);
    expectErrorShape(await call("POST", `/api/api-tokens/${t.id}/renew`, { token: other.token }), 403, "forbidden");
    expectErrorShape(await call("POST", `/api/api-tokens/${t.id}/renew`, { token: org.session }), 403, "forbidden");
  });

  it("an expired token: 401 token_expired", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["rdap:view_monitoring"]);
    expectErrorShape(await callAt(Date.parse(t.expires_at) + 1000, "POST", `/api/api-tokens/${t.id}/renew`, t.token), 401, "token_expired");
    // At its expiry exactly it is expired too.
    expectErrorShape(await callAt(Date.parse(t.expires_at), "POST", `/api/api-tokens/${t.id}/renew`, t.token), 401, "token_expired");
  });

  it("a revoked token: 401", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["rdap:view_monitoring"]);
    expect((await call("DELETE", `/api/api-tokens/${t.id}`, { token: org.session })).status).toBe(200);
    const r = await call("POST", `/api/api-tokens/${t.id}/renew`, { token: t.token });
    expect(r.status).toBe(401);
    expect(r.body.success).toBe(false);
  });

  it("a token created by a token never renews past its creator's current expiry", async () => {
    const org = await signupFresh();
    const parent = await createToken(org.session, ["api-tokens:create_tokens", "lists:view_lists"], 30, "parent");
    const t0 = Date.parse(parent.expires_at) - 30 * DAY;
    const created = await call("POST", "/api/api-tokens", { token: parent.token, body: { name: "child", validity_days: 29, scopes: ["lists:view_lists"] } });
    expect(created.status).toBe(201);
    const child = created.body as { id: number; token: string; expires_at: string };

    // Day 28: on its own the child would renew to day 57; it ends with its creator (day 30).
    const day28 = t0 + 28 * DAY;
    const clamped = await callAt(day28, "POST", `/api/api-tokens/${child.id}/renew`, child.token);
    expect(clamped.status, JSON.stringify(clamped.body)).toBe(200);
    expect(clamped.body.expires_at).toBe(parent.expires_at);
    expect((await tokenRow(child.id))!.expires_at).toBe(parent.expires_at);
    expectErrorShape(await callAt(Date.parse(parent.expires_at), "GET", "/api/lists", child.token), 401, "token_expired");

    // Once the creator is renewed (to day 58), the child renews by its own validity again.
    const parentRenewed = await callAt(day28, "POST", `/api/api-tokens/${parent.id}/renew`, parent.token);
    expect(parentRenewed.body.expires_at).toBe(new Date(day28 + 30 * DAY).toISOString());
    const later = day28 + 3600_000;
    const own = await callAt(later, "POST", `/api/api-tokens/${child.id}/renew`, child.token);
    expect(own.body.expires_at).toBe(new Date(later + 29 * DAY).toISOString());

    // The creator revoked: renewal is refused (403) and nothing changes; the child still
    // works until its current expiry and not after it.
    expect((await call("DELETE", `/api/api-tokens/${parent.id}`, { token: org.session })).status).toBe(200);
    const refused = await callAt(later + DAY, "POST", `/api/api-tokens/${child.id}/renew`, child.token);
    expectErrorShape(refused, 403, "forbidden");
    expect(refused.body.error.message).toContain("revoked");
    expect((await tokenRow(child.id))!.expires_at).toBe(own.body.expires_at);
    expect((await callAt(later + DAY, "GET", "/api/lists", child.token)).status).toBe(200);
    expectErrorShape(await callAt(Date.parse(own.body.expires_at), "GET", "/api/lists", child.token), 401, "token_expired");
  });

  it("a token created by a session renews by its own validity alone", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["lists:view_lists"], 30);
    const at = Date.parse(t.expires_at) - DAY;
    const r = await callAt(at, "POST", `/api/api-tokens/${t.id}/renew`, t.token);
    expect(r.body.expires_at).toBe(new Date(at + 30 * DAY).toISOString());
  });
});

describe("expiry and last use", () => {
  it("a never-used token past its expiry is 401 token_expired and stays listed as expired", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["api-tokens:view_own_tokens"], 1);
    // Sessions last 12 hours: a month-long token of the same user lists at that time.
    const lister = await createToken(org.session, ["api-tokens:view_own_tokens"], 30, "lister");
    const after = Date.parse(t.expires_at) + 1000;
    expectErrorShape(await callAt(after, "GET", "/api/api-tokens", t.token), 401, "token_expired");
    const list = await callAt(after, "GET", "/api/api-tokens", lister.token);
    const item = list.body.tokens.find((x: any) => x.id === t.id);
    expect(item).toMatchObject({ status: "expired", revoked_at: null, last_used_at: null });
    // The same listing a moment before the expiry: active.
    const before = await callAt(Date.parse(t.expires_at) - 1000, "GET", "/api/api-tokens", lister.token);
    expect(before.body.tokens.find((x: any) => x.id === t.id).status).toBe("active");
  });

  it("last_used_at is set on first use and not rewritten within 60 s; rewritten when older", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["api-tokens:view_own_tokens"]);
    expect((await tokenRow(t.id))!.last_used_at).toBeNull();
    const iso = (ms: number) => new Date(ms).toISOString();
    const first = Date.parse(t.expires_at) - 29 * DAY;
    const lastUsed = async () => (await tokenRow(t.id))!.last_used_at;

    expect((await callAt(first, "GET", "/api/api-tokens", t.token)).status).toBe(200);
    expect(await pollUntil(async () => (await lastUsed()) === iso(first))).toBe(true);

    // 30 s later, within the resolution, nothing is written; 61 s after the first use it
    // is. Had the 30 s call written, that value (then under 60 s old) would have stayed.
    expect((await callAt(first + 30_000, "GET", "/api/api-tokens", t.token)).status).toBe(200);
    expect((await callAt(first + 61_000, "GET", "/api/api-tokens", t.token)).status).toBe(200);
    const refreshed = await pollUntil(async () => {
      const v = await lastUsed();
      return v !== iso(first) ? v : null;
    });
    expect(refreshed).toBe(iso(first + 61_000));
    // The listing reports it (read with the token itself: the 12-hour session is over by then).
    const list = await callAt(first + 62_000, "GET", "/api/api-tokens", t.token);
    expect(list.body.tokens.find((x: any) => x.id === t.id).last_used_at).toBe(refreshed);
  });
});

describe("the token's user", () => {
  it("a disabled user's tokens stop working at once and work again when re-enabled", async () => {
    const org = await signupFresh();
    const m = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Manager" }]);
    const t = await createToken(m.session, ["api-tokens:view_own_tokens"]);
    expect((await call("GET", "/api/api-tokens", { token: t.token })).status).toBe(200);
    expect((await call("PUT", `/api/admin/users/${m.userId}/status`, { token: org.session, body: { status: "disabled" } })).status).toBe(200);
    expectErrorShape(await call("GET", "/api/api-tokens", { token: t.token }), 401, "unauthorized");
    expect((await call("GET", "/api/api-tokens", { token: m.session })).status).toBe(401);
    expect((await call("PUT", `/api/admin/users/${m.userId}/status`, { token: org.session, body: { status: "active" } })).status).toBe(200);
    expect((await call("GET", "/api/api-tokens", { token: t.token })).status).toBe(200);
  });

  it("a removed user's tokens are 401", async () => {
    const org = await signupFresh();
    const m = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Manager" }]);
    const t = await createToken(m.session, ["api-tokens:view_own_tokens"]);
    expect((await call("DELETE", `/api/admin/users/${m.userId}`, { token: org.session })).status).toBe(200);
    expectErrorShape(await call("GET", "/api/api-tokens", { token: t.token }), 401, "unauthorized");
    expectErrorShape(await call("GET", "/api/auth/me", { token: m.session }), 401, "unauthorized");
  });

  it("a demoted user's token loses the permissions the user no longer holds (403), keeps the rest", async () => {
    const org = await signupFresh();
    const m = await addMember(org.session, [
      { module_name: "api-tokens", role_name: "Token Admin" },
      { module_name: "rdap", role_name: "Viewer" },
    ]);
    const t = await createToken(m.session, ["api-tokens:view_all_tokens", "api-tokens:view_own_tokens", "rdap:view_monitoring"]);
    expect((await call("GET", "/api/api-tokens/org", { token: t.token })).status).toBe(200);
    const put = await call("PUT", `/api/admin/users/${m.userId}`, {
      token: org.session,
      body: { roles: [{ module_name: "api-tokens", role_name: "Token Manager" }] },
    });
    expect(put.status).toBe(200);
    expectErrorShape(await call("GET", "/api/api-tokens/org", { token: t.token }), 403, "forbidden");
    expect((await call("GET", "/api/api-tokens", { token: t.token })).status).toBe(200);
    const me = await call("GET", "/api/auth/me", { token: t.token });
    expect(me.body.permissions).toEqual(["api-tokens:view_own_tokens"]);
  });

  it("a user who logs in again keeps their tokens (sessions and tokens are independent)", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["api-tokens:view_own_tokens"]);
    expect((await call("POST", "/api/auth/logout", { token: org.session })).status).toBe(200);
    expect((await call("GET", "/api/api-tokens", { token: t.token })).status).toBe(200);
    expect((await login(org.email, PASSWORD)).status).toBe(200);
  });
});
