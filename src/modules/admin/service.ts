/**
 * Administration: users (active <-> disabled -> removed), invitations (pending ->
 * expired after 7 days; resend = new token, fresh expiry, new mail), role
 * assignments, subscription tier, audit log, and the development mail outbox.
 * The signup user cannot be disabled, removed or have roles changed (403).
 */
import { and, count, desc, eq, isNull, ne } from "drizzle-orm";
import type { Db } from "../../db/client";
import { auditLogs, invitations, mailOutbox, organizations, sessions, users, type RoleAssignment } from "../../db/schema/platform";
import type { Config } from "../../env";
import type { Principal } from "../../platform/context";
import { badRequest, conflict, forbidden, notFound, type ErrorDetail } from "../../platform/errors";
import { enqueueMail } from "../../platform/mailer";
import { ASSIGNABLE_ROLES, findRole, type Permission } from "../../platform/permissions";
import { TIER_LIMITS, usageOf, type Tier } from "../../platform/quotas";
import { generateSecret, hashSecret } from "../../platform/secrets";
import { displayedRoles, normalizeEmail } from "../auth/service";

export const INVITATION_DAYS = 7;

export interface RoleRequest {
  module_name: string;
  role_name: string;
}

/** Validates role requests: known module and role, at most one role per module. */
export function validateRoles(requested: RoleRequest[]): RoleAssignment[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  requested.forEach((r, i) => {
    const roles = ASSIGNABLE_ROLES[r.module_name];
    if (!roles) details.push({ path: `roles.${i}.module_name`, message: `Unknown module '${r.module_name}'` });
    else if (!roles.some((d) => d.name === r.role_name)) {
      details.push({
        path: `roles.${i}.role_name`,
        message: `Module '${r.module_name}' offers ${roles.map((d) => `'${d.name}'`).join(", ")}`,
      });
    } else if (seen.has(r.module_name)) details.push({ path: `roles.${i}`, message: `More than one role for '${r.module_name}'` });
    seen.add(r.module_name);
  });
  if (details.length) throw badRequest("Invalid role assignment", details);
  return requested.map((r) => ({ module: r.module_name, role: r.role_name }));
}

/**
 * Nobody can hand out more than they hold: the permissions of granted roles must
 * all be the granter's own (the same rule as token scopes), so holding
 * manage_permissions alone does not let anyone make themselves Administrator.
 */
export function assertGrantable(roles: RoleAssignment[], held: ReadonlySet<Permission>) {
  const missing = new Set<string>();
  for (const r of roles) for (const p of findRole(r.module, r.role)?.permissions ?? []) if (!held.has(p)) missing.add(p);
  if (missing.size) throw forbidden(`Cannot grant roles with permissions you do not hold: ${[...missing].sort().join(", ")}`);
}

export function userView(u: typeof users.$inferSelect) {
  return {
    id: u.id,
    email: u.email,
    status: u.status as "active" | "disabled",
    is_signup_user: u.isSignupUser,
    weekly_audit_report_enabled: u.weeklyAuditReportEnabled,
    created_at: u.createdAt,
    permissions: displayedRoles(u),
  };
}

export async function listUsers(db: Db, organizationId: number) {
  const rows = await db
    .select()
    .from(users)
    .where(and(eq(users.organizationId, organizationId), ne(users.status, "removed")))
    .orderBy(users.id)
    .all();
  return rows.map(userView);
}

export function listRoles() {
  return {
    modules: Object.entries(ASSIGNABLE_ROLES).map(([module, roles]) => ({
      module,
      roles: roles.map((r) => ({ name: r.name, description: r.description, permissions: r.permissions })),
    })),
  };
}

/** A user of the caller's organization that has not been removed, or 404. */
async function memberOf(db: Db, organizationId: number, userId: number) {
  const u = await db
    .select()
    .from(users)
    .where(and(eq(users.id, userId), eq(users.organizationId, organizationId), ne(users.status, "removed")))
    .get();
  if (!u) throw notFound("User");
  return u;
}

