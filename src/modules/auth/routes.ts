import type { OpenAPIHono } from "@hono/zod-openapi";
import { principalOf, type AppEnv } from "../../platform/context";
import { ApiError } from "../../platform/errors";
import { body, defineRoute, json } from "../../platform/route";
import { clearSessionCookie, CONSOLE_HEADER, deliverSession } from "../../platform/session-cookie";
import { completeSecondFactor } from "./mfa/second-step";
import { registerMfaRoutes } from "./mfa/routes";
import { signInContext } from "./sign-in-context";
import { registerSsoRoutes } from "./sso/routes";
import * as s from "./schema";
import * as auth from "./service";
import * as sessions from "./sessions";

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
  method: "post", path: "/api/auth/login", tags, summary: "Sign in with a password: a 12-hour session, or the second step's token",
  description: [
    "Wrong credentials and disabled users: 401, same message. A user with a second factor gets `200 {mfa_required: true, mfa_token, methods}` instead of a session: complete it with POST /api/auth/login/mfa within 5 minutes. A member whose email domain the organization's single sign-on enforces: 403 `sso_required` (after the password was checked).",
    "Throttling (docs/identity.md): failures are counted per account and client address; from the 5th consecutive failure that address waits for a delay that doubles with every further failure, up to 15 minutes, and from the 20th failure of one address (any account) so does the address. During a delay every attempt, even with the right password, is 429 `rate_limited` with Retry-After. Failures from other addresses never lock yours. An account failing 50 times in a day from many addresses is under attack: its owner is emailed, and a password alone signs in only from an address the account used before (a second factor or SSO still does). An unknown account is throttled exactly like a known one.",
    cookieNote,
  ].join("\n\n"),
  access: { public: true },
  audit: { action: "auth.login", targetType: "user" },
  request: { body: body(s.LoginRequest) },
  responses: { 200: json(s.LoginResponse) },
});

export const loginMfaRoute = defineRoute({
  method: "post", path: "/api/auth/login/mfa", tags, summary: "Complete a sign-in with its second factor",
  description: `One of \`code\` (the authenticator app), \`recovery_code\` (used up) or \`webauthn\` (a passkey's assertion for the \`webauthn\` options of the login answer). A wrong proof is 401 and counts toward the sign-in throttle like a wrong password; after 5 the token is spent. An expired, completed or unknown token: 401 \`token_expired\` (enter the password again).\n\n${cookieNote}`,
  access: { public: true },
  audit: { action: "auth.login", targetType: "user" },
  request: { body: body(s.LoginMfaRequest) },
  responses: { 200: json(s.LoginMfaResponse) },
});

export const passwordRoute = defineRoute({
  method: "post", path: "/api/auth/password", tags, summary: "Change your password (ends your other sessions)",
  description: "The current password proves it is you (a wrong one is 400 naming `current_password`, and counts toward the sign-in throttle). API tokens are unaffected.",
  access: { session: true },
  audit: { action: "user.password.change", targetType: "user" },
  request: { body: body(s.PasswordChange) },
  responses: { 200: json(s.MessageResponse) },
});

export const listSessionsRoute = defineRoute({
  method: "get", path: "/api/auth/sessions", tags, summary: "Your sessions: where and how they signed in, when last used",
  access: { session: true },
  responses: { 200: json(s.SessionList) },
});

export const endSessionRoute = defineRoute({
  method: "delete", path: "/api/auth/sessions/{session_id}", tags, summary: "End one of your sessions",
  description: "Ending the calling session is a logout (the console's cookie is cleared too).",
  access: { session: true },
  audit: { action: "session.end", targetType: "session", idParam: "session_id" },
  request: { params: s.SessionIdParam },
  responses: { 200: json(s.MessageResponse) },
});

export const endOtherSessionsRoute = defineRoute({
  method: "delete", path: "/api/auth/sessions", tags, summary: "Sign out everywhere else: end all your sessions but this one",
  access: { session: true },
  audit: { action: "session.end_others", targetType: "user" },
  responses: { 200: json(s.SessionsEnded) },
});

export const logoutRoute = defineRoute({
  method: "post", path: "/api/auth/logout", tags, summary: "End the calling session",
  description: "Also clears the web console's session cookie.",
  access: { authenticated: true },
  duringMfaEnrollment: true,
  audit: { action: "auth.logout", targetType: "session" },
  responses: { 200: json(s.MessageResponse) },
});

export const meRoute = defineRoute({
  method: "get", path: "/api/auth/me", tags, summary: "The caller: user, organization, permissions, second factors",
  access: { authenticated: true },
  duringMfaEnrollment: true,
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
    const result = await auth.signup(signInContext(c), c.req.valid("json"));
    c.set("audit", { organizationId: result.organization_id, userId: result.user_id, targetId: result.organization_id });
    return c.json(deliverSession(c, result), 201);
  });
  app.openapi(loginRoute, async (c) => {
    const outcome = await auth.login(signInContext(c), c.req.valid("json"));
    const note = { organizationId: outcome.user.organizationId, userId: outcome.user.id, targetId: outcome.user.id };
    if (outcome.kind === "second_factor") {
      c.set("audit", { ...note, action: "auth.login.second_factor_required" });
      return c.json(outcome.challenge, 200);
    }
    c.set("audit", note);
    return c.json(deliverSession(c, outcome.session), 200);
  });
  app.openapi(loginMfaRoute, async (c) => {
    const ctx = signInContext(c);
    const { user, method, recoveryCodesLeft } = await completeSecondFactor(ctx, c.req.valid("json") as never);
    const session = await auth.startSession(ctx, user, method);
    c.set("audit", { organizationId: user.organizationId, userId: user.id, targetId: user.id, action: `auth.login.${method.replace("password+", "")}` });
    return c.json(deliverSession(c, { ...session, ...(recoveryCodesLeft !== undefined ? { recovery_codes_left: recoveryCodesLeft } : {}) }), 200);
  });
  app.openapi(passwordRoute, async (c) => {
    c.set("audit", { targetId: principalOf(c).userId });
    return c.json(await auth.changePassword(signInContext(c), principalOf(c), c.req.valid("json")), 200);
  });
  app.openapi(listSessionsRoute, async (c) => c.json(await sessions.listSessions(c.get("db"), principalOf(c), c.get("now")), 200));
  app.openapi(endSessionRoute, async (c) => {
    const { current } = await sessions.endSession(c.get("db"), principalOf(c), c.req.valid("param").session_id);
    if (current) clearSessionCookie(c);
    return c.json({ message: current ? "Session ended (this was the calling session: you are signed out)" : "Session ended" }, 200);
  });
  app.openapi(endOtherSessionsRoute, async (c) => {
    c.set("audit", { targetId: principalOf(c).userId });
    return c.json(await sessions.endOtherSessionsOf(c.get("db"), principalOf(c)), 200);
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
    const result = await auth.acceptInvitation(signInContext(c), c.req.valid("json"));
    c.set("audit", { organizationId: result.organization_id, userId: result.user_id, targetId: result.user_id });
    return c.json(deliverSession(c, result), 201);
  });
  registerMfaRoutes(app);
  registerSsoRoutes(app);
}
