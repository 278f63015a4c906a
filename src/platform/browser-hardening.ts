/**
 * Browser hardening of every response the Worker sends (the console's static files get
 * the same from `web/public/_headers`, which a test compares with `CONSOLE_CSP` here).
 *
 * - `X-Content-Type-Options: nosniff` on every response, JSON errors included: a browser
 *   never guesses HTML out of an API answer that echoes user input.
 * - `frame-ancestors 'none'` and `X-Frame-Options: DENY` (for browsers without CSP 2): no
 *   page of the service, the sign-in above all, can be framed (clickjacking).
 * - `Referrer-Policy: no-referrer`: URLs carrying tokens (an invitation link, an SSO
 *   callback's code and state) never leak to another site through the Referer header.
 * - A Content-Security-Policy: API answers are data and may load nothing
 *   (`default-src 'none'`); the API reference (`/api/docs`) and the console may load
 *   scripts, styles, images and connections from this origin only.
 *
 * One middleware (Hono's `secureHeaders`, first in the chain, so it also wraps the error
 * handler's and the 404 handler's answers) sets them. A handler that serves a page sets
 * that page's CSP itself, which the middleware then keeps.
 */
import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";

/** CSP directives by their camel-case names (Hono's `ContentSecurityPolicyOptions`). */
type Directives = Record<string, string[]>;

/** Serialized the way browsers read it (and as Hono writes it): `default-src 'self'; img-src 'self' data:`. */
export function cspOf(directives: Directives): string {
  return Object.entries(directives)
    .map(([name, values]) => [name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), ...values].join(" "))
    .join("; ");
}

/** Answers of the API (JSON, PDF, CSV): nothing to load, nothing to frame them. */
export const API_CSP: Directives = {
  defaultSrc: ["'none'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
};

/** The web console (web/public/_headers must say exactly this; test/security/headers.test.ts compares). */
export const CONSOLE_CSP: Directives = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/**
 * The API reference page. Its script (Scalar) and its start-up script come from this
 * origin; Scalar's components set inline styles on elements and inject their own style
 * sheets at run time, which `style-src 'unsafe-inline'` allows (styles run no code, and
 * `connect-src`/`img-src` keep every request at this origin).
 */
export const DOCS_CSP: Directives = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/** The headers every response carries whatever its content, besides its CSP (the console's `_headers` too). */
export const HARDENING_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
} as const;

/**
 * First in the chain. Besides the headers above, Hono's defaults: Cross-Origin-Opener-
 * and -Resource-Policy same-origin, Origin-Agent-Cluster, no DNS prefetch, and
 * `X-XSS-Protection: 0` (the old filter is itself a leak).
 */
export const browserHardening: MiddlewareHandler = secureHeaders({
  contentSecurityPolicy: API_CSP,
  xContentTypeOptions: HARDENING_HEADERS["X-Content-Type-Options"],
  xFrameOptions: HARDENING_HEADERS["X-Frame-Options"],
  referrerPolicy: HARDENING_HEADERS["Referrer-Policy"],
  // HSTS belongs to whoever terminates TLS for the deployment's domain (Cloudflare's
  // edge, a reverse proxy): `includeSubDomains` there speaks for sibling hosts too.
  strictTransportSecurity: false,
  // A page that sets its own CSP (the API reference) keeps it.
  overwrite: false,
});
