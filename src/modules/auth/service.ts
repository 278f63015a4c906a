/**
 * Accounts (docs/decisions.md#accounts-login-and-sessions): signup, login, logout, me, invitation acceptance.
 * Sessions are bearer tokens (`tps_`) stored hashed like API tokens, valid 12 h.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { invitations, organizations, sessions, users, type RoleAssignment } from "../../db/schema/platform";
import type { Principal } from "../../platform/context";
import { isUniqueViolation } from "../../platform/db-errors";
import { ApiError, badRequest, conflict, unauthorized } from "../../platform/errors";
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from "../../platform/passwords";
import { ASSIGNABLE_ROLES, MONITORING_MODULES } from "../../platform/permissions";
import { generateSecret, hashSecret, parseSecret } from "../../platform/secrets";

export const SESSION_HOURS = 12;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

async function newSession(now: Date) {
  const token = generateSecret("session");
  return {
    token,
    tokenHash: await hashSecret(token),
    expiresAt: new Date(now.getTime() + SESSION_HOURS * 3_600_000).toISOString(),
  };
}

export async function signup(db: Db, input: { organization_name: string; email: string; password: string }, now: Date) {
  const email = normalizeEmail(input.email);
  if (await db.select({ id: users.id }).from(users).where(eq(users.email, email)).get()) {
    throw conflict("An account with this email already exists");
  }
  const pw = await hashPassword(input.password);
  const session = await newSession(now);
  const nowIso = now.toISOString();
  // One batch = one transaction: the organization, its signup user and the first
  // session exist together or not at all. last_insert_rowid() chains the ids.
  try {
    await db.batch([
      db.insert(organizations).values({ name: input.organization_name, tier: "free", createdAt: nowIso }),
      db.insert(users).values({
        organizationId: sql`last_insert_rowid()`,
        email,
        passwordHash: pw.hash,
        passwordSalt: pw.salt,
        passwordIterations: pw.iterations,
        isSignupUser: true,
        roles: [],
        weeklyAuditReportEnabled: true,
        createdAt: nowIso,
      }),
      db.insert(sessions).values({
        organizationId: sql`(SELECT organization_id FROM users WHERE id = last_insert_rowid())`,
        userId: sql`last_insert_rowid()`,
        tokenHash: session.tokenHash,
        expiresAt: session.expiresAt,
        createdAt: nowIso,
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict("An account with this email already exists");
    throw err;
  }
  const user = await db.select().from(users).where(eq(users.email, email)).get();
  if (!user) throw new Error("signup: user row missing after commit");
  return { organization_id: user.organizationId, user_id: user.id, token: session.token, expires_at: session.expiresAt };
}

const BAD_LOGIN = "Invalid email or password";

export async function login(db: Db, input: { email: string; password: string }, now: Date) {
  const user = await db.select().from(users).where(eq(users.email, normalizeEmail(input.email))).get();
  // Always run PBKDF2, so response time does not reveal whether the email exists.
  const ok = await verifyPassword(
    input.password,
    user ? { hash: user.passwordHash, salt: user.passwordSalt, iterations: user.passwordIterations } : DUMMY_PASSWORD_HASH,
  );
  if (!user || !ok || user.status !== "active") throw unauthorized(BAD_LOGIN);
  const session = await newSession(now);
  await db
    .insert(sessions)
    .values({ organizationId: user.organizationId, userId: user.id, tokenHash: session.tokenHash, expiresAt: session.expiresAt, createdAt: now.toISOString() })
    .run();
  return { user, result: { token: session.token, expires_at: session.expiresAt } };
}

export async function logout(db: Db, principal: Principal) {
  if (principal.kind !== "session" || principal.sessionId === null) {
    throw badRequest("Logout ends a login session; revoke an API token with DELETE /api/api-tokens/{token_id}");
  }
  await db.delete(sessions).where(eq(sessions.id, principal.sessionId)).run();
  return { message: "Logged out" };
}

/** The role list shown for a user; the signup user is Administrator of every module. */
export function displayedRoles(user: { isSignupUser: boolean; roles: RoleAssignment[] }) {
  if (user.isSignupUser) {
    return [...MONITORING_MODULES, "api-tokens", "admin", "lists"].map((module) => ({ module, role: "Administrator" }));
  }
  return user.roles.map((r) => ({ module: r.module, role: r.role }));
}

