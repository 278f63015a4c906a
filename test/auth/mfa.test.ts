/**
 * Second factors end to end through the API: TOTP enrollment, sign-in and removal with
 * codes computed by an independent implementation (the `otpauth` package), the ±1 step
 * window and replay refusal with the clock moved (X-Trust-Plane-Now), recovery codes,
 * the second step's token (lifetime, attempts, throttle), the organization's policy,
 * an administrator's reset, and every bad input refused with nothing half-saved.
 */
import * as OTPAuth from "otpauth";
import { describe, expect, it } from "vitest";
import { ACCOUNT_CEILING, PAIR_POLICY } from "../../src/platform/login-throttle";
import { MAX_PROOF_FAILURES } from "../../src/modules/auth/mfa/second-step";
import { addMember, call, createToken, expectErrorShape, PASSWORD, signupFresh, uniqueIp, type CallResult } from "../helpers";

const STEP_MS = 30_000;
const at = (ms: number) => ({ "x-trust-plane-now": new Date(ms).toISOString() });

interface Account {
  email: string;
  session: string;
  totp: OTPAuth.TOTP;
  recoveryCodes: string[];
}

/** A code of `totp` for the 30-second step containing `ms`. */
const codeAt = (totp: OTPAuth.TOTP, ms: number) => totp.generate({ timestamp: ms });

/** Enrolls an authenticator app for the session's user at `t` (its own code proves it). */
async function enrollTotp(session: string, t: number): Promise<{ totp: OTPAuth.TOTP; recoveryCodes: string[] }> {
  const start = await call("POST", "/api/auth/mfa/totp", { token: session, headers: at(t) });
  expect(start.status, JSON.stringify(start.body)).toBe(201);
  // The URI is what the QR code carries: an authenticator app reads it, so does otpauth.
  const totp = OTPAuth.URI.parse(start.body.otpauth_uri) as OTPAuth.TOTP;
  expect(totp.secret.base32).toBe(start.body.secret);
  expect([totp.algorithm, totp.digits, totp.period, totp.issuer]).toEqual(["SHA1", 6, 30, "Trust-Plane"]);
  const verify = await call("POST", "/api/auth/mfa/totp/verify", { token: session, body: { code: codeAt(totp, t) }, headers: at(t) });
  expect(verify.status, JSON.stringify(verify.body)).toBe(200);
  return { totp, recoveryCodes: verify.body.recovery_codes };
}

async function accountWithTotp(t: number): Promise<Account & { organizationId: number; userId: number }> {
  const org = await signupFresh("Mfa");
  const { totp, recoveryCodes } = await enrollTotp(org.session, t);
  return { ...org, totp, recoveryCodes };
}

const login = (email: string, password: string, headers: Record<string, string>) => call("POST", "/api/auth/login", { body: { email, password }, headers });
const loginMfa = (body: Record<string, unknown>, headers: Record<string, string>) => call("POST", "/api/auth/login/mfa", { body, headers });

/** The password step from `ip` at `t`: the second step's token. */
async function passwordStep(email: string, ip: string, t: number): Promise<string> {
  const r = await login(email, PASSWORD, { "cf-connecting-ip": ip, ...at(t) });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.mfa_required).toBe(true);
  return r.body.mfa_token;
}

function expectNoSession(r: CallResult) {
  expect(r.body?.token).toBeUndefined();
  expect(r.headers.get("set-cookie")).toBeNull();
}

