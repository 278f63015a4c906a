/**
 * Accounts (docs/decisions.md#accounts-login-and-sessions): signup, login, logout, me, invitation acceptance.
 * Sessions are bearer tokens (`tps_`) stored hashed like API tokens, valid 12 h.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { invitations, organizations, sessions, users, type RoleAssignment } from "../../db/schema/platform";
import type { Principal } from "../../platform/context";
import { isUniqueViolation } from "../../platform/db-errors";
import { ApiError, badRequest, conflict, invalidField, unauthorized } from "../../platform/errors";
import { DUMMY_PASSWORD_HASH, hashPassword, hasPassword, verifyPassword } from "../../platform/passwords";
import { ASSIGNABLE_ROLES, MONITORING_MODULES } from "../../platform/permissions";
import { hashSecret, parseSecret } from "../../platform/secrets";
import { normalizeEmail } from "./email";
import { factorsOf, factorsView, hasFactor } from "./mfa/factors";
import { beginSecondFactor } from "./mfa/second-step";
import { endOtherSessions, insertSession, newSession, sessionRow, type SignInClient, type SignInMethod } from "./sessions";
import { passwordRefusedBySso, SSO_REQUIRED_MESSAGE } from "./sso/enforcement";
import { throttledSignIn, tooManyAttempts, type ThrottleContext } from "./throttle";

export { normalizeEmail } from "./email";
export { SESSION_HOURS } from "./sessions";

/** Everything a sign-in needs to know about its request. */
export interface SignInContext extends ThrottleContext {
  userAgent: string | null;
}

const clientOf = (ctx: SignInContext): SignInClient => ({ clientIp: ctx.clientIp, userAgent: ctx.userAgent });

