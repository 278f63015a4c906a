/**
 * Administration: users (active <-> disabled -> removed), invitations (pending ->
 * expired after 7 days; resend = new token, fresh expiry, new mail), role
 * assignments, subscription tier, audit log, and the development mail outbox.
 * The signup user cannot be disabled, removed or have roles changed (403).
 */
import { desc, eq, isNull, ne, sql } from "drizzle-orm";
import { auditLogs, invitations, mailOutbox, organizations, sessions, users, type RoleAssignment } from "../../db/schema/platform";
import type { Config } from "../../env";
import type { Principal } from "../../platform/context";
import { badRequest, conflict, forbidden, notFound, type ErrorDetail } from "../../platform/errors";
import { enqueueMail } from "../../platform/mailer";
import { readPage } from "../../platform/paging";
import { ASSIGNABLE_ROLES, findRole, type Permission } from "../../platform/permissions";
import { TIER_LIMITS, usageOf, type Tier } from "../../platform/quotas";
import { generateSecret, hashSecret } from "../../platform/secrets";
import type { Tenant } from "../../platform/tenant";
import { displayedRoles, normalizeEmail, usersWithFactor } from "../auth/contract";
import { hasPassword } from "../../platform/passwords";

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

export function userView(u: typeof users.$inferSelect, mfaEnabled: boolean) {
  return {
    id: u.id,
    email: u.email,
    status: u.status as "active" | "disabled",
    is_signup_user: u.isSignupUser,
    weekly_audit_report_enabled: u.weeklyAuditReportEnabled,
    created_at: u.createdAt,
    permissions: displayedRoles(u),
    mfa_enabled: mfaEnabled,
    sso_only: !hasPassword(u),
  };
}

