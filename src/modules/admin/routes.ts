import type { OpenAPIHono } from "@hono/zod-openapi";
import { principalOf, tenantOf, type AppEnv } from "../../platform/context";
import { body, defineRoute, json } from "../../platform/route";
import * as s from "./schema";
import * as heartbeat from "./heartbeat";
import * as admin from "./service";

const tags = ["Administration"];

export const listUsers = defineRoute({
  method: "get", path: "/api/admin/users", tags, summary: "List organization members",
  access: { anyOf: ["admin:view_users", "admin:manage_users"] },
  responses: { 200: json(s.UserList) },
});
export const listRoles = defineRoute({
  method: "get", path: "/api/admin/roles", tags, summary: "Roles each module offers and the permissions they grant",
  access: { permission: "admin:manage_users" },
  responses: { 200: json(s.RolesResponse) },
});
export const invite = defineRoute({
  method: "post", path: "/api/admin/invitations", tags, summary: "Invite a user by email (valid 7 days)",
  description: "Inviting with `roles` also needs `admin:manage_permissions`, and nobody can grant a role whose permissions they do not hold (403). One open invitation per address (409; resend it instead), also under parallel requests.",
  access: { permission: "admin:manage_users" },
  audit: { action: "invitation.create", targetType: "invitation" },
  request: { body: body(s.InviteRequest) },
  responses: { 201: json(s.InviteResponse, "Created") },
});
export const listInvitations = defineRoute({
  method: "get", path: "/api/admin/invitations", tags, summary: "Invitations not yet accepted (status pending or expired)",
  access: { permission: "admin:manage_users" },
  responses: { 200: json(s.InvitationList) },
});
export const resendInvitation = defineRoute({
  method: "post", path: "/api/admin/invitations/{invitation_id}/resend", tags, summary: "New token, fresh expiry, new email",
  access: { permission: "admin:manage_users" },
  audit: { action: "invitation.resend", targetType: "invitation", idParam: "invitation_id" },
  request: { params: s.InvitationIdParam },
  responses: { 200: json(s.ResendResponse) },
});
export const setRoles = defineRoute({
  method: "put", path: "/api/admin/users/{user_id}", tags, summary: "Replace a user's role assignments",
  description: "Nobody can grant a role whose permissions they do not hold (403); the signup user's roles cannot change (403).",
  access: { permission: "admin:manage_permissions" },
  audit: { action: "user.set_roles", targetType: "user", idParam: "user_id" },
  request: { params: s.UserIdParam, body: body(s.SetRolesRequest) },
  responses: { 200: json(s.Message) },
});
export const setStatus = defineRoute({
  method: "put", path: "/api/admin/users/{user_id}/status", tags, summary: "Disable or re-enable a user",
  description: "A disabled user cannot log in and their API tokens stop working; configuration is kept.",
  access: { permission: "admin:manage_users" },
  audit: { action: "user.set_status", targetType: "user", idParam: "user_id" },
  request: { params: s.UserIdParam, body: body(s.SetStatusRequest) },
  responses: { 200: json(s.Message) },
});
export const removeUser = defineRoute({
  method: "delete", path: "/api/admin/users/{user_id}", tags, summary: "Remove a user (irreversible)",
  access: { permission: "admin:manage_users" },
  audit: { action: "user.remove", targetType: "user", idParam: "user_id" },
  request: { params: s.UserIdParam },
  responses: { 200: json(s.Message) },
});
export const getSubscription = defineRoute({
  method: "get", path: "/api/admin/subscription", tags, summary: "Tier, quota limits and usage",
  access: { permission: "admin:view_subscription" },
  responses: { 200: json(s.Subscription) },
});
export const putSubscription = defineRoute({
  method: "put", path: "/api/admin/subscription", tags, summary: "Set the tier (self-hosted: no billing)",
  access: { permission: "admin:manage_subscription" },
  audit: { action: "subscription.set_tier", targetType: "organization" },
  request: { body: body(s.SetTierRequest) },
  responses: { 200: json(s.SetTierResponse) },
});
export const auditLogs = defineRoute({
  method: "get", path: "/api/admin/audit-logs", tags, summary: "Audit log, newest first",
  access: { permission: "admin:view_audit_logs" },
  request: { query: s.AuditLogQuery },
  responses: { 200: json(s.AuditLogList) },
});
export const mailOutbox = defineRoute({
  method: "get", path: "/api/admin/mail-outbox", tags, summary: "Mail sent by the organization (development mailbox)",
  description: "With no SMTP_URL configured, mail is delivered to this outbox (status `stored`). With SMTP, bodies of delivered mail are redacted.",
  access: { permission: "admin:manage_users" },
  request: { query: s.OutboxQuery },
  responses: { 200: json(s.OutboxList) },
});

