/**
 * Single sign-on: the administrators' configuration (under /api/admin/sso) and the
 * browser's sign-in (under /api/auth/sso). The sign-in routes are navigations: a
 * failure sends the browser back to the console's sign-in page with the reason
 * (`/login?sso_error=...`); a caller that is not a browser navigation gets the JSON error.
 */
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { principalOf, type AppContext, type AppEnv } from "../../../platform/context";
import { ApiError, badRequest, unauthorized } from "../../../platform/errors";
import { body, defineRoute, json } from "../../../platform/route";
import { setSessionCookie } from "../../../platform/session-cookie";
import { auditInsert } from "../../../platform/audit";
import { signInContext } from "../sign-in-context";
import * as s from "../schema";
import * as auth from "../service";
import * as sso from "./config";
import { completeSso, NoSsoForDomain, safeReturnTo, SSO_LOGIN_TTL_MS, startSso } from "./flow";
import { SsoError } from "./oidc";

/** Keeps the browser's half of a sign-in in progress (the callback must come back to it). */
export const SSO_COOKIE = "tp_sso";
const SSO_COOKIE_PATH = "/api/auth/sso";

const adminTags = ["Administration"];
const tags = ["Accounts"];

export const getSsoRoute = defineRoute({
  method: "get", path: "/api/admin/sso", tags: adminTags, summary: "The organization's single sign-on (OpenID Connect)",
  description: "404 when none is configured. The client secret is never returned.",
  access: { anyOf: ["admin:view_users", "admin:manage_users"] },
  responses: { 200: json(s.SsoConfig) },
});
export const putSsoRoute = defineRoute({
  method: "put", path: "/api/admin/sso", tags: adminTags, summary: "Configure single sign-on with an OpenID provider",
  description: [
    "The issuer is read through discovery now (`/.well-known/openid-configuration`): an unreachable or wrong issuer is a 400 naming `issuer`, with the reason, and nothing is saved. https only (http for a destination on the operator's egress allow-list). Register `redirect_uri` (in the answer) at the provider.",
    "Each email domain must be proven by a DNS TXT record before it counts (POST /api/admin/sso/domains/{domain}/verify); a domain another organization verified is 409. `client_secret` is sealed; leave it out to keep the saved one.",
    "`enforce`: members whose email is in a verified domain cannot sign in with a password (403 `sso_required`), except the break-glass administrator (`break_glass_user_id`, by default you), who must administer users and have a password.",
    "Nobody can give `default_roles` with permissions they do not hold (403).",
  ].join("\n\n"),
  access: { permission: "admin:manage_users" },
  audit: { action: "sso.configure", targetType: "organization" },
  request: { body: body(s.SsoConfigInput) },
  responses: { 200: json(s.SsoConfig) },
});
export const deleteSsoRoute = defineRoute({
  method: "delete", path: "/api/admin/sso", tags: adminTags, summary: "Remove single sign-on",
  access: { permission: "admin:manage_users" },
  audit: { action: "sso.remove", targetType: "organization" },
  responses: { 200: json(s.MessageResponse) },
});
export const verifyDomainRoute = defineRoute({
  method: "post", path: "/api/admin/sso/domains/{domain}/verify", tags: adminTags, summary: "Check a domain's DNS TXT record now",
  description:
    "Looks up `txt_record_name` TXT through the service's DoH resolvers (the DNS watcher's): holding `txt_record_value`, the domain is verified; otherwise 400 with what was found (also kept as `last_check_error`).",
  access: { permission: "admin:manage_users" },
  audit: { action: "sso.domain.verify", targetType: "sso_domain", idParam: "domain" },
  request: { params: z.object({ domain: z.string().max(253).openapi({ param: { name: "domain", in: "path" }, example: "corp.example" }) }) },
  responses: { 200: json(s.SsoConfig) },
});

const redirect = (description: string) => ({ description, headers: { Location: { schema: { type: "string" as const } } } });