export async function listUsers(t: Tenant) {
  const withFactor = await usersWithFactor(t.db, t.organizationId);
  return (await t.select(users, ne(users.status, "removed")).orderBy(users.id).all()).map((u) => userView(u, withFactor.has(u.id)));
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
async function memberOf(t: Tenant, userId: number) {
  const u = await t.first(users, eq(users.id, userId), ne(users.status, "removed"));
  if (!u) throw notFound("User");
  return u;
}

export async function setRoles(t: Tenant, principal: Principal, userId: number, requested: RoleRequest[]) {
  const roles = validateRoles(requested);
  const u = await memberOf(t, userId);
  if (u.isSignupUser) throw forbidden("The signup user's permissions cannot be changed");
  assertGrantable(roles, principal.permissions);
  await t.update(users, { roles }, eq(users.id, u.id)).run();
  return { message: "Roles updated" };
}

export async function setStatus(t: Tenant, userId: number, status: "active" | "disabled") {
  const u = await memberOf(t, userId);
  if (u.isSignupUser) throw forbidden("The signup user cannot be disabled");
  await t.update(users, { status }, eq(users.id, u.id)).run();
  return { message: status === "disabled" ? "User disabled" : "User enabled" };
}

export async function removeUser(t: Tenant, userId: number, now: Date) {
  const u = await memberOf(t, userId);
  if (u.isSignupUser) throw forbidden("The signup user cannot be removed");
  // Removal is irreversible; sessions go now, API tokens stop by the status check.
  await t.db.batch([
    t.update(users, { status: "removed", removedAt: now.toISOString() }, eq(users.id, u.id)),
    t.delete(sessions, eq(sessions.userId, u.id)),
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

async function orgName(t: Tenant) {
  return (await t.db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, t.organizationId)).get())?.name ?? "";
}

const OPEN_INVITATION = "An invitation for this email already exists; resend it instead";

/**
 * Invites `email`. One open invitation per address and organization: a unique index
 * decides between parallel invitations (one 201, the others 409).
 */
export async function invite(
  t: Tenant,
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
  // Emails are unique across the service (login is by email alone), not per organization.
  if (await t.db.select({ id: users.id }).from(users).where(eq(users.email, email)).get()) {
    throw conflict("A user with this email already exists");
  }
  const open = await t.first(invitations, eq(invitations.email, email), isNull(invitations.acceptedAt));
  if (open) throw conflict(`An invitation for this email already exists (id ${open.id}); resend it instead`);

  const token = generateSecret("invitation");
  const expiresAt = new Date(now.getTime() + INVITATION_DAYS * 86_400_000).toISOString();
  const nowIso = now.toISOString();
  const mail = invitationMail(config, await orgName(t), email, token, expiresAt);
  const tokenHash = await hashSecret(token);
  const [inserted] = await t.run(() => t.db.batch([
    t
      .insert(invitations, {
        email,
        roles,
        weeklyAuditReportEnabled: input.weekly_audit_report_enabled ?? false,
        tokenHash,
        invitedByUserId: principal.userId,
        sentAt: nowIso,
        expiresAt,
        createdAt: nowIso,
      })
      .returning({ id: invitations.id }),
    enqueueMail(t.db, config, { ...mail, organizationId: t.organizationId }, now),
  ]), { duplicate: OPEN_INVITATION });
  return { id: inserted[0].id, expires_at: expiresAt, message: `Invitation sent to ${email}` };
}

export async function listInvitations(t: Tenant, now: Date) {
  const rows = await t.select(invitations, isNull(invitations.acceptedAt)).orderBy(desc(invitations.createdAt), desc(invitations.id)).all();
  return rows.map((r) => invitationView(r, now));
}

export async function resendInvitation(t: Tenant, config: Config, invitationId: number, now: Date) {
  const inv = await t.first(invitations, eq(invitations.id, invitationId), isNull(invitations.acceptedAt));
  if (!inv) throw notFound("Invitation");
  const token = generateSecret("invitation");
  const expiresAt = new Date(now.getTime() + INVITATION_DAYS * 86_400_000).toISOString();
  const mail = invitationMail(config, await orgName(t), inv.email, token, expiresAt);
  const tokenHash = await hashSecret(token);
  // The old token stops working: only the new hash is kept.
  await t.db.batch([
    t.update(invitations, { tokenHash, sentAt: now.toISOString(), expiresAt }, eq(invitations.id, inv.id)),
    enqueueMail(t.db, config, { ...mail, organizationId: t.organizationId }, now),
  ]);
  return { message: `Invitation resent to ${inv.email}`, expires_at: expiresAt };
}

export async function subscription(t: Tenant) {
  const tier: Tier = await t.tier();
  return { tier, limits: TIER_LIMITS[tier], usage: await usageOf(t.db, t.organizationId) };
}

/** The organizations row is the tenant itself (no organization_id column): addressed by its id. */
export async function setTier(t: Tenant, tier: Tier) {
  await t.db.update(organizations).set({ tier }).where(eq(organizations.id, t.organizationId)).run();
  return { message: `Subscription set to ${tier}`, tier, limits: TIER_LIMITS[tier], usage: await usageOf(t.db, t.organizationId) };
}

export async function listAuditLogs(t: Tenant, limit: number, offset: number) {
  const { rows, total } = await readPage(
    t.db
      .select({ log: auditLogs, email: users.email })
      .from(auditLogs)
      .leftJoin(users, eq(users.id, auditLogs.userId))
      .where(t.where(auditLogs))
      .orderBy(desc(auditLogs.createdAt), desc(auditLogs.id))
      .limit(limit)
      .offset(offset),
    t.countQuery(auditLogs),
  );
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
    total,
    limit,
    offset,
  };
}

export async function listOutbox(t: Tenant, limit: number, offset: number) {
  // Attachments are listed by name, type and size: their content can be large.
  const rows = await t.db
    .select({
      id: mailOutbox.id,
      toAddress: mailOutbox.toAddress,
      subject: mailOutbox.subject,
      body: mailOutbox.body,
      kind: mailOutbox.kind,
      status: mailOutbox.status,
      attempts: mailOutbox.attempts,
      lastError: mailOutbox.lastError,
      createdAt: mailOutbox.createdAt,
      sentAt: mailOutbox.sentAt,
      attachments: sql<string | null>`(SELECT json_group_array(json_object('filename', json_extract(value, '$.filename'),
        'content_type', json_extract(value, '$.content_type'), 'size', json_extract(value, '$.size'))) FROM json_each(${mailOutbox.attachments}))`,
    })
    .from(mailOutbox)
    .where(t.where(mailOutbox))
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
      attachments: m.attachments ? (JSON.parse(m.attachments) as { filename: string; content_type: string; size: number }[]) : [],
    })),
  };
}
