/**
 * Property test over every route of the OpenAPI document (issue 13, item 6): input that
 * violates the route's schema is answered with a 4xx and the one error body,
 * never a 5xx. The violations are derived from the document, for every field of the
 * body at any depth (required or optional, inside nested objects and array items):
 *  - a value of another JSON type;
 *  - a string over its maxLength or under its minLength, in a bad format (email,
 *    date-time), outside its enum, or carrying unsafe text where the field is marked
 *    `x-text` (control characters, bidi controls, lone surrogates);
 *  - a number outside its minimum/maximum, a fraction or an unsafe integer where an
 *    integer is expected;
 *  - an array over maxItems or under minItems;
 * plus a body of the wrong JSON type, broken JSON, a malformed path id and an
 * out-of-range or unknown query value. fast-check picks among them per route (more
 * runs for routes with more ways to be wrong) and shrinks a failure to its smallest case.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ALL_PERMISSIONS } from "../../src/platform/permissions";
import { call, createToken, expectErrorShape, signup, type CallResult } from "../helpers";
import { label, resolve, ROUTES, sample, sampleQuery, withValueAt, type DocRoute, type JsonSchema } from "./openapi-routes";
import { BODY_OVERRIDES } from "./route-objects";

/** Runs per route: two per way to be wrong, within these bounds (the whole file stays under ~30 s beside another test file on 2 cores). */
const MIN_RUNS = 4;
const MAX_RUNS = 16;
let tokens: string[] = [];
let next = 0;

beforeAll(async () => {
  // Several organizations and tokens, so neither the per-organization nor the per-token
  // rate limit decides an outcome (a 429 is a failure of this test).
  const orgs = await Promise.all([0, 1, 2].map(() => signup("Fuzz")));
  tokens = (
    await Promise.all(orgs.flatMap((org) => [0, 1].map((i) => createToken(org.session, [...ALL_PERMISSIONS], 1, `fuzz ${i}`))))
  ).map((t) => t.token);
});

type JsonType = "string" | "number" | "integer" | "boolean" | "array" | "object" | "null";

/** The JSON types a schema admits, or null when it admits anything. */
function typesOf(schema: JsonSchema): Set<JsonType> | null {
  const s = resolve(schema);
  const alternatives = s.anyOf ?? s.oneOf;
  if (Array.isArray(alternatives)) {
    const all = new Set<JsonType>();
    for (const alt of alternatives) {
      const t = typesOf(alt);
      if (!t) return null;
      t.forEach((x) => all.add(x));
    }
    return all;
  }
  if (Array.isArray(s.allOf) && s.allOf.length === 1) return typesOf(s.allOf[0]);
  if (s.type) return new Set((Array.isArray(s.type) ? s.type : [s.type]) as JsonType[]);
  if (Array.isArray(s.enum)) return new Set(s.enum.map((v: unknown) => (v === null ? "null" : typeof v)) as JsonType[]);
  return null;
}

/** Values of JSON types the field does not admit (so the value is certainly wrong). */
function wrongType(types: Set<JsonType>): fc.Arbitrary<unknown> | null {
  const all: Record<JsonType, fc.Arbitrary<unknown>> = {
    string: fc.string({ maxLength: 8 }),
    number: fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
    integer: fc.integer(),
    boolean: fc.boolean(),
    array: fc.array(fc.integer(), { maxLength: 3 }),
    object: fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
    null: fc.constant(null),
  };
  const excluded = new Set<JsonType>(types);
  if (types.has("number")) excluded.add("integer");
  const options = (Object.keys(all) as JsonType[]).filter((t) => !excluded.has(t)).map((t) => all[t]);
  return options.length ? fc.oneof(...options) : null;
}

const UNSAFE_TEXT = ["a\u0000b", "x\u0085y", "invoice\u202Egpj.exe", "a\u2066b", "a\u200Fb", "a\u2028b", "lone \ud800 half"];
const BAD_FORMATS: Record<string, string[]> = {
  email: ["not an email", "a@", "@example.com", "a@@example.com"],
  "date-time": ["yesterday", "2026-13-01T00:00:00Z", "1700000000"],
};

