/**
 * Single sign-on against a real OpenID provider (`oidc-provider`, on the fixture hub with
 * its own signing keys: test/fixtures/servers/oidc.ts): the whole redirect flow as a
 * browser makes it, first sign-in creating the member, and every way it must fail with
 * no session issued: a forged or expired ID token, a wrong nonce or state, a callback
 * in another browser or twice, an unverified email, a domain not proven by DNS. Then
 * enforcement with its break-glass administrator, and the configuration's own checks.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/env";
import { call, expectErrorShape, PASSWORD, signupFresh, unique, uniqueIp, type CallResult } from "../helpers";

const FIXTURE = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;
const ISSUER = `${FIXTURE}/oidc`;
const STRICT_ISSUER = `${FIXTURE}/oidc-strict`;
const REDIRECT_URI = `${loadConfig(env as never).publicBaseUrl}/api/auth/sso/callback`;
const at = (d: Date) => ({ "x-trust-plane-now": d.toISOString() });

async function postJson(url: string, body: unknown) {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await r.text();
  if (!r.ok) throw new Error(`POST ${url}: ${r.status} ${text}`);
  return JSON.parse(text);
}

/** A client of the provider for one test (dynamic registration). */
function registerClient(issuer = ISSUER, extra: Record<string, unknown> = {}): Promise<{ client_id: string; client_secret: string }> {
  return postJson(`${issuer}/reg`, {
    redirect_uris: [REDIRECT_URI],
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic",
    ...extra,
  });
}

/** Publishes a TXT record through the service's default DoH resolver (the hub's namespace "default"). */
const publishTxt = (name: string, value: string) => postJson(`${FIXTURE}/doh/__control/records`, { ns: "default", records: [{ name, type: "TXT", data: value }] });

interface SsoOrg {
  admin: { email: string; session: string; userId: number };
  domain: string;
  clientId: string;
}

/** An organization whose administrator is admin@<domain>, with SSO configured and the domain proven. */
async function ssoOrg(opts: { issuer?: string; clientExtra?: Record<string, unknown>; enforce?: boolean } = {}): Promise<SsoOrg> {
  const domain = `corp-${unique()}.test`;
  const signup = await call("POST", "/api/auth/signup", { body: { organization_name: "SSO corp", email: `admin@${domain}`, password: PASSWORD }, headers: { "cf-connecting-ip": uniqueIp() } });
  expect(signup.status).toBe(201);
  const admin = { email: `admin@${domain}`, session: signup.body.token as string, userId: signup.body.user_id as number };
  const client = await registerClient(opts.issuer, opts.clientExtra);
  const put = await call("PUT", "/api/admin/sso", {
    token: admin.session,
    body: {
      issuer: opts.issuer ?? ISSUER,
      client_id: client.client_id,
      client_secret: client.client_secret,
      email_domains: [domain],
      default_roles: [{ module_name: "rdap", role_name: "Viewer" }],
      enforce: opts.enforce ?? false,
    },
  });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const d = put.body.email_domains[0];
  expect(d).toMatchObject({ domain, verified: false, txt_record_name: `_trust-plane-verification.${domain}` });
  await publishTxt(d.txt_record_name, d.txt_record_value);
  const verified = await call("POST", `/api/admin/sso/domains/${domain}/verify`, { token: admin.session });
  expect(verified.status, JSON.stringify(verified.body)).toBe(200);
  expect(verified.body.email_domains[0].verified).toBe(true);
  return { admin, domain, clientId: client.client_id };
}

function cookiesOf(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of (headers as Headers & { getSetCookie(): string[] }).getSetCookie()) {
    const [pair] = line.split(";");
    const i = pair.indexOf("=");
    out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
  }
  return out;
}

interface BrowserRun {
  start: CallResult;
  callback?: CallResult;
  /** The session cookie the callback set, if any. */
  session?: string;
}

/**
 * What a browser does: the service's start (302 to the provider, a binding cookie), the
 * provider's redirects (its own cookies), and the callback back at the service.
 */
