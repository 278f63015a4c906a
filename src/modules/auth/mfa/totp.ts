/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226 HOTP): HMAC-SHA-1, 30-second
 * steps, 6 digits, the parameters every authenticator app supports. Written on
 * WebCrypto rather than taken from a library because it is a few lines, and so the
 * tests can check it against an independent implementation (the `otpauth` package)
 * and the RFC's own test vectors (test/auth/totp.test.ts).
 *
 * Verification accepts the current step and one on either side (clock drift between
 * the phone and the server), and never a step at or before the last one accepted: a
 * code seen once (over a shoulder, in a log) cannot be used again.
 */
import { timingSafeEqual } from "../../../platform/secrets";

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted on either side of the current one. */
export const TOTP_WINDOW = 1;
/** 160 bits, the HMAC-SHA-1 block size RFC 4226 recommends. */
export const TOTP_SECRET_BYTES = 20;

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

export function base32Encode(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Uint8Array {
  const clean = text.replace(/[\s=-]/g, "").toUpperCase();
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of clean) {
    const i = BASE32.indexOf(ch);
    if (i < 0) throw new Error(`not base32: ${ch}`);
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

export function newTotpSecret(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(TOTP_SECRET_BYTES));
}

/** HOTP (RFC 4226 §5.3): HMAC-SHA-1 of the 8-byte big-endian counter, dynamic truncation. */
export async function hotp(secret: Uint8Array, counter: number, digits = TOTP_DIGITS): Promise<string> {
  const key = await crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-1" }, false, ["sign"]);
  const message = new Uint8Array(8);
  new DataView(message.buffer).setBigUint64(0, BigInt(counter));
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3];
  return String(binary % 10 ** digits).padStart(digits, "0");
}

export function timeStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_PERIOD_SECONDS);
}

/**
 * The step `code` belongs to, within the window around `nowMs` and after
 * `lastUsedStep`, or null. The caller records the step so the code cannot be replayed.
 */
export async function matchTotp(secret: Uint8Array, code: string, nowMs: number, lastUsedStep: number): Promise<number | null> {
  const given = code.replace(/\s/g, "");
  if (!/^\d{6}$/.test(given)) return null;
  const current = timeStep(nowMs);
  let matched: number | null = null;
  // Every candidate is computed and compared, so the time taken does not say which matched.
  for (let step = current - TOTP_WINDOW; step <= current + TOTP_WINDOW; step++) {
    const expected = await hotp(secret, step);
    const equal = timingSafeEqual(new TextEncoder().encode(expected), new TextEncoder().encode(given));
    if (equal && step > lastUsedStep && matched === null) matched = step;
  }
  return matched;
}

/** The `otpauth://` URI (Key Uri Format) an authenticator app reads from the QR code. */
export function otpauthUri(opts: { secret: Uint8Array; issuer: string; account: string }): string {
  const label = `${encodeURIComponent(opts.issuer)}:${encodeURIComponent(opts.account)}`;
  const params = new URLSearchParams({
    secret: base32Encode(opts.secret),
    issuer: opts.issuer,
    algorithm: "SHA1",
    digits: String(TOTP_DIGITS),
    period: String(TOTP_PERIOD_SECONDS),
  });
  return `otpauth://totp/${label}?${params}`;
}
