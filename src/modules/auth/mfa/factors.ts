/** Which second factors a user has, and the recovery codes that stand in for them. */
import { and, count, eq, isNotNull, isNull } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { passkeys, recoveryCodes, totpCredentials } from "../../../db/schema/identity";
import { sha256Hex } from "../../../platform/secrets";

export interface Factors {
  totp: boolean;
  passkeys: number;
  recoveryCodesLeft: number;
}

export const hasFactor = (f: Factors) => f.totp || f.passkeys > 0;

/** The methods the second step of a sign-in accepts for these factors. */
export function methodsOf(f: Factors): ("totp" | "webauthn" | "recovery_code")[] {
  return [...(f.totp ? (["totp"] as const) : []), ...(f.passkeys ? (["webauthn"] as const) : []), ...(f.recoveryCodesLeft ? (["recovery_code"] as const) : [])];
}

/** The users of an organization with at least one second factor. */
export async function usersWithFactor(db: Db, organizationId: number): Promise<Set<number>> {
  const [apps, keys] = await db.batch([
    db.select({ userId: totpCredentials.userId }).from(totpCredentials).where(and(eq(totpCredentials.organizationId, organizationId), isNotNull(totpCredentials.confirmedAt))),
    db.selectDistinct({ userId: passkeys.userId }).from(passkeys).where(eq(passkeys.organizationId, organizationId)),
  ]);
  return new Set([...apps, ...keys].map((r) => r.userId));
}

export async function factorsOf(db: Db, userId: number): Promise<Factors> {
  const [totp, keys, codes] = await db.batch([
    db.select({ n: count() }).from(totpCredentials).where(and(eq(totpCredentials.userId, userId), isNotNull(totpCredentials.confirmedAt))),
    db.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, userId)),
    db.select({ n: count() }).from(recoveryCodes).where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt))),
  ]);
  return { totp: (totp[0]?.n ?? 0) > 0, passkeys: keys[0]?.n ?? 0, recoveryCodesLeft: codes[0]?.n ?? 0 };
}

/** The view of `/api/auth/mfa`. */
export function factorsView(f: Factors) {
  return { totp_enabled: f.totp, passkeys: f.passkeys, recovery_codes_left: f.recoveryCodesLeft, mfa_enabled: hasFactor(f) };
}

// ---------------------------------------------------------------------------
// Recovery codes: ten per user, each usable once, shown once. 10 characters of the
// base32 alphabet (50 bits) in two groups; only SHA-256(user id, code) is stored (a
// fast hash is enough for random codes of that length behind the sign-in throttle).

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = crypto.getRandomValues(new Uint8Array(10));
    const chars = [...bytes].map((b) => ALPHABET[b & 31]).join("");
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** What a person may type for a code: any case, with or without the dash and spaces. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[^a-z2-7]/g, "");
}

export function recoveryCodeHash(userId: number, code: string): Promise<string> {
  return sha256Hex(`${userId}:${normalizeRecoveryCode(code)}`);
}

export function deleteRecoveryCodes(db: Db, userId: number) {
  return db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
}

/** Statements replacing the user's recovery codes with `codes` (for a batch). */
export async function replaceRecoveryCodes(db: Db, organizationId: number, userId: number, codes: string[], now: Date) {
  const rows = await Promise.all(codes.map(async (c) => ({ organizationId, userId, codeHash: await recoveryCodeHash(userId, c), createdAt: now.toISOString() })));
  return [deleteRecoveryCodes(db, userId), db.insert(recoveryCodes).values(rows)] as const;
}

/** Uses up one recovery code of the user; false when it is wrong or already used (one statement: two racing uses cannot both win). */
export async function consumeRecoveryCode(db: Db, userId: number, code: string, now: Date): Promise<boolean> {
  if (normalizeRecoveryCode(code).length !== 10) return false;
  const used = await db
    .update(recoveryCodes)
    .set({ usedAt: now.toISOString() })
    .where(and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, await recoveryCodeHash(userId, code)), isNull(recoveryCodes.usedAt)))
    .returning({ id: recoveryCodes.id })
    .all();
  return used.length === 1;
}
