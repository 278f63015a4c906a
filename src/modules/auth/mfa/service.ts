/**
 * A user's own second factors: an authenticator app (TOTP), passkeys, and the recovery
 * codes that stand in for them. Every change ends the user's other sessions (whoever
 * else was signed in must sign in again, now with the new factor) and lifts the
 * enrollment restriction of the calling session (src/platform/route.ts). A factor the
 * organization's policy depends on cannot be removed while it is the last one.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import type { Db } from "../../../db/client";
import { authChallenges, passkeys, totpCredentials } from "../../../db/schema/identity";
import { organizations, sessions } from "../../../db/schema/platform";
import type { Config } from "../../../env";
import type { Principal } from "../../../platform/context";
import { isUniqueViolation } from "../../../platform/db-errors";
import { conflict, invalidField, notFound } from "../../../platform/errors";
import { seal, unseal } from "../../../platform/sealed";
import { sha256Hex } from "../../../platform/secrets";
import { endOtherSessions } from "../sessions";
import { consumeRecoveryCode, deleteRecoveryCodes, factorsOf, factorsView, hasFactor, newRecoveryCodes, replaceRecoveryCodes } from "./factors";
import { base32Decode, base32Encode, matchTotp, newTotpSecret, otpauthUri } from "./totp";
import { challengeOf, registrationOptions, relyingParty, verifyRegistration } from "./webauthn";

export const TOTP_ISSUER = "Trust-Plane";
/** How long a passkey registration may take between the options and the browser's answer. */
export const REGISTRATION_TTL_MS = 5 * 60_000;

type Ctx = { db: Db; config: Config; principal: Principal; now: Date };

/** Statements every factor change ends with: other sessions end, this one may do everything again. */
function afterFactorChange({ db, principal }: Ctx) {
  return [
    endOtherSessions(db, principal.userId, principal.sessionId),
    db.update(sessions).set({ mfaEnrollmentRequired: false }).where(eq(sessions.id, principal.sessionId ?? -1)),
  ] as const;
}

export async function factorsOfCaller({ db, principal }: Ctx) {
  return factorsView(await factorsOf(db, principal.userId));
}

// ---------------------------------------------------------------------------- TOTP