describe("TOTP enrollment", () => {
  it("start, a wrong code (400, nothing enabled), the right code: ten distinct recovery codes; the app then shows in the status", async () => {
    const org = await signupFresh("Enroll");
    const t = Date.now();
    const start = await call("POST", "/api/auth/mfa/totp", { token: org.session, headers: at(t) });
    expect(start.status).toBe(201);
    expect(start.body.otpauth_uri).toMatch(/^otpauth:\/\/totp\/Trust-Plane:.+\?secret=[A-Z2-7]+&issuer=Trust-Plane/);
    const totp = OTPAuth.URI.parse(start.body.otpauth_uri) as OTPAuth.TOTP;
    const wrong = String((Number(codeAt(totp, t)) + 1) % 1_000_000).padStart(6, "0");
    const refused = await call("POST", "/api/auth/mfa/totp/verify", { token: org.session, body: { code: wrong }, headers: at(t) });
    expectErrorShape(refused, 400, "validation_error");
    expect(refused.body.error.details[0].path).toBe("code");
    expect((await call("GET", "/api/auth/mfa", { token: org.session })).body).toEqual({ mfa_enabled: false, totp_enabled: false, passkeys: 0, recovery_codes_left: 0 });
    // An unconfirmed app is no factor: the password alone still signs in.
    expect((await login(org.email, PASSWORD, { "cf-connecting-ip": uniqueIp() })).body.token).toMatch(/^tps_/);

    const ok = await call("POST", "/api/auth/mfa/totp/verify", { token: org.session, body: { code: codeAt(totp, t) }, headers: at(t) });
    expect(ok.status).toBe(200);
    expect(ok.body.recovery_codes).toHaveLength(10);
    expect(new Set(ok.body.recovery_codes).size).toBe(10);
    for (const c of ok.body.recovery_codes) expect(c).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    expect((await call("GET", "/api/auth/mfa", { token: org.session })).body).toEqual({ mfa_enabled: true, totp_enabled: true, passkeys: 0, recovery_codes_left: 10 });
    // A second app while one is set up: 409, the first keeps working.
    expectErrorShape(await call("POST", "/api/auth/mfa/totp", { token: org.session }), 409, "conflict");
    // Verifying again: 409 (nothing pending).
    expectErrorShape(await call("POST", "/api/auth/mfa/totp/verify", { token: org.session, body: { code: codeAt(totp, t + STEP_MS) }, headers: at(t + STEP_MS) }), 409, "conflict");
  });

  it("parallel starts: each answers 201, and exactly one secret (the one kept) completes the setup", async () => {
    const org = await signupFresh("Race");
    const t = Date.now();
    const starts = await Promise.all(Array.from({ length: 8 }, () => call("POST", "/api/auth/mfa/totp", { token: org.session, headers: at(t) })));
    expect(starts.map((r) => r.status)).toEqual(Array(8).fill(201));
    const outcomes: number[] = [];
    for (const start of starts) {
      const totp = OTPAuth.URI.parse(start.body.otpauth_uri) as OTPAuth.TOTP;
      outcomes.push((await call("POST", "/api/auth/mfa/totp/verify", { token: org.session, body: { code: codeAt(totp, t) }, headers: at(t) })).status);
    }
    expect(outcomes.filter((s) => s === 200)).toHaveLength(1);
    expect(outcomes.every((s) => [200, 400, 409].includes(s))).toBe(true);
  });

  it("the enrollment ends the user's other sessions; API tokens keep working and cannot touch factors", async () => {
    const org = await signupFresh("Others");
    const other = await login(org.email, PASSWORD, { "cf-connecting-ip": uniqueIp() });
    const token = await createToken(org.session, ["lists:view_lists"]);
    await enrollTotp(org.session, Date.now());
    expectErrorShape(await call("GET", "/api/auth/me", { token: other.body.token }), 401, "unauthorized");
    expect((await call("GET", "/api/auth/me", { token: org.session })).status).toBe(200);
    expect((await call("GET", "/api/lists", { token: token.token })).status).toBe(200);
    expectErrorShape(await call("GET", "/api/auth/mfa", { token: token.token }), 403, "forbidden");
    expectErrorShape(await call("DELETE", "/api/auth/mfa/totp", { token: token.token, body: { code: "123456" } }), 403, "forbidden");
  });
});

