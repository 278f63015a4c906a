import type { OpenAPIHono } from "@hono/zod-openapi";
import { principalOf, type AppEnv } from "../../platform/context";
import { ApiError } from "../../platform/errors";
import { body, defineRoute, json } from "../../platform/route";
import * as s from "./schema";
import * as auth from "./service";

const tags = ["Accounts"];

export const signupRoute = defineRoute({
  method: "post", path: "/api/auth/signup", tags, summary: "Create an organization and its administrator",
  description: "Disabled when SIGNUP_ENABLED=false. The signup user is Administrator of every module.",
  access: { public: true },
  audit: { action: "auth.signup", targetType: "organization" },
  request: { body: body(s.SignupRequest) },
  responses: { 201: json(s.SignupResponse, "Created") },
});

export const loginRoute = defineRoute({
  method: "post", path: "/api/auth/login", tags, summary: "Log in; returns a 12-hour session token",
  access: { public: true },
  audit: { action: "auth.login", targetType: "session" },
  request: { body: body(s.LoginRequest) },
  responses: { 200: json(s.SessionResponse) },
});

export const logoutRoute = defineRoute({
  method: "post", path: "/api/auth/logout", tags, summary: "End the calling session",
  access: { authenticated: true },
  audit: { action: "auth.logout", targetType: "session" },
  responses: { 200: json(s.MessageResponse) },
});

export const meRoute = defineRoute({
  method: "get", path: "/api/auth/me", tags, summary: "The caller: user, organization, permissions",
  access: { authenticated: true },
  responses: { 200: json(s.MeResponse) },
});

export const acceptRoute = defineRoute({
  method: "post", path: "/api/auth/invitations/accept", tags, summary: "Accept an invitation and set a password",
  description: "An expired or used invitation token: 400 `invitation_invalid`. Returns a session token.",
  access: { public: true },
  audit: { action: "invitation.accept", targetType: "user" },
  request: { body: body(s.AcceptInvitationRequest) },
  responses: { 201: json(s.AcceptInvitationResponse, "Created") },
});

export function registerAuthRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(signupRoute, async (c) => {
    if (!c.get("config").signupEnabled) throw new ApiError(403, "forbidden", "Signup is disabled on this deployment");
    const result = await auth.signup(c.get("db"), c.req.valid("json"), new Date());
    c.set("audit", { organizationId: result.organization_id, userId: result.user_id, targetId: result.organization_id });
    return c.json(result, 201);
  });
  app.openapi(loginRoute, async (c) => {
    const { user, result } = await auth.login(c.get("db"), c.req.valid("json"), new Date());
    c.set("audit", { organizationId: user.organizationId, userId: user.id, targetId: user.id, targetType: "user" });
    return c.json(result, 200);
  });
  app.openapi(logoutRoute, async (c) => c.json(await auth.logout(c.get("db"), principalOf(c)), 200));
  app.openapi(meRoute, async (c) => c.json(await auth.me(c.get("db"), principalOf(c)), 200));
  app.openapi(acceptRoute, async (c) => {
    const result = await auth.acceptInvitation(c.get("db"), c.req.valid("json"), new Date());
    c.set("audit", { organizationId: result.organization_id, userId: result.user_id, targetId: result.user_id });
    return c.json(result, 201);
  });
}