export const ssoStartRoute = defineRoute({
  method: "get", path: "/api/auth/sso/start", tags, summary: "Sign in with SSO: to the identity provider of the email's organization",
  description:
    "A browser navigation: 302 to the provider (Authorization Code with PKCE, state and nonce; `login_hint` is the email). The organization is the one that verified the email's domain. No such organization: 404 (a navigation goes back to `/login?sso_error=...`).",
  access: { public: true },
  request: { query: s.SsoStartQuery },
  responses: { 302: redirect("To the identity provider") },
});
export const ssoCallbackRoute = defineRoute({
  method: "get", path: "/api/auth/sso/callback", tags, summary: "Where the identity provider returns the browser",
  description:
    "Signs the member in (created with the configuration's default roles on their first sign-in) and lands in the console (302, the session as the console's cookie). Refused, with the reason, and no session: an unknown, expired, used or foreign state; a provider error; an ID token whose signature, issuer, audience, expiry or nonce is wrong; no email, an unverified email, or a domain the organization has not verified. A navigation goes back to `/login?sso_error=...`; other callers get 401.",
  access: { public: true },
  request: { query: s.SsoCallbackQuery },
  responses: { 302: redirect("Into the console") },
});

/** A browser navigation (the console's links and the provider's redirect), as opposed to an API call. */
function isNavigation(c: AppContext): boolean {
  return c.req.header("sec-fetch-mode") === "navigate" || (c.req.header("accept") ?? "").includes("text/html");
}

function failure(c: AppContext, err: unknown, status: "start" | "callback"): Response {
  if (!(err instanceof SsoError)) throw err;
  if (isNavigation(c)) return c.redirect(`/login?sso_error=${encodeURIComponent(err.message)}`, 302);
  if (err instanceof NoSsoForDomain) throw new ApiError("not_found", err.message);
  throw status === "start" ? badRequest(err.message, [{ path: "email", message: err.message }]) : unauthorized(err.message);
}

const secure = (c: AppContext) => new URL(c.req.url).protocol === "https:";

export function registerSsoRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(getSsoRoute, async (c) => c.json(await sso.getSso(c.get("db"), c.get("config"), principalOf(c).organizationId), 200));
  app.openapi(putSsoRoute, async (c) => {
    c.set("audit", { targetId: principalOf(c).organizationId });
    return c.json(await sso.putSso(c.get("db"), c.get("config"), principalOf(c), c.req.valid("json"), c.get("now")), 200);
  });
  app.openapi(deleteSsoRoute, async (c) => {
    c.set("audit", { targetId: principalOf(c).organizationId });
    return c.json(await sso.deleteSso(c.get("db"), principalOf(c).organizationId), 200);
  });
  app.openapi(verifyDomainRoute, async (c) =>
    c.json(await sso.verifyDomain(c.get("db"), c.get("config"), principalOf(c).organizationId, c.req.valid("param").domain, c.get("now")), 200),
  );

  app.openapi(ssoStartRoute, async (c) => {
    const q = c.req.valid("query");
    try {
      const { location, binding } = await startSso(c.get("db"), c.get("config"), q.email, safeReturnTo(q.return_to), c.get("now"));
      setCookie(c, SSO_COOKIE, binding, { httpOnly: true, secure: secure(c), sameSite: "Lax", path: SSO_COOKIE_PATH, maxAge: SSO_LOGIN_TTL_MS / 1000 });
      return c.redirect(location, 302);
    } catch (err) {
      return failure(c, err, "start") as never;
    }
  });
  app.openapi(ssoCallbackRoute, async (c) => {
    const binding = getCookie(c, SSO_COOKIE);
    deleteCookie(c, SSO_COOKIE, { path: SSO_COOKIE_PATH, secure: secure(c), httpOnly: true, sameSite: "Lax" });
    const ctx = signInContext(c);
    try {
      const { user, returnTo } = await completeSso(ctx, new URL(c.req.url), binding);
      const session = await auth.startSession(ctx, user, "sso");
      setSessionCookie(c, session.token, session.expires_at);
      // A redirect is no 2xx, which the route layer audits: this sign-in is written here.
      await auditInsert(ctx.db, {
        organizationId: user.organizationId,
        userId: user.id,
        tokenId: null,
        action: "auth.login.sso",
        targetType: "user",
        targetId: String(user.id),
        clientIp: ctx.clientIp,
        at: ctx.now,
      }).run();
      return c.redirect(returnTo, 302);
    } catch (err) {
      return failure(c, err, "callback") as never;
    }
  });
}
