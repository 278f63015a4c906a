/**
 * The web console's session transport: the same `tps_` session as a bearer client
 * gets, kept in a cookie the page's JavaScript cannot read.
 *
 * - `X-TrustPlane-Console: 1` on signup, login or invitation acceptance asks for
 *   the session as a cookie: the response sets it and its body leaves the token
 *   out, so no script ever holds it (an XSS cannot carry the session away).
 * - The cookie is HttpOnly, SameSite=Strict, Path=/api, Secure when the request
 *   came over HTTPS, and expires with the session (12 h).
 * - CSRF: a cookie-authenticated request that changes something (any method but
 *   GET/HEAD/OPTIONS) must also carry `X-TrustPlane-Console: 1`. A cross-site page
 *   cannot send a custom header without a CORS preflight, which this API never
 *   grants; SameSite=Strict already keeps the cookie off cross-site requests, so
 *   the header is the second, independent lock (older browsers, sibling subdomains).
 * - A request with an `Authorization` header ignores the cookie: bearer clients
 *   (scripts, the scanner agent) are unaffected by all of this.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { ApiError } from "./errors";

export const SESSION_COOKIE = "tp_session";
export const CONSOLE_HEADER = "X-TrustPlane-Console";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}

/** The console asked for a cookie session (and proves same-origin for CSRF). */
export function fromConsole(c: Context): boolean {
  return c.req.header(CONSOLE_HEADER) === "1";
}

/** The session token of the cookie, or undefined when there is none. */
export function sessionCookieOf(c: Context): string | undefined {
  return getCookie(c, SESSION_COOKIE) || undefined;
}

/** Why a cookie-authenticated request must be refused before it is resolved, if it must. */
export function csrfFailure(c: Context): ApiError | undefined {
  if (SAFE_METHODS.has(c.req.method) || fromConsole(c)) return undefined;
  return new ApiError("csrf_failed", `A request authenticated by the session cookie must carry the header ${CONSOLE_HEADER}: 1`);
}

export function setSessionCookie(c: Context, token: string, expiresAt: string): void {
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true,
    secure: isHttps(c),
    sameSite: "Strict",
    path: "/api",
    expires: new Date(expiresAt),
  });
}

export function clearSessionCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { httpOnly: true, secure: isHttps(c), sameSite: "Strict", path: "/api" });
}

/**
 * The body of a signup/login/acceptance response: with the console header the
 * session goes into the cookie and the token is left out of the body.
 */
export function deliverSession<T extends { token: string; expires_at: string }>(c: Context, result: T): T | Omit<T, "token"> {
  if (!fromConsole(c)) return result;
  setSessionCookie(c, result.token, result.expires_at);
  const { token: _token, ...rest } = result;
  return rest;
}
