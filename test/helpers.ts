/**
 * Test helpers for HTTP-level tests: call the Worker through the runtime's
 * service binding (the same fetch handler `wrangler dev` serves) and set up
 * organizations and tokens the way a user would, through the API.
 */
import { exports } from "cloudflare:workers";

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
  opts: { token?: string; body?: unknown; rawBody?: BodyInit; headers?: Record<string, string> } = {},
): Promise<CallResult<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: BodyInit | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  // A distinct client IP per test process keeps anonymous rate limits independent.
  headers["cf-connecting-ip"] ??= "192.0.2.1";
  const res = await (exports as any).default.fetch(new Request(`http://trust-plane.test${path}`, { method, headers, body }));
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

/** Expects the ADDENDUM 1 error body with the given status and code. */
export function expectError(r: CallResult, status: number, code: string) {
  if (r.status !== status || r.body?.success !== false || r.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${r.status} ${JSON.stringify(r.body)}`);
  }
}
