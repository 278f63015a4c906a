/**
 * Password hashing: PBKDF2-HMAC-SHA256 from WebCrypto with a 16-byte per-user salt.
 *
 * 100,000 iterations is the most deployed Workers accept (WebCrypto there rejects
 * more; the local runtime does not, so a test pins this constant). The iteration
 * count is stored per user so it can be raised later with rehash-on-login.
 */
import { fromHex, timingSafeEqual, toHex } from "./secrets";

export const PBKDF2_ITERATIONS = 100_000;
export const PASSWORD_MIN_LENGTH = 12;

export interface PasswordHash {
  hash: string;
  salt: string;
  iterations: number;
}

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, 256);
  return new Uint8Array(bits);
}

export async function hashPassword(password: string): Promise<PasswordHash> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await derive(password, salt, PBKDF2_ITERATIONS);
  return { hash: toHex(hash), salt: toHex(salt), iterations: PBKDF2_ITERATIONS };
}

export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  const candidate = await derive(password, fromHex(stored.salt), stored.iterations);
  return timingSafeEqual(candidate, fromHex(stored.hash));
}

/**
 * A stored hash to verify against when the email is unknown, so a login for a
 * missing account costs the same PBKDF2 work as one for an existing account.
 */
export const DUMMY_PASSWORD_HASH: PasswordHash = {
  hash: "0".repeat(64),
  salt: "00112233445566778899aabbccddeeff",
  iterations: PBKDF2_ITERATIONS,
};

/**
 * An account created by single sign-on has no password: its hash fields are empty and
 * its iteration count 0, and a password sign-in never succeeds for it.
 */
export const NO_PASSWORD: PasswordHash = { hash: "", salt: "", iterations: 0 };

export function hasPassword(user: { passwordIterations: number }): boolean {
  return user.passwordIterations > 0;
}