const heartbeatDescription =
  "A ping URL of your own dead-man's switch (healthchecks-style): after each scheduled run (every minute) in which every job finished and every monitored asset " +
  "of the organization was collected within its module's window (a new asset not collected yet does not count), Trust-Plane POSTs to it. When the pings stop, " +
  "your checker tells you that Trust-Plane itself stopped. A run that does not ping, or a ping that fails, is recorded with the reason (`last_run`).";
export const getHeartbeat = defineRoute({
  method: "get", path: "/api/admin/heartbeat", tags, summary: "The organization's heartbeat URL (masked) and the latest run's outcome",
  description: heartbeatDescription,
  access: { permission: "admin:manage_users" },
  responses: { 200: json(s.Heartbeat) },
});
export const putHeartbeat = defineRoute({
  method: "put", path: "/api/admin/heartbeat", tags, summary: "Set the heartbeat URL",
  description: `${heartbeatDescription} The URL is sealed and shown as scheme, host and port; an internal address is a 400 (egress policy), checked again before each ping.`,
  access: { permission: "admin:manage_users" },
  audit: { action: "heartbeat.update", targetType: "organization" },
  request: { body: body(s.HeartbeatRequest) },
  responses: { 200: json(s.Heartbeat) },
});
export const deleteHeartbeat = defineRoute({
  method: "delete", path: "/api/admin/heartbeat", tags, summary: "Stop the heartbeat",
  description: "404 when none is set.",
  access: { permission: "admin:manage_users" },
  audit: { action: "heartbeat.delete", targetType: "organization" },
  responses: { 200: json(s.Message) },
});

export function registerAdminRoutes(app: OpenAPIHono<AppEnv>) {
  const t = tenantOf;
  app.openapi(listUsers, async (c) => c.json({ users: await admin.listUsers(t(c)) }, 200));
  app.openapi(listRoles, async (c) => c.json(admin.listRoles(), 200));
  app.openapi(invite, async (c) => c.json(await admin.invite(t(c), c.get("config"), principalOf(c), c.req.valid("json"), c.get("now")), 201));
  app.openapi(listInvitations, async (c) => c.json({ invitations: await admin.listInvitations(t(c), c.get("now")) }, 200));
  app.openapi(resendInvitation, async (c) => c.json(await admin.resendInvitation(t(c), c.get("config"), c.req.valid("param").invitation_id, c.get("now")), 200));
  app.openapi(setRoles, async (c) => c.json(await admin.setRoles(t(c), principalOf(c), c.req.valid("param").user_id, c.req.valid("json").roles), 200));
  app.openapi(setStatus, async (c) => c.json(await admin.setStatus(t(c), c.req.valid("param").user_id, c.req.valid("json").status), 200));
  app.openapi(removeUser, async (c) => c.json(await admin.removeUser(t(c), c.req.valid("param").user_id, c.get("now")), 200));
  app.openapi(getSubscription, async (c) => c.json(await admin.subscription(t(c)), 200));
  app.openapi(putSubscription, async (c) => {
    c.set("audit", { targetId: t(c).organizationId });
    return c.json(await admin.setTier(t(c), c.req.valid("json").tier), 200);
  });
  app.openapi(auditLogs, async (c) => {
    const q = c.req.valid("query");
    return c.json(await admin.listAuditLogs(t(c), q.limit, q.offset), 200);
  });
  app.openapi(getHeartbeat, async (c) => c.json(await heartbeat.getHeartbeat(t(c)), 200));
  app.openapi(putHeartbeat, async (c) => {
    c.set("audit", { targetId: t(c).organizationId });
    return c.json(await heartbeat.setHeartbeat(t(c), c.get("config"), c.req.valid("json").url, c.get("now")), 200);
  });
  app.openapi(deleteHeartbeat, async (c) => {
    c.set("audit", { targetId: t(c).organizationId });
    return c.json(await heartbeat.deleteHeartbeat(t(c)), 200);
  });
  app.openapi(mailOutbox, async (c) => {
    const q = c.req.valid("query");
    return c.json(await admin.listOutbox(t(c), q.limit, q.offset), 200);
  });
}