export async function setRoles(db: Db, principal: Principal, userId: number, requested: RoleRequest[]) {
  const roles = validateRoles(requested);
  const organizationId = principal.organizationId;
  const u = await memberOf(db, organizationId, userId);
  if (u.isSignupUser) throw forbidden("The signup user's permissions cannot be changed");
  assertGrantable(roles, principal.permissions);
  await db.update(users).set({ roles }).where(eq(users.id, u.id)).run();
  return { message: "Roles updated" };
}

export async function setStatus(db: Db, organizationId: number, userId: number, status: "active" | "disabled") {
  const u = await memberOf(db, organizationId, userId);
  if (u.isSignupUser) throw forbidden("The signup user cannot be disabled");
  await db.update(users).set({ status }).where(eq(users.id, u.id)).run();
  return { message: status === "disabled" ? "User disabled" : "User enabled" };
}

export async function removeUser(db: Db, organizationId: number, userId: number, now: Date) {
  const u = await memberOf(db, organizationId, userId);
  if (u.isSignupUser) throw forbidden("The signup user cannot be removed");
  // Removal is irreversible; sessions go now, API tokens stop by the status check.
  await db.batch([
    db.update(users).set({ status: "removed", removedAt: now.toISOString() }).where(eq(users.id, u.id)),
    db.delete(sessions).where(eq(sessions.userId, u.id)),
  ]);
  return { message: "User removed" };
}

function invitationMail(config: Config, orgName: string, email: string, token: string, expiresAt: string) {
  const link = `${config.publicBaseUrl}/accept-invitation?token=${encodeURIComponent(token)}`;
  return {
    to: email,
    subject: `You are invited to ${orgName} on Trust-Plane`,
    kind: "invitation",
    body: [
      `You have been invited to join ${orgName} on Trust-Plane.`,
      "",
      `Accept the invitation: ${link}`,
      "",
      "Or with the API:",
      `  POST ${config.publicBaseUrl}/api/auth/invitations/accept`,
      `  {"token": "${token}", "password": "<at least 12 characters>"}`,
      "",
      `This invitation expires at ${expiresAt}.`,
    ].join("\n"),
  };
}

export function invitationView(inv: typeof invitations.$inferSelect, now: Date) {
  return {
    id: inv.id,
    email: inv.email,
    roles: inv.roles.map((r) => ({ module_name: r.module, role_name: r.role })),
    weekly_audit_report_enabled: inv.weeklyAuditReportEnabled,
    status: (inv.expiresAt <= now.toISOString() ? "expired" : "pending") as "pending" | "expired",
    sent_at: inv.sentAt,
    expires_at: inv.expiresAt,
    created_at: inv.createdAt,
  };
}

async function orgName(db: Db, organizationId: number) {
  return (await db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, organizationId)).get())?.name ?? "";
}

export async function invite(
  db: Db,
  config: Config,
  principal: Principal,
  input: { email: string; roles?: RoleRequest[]; weekly_audit_report_enabled?: boolean },
  now: Date,
) {
  const email = normalizeEmail(input.email);
  const roles = validateRoles(input.roles ?? []);
  // Inviting with roles is assigning roles: it needs manage_permissions too.
  if (roles.length && !principal.permissions.has("admin:manage_permissions")) {
    throw forbidden("Inviting with roles requires admin:manage_permissions");
  }
  assertGrantable(roles, principal.permissions);
  if (await db.select({ id: users.id }).from(users).where(eq(users.email, email)).get()) {
    throw conflict("A user with this email already exists");
  }
  const open = await db
    .select({ id: invitations.id })
    .from(invitations)
    .where(and(eq(invitations.organizationId, principal.organizationId), eq(invitations.email, email), isNull(invitations.acceptedAt)))
    .get();
  if (open) throw conflict(`An invitation for this email already exists (id ${open.id}); resend it instead`);

  const token = generateSecret("invitation");
  const expiresAt = new Date(now.getTime() + INVITATION_DAYS * 86_400_000).toISOString();
  const nowIso = now.toISOString();
  const mail = invitationMail(config, await orgName(db, principal.organizationId), email, token, expiresAt);
  const [inserted] = await db.batch([
    db
      .insert(invitations)
      .values({
        organizationId: principal.organizationId,
        email,
        roles,
        weeklyAuditReportEnabled: input.weekly_audit_report_enabled ?? false,
        tokenHash: await hashSecret(token),
        invitedByUserId: principal.userId,
        sentAt: nowIso,
        expiresAt,
        createdAt: nowIso,
      })
      .returning({ id: invitations.id }),
    enqueueMail(db, config, { ...mail, organizationId: principal.organizationId }, now),
  ]);
  return { id: inserted[0].id, expires_at: expiresAt, message: `Invitation sent to ${email}` };
}