async function ssoSignIn(
  email: string,
  opts: {
    returnTo?: string;
    tamperAuthorization?: (url: URL) => void;
    tamperCallback?: (url: URL) => void;
    otherBrowser?: boolean;
    callbackAt?: Date;
    accept?: string;
  } = {},
): Promise<BrowserRun> {
  const nav = { accept: opts.accept ?? "text/html", "cf-connecting-ip": "2001:db8::5500" };
  const start = await call("GET", `/api/auth/sso/start?email=${encodeURIComponent(email)}${opts.returnTo ? `&return_to=${encodeURIComponent(opts.returnTo)}` : ""}`, { headers: nav, redirect: "manual" });
  const location = start.headers.get("location") ?? "";
  if (start.status !== 302 || !location.startsWith(FIXTURE)) {
    return { start };
  }
  const binding = cookiesOf(start.headers).tp_sso;
  const jar: Record<string, string> = {};
  let url = new URL(location);
  opts.tamperAuthorization?.(url);
  for (let hop = 0; hop < 10; hop++) {
    const r = await fetch(url, { redirect: "manual", headers: { cookie: Object.entries(jar).map(([k, v]) => `${k}=${v}`).join("; ") } });
    Object.assign(jar, cookiesOf(r.headers));
    await r.arrayBuffer();
    const next = r.headers.get("location");
    if (!next) throw new Error(`the provider stopped at ${url}: ${r.status}`);
    url = new URL(next, url);
    if (url.href.startsWith(REDIRECT_URI)) break;
  }
  opts.tamperCallback?.(url);
  const callback = await call("GET", `${url.pathname}${url.search}`, {
    redirect: "manual",
    headers: { ...nav, ...(opts.otherBrowser ? {} : { cookie: `tp_sso=${binding}` }), ...(opts.callbackAt ? at(opts.callbackAt) : {}) },
  });
  return { start, callback, session: cookiesOf(callback.headers).tp_session };
}

/** The callback refused the sign-in: back to the login page with the reason, and no session. */
function expectRefused(run: BrowserRun, reason: RegExp) {
  expect(run.callback?.status).toBe(302);
  const location = new URL(run.callback!.headers.get("location")!, "http://x");
  expect(location.pathname).toBe("/login");
  expect(location.searchParams.get("sso_error")).toMatch(reason);
  expect(run.session).toBeUndefined();
}

const me = (session: string) => call("GET", "/api/auth/me", { headers: { cookie: `tp_session=${session}` } });

