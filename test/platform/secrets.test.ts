/**
 * Bearer secret format: `tpm_` + 32 base62 + 6-char base62 CRC-32.
 * Property tests: generated secrets parse; a single-character change is always
 * caught by the checksum; arbitrary input never throws.
 */
import fc from "fast-check";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { resolveBearer } from "../../src/platform/auth";
import { createDb } from "../../src/db/client";
import {
  CHECKSUM_LENGTH, SECRET_BODY_LENGTH, SECRET_KINDS, TOKEN_PREFIX_LENGTH, checksumOf, crc32, generateSecret, hashSecret, parseSecret,
  type SecretKind,
} from "../../src/platform/secrets";
import { call, createToken, expectErrorShape, signupFresh } from "../helpers";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const kinds = Object.keys(SECRET_KINDS) as SecretKind[];
const kindArb = fc.constantFrom(...kinds);

describe("secret format", () => {
  it("CRC-32 matches the standard check value", () => {
    expect(crc32("123456789")).toBe(0xcbf43926);
    expect(crc32("")).toBe(0);
  });

  it("every generated secret parses to its kind, has the documented length and prefix", () => {
    fc.assert(
      fc.property(kindArb, (kind) => {
        const s = generateSecret(kind);
        expect(s.startsWith(SECRET_KINDS[kind])).toBe(true);
        expect(s).toHaveLength(4 + SECRET_BODY_LENGTH + CHECKSUM_LENGTH);
        expect(s).toMatch(/^tp[msaif]_[0-9A-Za-z]{38}$/);
        expect(parseSecret(s)).toBe(kind);
        expect(s.slice(4 + SECRET_BODY_LENGTH)).toBe(checksumOf(s.slice(4, 4 + SECRET_BODY_LENGTH)));
      }),
      { numRuns: 500 },
    );
    expect(generateSecret("api")).toMatch(/^tpm_/);
    expect(SECRET_BODY_LENGTH + CHECKSUM_LENGTH).toBe(38);
    expect(TOKEN_PREFIX_LENGTH).toBe(12);
  });

  it("secrets are random: 1000 generated are distinct", () => {
    const seen = new Set(Array.from({ length: 1000 }, () => generateSecret("api")));
    expect(seen.size).toBe(1000);
  });

  it("substituting any single character of body or checksum is detected (parseSecret null)", () => {
    fc.assert(
      fc.property(
        kindArb,
        fc.integer({ min: 4, max: 4 + SECRET_BODY_LENGTH + CHECKSUM_LENGTH - 1 }),
        fc.integer({ min: 1, max: 61 }),
        (kind, pos, shift) => {
          const s = generateSecret(kind);
          const replacement = BASE62[(BASE62.indexOf(s[pos]) + shift) % 62];
          const changed = s.slice(0, pos) + replacement + s.slice(pos + 1);
          expect(changed).not.toBe(s);
          expect(parseSecret(changed)).toBeNull();
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("exhaustively: every single-character substitution of one secret is detected", () => {
    const s = generateSecret("api");
    for (let pos = 4; pos < s.length; pos++) {
      for (const ch of BASE62) {
        if (ch === s[pos]) continue;
        expect(parseSecret(s.slice(0, pos) + ch + s.slice(pos + 1))).toBeNull();
      }
    }
  });

  it("truncated, extended or re-prefixed secrets are rejected", () => {
    const s = generateSecret("api");
    expect(parseSecret(s.slice(0, -1))).toBeNull();
    expect(parseSecret(s + "0")).toBeNull();
    expect(parseSecret("tpx_" + s.slice(4))).toBeNull();
    expect(parseSecret(" " + s)).toBeNull();
    expect(parseSecret(s.toUpperCase() === s ? s.toLowerCase() : s.toUpperCase())).toBeNull();
    // Changing the prefix to another kind keeps the checksum valid: the kind changes, not null.
    expect(parseSecret("tps_" + s.slice(4))).toBe("session");
  });

  it("arbitrary strings never throw and (almost never) parse", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        const r = parseSecret(s);
        expect(r === null || kinds.includes(r)).toBe(true);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.stringMatching(/^tpm_[0-9A-Za-z]{38}$/), (s) => {
        // A random body+checksum has a 1 in 62^6 chance of a valid checksum.
        const r = parseSecret(s);
        expect(r === null || r === "api").toBe(true);
        if (r) expect(s.slice(38)).toBe(checksumOf(s.slice(4, 36)));
      }),
      { numRuns: 500 },
    );
  });

  it("hashSecret is SHA-256 hex", async () => {
    expect(await hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("checksum at the API", () => {
  it("a token with a bad checksum is 401", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["api-tokens:view_own_tokens"]);
    const last = t.token.at(-1)!;
    const bad = t.token.slice(0, -1) + (last === "0" ? "1" : "0");
    expectErrorShape(await call("GET", "/api/api-tokens", { token: bad }), 401, "unauthorized");
    expect((await call("GET", "/api/api-tokens", { token: t.token })).status).toBe(200);
  });

  it("a bad checksum is rejected before any database read", async () => {
    let touched = 0;
    const trap = new Proxy({}, { get: () => { touched++; throw new Error("database touched"); } }) as any;
    const good = generateSecret("api");
    const bad = good.slice(0, 10) + (good[10] === "A" ? "B" : "A") + good.slice(11);
    const r = await resolveBearer(trap, bad, new Date());
    expect("error" in r && r.error.status).toBe(401);
    expect(touched).toBe(0);
    // Control: a well-formed secret does reach the database.
    const db = createDb((env as any).DB);
    let reads = 0;
    const spy = new Proxy(db, { get: (t, k, rcv) => { if (k === "select") reads++; return Reflect.get(t, k, rcv); } });
    const r2 = await resolveBearer(spy as any, good, new Date());
    expect("error" in r2 && r2.error.status).toBe(401);
    expect(reads).toBe(1);
  });
});