describe("signing in with the app", () => {
  it("the password alone yields the second step's token, no session; the app's code completes it", async () => {
    const t = Date.now();
    const acct = await accountWithTotp(t - 10 * STEP_MS);
    const ip = uniqueIp();
    const first = await login(acct.email, PASSWORD, { "cf-connecting-ip": ip, "user-agent": "Test Browser/1.0", ...at(t) });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ mfa_required: true, methods: ["totp", "recovery_code"] });
    expect(first.body.mfa_token).toMatch(/^tpf_/);
    expect(Date.parse(first.body.expires_at) - t).toBe(5 * 60_000);
    expectNoSession(first);
    // The token is no bearer.
    expectErrorShape(await call("GET", "/api/auth/me", { token: first.body.mfa_token }), 401, "unauthorized");

    const done = await loginMfa({ mfa_token: first.body.mfa_token, code: codeAt(acct.totp, t) }, { "cf-connecting-ip": ip, "user-agent": "Test Browser/1.0", ...at(t) });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.token).toMatch(/^tps_/);
    const sessions = await call("GET", "/api/auth/sessions", { token: done.body.token });
    const mine = sessions.body.sessions.find((s: any) => s.current);
    expect(mine).toMatchObject({ sign_in_method: "password+totp", client_ip: ip, user_agent: "Test Browser/1.0" });
    // The token was used up.
    expectErrorShape(await loginMfa({ mfa_token: first.body.mfa_token, code: codeAt(acct.totp, t + STEP_MS) }, at(t + STEP_MS)), 401, "token_expired");
    // The audit log names each step.
    const audit = await call("GET", "/api/admin/audit-logs?limit=20", { token: acct.session });
    const actions = audit.body.audit_logs.map((l: any) => l.action);
    expect(actions).toContain("auth.login.second_factor_required");
    expect(actions).toContain("auth.login.totp");
    expect(actions).toContain("mfa.totp.enable");
  });

  it("window: the previous and the next step are accepted, two steps away is not; a code is accepted once (replay refused), and no earlier step after a later one", async () => {
    const t0 = Date.now();
    const acct = await accountWithTotp(t0 - 100 * STEP_MS);
    const ip = uniqueIp();
    const attempt = async (codeMs: number, serverMs: number) => {
      const token = await passwordStep(acct.email, ip, serverMs);
      return loginMfa({ mfa_token: token, code: codeAt(acct.totp, codeMs) }, { "cf-connecting-ip": ip, ...at(serverMs) });
    };
    // The server's clock is one step ahead of the phone: accepted.
    expect((await attempt(t0, t0 + STEP_MS)).status).toBe(200);
    // The same code again, still within its window: a replay.
    const replay = await attempt(t0, t0 + STEP_MS + 1_000);
    expectErrorShape(replay, 401, "unauthorized");
    expectNoSession(replay);
    // The phone one step ahead of the server: accepted (a later step than the last).
    expect((await attempt(t0 + 3 * STEP_MS, t0 + 2 * STEP_MS)).status).toBe(200);
    // A valid code of an earlier step than the last accepted: refused.
    expectErrorShape(await attempt(t0 + 2 * STEP_MS, t0 + 2 * STEP_MS + 5_000), 401, "unauthorized");
    // Two steps apart either way: refused.
    expectErrorShape(await attempt(t0 + 10 * STEP_MS, t0 + 12 * STEP_MS), 401, "unauthorized");
    expectErrorShape(await attempt(t0 + 22 * STEP_MS, t0 + 20 * STEP_MS), 401, "unauthorized");
    // Right at the step boundary: the code of the step that just ended still counts.
    const boundary = Math.ceil((t0 + 30 * STEP_MS) / STEP_MS) * STEP_MS;
    expect((await attempt(boundary - 1, boundary)).status).toBe(200);
  });

  it("recovery codes: each signs in once, in any case and spacing; the count left is returned", async () => {
    const t = Date.now();
    const acct = await accountWithTotp(t);
    const ip = uniqueIp();
    const typed = ` ${acct.recoveryCodes[3].toUpperCase().replace("-", " ")} `;
    const ok = await loginMfa({ mfa_token: await passwordStep(acct.email, ip, t), recovery_code: typed }, { "cf-connecting-ip": ip, ...at(t) });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.recovery_codes_left).toBe(9);
    expectErrorShape(await loginMfa({ mfa_token: await passwordStep(acct.email, ip, t), recovery_code: acct.recoveryCodes[3] }, { "cf-connecting-ip": ip, ...at(t) }), 401, "unauthorized");
    const sessions = await call("GET", "/api/auth/sessions", { token: ok.body.token });
    expect(sessions.body.sessions.find((s: any) => s.current).sign_in_method).toBe("password+recovery_code");
  });

  it("the token lives 5 minutes, serves this user only, and is spent after 5 wrong codes; wrong codes count toward the throttle", async () => {
    const t = Date.now();
    const acct = await accountWithTotp(t);
    const ip = uniqueIp();
    const from = { "cf-connecting-ip": ip };
    // Expired: the right code no longer helps.
    const old = await passwordStep(acct.email, ip, t);
    const late = await loginMfa({ mfa_token: old, code: codeAt(acct.totp, t + 5 * 60_000 + 1) }, { ...from, ...at(t + 5 * 60_000 + 1) });
    expectErrorShape(late, 401, "token_expired");
    expectNoSession(late);
    // A made-up token of the right shape, and garbage.
    expectErrorShape(await loginMfa({ mfa_token: "tpf_" + "A".repeat(38), code: "123456" }, from), 401, "token_expired");
    expectErrorShape(await loginMfa({ mfa_token: "nonsense", code: "123456" }, from), 401, "token_expired");

    // Wrong codes: the token is spent at the limit; the pair (account, address) counts them.
    const other = uniqueIp();
    const token = await passwordStep(acct.email, other, t);
    for (let i = 0; i < MAX_PROOF_FAILURES; i++) {
      const r = await loginMfa({ mfa_token: token, code: "000000" === codeAt(acct.totp, t) ? "111111" : "000000" }, { "cf-connecting-ip": other, ...at(t + i) });
      if (i < PAIR_POLICY.threshold) expectErrorShape(r, 401, "unauthorized");
    }
    // Spent (and locked: the pair reached its threshold).
    const after = await loginMfa({ mfa_token: token, code: codeAt(acct.totp, t) }, { "cf-connecting-ip": other, ...at(t + 10) });
    expect([401, 429]).toContain(after.status);
    expectNoSession(after);
    // The address is now locked out of this account, for the password too...
    expectErrorShape(await login(acct.email, PASSWORD, { "cf-connecting-ip": other, ...at(t + 20) }), 429, "rate_limited");
    // ...but not the owner elsewhere.
    expect((await login(acct.email, PASSWORD, { ...from, ...at(t + 20) })).status).toBe(200);
  });

  it("a distributed password attack (the account's ceiling) does not keep the owner out: from a new address the password and the app's code still sign in", async () => {
    const t = Date.now();
    const acct = await accountWithTotp(t);
    for (let i = 0; i < ACCOUNT_CEILING.threshold; i++) {
      expectErrorShape(await login(acct.email, "wrong password!", { "cf-connecting-ip": uniqueIp(), ...at(t + 1_000 + i) }), 401, "unauthorized");
    }
    // A wrong password from a new address now gets the refusal an account without a second
    // factor gets (not a 401), so the answer does not say which kind of account this is.
    const guess = await login(acct.email, "wrong password!", { "cf-connecting-ip": uniqueIp(), ...at(t + 59_000) });
    expectErrorShape(guess, 429, "rate_limited");
    expect(guess.body.error.message).toMatch(/only from an address this account used before/);
    const fresh = uniqueIp();
    const token = await passwordStep(acct.email, fresh, t + 60_000);
    const done = await loginMfa({ mfa_token: token, code: codeAt(acct.totp, t + 60_000) }, { "cf-connecting-ip": fresh, ...at(t + 60_000) });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.token).toMatch(/^tps_/);
  });

  it("bad inputs: no proof, two proofs, a missing token: 400; nothing issued", async () => {
    const t = Date.now();
    const acct = await accountWithTotp(t);
    const ip = uniqueIp();
    const token = await passwordStep(acct.email, ip, t);
    for (const body of [{ mfa_token: token }, { mfa_token: token, code: "123456", recovery_code: "abcde-fghij" }, { code: "123456" }, { mfa_token: token, code: 123456 }]) {
      const r = await loginMfa(body, { "cf-connecting-ip": ip, ...at(t) });
      expectErrorShape(r, 400, "validation_error");
      expectNoSession(r);
    }
    // The token survived the refused requests (they checked no proof).
    expect((await loginMfa({ mfa_token: token, code: codeAt(acct.totp, t + STEP_MS) }, { "cf-connecting-ip": ip, ...at(t + STEP_MS) })).status).toBe(200);
  });
});

