/**
 * Administration (docs/modules/admin.md; the user and invitation states):
 * users, roles, invitations, role and status changes,
 * removal, subscription and the audit log.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  PASSWORD, addMember, call, callFresh, createToken, expectErrorShape, invitationTokenFor, login, signupFresh, unique,
} from "../helpers";

const DB = (env as any).DB as D1Database;
const DAY = 86_400_000;
const MONITORING = ["ct-log", "dns-watcher", "rdap", "cert-watcher"];
const MONITORING_PERMS = [
  "view_monitoring", "create_monitoring", "update_monitoring", "delete_monitoring",
  "view_alerts", "view_alert_rules", "create_alert_rules", "update_alert_rules", "delete_alert_rules",
  "view_alert_templates", "create_alert_templates", "update_alert_templates", "delete_alert_templates",
];

async function invite(session: string, body: Record<string, unknown> = {}) {
  const email = `inv-${unique()}@example.com`;
  const r = await call("POST", "/api/admin/invitations", { token: session, body: { email, ...body } });
  return { email, r };
}

describe("users", () => {
  it("listing accepts admin:view_users or admin:manage_users; neither is 403", async () => {
    const org = await signupFresh();
    for (const scope of ["admin:view_users", "admin:manage_users"]) {
      const t = await createToken(org.session, [scope]);
      const r = await call("GET", "/api/admin/users", { token: t.token });
      expect(r.status).toBe(200);
      expect(r.body.users.map((u: any) => u.id)).toEqual([org.userId]);
    }
    const none = await createToken(org.session, ["admin:view_audit_logs"]);
    expectErrorShape(await call("GET", "/api/admin/users", { token: none.token }), 403, "forbidden");
  });

  it("lists members with the user fields", async () => {
    const org = await signupFresh();
    const m = await addMember(org.session, [{ module_name: "rdap", role_name: "Viewer" }]);
    const r = await call("GET", "/api/admin/users", { token: org.session });
    expect(r.body.users).toHaveLength(2);
    const [admin, member] = r.body.users;
    expect(admin).toMatchObject({ id: org.userId, email: org.email, status: "active", is_signup_user: true });
    expect(admin.permissions).toHaveLength(7);
    expect(member).toMatchObject({ id: m.userId, email: m.email, status: "active", is_signup_user: false, permissions: [{ module: "rdap", role: "Viewer" }] });
    expect(typeof member.created_at).toBe("string");
  });
});

describe("roles", () => {
  it("lists Viewer/Editor for each monitoring module and the token roles, with exact permissions", async () => {
    const org = await signupFresh();
    const r = await call("GET", "/api/admin/roles", { token: org.session });
    expect(r.status).toBe(200);
    const modules = new Map<string, any[]>(r.body.modules.map((m: any) => [m.module, m.roles]));
    for (const m of MONITORING) {
      const roles = modules.get(m)!;
      expect(roles.map((x) => x.name)).toEqual(["Viewer", "Editor"]);
      const viewer = roles.find((x) => x.name === "Viewer");
      expect([...viewer.permissions].sort()).toEqual(
        [`${m}:view_monitoring`, `${m}:view_alerts`, `${m}:view_alert_rules`, `${m}:view_alert_templates`, "lists:view_lists"].sort(),
      );
      const editor = roles.find((x) => x.name === "Editor");
      expect([...editor.permissions].sort()).toEqual([...MONITORING_PERMS.map((p) => `${m}:${p}`), "lists:view_lists", "lists:manage_lists"].sort());
      expect(typeof viewer.description).toBe("string");
    }
    const tokenRoles = modules.get("api-tokens")!;
    expect(tokenRoles.map((x) => x.name)).toEqual(["Token Manager", "Token Admin"]);
    expect([...tokenRoles[0].permissions].sort()).toEqual(["api-tokens:create_tokens", "api-tokens:delete_tokens", "api-tokens:view_own_tokens"]);
    expect(tokenRoles[1].permissions).toHaveLength(5);
  });

  it("requires admin:manage_users", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["admin:view_users"]);
    expectErrorShape(await call("GET", "/api/admin/roles", { token: t.token }), 403, "forbidden");
  });
});

describe("invitations", () => {
  it("create: 201 and the mail is in the outbox with a working tpi_ token", async () => {
    const org = await signupFresh();
    const before = Date.now();
    const { email, r } = await invite(org.session, { roles: [{ module_name: "ct-log", role_name: "Viewer" }], weekly_audit_report_enabled: true });
    expect(r.status).toBe(201);
    expect(typeof r.body.message).toBe("string");
    expect(Math.abs(Date.parse(r.body.expires_at) - (before + 7 * DAY))).toBeLessThan(10_000);
    const outbox = await call("GET", "/api/admin/mail-outbox", { token: org.session });
    const mail = outbox.body.messages.find((m: any) => m.to === email);
    expect(mail).toMatchObject({ kind: "invitation", status: "stored" });
    expect(mail.body).toMatch(/tpi_[0-9A-Za-z]{38}/);
    const list = await call("GET", "/api/admin/invitations", { token: org.session });
    expect(list.body.invitations.find((i: any) => i.id === r.body.id)).toMatchObject({
      email,
      status: "pending",
      roles: [{ module_name: "ct-log", role_name: "Viewer" }],
      weekly_audit_report_enabled: true,
    });
  });

  it("a second invitation for the same pending email: 409; an existing user's email: 409", async () => {
    const org = await signupFresh();
    const { email, r } = await invite(org.session);
    expect(r.status).toBe(201);
    expectErrorShape(await call("POST", "/api/admin/invitations", { token: org.session, body: { email } }), 409, "conflict");
    expectErrorShape(await call("POST", "/api/admin/invitations", { token: org.session, body: { email: org.email } }), 409, "conflict");
    // A user of another organization too (login is by email alone).
    const other = await signupFresh();
    expectErrorShape(await call("POST", "/api/admin/invitations", { token: org.session, body: { email: other.email.toUpperCase() } }), 409, "conflict");
  });

  it("unknown module or role: 400 with details path", async () => {
    const org = await signupFresh();
    const bad = await invite(org.session, { roles: [{ module_name: "nope", role_name: "Viewer" }] });
    expectErrorShape(bad.r, 400, "validation_error");
    expect(bad.r.body.error.details[0].path).toBe("roles.0.module_name");
    const badRole = await invite(org.session, {
      roles: [{ module_name: "rdap", role_name: "Viewer" }, { module_name: "rdap", role_name: "Owner" }],
    });
    expectErrorShape(badRole.r, 400, "validation_error");
    expect(badRole.r.body.error.details[0].path).toBe("roles.1.role_name");
    const badEmail = await call("POST", "/api/admin/invitations", { token: org.session, body: { email: "not-an-email" } });
    expectErrorShape(badEmail, 400, "validation_error");
    expect(badEmail.body.error.details[0].path).toBe("email");
  });

  it("listing shows pending, then expired after expires_at passes; accepted ones disappear", async () => {
    const org = await signupFresh();
    const a = await invite(org.session);
    const b = await invite(org.session);
    await DB.prepare("UPDATE invitations SET expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 1000).toISOString(), a.r.body.id).run();
    const tokenB = await invitationTokenFor(org.session, b.email);
    expect((await callFresh("POST", "/api/auth/invitations/accept", { body: { token: tokenB, password: PASSWORD } })).status).toBe(201);
    const list = await call("GET", "/api/admin/invitations", { token: org.session });
    expect(list.body.invitations.map((i: any) => [i.id, i.status])).toEqual([[a.r.body.id, "expired"]]);
  });

  it("resend: new token works, old token stops working, fresh ~7-day expiry, new mail", async () => {
    const org = await signupFresh();
    const { email, r } = await invite(org.session);
    const oldToken = await invitationTokenFor(org.session, email);
    // Expired first: resend revives it (pending or expired -> pending).
    await DB.prepare("UPDATE invitations SET expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 1000).toISOString(), r.body.id).run();
    const before = Date.now();
    const res = await call("POST", `/api/admin/invitations/${r.body.id}/resend`, { token: org.session });
    expect(res.status).toBe(200);
    expect(Math.abs(Date.parse(res.body.expires_at) - (before + 7 * DAY))).toBeLessThan(10_000);
    const mails = (await call("GET", "/api/admin/mail-outbox", { token: org.session })).body.messages.filter((m: any) => m.to === email);
    expect(mails).toHaveLength(2);
    const newToken = await invitationTokenFor(org.session, email);
    expect(newToken).not.toBe(oldToken);
    const list = await call("GET", "/api/admin/invitations", { token: org.session });
    expect(list.body.invitations.find((i: any) => i.id === r.body.id)).toMatchObject({ status: "pending", expires_at: res.body.expires_at });
    expectErrorShape(await callFresh("POST", "/api/auth/invitations/accept", { body: { token: oldToken, password: PASSWORD } }), 400, "invitation_invalid");
    expect((await callFresh("POST", "/api/auth/invitations/accept", { body: { token: newToken, password: PASSWORD } })).status).toBe(201);
  });

  it("resend of an accepted invitation: 404 (it is no longer an invitation)", async () => {
    const org = await signupFresh();
    const m = await addMember(org.session, []);
    expectErrorShape(await call("POST", `/api/admin/invitations/${m.invitationId}/resend`, { token: org.session }), 404, "not_found");
  });

  it("two roles for one module: 400 naming the second", async () => {
    const org = await signupFresh();
    const { r } = await invite(org.session, { roles: [{ module_name: "rdap", role_name: "Viewer" }, { module_name: "rdap", role_name: "Editor" }] });
    expectErrorShape(r, 400, "validation_error");
    expect(r.body.error.details[0].path).toBe("roles.1");
  });

  it("inviting, listing and resending need admin:manage_users", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["admin:view_users", "admin:manage_permissions"]);
    expectErrorShape(await call("POST", "/api/admin/invitations", { token: t.token, body: { email: `x-${unique()}@example.com` } }), 403, "forbidden");
    expectErrorShape(await call("GET", "/api/admin/invitations", { token: t.token }), 403, "forbidden");
    expectErrorShape(await call("POST", "/api/admin/invitations/1/resend", { token: t.token }), 403, "forbidden");
    expectErrorShape(await call("GET", "/api/admin/mail-outbox", { token: t.token }), 403, "forbidden");
  });

  it("resend of another organization's invitation or an unknown id: 404", async () => {
    const a = await signupFresh();
    const b = await signupFresh();
    const { r } = await invite(a.session);
    expectErrorShape(await call("POST", `/api/admin/invitations/${r.body.id}/resend`, { token: b.session }), 404, "not_found");
    expectErrorShape(await call("POST", `/api/admin/invitations/999999999/resend`, { token: a.session }), 404, "not_found");
  });
});

describe("role assignment (PUT /api/admin/users/{id})", () => {
  it("changes what the user's session may do", async () => {
    const org = await signupFresh();
    const m = await addMember(org.session, [{ module_name: "rdap", role_name: "Viewer" }]);
    expectErrorShape(await call("GET", "/api/api-tokens", { token: m.session }), 403, "forbidden");
    const put = await call("PUT", `/api/admin/users/${m.userId}`, {
      token: org.session,
      body: { roles: [{ module_name: "api-tokens", role_name: "Token Manager" }, { module_name: "rdap", role_name: "Editor" }] },
    });
    expect(put.status).toBe(200);
    expect((await call("GET", "/api/api-tokens", { token: m.session })).status).toBe(200);
    const me = await call("GET", "/api/auth/me", { token: m.session });
    expect(me.body.permissions).toContain("rdap:delete_monitoring");
    expect(me.body.user.permissions).toEqual([{ module: "api-tokens", role: "Token Manager" }, { module: "rdap", role: "Editor" }]);
    // Replacing with nothing leaves only lists:view_lists.
    await call("PUT", `/api/admin/users/${m.userId}`, { token: org.session, body: { roles: [] } });
    expect((await call("GET", "/api/auth/me", { token: m.session })).body.permissions).toEqual(["lists:view_lists"]);
  });

  it("the signup user: 403; an invalid role: 400; manage_permissions is required", async () => {
    const org = await signupFresh();
    const m = await addMember(org.session, []);
    const roles = [{ module_name: "rdap", role_name: "Viewer" }];
    expectErrorShape(await call("PUT", `/api/admin/users/${org.userId}`, { token: org.session, body: { roles } }), 403, "forbidden");
    const bad = await call("PUT", `/api/admin/users/${m.userId}`, { token: org.session, body: { roles: [{ module_name: "rdap", role_name: "Boss" }] } });
    expectErrorShape(bad, 400, "validation_error");
    expect(bad.body.error.details[0].path).toBe("roles.0.role_name");
    const manageUsersOnly = await createToken(org.session, ["admin:manage_users"]);
    expectErrorShape(await call("PUT", `/api/admin/users/${m.userId}`, { token: manageUsersOnly.token, body: { roles } }), 403, "forbidden");
    // manage_permissions plus the permissions being granted (nobody grants more than they hold).
    const rolePerms = (await call("GET", "/api/admin/roles", { token: org.session })).body.modules
      .flatMap((mod: any) => mod.roles.filter((r: any) => roles.some((x: any) => x.module_name === mod.module && x.role_name === r.name)))
      .flatMap((r: any) => r.permissions);
    const t = await createToken(org.session, ["admin:manage_permissions", ...rolePerms]);
    expect((await call("PUT", `/api/admin/users/${m.userId}`, { token: t.token, body: { roles } })).status).toBe(200);
  });
});

describe("user status and removal", () => {
  it("disable: cannot log in (401), sessions stop; enable: can log in again; signup user: 403", async () => {
    const org = await signupFresh();
    const m = await addMember(org.session, []);
    expectErrorShape(await call("PUT", `/api/admin/users/${org.userId}/status`, { token: org.session, body: { status: "disabled" } }), 403, "forbidden");
    expect((await call("PUT", `/api/admin/users/${m.userId}/status`, { token: org.session, body: { status: "disabled" } })).status).toBe(200);
    expectErrorShape(await login(m.email), 401, "unauthorized");
    expectErrorShape(await call("GET", "/api/auth/me", { token: m.session }), 401, "unauthorized");
    const users = await call("GET", "/api/admin/users", { token: org.session });
    expect(users.body.users.find((u: any) => u.id === m.userId).status).toBe("disabled");
    expect((await call("PUT", `/api/admin/users/${m.userId}/status`, { token: org.session, body: { status: "active" } })).status).toBe(200);
    expect((await login(m.email)).status).toBe(200);
    expectErrorShape(await call("PUT", `/api/admin/users/${m.userId}/status`, { token: org.session, body: { status: "removed" } }), 400, "validation_error");
  });

  it("remove: not listed, cannot log in, second DELETE 404; signup user: 403", async () => {
    const org = await signupFresh();
    const m = await addMember(org.session, [{ module_name: "rdap", role_name: "Viewer" }]);
    expectErrorShape(await call("DELETE", `/api/admin/users/${org.userId}`, { token: org.session }), 403, "forbidden");
    expect((await call("DELETE", `/api/admin/users/${m.userId}`, { token: org.session })).status).toBe(200);
    const users = await call("GET", "/api/admin/users", { token: org.session });
    expect(users.body.users.map((u: any) => u.id)).toEqual([org.userId]);
    expectErrorShape(await login(m.email), 401, "unauthorized");
    expectErrorShape(await call("GET", "/api/auth/me", { token: m.session }), 401, "unauthorized");
    expectErrorShape(await call("DELETE", `/api/admin/users/${m.userId}`, { token: org.session }), 404, "not_found");
    // Irreversible: re-enabling a removed user is 404 too.
    expectErrorShape(await call("PUT", `/api/admin/users/${m.userId}/status`, { token: org.session, body: { status: "active" } }), 404, "not_found");
  });
});

describe("subscription", () => {
  const LIMITS = {
    free: { ct_filters: 10, rdap_monitors: 10, cert_monitors: 10, dns_domains: 10, rule_lists: 2, entries_per_list: 10 },
    pro: { ct_filters: 100, rdap_monitors: 100, cert_monitors: 200, dns_domains: 100, rule_lists: 10, entries_per_list: 500 },
    enterprise: { ct_filters: 1000, rdap_monitors: 1000, cert_monitors: 2000, dns_domains: 1000, rule_lists: 100, entries_per_list: 1000 },
  };

  it("GET shows tier free with its limits; PUT changes the tier and the limits", async () => {
    const org = await signupFresh();
    const g = await call("GET", "/api/admin/subscription", { token: org.session });
    expect(g.status).toBe(200);
    expect(g.body.tier).toBe("free");
    expect(g.body.limits).toEqual(LIMITS.free);
    expect(typeof g.body.usage).toBe("object");
    for (const tier of ["pro", "enterprise", "free"] as const) {
      const p = await call("PUT", "/api/admin/subscription", { token: org.session, body: { tier } });
      expect(p.status).toBe(200);
      expect(p.body).toMatchObject({ tier, limits: LIMITS[tier] });
      const again = await call("GET", "/api/admin/subscription", { token: org.session });
      expect(again.body).toMatchObject({ tier, limits: LIMITS[tier] });
      expect((await call("GET", "/api/auth/me", { token: org.session })).body.organization.tier).toBe(tier);
    }
  });

  it("an invalid tier: 400; permissions view_subscription / manage_subscription", async () => {
    const org = await signupFresh();
    const bad = await call("PUT", "/api/admin/subscription", { token: org.session, body: { tier: "platinum" } });
    expectErrorShape(bad, 400, "validation_error");
    expect(bad.body.error.details[0].path).toBe("tier");
    const viewOnly = await createToken(org.session, ["admin:view_subscription"]);
    expect((await call("GET", "/api/admin/subscription", { token: viewOnly.token })).status).toBe(200);
    expectErrorShape(await call("PUT", "/api/admin/subscription", { token: viewOnly.token, body: { tier: "pro" } }), 403, "forbidden");
    const manageOnly = await createToken(org.session, ["admin:manage_subscription"]);
    expectErrorShape(await call("GET", "/api/admin/subscription", { token: manageOnly.token }), 403, "forbidden");
  });
});

describe("audit log", () => {
  it("records mutations newest first with actor, token, target and client IP; GETs are not recorded", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["admin:manage_subscription", "admin:view_subscription", "api-tokens:view_own_tokens"]);
    const ip = "198.51.100.77";
    expect((await call("PUT", "/api/admin/subscription", { token: t.token, body: { tier: "pro" }, headers: { "cf-connecting-ip": ip } })).status).toBe(200);
    await call("GET", "/api/admin/subscription", { token: t.token });
    await call("GET", "/api/api-tokens", { token: t.token });
    const { r: inv } = await invite(org.session);
    expect(inv.status).toBe(201);

    const log = await call("GET", "/api/admin/audit-logs", { token: org.session });
    expect(log.status).toBe(200);
    const entries = log.body.audit_logs;
    expect(entries.map((e: any) => e.action)).toEqual(["invitation.create", "subscription.set_tier", "api_token.create", "auth.signup"]);
    expect(log.body.total).toBe(4);
    expect(entries[0]).toMatchObject({ user_id: org.userId, user_email: org.email, token_id: null, target_type: "invitation", target_id: String(inv.body.id), client_ip: "192.0.2.1" });
    expect(entries[1]).toMatchObject({ user_id: org.userId, token_id: t.id, target_type: "organization", target_id: String(org.organizationId), client_ip: ip });
    expect(entries[2]).toMatchObject({ user_id: org.userId, token_id: null, target_type: "api_token", target_id: String(t.id) });
    expect(entries[3]).toMatchObject({ user_id: org.userId, target_type: "organization", target_id: String(org.organizationId) });
    const times = entries.map((e: any) => e.created_at);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it("failed mutations are not recorded", async () => {
    const org = await signupFresh();
    await call("PUT", "/api/admin/subscription", { token: org.session, body: { tier: "platinum" } });
    await call("DELETE", `/api/admin/users/${org.userId}`, { token: org.session });
    const log = await call("GET", "/api/admin/audit-logs", { token: org.session });
    expect(log.body.audit_logs.map((e: any) => e.action)).toEqual(["auth.signup"]);
  });

  it("records token revocation, renewal, login, role and status changes with their targets", async () => {
    const org = await signupFresh();
    const m = await addMember(org.session, []);
    const t = await createToken(org.session, ["rdap:view_monitoring"]);
    await call("POST", `/api/api-tokens/${t.id}/renew`, { token: t.token });
    await call("DELETE", `/api/api-tokens/${t.id}`, { token: org.session });
    await call("PUT", `/api/admin/users/${m.userId}`, { token: org.session, body: { roles: [] } });
    await call("PUT", `/api/admin/users/${m.userId}/status`, { token: org.session, body: { status: "disabled" } });
    await login(org.email);
    const log = await call("GET", "/api/admin/audit-logs", { token: org.session });
    const got = log.body.audit_logs.slice(0, 5).map((e: any) => [e.action, e.target_type, e.target_id, e.token_id]);
    expect(got).toEqual([
      ["auth.login", "user", String(org.userId), null],
      ["user.set_status", "user", String(m.userId), null],
      ["user.set_roles", "user", String(m.userId), null],
      ["api_token.revoke", "api_token", String(t.id), null],
      ["api_token.renew", "api_token", String(t.id), t.id],
    ]);
    // The invitation acceptance is attributed to the new user.
    const accept = log.body.audit_logs.find((e: any) => e.action === "invitation.accept");
    expect(accept).toMatchObject({ user_id: m.userId, target_type: "user", target_id: String(m.userId) });
  });

  it("limit/offset paging; limit 101 and offset -1 are 400; view_audit_logs is required", async () => {
    const org = await signupFresh();
    for (const tier of ["pro", "enterprise", "free", "pro"]) await call("PUT", "/api/admin/subscription", { token: org.session, body: { tier } });
    const all = await call("GET", "/api/admin/audit-logs", { token: org.session });
    expect(all.body.total).toBe(5);
    expect(all.body.limit).toBe(50);
    const page = await call("GET", "/api/admin/audit-logs?limit=2&offset=1", { token: org.session });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ limit: 2, offset: 1, total: 5 });
    expect(page.body.audit_logs.map((e: any) => e.id)).toEqual(all.body.audit_logs.slice(1, 3).map((e: any) => e.id));
    expect((await call("GET", "/api/admin/audit-logs?limit=100", { token: org.session })).status).toBe(200);
    const over = await call("GET", "/api/admin/audit-logs?limit=101", { token: org.session });
    expectErrorShape(over, 400, "validation_error");
    expect(over.body.error.details[0].path).toBe("query.limit");
    expectErrorShape(await call("GET", "/api/admin/audit-logs?offset=-1", { token: org.session }), 400, "validation_error");
    expectErrorShape(await call("GET", "/api/admin/audit-logs?limit=0", { token: org.session }), 400, "validation_error");
    const noPerm = await createToken(org.session, ["admin:view_users"]);
    expectErrorShape(await call("GET", "/api/admin/audit-logs", { token: noPerm.token }), 403, "forbidden");
  });
});

describe("no privilege escalation through role grants", () => {
  it("manage_users without manage_permissions cannot invite with roles; without roles it can", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["admin:manage_users"]);
    const withRoles = await call("POST", "/api/admin/invitations", {
      token: t.token,
      body: { email: `x-${unique()}@example.com`, roles: [{ module_name: "admin", role_name: "Administrator" }] },
    });
    expectErrorShape(withRoles, 403, "forbidden");
    const plain = await call("POST", "/api/admin/invitations", { token: t.token, body: { email: `y-${unique()}@example.com` } });
    expect(plain.status).toBe(201);
  });

  it("manage_permissions alone cannot grant a role with permissions the granter lacks", async () => {
    const org = await signupFresh();
    const member = await addMember(org.session, []);
    const rdapViewer = ["rdap:view_monitoring", "rdap:view_alerts", "rdap:view_alert_rules", "rdap:view_alert_templates", "lists:view_lists"];
    const t = await createToken(org.session, ["admin:manage_permissions", ...rdapViewer]);
    const escalate = await call("PUT", `/api/admin/users/${member.userId}`, {
      token: t.token,
      body: { roles: [{ module_name: "admin", role_name: "Administrator" }] },
    });
    expectErrorShape(escalate, 403, "forbidden");
    expect(escalate.body.error.message).toContain("admin:manage_users");
    const viewer = await call("PUT", `/api/admin/users/${member.userId}`, {
      token: t.token,
      body: { roles: [{ module_name: "rdap", role_name: "Viewer" }] },
    });
    expect(viewer.status).toBe(200);
  });
});
