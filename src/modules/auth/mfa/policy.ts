/**
 * The organization's side of second factors: the policy that every member must sign in
 * with one, and an administrator's reset of a member's factors (a lost phone).
 *
 * Turning the policy on takes effect at once: every session of a member without a
 * factor is restricted to enrolling one (src/platform/route.ts), and so is each of their
 * next sign-ins until they have one. Members who sign in through the organization's
 * single sign-on are not restricted: their identity provider decides how they
 * authenticate. The administrator turning it on must have a factor (they would lock
 * themselves into enrollment otherwise).
 */
import { and, eq, inArray, ne, notInArray, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { authChallenges, passkeys, recoveryCodes, totpCredentials } from "../../../db/schema/identity";
import { organizations, sessions, users } from "../../../db/schema/platform";
import type { Config } from "../../../env";
import type { Principal } from "../../../platform/context";
import { conflict, notFound } from "../../../platform/errors";
import { enqueueMail } from "../../../platform/mailer";
import { endOtherSessions } from "../sessions";
import { factorsOf, hasFactor, usersWithFactor } from "./factors";

export async function securityPolicy(db: Db, organizationId: number) {
  const org = await db.select({ requireMfa: organizations.requireMfa }).from(organizations).where(eq(organizations.id, organizationId)).get();
  const members = await db.select({ id: users.id }).from(users).where(and(eq(users.organizationId, organizationId), eq(users.status, "active"))).all();
  const withFactor = await usersWithFactor(db, organizationId);
  return { require_mfa: !!org?.requireMfa, members_without_mfa: members.filter((m) => !withFactor.has(m.id)).length };
}

export async function setSecurityPolicy(db: Db, principal: Principal, input: { require_mfa: boolean }) {
  if (input.require_mfa && !hasFactor(await factorsOf(db, principal.userId))) {
    throw conflict("Set up a second factor for yourself first (Account › Security): the policy would otherwise restrict your own session to enrolling one");
  }
  const orgId = principal.organizationId;
  const withFactor = [...(await usersWithFactor(db, orgId))];
  await db.batch([
    db.update(organizations).set({ requireMfa: input.require_mfa }).where(eq(organizations.id, orgId)),
    input.require_mfa
      ? db
          .update(sessions)
          .set({ mfaEnrollmentRequired: true })
          .where(and(eq(sessions.organizationId, orgId), ne(sessions.signInMethod, "sso"), withFactor.length ? notInArray(sessions.userId, withFactor) : sql`1`))
      : db.update(sessions).set({ mfaEnrollmentRequired: false }).where(eq(sessions.organizationId, orgId)),
  ]);
  return securityPolicy(db, orgId);
}

/**
 * Removes every factor of a member (app, passkeys, recovery codes) and ends their
 * sessions; they are told by email. Under the policy their next sign-in enrolls anew.
 */
export async function resetMemberFactors(db: Db, config: Config, principal: Principal, userId: number, now: Date) {
  const member = await db
    .select()
    .from(users)
    .where(and(eq(users.id, userId), eq(users.organizationId, principal.organizationId), ne(users.status, "removed")))
    .get();
  if (!member) throw notFound("User");
  const f = await factorsOf(db, member.id);
  if (!hasFactor(f) && !f.recoveryCodesLeft) throw conflict("This member has no second factor to reset");
  const org = await db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, principal.organizationId)).get();
  await db.batch([
    db.delete(totpCredentials).where(eq(totpCredentials.userId, member.id)),
    db.delete(passkeys).where(eq(passkeys.userId, member.id)),
    db.delete(recoveryCodes).where(eq(recoveryCodes.userId, member.id)),
    db.delete(authChallenges).where(and(eq(authChallenges.userId, member.id), inArray(authChallenges.purpose, ["mfa_login", "passkey_registration"]))),
    // Their own reset (an administrator resetting themselves) keeps the calling session.
    endOtherSessions(db, member.id, member.id === principal.userId ? principal.sessionId : null),
    enqueueMail(
      db,
      config,
      {
        organizationId: principal.organizationId,
        to: member.email,
        subject: "Trust-Plane: your second factors were reset",
        kind: "security_notice",
        body: [
          `An administrator of ${org?.name ?? "your organization"} (${principal.userEmail}) removed the second factors of your Trust-Plane account (${member.email}): the authenticator app, passkeys and recovery codes.`,
          "",
          "You have been signed out everywhere. Sign in with your password and set up a second factor again under Account › Security.",
          "",
          "If you did not ask for this, tell your administrator and change your password.",
        ].join("\n"),
      },
      now,
    ),
  ]);
  return { message: "Second factors removed; the member was signed out and told by email" };
}