describe("the redirect flow", () => {
  it("first sign-in creates the member with the default roles and lands in the console; the next signs the same member in", async () => {
    const org = await ssoOrg();
    const email = `alice@${org.domain}`;
    const run = await ssoSignIn(email, { returnTo: "/rdap" });
    // The start: the provider's authorization endpoint with PKCE, state, nonce and the hint.
    const auth = new URL(run.start.headers.get("location")!);
    expect(auth.pathname).toBe("/oidc/auth");
    expect(Object.fromEntries(auth.searchParams)).toMatchObject({ response_type: "code", client_id: org.clientId, redirect_uri: REDIRECT_URI, code_challenge_method: "S256", login_hint: email, scope: "openid email profile" });
    for (const p of ["state", "nonce", "code_challenge"]) expect(auth.searchParams.get(p)!.length).toBeGreaterThan(20);
    expect(run.start.headers.get("set-cookie")).toMatch(/tp_sso=.+; Max-Age=600; Path=\/api\/auth\/sso; HttpOnly; SameSite=Lax/);

    expect(run.callback!.status, JSON.stringify(run.callback!.body)).toBe(302);
    expect(run.callback!.headers.get("location")).toBe("/rdap");
    expect(run.session).toMatch(/^tps_/);
    const who = await me(run.session!);
    expect(who.body.user).toMatchObject({ email, permissions: [{ module: "rdap", role: "Viewer" }] });
    const sessions = await call("GET", "/api/auth/sessions", { headers: { cookie: `tp_session=${run.session}` } });
    expect(sessions.body.sessions[0]).toMatchObject({ sign_in_method: "sso", current: true });
    const users = await call("GET", "/api/admin/users", { token: org.admin.session });
    const created = users.body.users.filter((u: any) => u.email === email);
    expect(created).toHaveLength(1);
    expect(created[0].sso_only).toBe(true);

    const again = await ssoSignIn(email);
    expect(again.session).toMatch(/^tps_/);
    expect((await me(again.session!)).body.user.id).toBe(who.body.user.id);
    expect(again.callback!.headers.get("location")).toBe("/");
    const actions = (await call("GET", "/api/admin/audit-logs?limit=20", { token: org.admin.session })).body.audit_logs.map((l: any) => l.action);
    expect(actions.filter((a: string) => a === "auth.login.sso")).toHaveLength(2);
    expect(actions).toContain("user.sso_create");
    expect(actions).toContain("sso.configure");
    expect(actions).toContain("sso.domain.verify");
    // The member created by SSO has no password to sign in with.
    expectErrorShape(await call("POST", "/api/auth/login", { body: { email, password: "" }, headers: { "cf-connecting-ip": uniqueIp() } }), 401, "unauthorized");
  });

  it("a provider that gives the email only from its userinfo endpoint works too; a return_to that leaves the console does not", async () => {
    const org = await ssoOrg({ issuer: STRICT_ISSUER });
    const run = await ssoSignIn(`bob@${org.domain}`, { returnTo: "//evil.example/phish" });
    expect(run.session, JSON.stringify(run.callback?.headers.get("location"))).toMatch(/^tps_/);
    expect(run.callback!.headers.get("location")).toBe("/");
    expect((await me(run.session!)).body.user.email).toBe(`bob@${org.domain}`);
  });
});

