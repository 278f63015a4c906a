/**
 * The second step of a sign-in. A correct password of a user with a factor does not
 * sign in: it yields an `mfa_token` (`tpf_`, 5 minutes, this login only, used once)
 * and the methods that can complete it, with a WebAuthn challenge when the user has
 * passkeys. `POST /api/auth/login/mfa` then takes the token with one proof: a code
 * of the authenticator app, a recovery code, or the browser's passkey assertion.
 *
 * Wrong proofs count toward the sign-in throttle like wrong passwords (the pair of
 * account and address, the address, the account's factor ceiling), and after
 * MAX_PROOF_FAILURES the token itself is spent: the password must be entered again.
 */
import { and, eq, isNull, lt, sql } from "drizzle-orm";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { Db } from "../../../db/client";
import { authChallenges, passkeys } from "../../../db/schema/identity";
import { users } from "../../../db/schema/platform";
import type { Config } from "../../../env";
import { unauthorized } from "../../../platform/errors";
import { generateSecret, hashSecret, parseSecret } from "../../../platform/secrets";
import type { SignInMethod } from "../sessions";
import { tooManyAttempts, throttledSignIn, type ThrottleContext } from "../throttle";
import { consumeRecoveryCode, factorsOf, methodsOf, type Factors } from "./factors";
import { useTotpCode } from "./service";
import { authenticationOptions, relyingParty, verifyAssertion } from "./webauthn";

export const MFA_TOKEN_TTL_MS = 5 * 60_000;
export const MAX_PROOF_FAILURES = 5;

type User = typeof users.$inferSelect;

export async function beginSecondFactor(db: Db, config: Config, user: User, factors: Factors, clientIp: string | null, now: Date) {
  const token = generateSecret("mfa");
  const keys = factors.passkeys ? await db.select().from(passkeys).where(eq(passkeys.userId, user.id)).all() : [];
  const webauthn = keys.length ? await authenticationOptions(relyingParty(config), keys) : undefined;
  const expiresAt = new Date(now.getTime() + MFA_TOKEN_TTL_MS).toISOString();
  await db.insert(authChallenges).values({
    organizationId: user.organizationId,
    userId: user.id,
    purpose: "mfa_login",
    tokenHash: await hashSecret(token),
    challenge: webauthn?.challenge ?? null,
    clientIp,
    expiresAt,
    createdAt: now.toISOString(),
  });
  return { mfa_required: true as const, mfa_token: token, methods: methodsOf(factors), expires_at: expiresAt, ...(webauthn ? { webauthn } : {}) };
}

export interface SecondFactorProof {
  mfa_token: string;
  code?: string;
  recovery_code?: string;
  webauthn?: AuthenticationResponseJSON;
}

const EXPIRED = "This sign-in expired or was completed already: enter your password again";
const WRONG = "The code is wrong or was used already";

/** Checks the proof; the user and how they signed in, or 401/429. Nothing is written for a refused proof but its count. */
export async function completeSecondFactor(ctx: ThrottleContext, input: SecondFactorProof): Promise<{ user: User; method: SignInMethod; recoveryCodesLeft?: number }> {
  const { db, config, now } = ctx;
  if (parseSecret(input.mfa_token) !== "mfa") throw unauthorized(EXPIRED, "token_expired");
  const pending = await db
    .select({ challenge: authChallenges, user: users })
    .from(authChallenges)
    .innerJoin(users, eq(users.id, authChallenges.userId))
    .where(and(eq(authChallenges.tokenHash, await hashSecret(input.mfa_token)), eq(authChallenges.purpose, "mfa_login")))
    .get();
  if (!pending || pending.challenge.consumedAt || pending.challenge.expiresAt <= now.toISOString() || pending.user.status !== "active") {
    throw unauthorized(EXPIRED, "token_expired");
  }
  const { challenge, user } = pending;
  return throttledSignIn(ctx, user.email, "second_factor", async (gate) => {
    if (gate.factorCeilingReached && !gate.knownAddress) {
      throw tooManyAttempts(3600, "Too many wrong codes for this account: codes are accepted only from addresses it signed in from before, for now. The owner has been told by email.");
    }
    let method: SignInMethod | null = null;
    if (input.code) {
      if (await useTotpCode(db, config, user.id, input.code, now)) method = "password+totp";
    } else if (input.recovery_code) {
      if (await consumeRecoveryCode(db, user.id, input.recovery_code, now)) method = "password+recovery_code";
    } else if (input.webauthn && challenge.challenge) {
      if (await usePasskey(db, config, user.id, challenge.challenge, input.webauthn, now)) method = "password+passkey";
    }
    if (!method) {
      // Count the miss on the token too; at the limit it is spent (one statement).
      await db
        .update(authChallenges)
        .set({ failures: sql`${authChallenges.failures} + 1`, consumedAt: sql`CASE WHEN ${authChallenges.failures} + 1 >= ${MAX_PROOF_FAILURES} THEN ${now.toISOString()} ELSE NULL END` })
        .where(and(eq(authChallenges.id, challenge.id), isNull(authChallenges.consumedAt)))
        .run();
      throw unauthorized(WRONG);
    }
    const spent = await db
      .update(authChallenges)
      .set({ consumedAt: now.toISOString() })
      .where(and(eq(authChallenges.id, challenge.id), isNull(authChallenges.consumedAt)))
      .returning({ id: authChallenges.id })
      .all();
    // Another request completed (or spent) this token meanwhile.
    if (!spent.length) throw unauthorized(EXPIRED, "token_expired");
    const recoveryCodesLeft = method === "password+recovery_code" ? (await factorsOf(db, user.id)).recoveryCodesLeft : undefined;
    return { value: { user, method, recoveryCodesLeft }, outcome: "succeeded" };
  });
}

async function usePasskey(db: Db, config: Config, userId: number, expectedChallenge: string, response: AuthenticationResponseJSON, now: Date): Promise<boolean> {
  const key = await db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.userId, userId), eq(passkeys.credentialId, String(response.id ?? ""))))
    .get();
  if (!key) return false;
  let counter: number | null;
  try {
    counter = await verifyAssertion(relyingParty(config), expectedChallenge, key, response);
  } catch {
    return false;
  }
  if (counter === null) return false;
  // A counter that does not grow (when the authenticator keeps one) is a cloned key: refuse it.
  const moved = await db
    .update(passkeys)
    .set({ counter, lastUsedAt: now.toISOString() })
    .where(and(eq(passkeys.id, key.id), counter === 0 ? eq(passkeys.counter, 0) : lt(passkeys.counter, counter)))
    .returning({ id: passkeys.id })
    .all();
  return moved.length === 1;
}