/** Starts (or restarts) enrollment: a new secret, not a factor until a code proves the app has it. */
export async function startTotp(ctx: Ctx) {
  const { db, config, principal, now } = ctx;
  const secret = newTotpSecret();
  try {
    await db.batch([
      db.delete(totpCredentials).where(and(eq(totpCredentials.userId, principal.userId), isNull(totpCredentials.confirmedAt))),
      db.insert(totpCredentials).values({
        organizationId: principal.organizationId,
        userId: principal.userId,
        secretSealed: await seal(config.secretsKey, base32Encode(secret)),
        createdAt: now.toISOString(),
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict("An authenticator app is already set up; remove it first (DELETE /api/auth/mfa/totp)");
    throw err;
  }
  return {
    secret: base32Encode(secret),
    otpauth_uri: otpauthUri({ secret, issuer: TOTP_ISSUER, account: principal.userEmail }),
    issuer: TOTP_ISSUER,
    account: principal.userEmail,
  };
}

async function totpRow(db: Db, userId: number) {
  return db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId)).get();
}

/** Completes enrollment with a code from the app; returns the ten recovery codes (shown this once). */
export async function confirmTotp(ctx: Ctx, code: string) {
  const { db, config, principal, now } = ctx;
  const row = await totpRow(db, principal.userId);
  if (!row) throw notFound("Authenticator enrollment (start it with POST /api/auth/mfa/totp)");
  if (row.confirmedAt) throw conflict("The authenticator app is already set up");
  const step = await matchTotp(base32Decode(await unseal(config.secretsKey, row.secretSealed)), code, now.getTime(), 0);
  if (step === null) throw invalidField("code", "This is not the app's current code: check the phone's clock and type the 6 digits shown now", "Wrong code");
  const codes = newRecoveryCodes();
  const confirm = db
    .update(totpCredentials)
    .set({ confirmedAt: now.toISOString(), lastUsedStep: step })
    .where(and(eq(totpCredentials.id, row.id), isNull(totpCredentials.confirmedAt)));
  await db.batch([confirm, ...(await replaceRecoveryCodes(db, principal.organizationId, principal.userId, codes, now)), ...afterFactorChange(ctx)]);
  return { recovery_codes: codes };
}

/**
 * Accepts a TOTP code of the user's app once: records its step so it cannot be used
 * again (one statement, so two racing uses of one code cannot both succeed).
 */
export async function useTotpCode(db: Db, config: Config, userId: number, code: string, now: Date): Promise<boolean> {
  const row = await totpRow(db, userId);
  if (!row?.confirmedAt) return false;
  const step = await matchTotp(base32Decode(await unseal(config.secretsKey, row.secretSealed)), code, now.getTime(), row.lastUsedStep);
  if (step === null) return false;
  const taken = await db
    .update(totpCredentials)
    .set({ lastUsedStep: step })
    .where(and(eq(totpCredentials.id, row.id), eq(totpCredentials.lastUsedStep, row.lastUsedStep)))
    .returning({ id: totpCredentials.id })
    .all();
  return taken.length === 1;
}

async function assertNotLastRequiredFactor(ctx: Ctx, removing: "totp" | "passkey") {
  const org = await ctx.db.select({ requireMfa: organizations.requireMfa }).from(organizations).where(eq(organizations.id, ctx.principal.organizationId)).get();
  if (!org?.requireMfa) return;
  const f = await factorsOf(ctx.db, ctx.principal.userId);
  const left = removing === "totp" ? { ...f, totp: false } : { ...f, passkeys: f.passkeys - 1 };
  if (!hasFactor(left)) throw conflict("Your organization requires a second factor: add another one before removing this one");
}

/** Removes the app, proven by one of its codes or a recovery code. */
export async function removeTotp(ctx: Ctx, proof: { code?: string; recovery_code?: string }) {
  const { db, config, principal, now } = ctx;
  const row = await totpRow(db, principal.userId);
  if (!row?.confirmedAt) throw notFound("Authenticator app");
  await assertNotLastRequiredFactor(ctx, "totp");
  const proven = proof.code
    ? await useTotpCode(db, config, principal.userId, proof.code, now)
    : proof.recovery_code
      ? await consumeRecoveryCode(db, principal.userId, proof.recovery_code, now)
      : false;
  if (!proven) {
    throw proof.recovery_code && !proof.code
      ? invalidField("recovery_code", "This recovery code is wrong or was used already", "Wrong code")
      : invalidField("code", "This is not the app's current code (or it was used already)", "Wrong code");
  }
  const f = await factorsOf(db, principal.userId);
  const lastFactor = f.passkeys === 0;
  await db.batch([
    db.delete(totpCredentials).where(eq(totpCredentials.id, row.id)),
    // Recovery codes stand in for factors; with none left they would be a password of their own.
    ...(lastFactor ? [deleteRecoveryCodes(db, principal.userId)] : []),
    ...afterFactorChange(ctx),
  ]);
  return factorsView(await factorsOf(db, principal.userId));
}

/** New recovery codes (the old ones stop working); only for a user with a factor. */
export async function regenerateRecoveryCodes(ctx: Ctx) {
  const { db, principal, now } = ctx;
  if (!hasFactor(await factorsOf(db, principal.userId))) throw conflict("Recovery codes belong to a second factor: set one up first");
  const codes = newRecoveryCodes();
  await db.batch([...(await replaceRecoveryCodes(db, principal.organizationId, principal.userId, codes, now))]);
  return { recovery_codes: codes };
}

// ------------------------------------------------------------------------ Passkeys

async function passkeysOf(db: Db, userId: number) {
  return db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(passkeys.id).all();
}

export function passkeyView(p: typeof passkeys.$inferSelect) {
  return {
    id: p.id,
    name: p.name,
    created_at: p.createdAt,
    last_used_at: p.lastUsedAt,
    device_type: p.deviceType as "singleDevice" | "multiDevice",
    backed_up: p.backedUp,
  };
}

export async function listPasskeys(ctx: Ctx) {
  return { passkeys: (await passkeysOf(ctx.db, ctx.principal.userId)).map(passkeyView) };
}

/** The options for the browser's `navigator.credentials.create()`; the challenge is kept for 5 minutes. */
export async function passkeyRegistrationOptions(ctx: Ctx) {
  const { db, config, principal, now } = ctx;
  const options = await registrationOptions(relyingParty(config), { id: principal.userId, email: principal.userEmail }, await passkeysOf(db, principal.userId));
  await db.insert(authChallenges).values({
    organizationId: principal.organizationId,
    userId: principal.userId,
    purpose: "passkey_registration",
    tokenHash: await sha256Hex(`passkey_registration:${options.challenge}`),
    challenge: options.challenge,
    expiresAt: new Date(now.getTime() + REGISTRATION_TTL_MS).toISOString(),
    createdAt: now.toISOString(),
  });
  return options;
}

/** Registers the passkey the browser created; the first factor of a user also brings recovery codes. */
export async function registerPasskey(ctx: Ctx, input: { name: string; response: RegistrationResponseJSON }) {
  const { db, config, principal, now } = ctx;
  const challenge = challengeOf(input.response);
  const pending =
    challenge &&
    (await db
      .select()
      .from(authChallenges)
      .where(and(eq(authChallenges.tokenHash, await sha256Hex(`passkey_registration:${challenge}`)), eq(authChallenges.userId, principal.userId)))
      .get());
  if (!pending || pending.consumedAt || pending.expiresAt <= now.toISOString()) {
    throw invalidField("response", "This answers no registration of yours that is still open (they last 5 minutes): start again", "Unknown or expired registration");
  }
  let verified: Awaited<ReturnType<typeof verifyRegistration>>;
  try {
    verified = await verifyRegistration(relyingParty(config), pending.challenge!, input.response);
  } catch (err) {
    throw invalidField("response", `The authenticator's answer was refused: ${err instanceof Error ? err.message : String(err)}`, "Passkey not verified");
  }
  if (!verified) throw invalidField("response", "The authenticator's answer could not be verified", "Passkey not verified");
  const firstFactor = !hasFactor(await factorsOf(db, principal.userId));
  const codes = firstFactor ? newRecoveryCodes() : null;
  try {
    await db.batch([
      db.update(authChallenges).set({ consumedAt: now.toISOString() }).where(and(eq(authChallenges.id, pending.id), isNull(authChallenges.consumedAt))),
      db.insert(passkeys).values({
        organizationId: principal.organizationId,
        userId: principal.userId,
        name: input.name,
        credentialId: verified.credentialId,
        publicKey: verified.publicKey,
        counter: verified.counter,
        transports: verified.transports,
        deviceType: verified.deviceType,
        backedUp: verified.backedUp,
        createdAt: now.toISOString(),
      }),
      ...(codes ? await replaceRecoveryCodes(db, principal.organizationId, principal.userId, codes, now) : []),
      ...afterFactorChange(ctx),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict("This passkey is registered already");
    throw err;
  }
  const created = await db.select().from(passkeys).where(eq(passkeys.credentialId, verified.credentialId)).get();
  return { passkey: passkeyView(created!), recovery_codes: codes };
}

export async function renamePasskey(ctx: Ctx, id: number, name: string) {
  const updated = await ctx.db
    .update(passkeys)
    .set({ name })
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, ctx.principal.userId)))
    .returning()
    .all();
  if (!updated.length) throw notFound("Passkey");
  return passkeyView(updated[0]);
}

export async function removePasskey(ctx: Ctx, id: number) {
  const { db, principal, now } = ctx;
  const p = await db.select().from(passkeys).where(and(eq(passkeys.id, id), eq(passkeys.userId, principal.userId))).get();
  if (!p) throw notFound("Passkey");
  await assertNotLastRequiredFactor(ctx, "passkey");
  const f = await factorsOf(db, principal.userId);
  const lastFactor = !f.totp && f.passkeys === 1;
  await db.batch([
    db.delete(passkeys).where(eq(passkeys.id, p.id)),
    ...(lastFactor ? [deleteRecoveryCodes(db, principal.userId)] : []),
    ...afterFactorChange(ctx),
  ]);
  return factorsView(await factorsOf(db, principal.userId));
}