describe("removing the app", () => {
  it("a wrong code is 400 and removes nothing; the right code removes it with the recovery codes, and ends the other sessions", async () => {
    const t = Date.now();
    const acct = await accountWithTotp(t - 10 * STEP_MS);
    const ip = uniqueIp();
    const second = await loginMfa({ mfa_token: await passwordStep(acct.email, ip, t), code: codeAt(acct.totp, t) }, { "cf-connecting-ip": ip, ...at(t) });
    expect(second.status).toBe(200);
    const bad = await call("DELETE", "/api/auth/mfa/totp", { token: acct.session, body: { code: "999999" === codeAt(acct.totp, t + STEP_MS) ? "888888" : "999999" }, headers: at(t + STEP_MS) });
    expectErrorShape(bad, 400, "validation_error");
    expectErrorShape(await call("DELETE", "/api/auth/mfa/totp", { token: acct.session, body: {} }), 400, "validation_error");
    expect((await call("GET", "/api/auth/mfa", { token: acct.session })).body.totp_enabled).toBe(true);
    const removed = await call("DELETE", "/api/auth/mfa/totp", { token: acct.session, body: { code: codeAt(acct.totp, t + STEP_MS) }, headers: at(t + STEP_MS) });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body).toEqual({ mfa_enabled: false, totp_enabled: false, passkeys: 0, recovery_codes_left: 0 });
    expectErrorShape(await call("GET", "/api/auth/me", { token: second.body.token }), 401, "unauthorized");
    // The password alone signs in again.
    expect((await login(acct.email, PASSWORD, { "cf-connecting-ip": uniqueIp() })).body.token).toMatch(/^tps_/);
  });

  it("a recovery code also proves it (a lost phone)", async () => {
    const acct = await accountWithTotp(Date.now());
    const r = await call("DELETE", "/api/auth/mfa/totp", { token: acct.session, body: { recovery_code: acct.recoveryCodes[0] } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.totp_enabled).toBe(false);
  });
});

