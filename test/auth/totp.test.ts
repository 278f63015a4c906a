/**
 * The TOTP implementation (src/modules/auth/mfa/totp.ts) against RFC 6238's own test
 * vectors (Appendix B, SHA-1) and against an independent implementation (`otpauth`).
 */
import * as OTPAuth from "otpauth";
import { describe, expect, it } from "vitest";
import { base32Decode, base32Encode, hotp, matchTotp, newTotpSecret, otpauthUri, timeStep } from "../../src/modules/auth/mfa/totp";

describe("TOTP", () => {
  it("RFC 6238 Appendix B (SHA-1, 8 digits)", async () => {
    const seed = new TextEncoder().encode("12345678901234567890");
    const vectors: [number, string][] = [
      [59, "94287082"],
      [1111111109, "07081804"],
      [1111111111, "14050471"],
      [1234567890, "89005924"],
      [2000000000, "69279037"],
      [20000000000, "65353130"],
    ];
    for (const [seconds, code] of vectors) expect(await hotp(seed, timeStep(seconds * 1000), 8), String(seconds)).toBe(code);
  });

  it("agrees with otpauth on random secrets and times; base32 and the URI round-trip through it", async () => {
    for (let i = 0; i < 40; i++) {
      const secret = newTotpSecret();
      const ms = Math.floor(Math.random() * 4_000_000_000_000);
      const theirs = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(base32Encode(secret)), algorithm: "SHA1", digits: 6, period: 30 });
      expect(await hotp(secret, timeStep(ms))).toBe(theirs.generate({ timestamp: ms }));
      expect(base32Decode(theirs.secret.base32)).toEqual(secret);
      const parsed = OTPAuth.URI.parse(otpauthUri({ secret, issuer: "Trust-Plane", account: "a+b@example.com" })) as OTPAuth.TOTP;
      expect([parsed.issuer, parsed.label, parsed.secret.base32]).toEqual(["Trust-Plane", "a+b@example.com", base32Encode(secret)]);
    }
  });

  it("matches within one step either side, after the last used step only; refuses malformed codes", async () => {
    const secret = newTotpSecret();
    const now = 1_700_000_000_000;
    const at = (ms: number) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(base32Encode(secret)) }).generate({ timestamp: ms });
    const step = timeStep(now);
    expect(await matchTotp(secret, at(now), now, 0)).toBe(step);
    expect(await matchTotp(secret, at(now - 30_000), now, 0)).toBe(step - 1);
    expect(await matchTotp(secret, at(now + 30_000), now, 0)).toBe(step + 1);
    expect(await matchTotp(secret, at(now - 60_000), now, 0)).toBeNull();
    expect(await matchTotp(secret, at(now + 60_000), now, 0)).toBeNull();
    expect(await matchTotp(secret, at(now), now, step)).toBeNull();
    expect(await matchTotp(secret, at(now + 30_000), now, step)).toBe(step + 1);
    for (const bad of ["", "12345", "1234567", "abcdef", "12 34 5"]) expect(await matchTotp(secret, bad, now, 0), bad).toBeNull();
    expect(await matchTotp(secret, ` ${at(now).slice(0, 3)} ${at(now).slice(3)} `, now, 0)).toBe(step);
  });
});
