import type { OpenAPIHono } from "@hono/zod-openapi";
import { principalOf, type AppEnv } from "../../platform/context";
import { ApiError } from "../../platform/errors";
import { body, defineRoute, json } from "../../platform/route";
import { clearSessionCookie, CONSOLE_HEADER, deliverSession } from "../../platform/session-cookie";
import * as s from "./schema";
import * as auth from "./service";
import { throttledLogin } from "./throttle";

const tags = ["Accounts"];
const cookieNote = `With the header \`${CONSOLE_HEADER}: 1\` (the web console) the session is set as an HttpOnly, SameSite=Strict cookie and \`token\` is left out of the body; cookie-authenticated calls that change something must then carry the same header (CSRF).`;

export const signupRoute = defineRoute({
  method: "post", path: "/api/auth/signup", tags, summary: "Create an organization and its administrator",
  description: `Disabled when SIGNUP_ENABLED=false. The signup user is Administrator of every module.\n\n${cookieNote}`,
  access: { public: true },
  audit: { action: "auth.signup", targetType: "organization" },
  request: { body: body(s.SignupRequest) },
  responses: { 201: json(s.SignupResponse, "Created") },
});

export const loginRoute = defineRoute({
  method: "post", path: "/api/auth/login", tags, summary: "Log in; returns a 12-hour session token",
  description: `Wrong credentials and disabled users: 401, same message. Failed attempts are throttled per account (from the 5th consecutive failure) and per client address (from the 20th) with delays that double with every further failure, up to 15 minutes: during a delay every attempt, even with the right password, is 429 \`rate_limited\` with Retry-After. An unknown account is throttled exactly like a known one.\n\n${cookieNote}`,
  access: { public: true },
  audit: { action: "auth.login", targetType: "session" },
  request: { body: body(s.LoginRequest) },
  responses: { 200: json(s.SessionResponse) },
});

export const logoutRoute = defineRoute({
  method: "post", path: "/api/auth/logout", tags, summary: "End the calling session",
  description: "Also clears the web console's session cookie.",
  access: { authenticated: true },
  audit: { action: "auth.logout", targetType: "session" },
  responses: { 200: json(s.MessageResponse) },
});

export const meRoute = defineRoute({
  method: "get", path: "/api/auth/me", tags, summary: "The caller: user, organization, permissions",
  access: { authenticated: true },
  responses: { 200: json(s.MeResponse) },
});

export const preferencesRoute = defineRoute({
  method: "get", path: "/api/auth/me/preferences", tags, summary: "The caller's own preferences",
  access: { authenticated: true },
  responses: { 200: json(s.Preferences) },
});

export const updatePreferencesRoute = defineRoute({
  method: "put", path: "/api/auth/me/preferences", tags, summary: "Change the caller's own preferences",
  description:
    "`weekly_audit_report_enabled`: whether the weekly security audit report (PDF attached) is mailed to you. Invitations set it " +
    "initially (`weekly_audit_report_enabled` of the invitation); the signup user starts with it on. Fields left out keep their value.",
  access: { authenticated: true },
  audit: { action: "user.preferences.update", targetType: "user" },
  request: { body: body(s.PreferencesUpdate) },
  responses: { 200: json(s.Preferences) },
});

export const acceptRoute = defineRoute({
  method: "post", path: "/api/auth/invitations/accept", tags, summary: "Accept an invitation and set a password",
  description: `An expired or used invitation token: 400 \`invitation_invalid\`. Returns a session token.\n\n${cookieNote}`,
  access: { public: true },
  audit: { action: "invitation.accept", targetType: "user" },
  request: { body: body(s.AcceptInvitationRequest) },
  responses: { 201: json(s.AcceptInvitationResponse, "Created") },
});

export function registerAuthRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(signupRoute, async (c) => {
    if (!c.get("config").signupEnabled) throw new ApiError("forbidden", "Signup is disabled on this deployment");
    const result = await auth.signup(c.get("db"), c.req.valid("json"), c.get("now"));
    c.set("audit", { organizationId: result.organization_id, userId: result.user_id, targetId: result.organization_id });
    return c.json(deliverSession(c, result), 201);
  });
  app.openapi(loginRoute, async (c) => {
    const input = c.req.valid("json");
    const { user, result } = await throttledLogin(c.env, input.email, c.get("clientIp"), c.get("now"), () => auth.login(c.get("db"), input, c.get("now")));
    c.set("audit", { organizationId: user.organizationId, userId: user.id, targetId: user.id, targetType: "user" });
    return c.json(deliverSession(c, result), 200);
  });
  app.openapi(logoutRoute, async (c) => {
    const result = await auth.logout(c.get("db"), principalOf(c));
    clearSessionCookie(c);
    return c.json(result, 200);
  });
  app.openapi(meRoute, async (c) => c.json(await auth.me(c.get("db"), principalOf(c)), 200));
  app.openapi(preferencesRoute, async (c) => c.json(await auth.preferences(c.get("db"), principalOf(c)), 200));
  app.openapi(updatePreferencesRoute, async (c) => {
    c.set("audit", { targetId: principalOf(c).userId });
    return c.json(await auth.updatePreferences(c.get("db"), principalOf(c), c.req.valid("json")), 200);
  });
  app.openapi(acceptRoute, async (c) => {
    const result = await auth.acceptInvitation(c.get("db"), c.req.valid("json"), c.get("now"));
    c.set("audit", { organizationId: result.organization_id, userId: result.user_id, targetId: result.user_id });
    return c.json(deliverSession(c, result), 201);
  });
}
