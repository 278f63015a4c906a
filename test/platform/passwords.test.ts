/**
 * Password storage: PBKDF2-SHA256, per-user salt, constant-time compare.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DUMMY_PASSWORD_HASH, PASSWORD_MIN_LENGTH, PBKDF2_ITERATIONS, hashPassword, verifyPassword } from "../../src/platform/passwords";
import { timingSafeEqual } from "../../src/platform/secrets";
import { signupFresh } from "../helpers";

const DB = (env as any).DB as D1Database;

describe("password hashing", () => {
  it("uses 100,000 PBKDF2 iterations: the most deployed Workers accept", () => {
    expect(PBKDF2_ITERATIONS).toBeLessThanOrEqual(100_000);
    expect(PBKDF2_ITERATIONS).toBe(100_000);
    expect(DUMMY_PASSWORD_HASH.iterations).toBe(PBKDF2_ITERATIONS);
    expect(PASSWORD_MIN_LENGTH).toBe(12);
  });

  it("hash/verify round trip: the right password verifies, any other does not", async () => {
    const h = await hashPassword("correct horse battery staple");
    expect(h.iterations).toBe(PBKDF2_ITERATIONS);
    expect(h.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(h.salt).toMatch(/^[0-9a-f]{32}$/);
    expect(await verifyPassword("correct horse battery staple", h)).toBe(true);
    expect(await verifyPassword("correct horse battery stapl", h)).toBe(false);
    expect(await verifyPassword("Correct horse battery staple", h)).toBe(false);
    expect(await verifyPassword("", h)).toBe(false);
  });

  it("salts differ: the same password hashes differently each time", async () => {
    const a = await hashPassword("same password here");
    const b = await hashPassword("same password here");
    expect(a.salt).not.toBe(b.salt);
    expect(a.hash).not.toBe(b.hash);
  });

  it("stores a distinct salt and hash per user in D1 (same password), never the password", async () => {
    const a = await signupFresh();
    const b = await signupFresh();
    const rows = await DB.prepare("SELECT id, password_hash, password_salt, password_iterations FROM users WHERE id IN (?, ?)")
      .bind(a.userId, b.userId)
      .all<{ id: number; password_hash: string; password_salt: string; password_iterations: number }>();
    expect(rows.results).toHaveLength(2);
    const [x, y] = rows.results;
    expect(x.password_salt).not.toBe(y.password_salt);
    expect(x.password_hash).not.toBe(y.password_hash);
    for (const r of rows.results) {
      expect(r.password_iterations).toBe(100_000);
      expect(r.password_hash).not.toContain("correct horse");
      expect(await verifyPassword("correct horse battery staple", { hash: r.password_hash, salt: r.password_salt, iterations: r.password_iterations })).toBe(true);
    }
  });

  it("the dummy hash used for unknown emails never verifies", async () => {
    expect(await verifyPassword("correct horse battery staple", DUMMY_PASSWORD_HASH)).toBe(false);
  });
});

describe("timingSafeEqual", () => {
  const bytes = (...v: number[]) => new Uint8Array(v);
  it("equal arrays are equal", () => {
    expect(timingSafeEqual(bytes(1, 2, 3), bytes(1, 2, 3))).toBe(true);
    expect(timingSafeEqual(bytes(), bytes())).toBe(true);
  });
  it("a difference in any position is unequal", () => {
    for (let i = 0; i < 4; i++) {
      const b = bytes(9, 9, 9, 9);
      b[i] = 8;
      expect(timingSafeEqual(bytes(9, 9, 9, 9), b)).toBe(false);
    }
  });
  it("different lengths are unequal (prefix included), without throwing", () => {
    expect(timingSafeEqual(bytes(1, 2, 3), bytes(1, 2))).toBe(false);
    expect(timingSafeEqual(bytes(1, 2), bytes(1, 2, 3))).toBe(false);
    expect(timingSafeEqual(bytes(), bytes(0))).toBe(false);
  });
});