export async function signup(ctx: SignInContext, input: { organization_name: string; email: string; password: string }) {
  const { db, now } = ctx;
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
      insertSession(
        db,
        sessionRow({
          organizationId: sql`(SELECT organization_id FROM users WHERE id = last_insert_rowid())`,
          userId: sql`last_insert_rowid()`,
          session,
          client: clientOf(ctx),
          method: "signup",
          now,
        }),
      ),
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
const UNDER_ATTACK =
  "Too many failed sign-ins to this account from many addresses: for now a password alone signs in only from an address this account used before. Use your second factor or single sign-on, or try again later; the owner has been told by email.";

export type User = typeof users.$inferSelect;

export type LoginResult =
  | { kind: "session"; user: User; method: SignInMethod; session: { token: string; expires_at: string } }
  | { kind: "second_factor"; user: User; challenge: Awaited<ReturnType<typeof beginSecondFactor>> };

/**
 * The password step. A user with a second factor gets the second step's token instead of
 * a session; a member the organization's SSO enforcement covers is refused (after the
 * password check, so the refusal tells nothing to whoever lacks the password). A member
 * without a factor in an organization that requires one gets a session that can only
 * enroll one.
 */
export async function login(ctx: SignInContext, input: { email: string; password: string }): Promise<LoginResult> {
  const { db, config, now } = ctx;
  return throttledSignIn<LoginResult>(ctx, input.email, "password", async (gate) => {
    const user = await db.select().from(users).where(eq(users.email, normalizeEmail(input.email))).get();
    const factors = user ? await factorsOf(db, user.id) : null;
    const withSecondFactor = !!(factors && hasFactor(factors));
    // Always run PBKDF2, so response time does not reveal whether the email exists.
    const ok = await verifyPassword(input.password, user && hasPassword(user) ? { hash: user.passwordHash, salt: user.passwordSalt, iterations: user.passwordIterations } : DUMMY_PASSWORD_HASH);
    // Under a distributed attack a password alone no longer signs in from a new address. The
    // refusal is the same for a right and a wrong password, and for accounts with and without
    // a second factor, so it tells neither; only the right password of an account with a
    // second factor goes on to that step (the owner is never kept out).
    if (gate.ceilingReached && !gate.knownAddress && !(ok && withSecondFactor)) throw tooManyAttempts(3600, UNDER_ATTACK);
    if (!user || !ok || user.status !== "active" || !hasPassword(user)) throw unauthorized(BAD_LOGIN);
    if (await passwordRefusedBySso(db, user)) throw new ApiError("sso_required", SSO_REQUIRED_MESSAGE);
    if (withSecondFactor) {
      // The password was right but the sign-in is not complete: neither a failure nor a success yet.
      return { value: { kind: "second_factor" as const, user, challenge: await beginSecondFactor(db, config, user, factors, ctx.clientIp, now) }, outcome: "cancelled" };
    }
    const org = await db.select({ requireMfa: organizations.requireMfa }).from(organizations).where(eq(organizations.id, user.organizationId)).get();
    const session = await newSession(now);
    await insertSession(
      db,
      sessionRow({ organizationId: user.organizationId, userId: user.id, session, client: clientOf(ctx), method: "password", now, mfaEnrollmentRequired: !!org?.requireMfa }),
    ).run();
    const restricted = org?.requireMfa ? { mfa_enrollment_required: true } : {};
    return { value: { kind: "session" as const, user, method: "password" as const, session: { token: session.token, expires_at: session.expiresAt, ...restricted } }, outcome: "succeeded" };
  });
}

/** A session for a user whose sign-in completed elsewhere (second factor, SSO). */
export async function startSession(ctx: SignInContext, user: User, method: SignInMethod) {
  const org = await ctx.db.select({ requireMfa: organizations.requireMfa }).from(organizations).where(eq(organizations.id, user.organizationId)).get();
  // SSO: the identity provider decides how people authenticate; the policy asks nothing more of them.
  const mfaEnrollmentRequired = method !== "sso" && !!org?.requireMfa && !hasFactor(await factorsOf(ctx.db, user.id));
  const session = await newSession(ctx.now);
  await insertSession(ctx.db, sessionRow({ organizationId: user.organizationId, userId: user.id, session, client: clientOf(ctx), method, now: ctx.now, mfaEnrollmentRequired })).run();
  return { token: session.token, expires_at: session.expiresAt, ...(mfaEnrollmentRequired ? { mfa_enrollment_required: true } : {}) };
}

/** Changes the caller's password (the current one proves it is them) and ends their other sessions. */
export async function changePassword(ctx: SignInContext, principal: Principal, input: { current_password: string; new_password: string }) {
  const { db } = ctx;
  const user = await db.select().from(users).where(eq(users.id, principal.userId)).get();
  if (!user) throw unauthorized();
  if (!hasPassword(user)) throw conflict("Your account signs in through single sign-on and has no password");
  await throttledSignIn(ctx, user.email, "password", async () => {
    const ok = await verifyPassword(input.current_password, { hash: user.passwordHash, salt: user.passwordSalt, iterations: user.passwordIterations });
    if (!ok) throw invalidField("current_password", "This is not your current password", "Wrong password");
    return { value: null, outcome: "succeeded" };
  });
  const pw = await hashPassword(input.new_password);
  await db.batch([
    db.update(users).set({ passwordHash: pw.hash, passwordSalt: pw.salt, passwordIterations: pw.iterations }).where(eq(users.id, user.id)),
    endOtherSessions(db, user.id, principal.sessionId),
  ]);
  return { message: "Password changed; your other sessions have ended" };
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
    organization: { id: org.id, name: org.name, tier: org.tier, created_at: org.createdAt, require_mfa: org.requireMfa },
    credential: principal.kind,
    mfa: factorsView(await factorsOf(db, user.id)),
    mfa_enrollment_required: principal.mfaEnrollmentRequired,
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

export async function acceptInvitation(ctx: SignInContext, input: { token: string; password: string }) {
  const { db, now } = ctx;
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
      insertSession(
        db,
        sessionRow({
          organizationId: inv.organizationId,
          userId: sql`(SELECT accepted_user_id FROM invitations WHERE id = ${inv.id})`,
          session,
          client: clientOf(ctx),
          method: "invitation",
          now,
        }),
      ),
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