describe("refused sign-ins: the reason, and no session", () => {
  it("an ID token the token endpoint signed with another key (forged)", async () => {
    const org = await ssoOrg();
    await postJson(`${ISSUER}/__control/forge`, { client_id: org.clientId });
    expectRefused(await ssoSignIn(`mallory@${org.domain}`), /signature/);
    // And an API caller gets a 401 with the same reason.
    const api = await ssoSignIn(`mallory@${org.domain}`, { accept: "application/json" });
    expectErrorShape(api.callback!, 401, "unauthorized");
    expect(api.callback!.body.error.message).toMatch(/signature/);
    const users = await call("GET", "/api/admin/users", { token: org.admin.session });
    expect(users.body.users.map((u: any) => u.email)).not.toContain(`mallory@${org.domain}`);
  });

  it("an expired ID token", async () => {
    const org = await ssoOrg({ clientExtra: { x_id_token_ttl: 60 } });
    expectRefused(await ssoSignIn(`late@${org.domain}`, { callbackAt: new Date(Date.now() + 5 * 60_000) }), /expired/);
  });

  it("a nonce other than the one sent", async () => {
    const org = await ssoOrg();
    expectRefused(await ssoSignIn(`n@${org.domain}`, { tamperAuthorization: (u) => u.searchParams.set("nonce", "another-nonce-0123456789abcdef") }), /nonce/);
  });

  it("a state we did not issue, a callback in another browser, and the same callback twice", async () => {
    const org = await ssoOrg();
    expectRefused(await ssoSignIn(`s@${org.domain}`, { tamperCallback: (u) => u.searchParams.set("state", "made-up-state-0123456789") }), /unknown, expired/);
    expectRefused(await ssoSignIn(`s@${org.domain}`, { otherBrowser: true }), /did not start in this browser/);
    // Replaying the provider's redirect itself: the state is spent.
    let callbackUrl = "";
    const second = await ssoSignIn(`s@${org.domain}`, { tamperCallback: (u) => void (callbackUrl = u.pathname + u.search) });
    expect(second.session).toMatch(/^tps_/);
    const again = await call("GET", callbackUrl, { redirect: "manual", headers: { accept: "text/html", cookie: `tp_sso=${cookiesOf(second.start.headers).tp_sso}` } });
    expectRefused({ start: second.start, callback: again, session: cookiesOf(again.headers).tp_session }, /used already|unknown, expired/);
  });

  it("an email the provider has not verified, and an email in a domain the organization has not proven", async () => {
    const org = await ssoOrg();
    expectRefused(await ssoSignIn(`unverified-carl@${org.domain}`), /has not verified/);
    expectRefused(await ssoSignIn(`foreign-eve@${org.domain}`), /not a verified email domain/);
    expectRefused(await ssoSignIn(`noemail-fay@${org.domain}`), /sent no email address/);
    // A domain configured but not proven by DNS: nobody signs in through it.
    const put = await call("PUT", "/api/admin/sso", {
      token: org.admin.session,
      body: { issuer: ISSUER, client_id: org.clientId, email_domains: [org.domain, `unproven-${org.domain}`] },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.email_domains.map((d: any) => [d.domain, d.verified])).toEqual([
      [org.domain, true],
      [`unproven-${org.domain}`, false],
    ]);
    const start = await ssoSignIn(`dave@unproven-${org.domain}`);
    expect(start.start.status).toBe(302);
    expect(new URL(start.start.headers.get("location")!, "http://x").searchParams.get("sso_error")).toMatch(/No organization signs in with single sign-on for unproven-/);
    expectErrorShape(await call("GET", `/api/auth/sso/start?email=dave@unproven-${org.domain}`), 404, "not_found");
  });
});

describe("enforcement", () => {
  it("members of the domain cannot use passwords (after the password check); the break-glass administrator can", async () => {
    const org = await ssoOrg();
    const member = `carol@${org.domain}`;
    const inv = await call("POST", "/api/admin/invitations", { token: org.admin.session, body: { email: member } });
    const mail = await call("GET", "/api/admin/mail-outbox?limit=50", { token: org.admin.session });
    const token = /tpi_[0-9A-Za-z]{38}/.exec(mail.body.messages.find((m: any) => m.to === member).body)![0];
    expect((await call("POST", "/api/auth/invitations/accept", { body: { token, password: PASSWORD }, headers: { "cf-connecting-ip": uniqueIp() } })).status).toBe(201);
    void inv;
    const put = await call("PUT", "/api/admin/sso", { token: org.admin.session, body: { issuer: ISSUER, client_id: org.clientId, email_domains: [org.domain], enforce: true } });
    expect(put.body).toMatchObject({ enforce: true, break_glass_user_id: org.admin.userId });
    const login = (email: string, password: string) => call("POST", "/api/auth/login", { body: { email, password }, headers: { "cf-connecting-ip": uniqueIp() } });
    expectErrorShape(await login(member, "not the password!"), 401, "unauthorized");
    const refused = await login(member, PASSWORD);
    expectErrorShape(refused, 403, "sso_required");
    expect(refused.body.token).toBeUndefined();
    expect((await login(org.admin.email, PASSWORD)).status).toBe(200);
    // SSO still signs the member in, also where the organization requires a second factor:
    // the identity provider decides how its people authenticate.
    const t = Date.now();
    const start = await call("POST", "/api/auth/mfa/totp", { token: org.admin.session });
    const { TOTP, URI } = await import("otpauth");
    const code = (URI.parse(start.body.otpauth_uri) as InstanceType<typeof TOTP>).generate({ timestamp: t });
    expect((await call("POST", "/api/auth/mfa/totp/verify", { token: org.admin.session, body: { code } })).status).toBe(200);
    expect((await call("PUT", "/api/admin/security-policy", { token: org.admin.session, body: { require_mfa: true } })).status).toBe(200);
    const viaSso = await ssoSignIn(member);
    expect(viaSso.session).toMatch(/^tps_/);
    expect((await call("GET", "/api/lists", { headers: { cookie: `tp_session=${viaSso.session}` } })).status).toBe(200);
    // The break-glass account must be an administrator with a password.
    const users = (await call("GET", "/api/admin/users", { token: org.admin.session })).body.users;
    const carol = users.find((u: any) => u.email === member);
    const bad = await call("PUT", "/api/admin/sso", { token: org.admin.session, body: { issuer: ISSUER, client_id: org.clientId, email_domains: [org.domain], enforce: true, break_glass_user_id: carol.id } });
    expectErrorShape(bad, 400, "validation_error");
    expect(bad.body.error.details[0].path).toBe("break_glass_user_id");
  });
});

describe("configuration", () => {
  it("every bad input is a 400 naming the field, and nothing is saved", async () => {
    const org = await signupFresh("SSO config");
    const client = await registerClient();
    const good = { issuer: ISSUER, client_id: client.client_id, client_secret: client.client_secret, email_domains: [`c-${unique()}.test`] };
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ ...good, issuer: `${ISSUER}/` }, "issuer", /Discovery .* failed/],
      [{ ...good, issuer: `${FIXTURE}/nothing-here` }, "issuer", /Discovery .* failed: the provider answered HTTP 404$/],
      [{ ...good, issuer: "http://idp.example.com" }, "issuer", /must be https/],
      [{ ...good, issuer: "https://localhost/realms/x" }, "issuer", /egress|refused|Discovery/],
      [{ ...good, client_secret: undefined }, "client_secret", /Required/],
      [{ ...good, email_domains: ["not a domain"] }, "email_domains.0", /not a domain/],
      [{ ...good, default_roles: [{ module_name: "rdap", role_name: "Boss" }] }, "default_roles.0.role_name", /offers/],
      [{ ...good, break_glass_user_id: 999999999, enforce: true }, "break_glass_user_id", /No active member/],
    ];
    for (const [body, field, message] of cases) {
      const r = await call("PUT", "/api/admin/sso", { token: org.session, body });
      expectErrorShape(r, 400, "validation_error");
      const detail = r.body.error.details.find((d: any) => d.path === field);
      expect(detail?.message, `${field}: ${JSON.stringify(r.body)}`).toMatch(message);
    }
    expectErrorShape(await call("GET", "/api/admin/sso", { token: org.session }), 404, "not_found");
    // The secret is never returned.
    const ok = await call("PUT", "/api/admin/sso", { token: org.session, body: good });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.body)).not.toContain(client.client_secret);
    expect(ok.body.client_secret_set).toBe(true);
  });

  it("domain proof: no record, a wrong record, then the right one; a domain proven by another organization cannot be configured", async () => {
    const org = await signupFresh("Proof");
    const client = await registerClient();
    const domain = `proof-${unique()}.test`;
    const put = await call("PUT", "/api/admin/sso", { token: org.session, body: { issuer: ISSUER, client_id: client.client_id, client_secret: client.client_secret, email_domains: [domain] } });
    const d = put.body.email_domains[0];
    const check = () => call("POST", `/api/admin/sso/domains/${domain}/verify`, { token: org.session });
    let r = await check();
    expectErrorShape(r, 400, "validation_error");
    expect(r.body.error.details[0].message).toMatch(/does not exist \(NXDOMAIN\)|has no TXT record/);
    await publishTxt(d.txt_record_name, "trust-plane-domain-verification=somebody-else");
    r = await check();
    expect(r.body.error.details[0].message).toContain('found: "trust-plane-domain-verification=somebody-else"');
    expect((await call("GET", "/api/admin/sso", { token: org.session })).body.email_domains[0]).toMatchObject({ verified: false, last_check_error: expect.stringContaining("do not hold") });
    await publishTxt(d.txt_record_name, d.txt_record_value);
    r = await check();
    expect(r.status).toBe(200);
    expect(r.body.email_domains[0]).toMatchObject({ verified: true, last_check_error: null });
    expectErrorShape(await call("POST", `/api/admin/sso/domains/unknown-${domain}/verify`, { token: org.session }), 404, "not_found");

    const rival = await signupFresh("Rival");
    const taken = await call("PUT", "/api/admin/sso", { token: rival.session, body: { issuer: ISSUER, client_id: client.client_id, client_secret: client.client_secret, email_domains: [domain] } });
    expectErrorShape(taken, 409, "conflict");
    expectErrorShape(await call("GET", "/api/admin/sso", { token: rival.session }), 404, "not_found");
  });
});