/** Wrong values for one field, each with what makes it wrong. */
function fieldViolations(schema: JsonSchema): { what: string; value: fc.Arbitrary<unknown> }[] {
  const s = resolve(schema);
  const types = typesOf(s);
  if (!types) return []; // any JSON value is valid there
  const out: { what: string; value: fc.Arbitrary<unknown> }[] = [];
  const wrong = wrongType(types);
  if (wrong) out.push({ what: "of the wrong type", value: wrong });
  // Constraints of the non-null alternative (zod's nullable/optional wrap the real schema).
  const inner = resolve((s.anyOf ?? s.oneOf)?.find((x: JsonSchema) => resolve(x).type !== "null") ?? s);
  if (types.has("string")) {
    if (typeof inner.maxLength === "number") out.push({ what: `over ${inner.maxLength} characters`, value: fc.integer({ min: 1, max: 40 }).map((n) => "x".repeat(inner.maxLength + n)) });
    if (typeof inner.minLength === "number" && inner.minLength > 0) out.push({ what: `under ${inner.minLength} characters`, value: fc.constant("x".repeat(inner.minLength - 1)) });
    if (BAD_FORMATS[inner.format]) out.push({ what: `not a valid ${inner.format}`, value: fc.constantFrom(...BAD_FORMATS[inner.format]) });
    if (Array.isArray(inner.enum)) out.push({ what: "outside the enum", value: fc.constantFrom("no-such-value", "", inner.enum[0] + " ", String(inner.enum[0]).toUpperCase() + "X") });
    if (inner["x-text"]) out.push({ what: "unsafe text", value: fc.constantFrom(...UNSAFE_TEXT, ...(inner["x-text"] === "single-line" ? ["a\nb", "a\tb"] : [])) });
  }
  if (types.has("integer") || types.has("number")) {
    const bad: number[] = [];
    if (typeof inner.maximum === "number") bad.push(inner.maximum + 1);
    if (typeof inner.minimum === "number") bad.push(inner.minimum - 1);
    if (typeof inner.exclusiveMinimum === "number") bad.push(inner.exclusiveMinimum);
    if (types.has("integer") && !types.has("number")) bad.push(1.5, 2 ** 53 + 2);
    if (bad.length) out.push({ what: "out of range or not an integer", value: fc.constantFrom(...bad) });
  }
  if (types.has("array")) {
    if (typeof inner.maxItems === "number") out.push({ what: `over ${inner.maxItems} items`, value: fc.constant(Array.from({ length: inner.maxItems + 1 }, () => sample(inner.items))) });
    if (typeof inner.minItems === "number" && inner.minItems > 0) out.push({ what: `under ${inner.minItems} items`, value: fc.constant([]) });
  }
  return out;
}

/** Every field of a body schema with its path (array items as index 0), nested objects included. */
function fieldsOf(schema: JsonSchema | null): { path: (string | number)[]; schema: JsonSchema }[] {
  const out: { path: (string | number)[]; schema: JsonSchema }[] = [];
  const walk = (raw: JsonSchema, path: (string | number)[], depth: number) => {
    const s = resolve(raw);
    if (depth > 6) return;
    if (path.length) out.push({ path, schema: raw });
    const alternatives = [s, ...((s.anyOf ?? s.oneOf ?? []) as JsonSchema[]).map(resolve)];
    for (const alt of alternatives) {
      for (const [name, prop] of Object.entries((alt.properties ?? {}) as Record<string, JsonSchema>)) walk(prop, [...path, name], depth + 1);
      if (alt.items && path.length) walk(alt.items, [...path, 0], depth + 1);
    }
  };
  if (schema) walk(schema, [], 0);
  return out;
}

interface Violation {
  what: string;
  path: string;
  query: string;
  body?: unknown;
  rawBody?: string;
}