export async function listInvitations(db: Db, organizationId: number, now: Date) {
  const rows = await db
    .select()
    .from(invitations)
    .where(and(eq(invitations.organizationId, organizationId), isNull(invitations.acceptedAt)))
    .orderBy(desc(invitations.createdAt), desc(invitations.id))
    .all();
  return rows.map((r) => invitationView(r, now));
}

export async function resendInvitation(db: Db, config: Config, organizationId: number, invitationId: number, now: Date) {
  const inv = await db
    .select()
    .from(invitations)
    .where(and(eq(invitations.id, invitationId), eq(invitations.organizationId, organizationId), isNull(invitations.acceptedAt)))
    .get();
  if (!inv) throw notFound("Invitation");
  const token = generateSecret("invitation");
  const expiresAt = new Date(now.getTime() + INVITATION_DAYS * 86_400_000).toISOString();
  const mail = invitationMail(config, await orgName(db, organizationId), inv.email, token, expiresAt);
  // The old token stops working: only the new hash is kept.
  await db.batch([
    db.update(invitations).set({ tokenHash: await hashSecret(token), sentAt: now.toISOString(), expiresAt }).where(eq(invitations.id, inv.id)),
    enqueueMail(db, config, { ...mail, organizationId }, now),
  ]);
  return { message: `Invitation resent to ${inv.email}`, expires_at: expiresAt };
}

export async function subscription(db: Db, organizationId: number) {
  const org = await db.select().from(organizations).where(eq(organizations.id, organizationId)).get();
  if (!org) throw notFound("Organization");
  const tier = org.tier as Tier;
  return { tier, limits: TIER_LIMITS[tier], usage: await usageOf(db, organizationId) };
}

export async function setTier(db: Db, organizationId: number, tier: Tier) {
  await db.update(organizations).set({ tier }).where(eq(organizations.id, organizationId)).run();
  return { message: `Subscription set to ${tier}`, ...(await subscription(db, organizationId)) };
}

export async function listAuditLogs(db: Db, organizationId: number, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    db
      .select({ log: auditLogs, email: users.email })
      .from(auditLogs)
      .leftJoin(users, eq(users.id, auditLogs.userId))
      .where(eq(auditLogs.organizationId, organizationId))
      .orderBy(desc(auditLogs.createdAt), desc(auditLogs.id))
      .limit(limit)
      .offset(offset)
      .all(),
    db.select({ n: count() }).from(auditLogs).where(eq(auditLogs.organizationId, organizationId)).get(),
  ]);
  return {
    audit_logs: rows.map(({ log, email }) => ({
      id: log.id,
      user_id: log.userId,
      user_email: email,
      token_id: log.tokenId,
      action: log.action,
      target_type: log.targetType,
      target_id: log.targetId,
      client_ip: log.clientIp,
      created_at: log.createdAt,
    })),
    total: total?.n ?? 0,
    limit,
    offset,
  };
}

export async function listOutbox(db: Db, organizationId: number, limit: number, offset: number) {
  const rows = await db
    .select()
    .from(mailOutbox)
    .where(eq(mailOutbox.organizationId, organizationId))
    .orderBy(desc(mailOutbox.id))
    .limit(limit)
    .offset(offset)
    .all();
  return {
    messages: rows.map((m) => ({
      id: m.id,
      to: m.toAddress,
      subject: m.subject,
      body: m.body,
      kind: m.kind,
      status: m.status,
      attempts: m.attempts,
      last_error: m.lastError,
      created_at: m.createdAt,
      sent_at: m.sentAt,
    })),
  };
}
