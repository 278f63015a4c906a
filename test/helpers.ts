/**
 * Test helpers for HTTP-level tests: call the Worker through the runtime's
 * service binding (the same fetch handler `wrangler dev` serves) and set up
 * organizations and tokens the way a user would, through the API.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import worker from "../src/index";

/**
 * Hands a request to the Worker's fetch handler, as Cloudflare's edge (or a service
 * binding) would: redirects are followed unless the request says `redirect: "manual"`,
 * each hop going to the Worker again. The handler is called directly rather than through
 * `exports.default.fetch` of `cloudflare:workers`: in a runtime shared by many test files
 * (`isolate: false`) that path slows down with every call it has served (measured: 100
 * calls took 4.5 s, then 6 s, 13.5 s, 23 s, 35 s) until it overflows the stack, while the
 * direct call stays flat. `ctx.waitUntil` work still joins the test's wait-until set.
 */
export async function serve(request: Request): Promise<Response> {
  let req = request;
  for (let hop = 0; ; hop++) {
    const res = await worker.fetch!(req as any, env as any, createExecutionContext());
    const location = res.headers.get("location");
    if (request.redirect === "manual" || !location || ![301, 302, 303, 307, 308].includes(res.status) || hop === 20) return res;
    const keepsBody = res.status === 307 || res.status === 308;
    req = new Request(new URL(location, req.url), keepsBody ? req : { method: req.method === "HEAD" ? "HEAD" : "GET", headers: req.headers });
  }
}

let counter = 0;
/** A unique suffix per call, so tests sharing a D1 never collide. */
export const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

export interface CallResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function call<T = any>(
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: BodyInit; headers?: Record<string, string>; redirect?: "manual" } = {},
): Promise<CallResult<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: BodyInit | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  // Authenticated calls are limited per organization and token, so one fixed client
  // IP is fine (and audit-log tests expect it); anonymous calls (signup, login,
  // invitation acceptance) are limited per IP, so each gets its own unless a test
  // says otherwise — no test can starve another of the anonymous budget.
  headers["cf-connecting-ip"] ??= opts.token ? "192.0.2.1" : uniqueIp();
  // `redirect: "manual"` returns a redirect as it is (a browser navigation's view); otherwise it is followed.
  const res = await serve(new Request(`http://trust-plane.test${path}`, { method, headers, body, redirect: opts.redirect }));
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

export const PASSWORD = "correct horse battery staple";

export interface Org {
  organizationId: number;
  userId: number;
  email: string;
  /** The signup user's session token (Administrator of everything). */
  session: string;
}

export async function signup(name = "Org"): Promise<Org> {
  const email = `admin-${unique()}@example.com`;
  const r = await call("POST", "/api/auth/signup", { body: { organization_name: `${name} ${unique()}`, email, password: PASSWORD } });
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { organizationId: r.body.organization_id, userId: r.body.user_id, email, session: r.body.token };
}

export async function createToken(session: string, scopes: string[], validityDays = 30, name = "test") {
  const r = await call("POST", "/api/api-tokens", { token: session, body: { name, validity_days: validityDays, scopes } });
  if (r.status !== 201) throw new Error(`token create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: number; token: string; expires_at: string };
}

/** Expects the one error body with the given status and code. */
export function expectError(r: CallResult, status: number, code: string) {
  if (r.status !== status || r.body?.success !== false || r.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${r.status} ${JSON.stringify(r.body)}`);
  }
}

// ---------------------------------------------------------------------------
// Additions for the platform suite (test/platform). Anonymous calls (signup,
// login, invitation acceptance) are rate limited per client IP, so these helpers
// give every anonymous caller its own documentation-range address.

let ipCounter = 0;
/** A fresh client IP (2001:db8::/32, documentation range) per call. */
export const uniqueIp = () =>
  `2001:db8:${(Date.now() % 0xffff).toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}::${(++ipCounter).toString(16)}`;