describe("organization policy", () => {
  it("require_mfa: refused to an administrator without a factor; then members without one can only enroll, now and at sign-in; SSO aside, API tokens unaffected", async () => {
    const t = Date.now();
    const org = await signupFresh("Policy");
    const member = await addMember(org.session, [
      { module_name: "rdap", role_name: "Viewer" },
      { module_name: "api-tokens", role_name: "Token Manager" },
    ]);
    const memberToken = await createToken(member.session, ["lists:view_lists"]);
    expectErrorShape(await call("PUT", "/api/admin/security-policy", { token: org.session, body: { require_mfa: true } }), 409, "conflict");
    expect((await call("GET", "/api/admin/security-policy", { token: org.session })).body).toEqual({ require_mfa: false, members_without_mfa: 2 });
    await enrollTotp(org.session, t);
    const on = await call("PUT", "/api/admin/security-policy", { token: org.session, body: { require_mfa: true } });
    expect(on.body).toEqual({ require_mfa: true, members_without_mfa: 1 });
    expectErrorShape(await call("PUT", "/api/admin/security-policy", { token: org.session, body: { require_mfa: "yes" } }), 400, "validation_error");

    // The member's open session can do nothing but enroll.
    const blocked = await call("GET", "/api/rdap/domains", { token: member.session });
    expectErrorShape(blocked, 403, "mfa_enrollment_required");
    const me = await call("GET", "/api/auth/me", { token: member.session });
    expect(me.body).toMatchObject({ mfa_enrollment_required: true, organization: { require_mfa: true } });
    expect((await call("GET", "/api/lists", { token: memberToken.token })).status).toBe(200);
    // A new sign-in of the member is restricted the same way.
    const again = await login(member.email, PASSWORD, { "cf-connecting-ip": uniqueIp() });
    expect(again.body.mfa_enrollment_required).toBe(true);
    expectErrorShape(await call("GET", "/api/rdap/domains", { token: again.body.token }), 403, "mfa_enrollment_required");
    // Enrolling frees the session that did it (and ends the other).
    await enrollTotp(member.session, t);
    expect((await call("GET", "/api/rdap/domains", { token: member.session })).status).toBe(200);
    expectErrorShape(await call("GET", "/api/auth/me", { token: again.body.token }), 401, "unauthorized");
    // The last factor cannot go while the policy holds.
    expectErrorShape(await call("DELETE", "/api/auth/mfa/totp", { token: member.session, body: { recovery_code: "aaaaa-aaaaa" } }), 409, "conflict");
    const policyActions = (await call("GET", "/api/admin/audit-logs?limit=50", { token: org.session })).body.audit_logs.map((l: any) => l.action);
    expect(policyActions).toContain("security_policy.update");
  });

  it("an administrator's reset removes a member's factors, signs them out everywhere and tells them by email", async () => {
    const t = Date.now();
    const org = await signupFresh("Reset");
    const member = await addMember(org.session, []);
    await enrollTotp(member.session, t);
    const users = await call("GET", "/api/admin/users", { token: org.session });
    expect(users.body.users.find((u: any) => u.id === member.userId).mfa_enabled).toBe(true);
    const r = await call("DELETE", `/api/admin/users/${member.userId}/mfa`, { token: org.session });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expectErrorShape(await call("GET", "/api/auth/me", { token: member.session }), 401, "unauthorized");
    const fresh = await login(member.email, PASSWORD, { "cf-connecting-ip": uniqueIp() });
    expect(fresh.body.token).toMatch(/^tps_/);
    expect((await call("GET", "/api/auth/mfa", { token: fresh.body.token })).body.mfa_enabled).toBe(false);
    const mail = await call("GET", "/api/admin/mail-outbox?limit=50", { token: org.session });
    const notice = mail.body.messages.find((m: any) => m.to === member.email && /second factors were reset/.test(m.subject));
    expect(notice?.body).toContain(org.email);
    const audit = (await call("GET", "/api/admin/audit-logs?limit=20", { token: org.session })).body.audit_logs;
    expect(audit.find((l: any) => l.action === "user.mfa.reset")?.target_id).toBe(String(member.userId));
    // Nothing to reset now: 409.
    expectErrorShape(await call("DELETE", `/api/admin/users/${member.userId}/mfa`, { token: org.session }), 409, "conflict");
  });
});