function violations(r: DocRoute): fc.Arbitrary<Violation>[] {
  const fillPath = (bad?: { param: string; value: string }) =>
    r.path.replace(/\{([^}]+)\}/g, (_, p) => (bad && p === bad.param ? encodeURIComponent(bad.value) : "1"));
  const okQuery = sampleQuery(r);
  const validBody = r.body ? (BODY_OVERRIDES[label(r)] ?? sample(r.body)) : undefined;
  const arbs: fc.Arbitrary<Violation>[] = [];
  if (r.body) {
    arbs.push(
      fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.array(fc.boolean(), { maxLength: 2 })).map((body) => ({ what: "body of the wrong JSON type", path: fillPath(), query: okQuery, body })),
      fc.constantFrom("{", '{"a":', "[1,2", "nul", '{"x": tru}', "\u0000", '{"a":1}}').map((rawBody) => ({ what: "malformed JSON", path: fillPath(), query: okQuery, rawBody })),
    );
    for (const field of fieldsOf(r.body)) {
      for (const v of fieldViolations(field.schema)) {
        arbs.push(
          v.value.map((value) => ({
            what: `field ${field.path.join(".")} ${v.what}: ${JSON.stringify(value)?.slice(0, 60)}`,
            path: fillPath(),
            query: okQuery,
            body: withValueAt(validBody, field.path, value),
          })),
        );
      }
    }
  }
  for (const param of r.pathParams) {
    arbs.push(
      fc.constantFrom("abc", "-1", "0", "1.5", "1e400", "99999999999999999999", "%00", " ", "%E2%80%AE1", "1;DROP").map((value) => ({
        what: `path parameter ${param} = ${JSON.stringify(value)}`,
        path: fillPath({ param, value }),
        query: okQuery,
        body: validBody,
      })),
    );
  }
  for (const q of r.query) {
    const types = typesOf(q.schema);
    const qs = resolve(q.schema);
    const numeric = types?.has("integer") || types?.has("number");
    if (!numeric && !Array.isArray(qs.enum)) continue;
    const outOfRange = [qs.maximum !== undefined ? String(qs.maximum + 1) : null, qs.minimum !== undefined ? String(qs.minimum - 1) : null].filter((x): x is string => x !== null);
    const bad = !numeric ? fc.constantFrom("no-such-value", "", "ASC ") : fc.constantFrom("abc", "1e400", ...(types?.has("integer") ? ["1.5"] : []), ...outOfRange);
    arbs.push(
      bad.map((value) => ({
        what: `query ${q.name} = ${JSON.stringify(value)}`,
        path: fillPath(),
        query: `${okQuery ? `${okQuery}&` : "?"}${encodeURIComponent(q.name)}=${encodeURIComponent(value)}`,
        body: validBody,
      })),
    );
  }
  return arbs;
}

const fuzzable = ROUTES.map((r) => ({ route: r, arbs: violations(r) })).filter((x) => x.arbs.length > 0);

describe("schema-violating input: 4xx with the error body, never 5xx", () => {
  it("covers most of the document, nested and optional fields included", () => {
    expect(fuzzable.length).toBeGreaterThan(60);
    // The depth the test reaches: field violations in nested objects and array items.
    const nested = ROUTES.flatMap((r) => fieldsOf(r.body)).filter((f) => f.path.length > 1);
    expect(nested.length).toBeGreaterThan(10);
  });
  for (const { route: r, arbs } of fuzzable) {
    it(label(r), async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(...arbs), async (v) => {
          const res: CallResult = await call(r.method, v.path + v.query, {
            token: tokens[next++ % tokens.length],
            body: v.body,
            rawBody: v.rawBody,
            headers: v.rawBody !== undefined ? { "content-type": "application/json" } : undefined,
          });
          const context = `${v.what}: ${res.status} ${JSON.stringify(res.body)}`;
          expect(res.status, context).toBeGreaterThanOrEqual(400);
          expect(res.status, context).toBeLessThan(500);
          expect(res.status, context).not.toBe(429);
          expectErrorShape(res, res.status, res.body?.error?.code);
        }),
        { numRuns: Math.min(MAX_RUNS, Math.max(MIN_RUNS, 2 * arbs.length)) },
      );
    });
  }
});