/** `call` from a fresh client IP: anonymous calls never share a rate-limit bucket. */
export function callFresh<T = any>(
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: BodyInit; headers?: Record<string, string> } = {},
) {
  return call<T>(method, path, { ...opts, headers: { "cf-connecting-ip": uniqueIp(), ...opts.headers } });
}

/** Like `signup`, but from a fresh client IP (see `uniqueIp`). */
export async function signupFresh(name = "Org"): Promise<Org> {
  const email = `admin-${unique()}@example.com`;
  const r = await callFresh("POST", "/api/auth/signup", { body: { organization_name: `${name} ${unique()}`, email, password: PASSWORD } });
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { organizationId: r.body.organization_id, userId: r.body.user_id, email, session: r.body.token };
}

/** Logs in from a fresh client IP; returns the raw result. `at`: the request's clock (X-Trust-Plane-Now). */
export function login(email: string, password = PASSWORD, at?: Date) {
  return callFresh("POST", "/api/auth/login", { body: { email, password }, headers: at ? { "x-trust-plane-now": at.toISOString() } : {} });
}

/** The `tpi_` token of the newest invitation mail to `email`, read from the mail outbox. */
export async function invitationTokenFor(adminSession: string, email: string): Promise<string> {
  const r = await call("GET", "/api/admin/mail-outbox?limit=100", { token: adminSession });
  if (r.status !== 200) throw new Error(`mail-outbox failed: ${r.status} ${JSON.stringify(r.body)}`);
  const mail = (r.body.messages as { to: string; body: string; kind: string }[]).find((m) => m.to === email);
  const token = mail && /tpi_[0-9A-Za-z]{38}/.exec(mail.body)?.[0];
  if (!token) throw new Error(`no invitation mail for ${email}`);
  return token;
}

export interface Member {
  userId: number;
  email: string;
  session: string;
  invitationId: number;
}

/** Invites `email` with `roles` and accepts the invitation: a second user of the organization. */
export async function addMember(adminSession: string, roles: { module_name: string; role_name: string }[]): Promise<Member> {
  const email = `member-${unique()}@example.com`;
  const inv = await call("POST", "/api/admin/invitations", { token: adminSession, body: { email, roles } });
  if (inv.status !== 201) throw new Error(`invite failed: ${inv.status} ${JSON.stringify(inv.body)}`);
  const token = await invitationTokenFor(adminSession, email);
  const acc = await callFresh("POST", "/api/auth/invitations/accept", { body: { token, password: PASSWORD } });
  if (acc.status !== 201) throw new Error(`accept failed: ${acc.status} ${JSON.stringify(acc.body)}`);
  return { userId: acc.body.user_id, email, session: acc.body.token, invitationId: inv.body.id };
}

/** Polls `probe` until it returns a truthy value (or `timeoutMs` passes); returns the last value. */
export async function pollUntil<T>(probe: () => Promise<T>, timeoutMs = 2000, stepMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  let v = await probe();
  while (!v && Date.now() < end) {
    await new Promise((r) => setTimeout(r, stepMs));
    v = await probe();
  }
  return v;
}

/** Asserts the error body exactly: only `success` and `error{code, message, details?}`. */
export function expectErrorShape(r: CallResult, status: number, code: string) {
  expectError(r, status, code);
  const keys = Object.keys(r.body).sort().join(",");
  const errKeys = Object.keys(r.body.error).sort();
  if (keys !== "error,success" || typeof r.body.error.message !== "string" || r.body.error.message === "") {
    throw new Error(`bad error body: ${JSON.stringify(r.body)}`);
  }
  for (const k of errKeys) if (!["code", "message", "details"].includes(k)) throw new Error(`unexpected error field ${k}`);
  if ("details" in r.body.error) {
    const d = r.body.error.details;
    if (!Array.isArray(d) || d.some((x: any) => typeof x?.path !== "string" || typeof x?.message !== "string")) {
      throw new Error(`bad details: ${JSON.stringify(d)}`);
    }
  }
}