describe("sessions", () => {
  it("lists the user's sessions with where and how they signed in; ends one, or all but the current", async () => {
    const org = await signupFresh("Sessions");
    const b = await login(org.email, PASSWORD, { "cf-connecting-ip": "2001:db8::b", "user-agent": "Browser B" });
    const c = await login(org.email, PASSWORD, { "cf-connecting-ip": "2001:db8::c", "user-agent": "Browser C" });
    const list = await call("GET", "/api/auth/sessions", { token: b.body.token });
    expect(list.body.sessions).toHaveLength(3);
    const byAgent = Object.fromEntries(list.body.sessions.map((s: any) => [s.user_agent ?? "signup", s]));
    expect(byAgent["Browser B"]).toMatchObject({ current: true, client_ip: "2001:db8::b", sign_in_method: "password" });
    expect(byAgent["Browser C"]).toMatchObject({ current: false, client_ip: "2001:db8::c" });
    expect(list.body.sessions.find((s: any) => s.sign_in_method === "signup")).toBeDefined();
    // Another user's session id: 404, nothing ended.
    const stranger = await signupFresh("Stranger");
    expectErrorShape(await call("DELETE", `/api/auth/sessions/${byAgent["Browser C"].id}`, { token: stranger.session }), 404, "not_found");
    expect((await call("DELETE", `/api/auth/sessions/${byAgent["Browser C"].id}`, { token: b.body.token })).status).toBe(200);
    expectErrorShape(await call("GET", "/api/auth/me", { token: c.body.token }), 401, "unauthorized");
    const others = await call("DELETE", "/api/auth/sessions", { token: b.body.token });
    expect(others.body).toEqual({ ended: 1 });
    expectErrorShape(await call("GET", "/api/auth/me", { token: org.session }), 401, "unauthorized");
    expect((await call("GET", "/api/auth/sessions", { token: b.body.token })).body.sessions).toHaveLength(1);
    // Ending the calling session signs it out.
    expect((await call("DELETE", `/api/auth/sessions/${byAgent["Browser B"].id}`, { token: b.body.token })).status).toBe(200);
    expectErrorShape(await call("GET", "/api/auth/me", { token: b.body.token }), 401, "unauthorized");
  });

  it("last used is refreshed at most every five minutes, never per request", async () => {
    const t = Date.now();
    const org = await signupFresh("LastUsed");
    const lastUsed = async () => (await call("GET", "/api/auth/sessions", { token: org.session, headers: at(t) })).body.sessions[0].last_used_at as string;
    const first = await lastUsed();
    await call("GET", "/api/auth/me", { token: org.session, headers: at(t + 60_000) });
    expect(await lastUsed()).toBe(first);
    await call("GET", "/api/auth/me", { token: org.session, headers: at(t + 6 * 60_000) });
    // The refresh runs after the response (waitUntil).
    let seen = first;
    for (let i = 0; i < 40 && seen === first; i++) {
      await new Promise((r) => setTimeout(r, 25));
      seen = await lastUsed();
    }
    expect(seen).toBe(new Date(t + 6 * 60_000).toISOString());
  });

  it("changing the password needs the current one and ends the other sessions", async () => {
    const org = await signupFresh("Password");
    const other = await login(org.email, PASSWORD, { "cf-connecting-ip": uniqueIp() });
    const wrong = await call("POST", "/api/auth/password", { token: org.session, body: { current_password: "not my password", new_password: "a brand new passphrase" } });
    expectErrorShape(wrong, 400, "validation_error");
    expect(wrong.body.error.details[0].path).toBe("current_password");
    expectErrorShape(await call("POST", "/api/auth/password", { token: org.session, body: { current_password: PASSWORD, new_password: "short" } }), 400, "validation_error");
    expect((await call("GET", "/api/auth/me", { token: other.body.token })).status).toBe(200);
    const ok = await call("POST", "/api/auth/password", { token: org.session, body: { current_password: PASSWORD, new_password: "a brand new passphrase" } });
    expect(ok.status).toBe(200);
    expectErrorShape(await call("GET", "/api/auth/me", { token: other.body.token }), 401, "unauthorized");
    expect((await call("GET", "/api/auth/me", { token: org.session })).status).toBe(200);
    expectErrorShape(await login(org.email, PASSWORD, { "cf-connecting-ip": uniqueIp() }), 401, "unauthorized");
    expect((await login(org.email, "a brand new passphrase", { "cf-connecting-ip": uniqueIp() })).status).toBe(200);
  });
});