export async function me(db: Db, principal: Principal) {
  const user = await db.select().from(users).where(eq(users.id, principal.userId)).get();
  const org = await db.select().from(organizations).where(eq(organizations.id, principal.organizationId)).get();
  if (!user || !org) throw unauthorized();
  return {
    user: {
      id: user.id,
      email: user.email,
      status: user.status,
      is_signup_user: user.isSignupUser,
      created_at: user.createdAt,
      permissions: displayedRoles(user),
      weekly_audit_report_enabled: user.weeklyAuditReportEnabled,
    },
    organization: { id: org.id, name: org.name, tier: org.tier, created_at: org.createdAt },
    credential: principal.kind,
    permissions: [...principal.permissions].sort(),
  };
}

/** The caller's own preferences (today: whether the weekly audit report is mailed to them). */
export async function preferences(db: Db, principal: Principal) {
  const user = await db.select({ weekly: users.weeklyAuditReportEnabled }).from(users).where(eq(users.id, principal.userId)).get();
  if (!user) throw unauthorized();
  return { weekly_audit_report_enabled: user.weekly };
}

export async function updatePreferences(db: Db, principal: Principal, input: { weekly_audit_report_enabled?: boolean }) {
  if (input.weekly_audit_report_enabled !== undefined) {
    await db
      .update(users)
      .set({ weeklyAuditReportEnabled: input.weekly_audit_report_enabled })
      .where(and(eq(users.id, principal.userId), eq(users.organizationId, principal.organizationId)))
      .run();
  }
  return preferences(db, principal);
}

export async function acceptInvitation(db: Db, input: { token: string; password: string }, now: Date) {
  const invalid = new ApiError("invitation_invalid", "The invitation is invalid, expired or already used");
  if (parseSecret(input.token) !== "invitation") throw invalid;
  const inv = await db.select().from(invitations).where(eq(invitations.tokenHash, await hashSecret(input.token))).get();
  if (!inv || inv.acceptedAt || inv.expiresAt <= now.toISOString()) throw invalid;
  if (await db.select({ id: users.id }).from(users).where(eq(users.email, inv.email)).get()) {
    throw conflict("An account with this email already exists");
  }
  // Roles may have been renamed since the invitation was sent: keep only valid ones.
  const roles = inv.roles.filter((r) => ASSIGNABLE_ROLES[r.module]?.some((d) => d.name === r.role));
  const pw = await hashPassword(input.password);
  const session = await newSession(now);
  const nowIso = now.toISOString();
  try {
    await db.batch([
      db.insert(users).values({
        organizationId: inv.organizationId,
        email: inv.email,
        passwordHash: pw.hash,
        passwordSalt: pw.salt,
        passwordIterations: pw.iterations,
        roles,
        weeklyAuditReportEnabled: inv.weeklyAuditReportEnabled,
        createdAt: nowIso,
      }),
      db
        .update(invitations)
        .set({ acceptedAt: nowIso, acceptedUserId: sql`last_insert_rowid()` })
        .where(and(eq(invitations.id, inv.id), isNull(invitations.acceptedAt))),
      db.insert(sessions).values({
        organizationId: inv.organizationId,
        userId: sql`(SELECT accepted_user_id FROM invitations WHERE id = ${inv.id})`,
        tokenHash: session.tokenHash,
        expiresAt: session.expiresAt,
        createdAt: nowIso,
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict("An account with this email already exists");
    throw err;
  }
  const user = await db.select().from(users).where(eq(users.email, inv.email)).get();
  if (!user) throw new Error("accept: user row missing after commit");
  return {
    organization_id: user.organizationId,
    user_id: user.id,
    token: session.token,
    expires_at: session.expiresAt,
    invitation_id: inv.id,
  };
}
