/**
 * Property test over every route of the OpenAPI document (issue 13, item 6): input that
 * violates the route's schema (a body of the wrong JSON type, a required field of the
 * wrong type, broken JSON, a malformed path id, an out-of-range or unknown query
 * value) is answered with a 4xx and the ADDENDUM 1 error body, never a 5xx.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ALL_PERMISSIONS } from "../../src/platform/permissions";
import { call, createToken, expectErrorShape, signup, type CallResult } from "../helpers";
import { label, resolve, ROUTES, sample, sampleQuery, type DocRoute, type JsonSchema } from "./openapi-routes";

const RUNS_PER_ROUTE = 4;
let tokens: string[] = [];
let next = 0;

beforeAll(async () => {
  const org = await signup("Fuzz");
  // Several credentials, so the per-token rate limit never decides the outcome.
  tokens = await Promise.all([0, 1, 2, 3].map(async (i) => (await createToken(org.session, [...ALL_PERMISSIONS], 1, `fuzz ${i}`)).token));
});

const typeOf = (s: JsonSchema): string => {
  const r = resolve(s);
  const t = Array.isArray(r.type) ? r.type.find((x: string) => x !== "null") : r.type;
  return t ?? (r.enum ? "enum" : "any");
};

/** Values of a JSON type other than `type` (so the field is certainly wrong). */
function wrongValue(type: string): fc.Arbitrary<unknown> {
  const all: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.string({ maxLength: 8 }),
    number: fc.double({ noNaN: true }),
    integer: fc.integer(),
    boolean: fc.boolean(),
    array: fc.array(fc.integer(), { maxLength: 3 }),
    object: fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
    null: fc.constant(null),
  };
  const excluded = type === "number" || type === "integer" ? ["number", "integer"] : [type];
  if (type === "enum") excluded.push("string");
  return fc.oneof(...Object.entries(all).filter(([k]) => !excluded.includes(k)).map(([, v]) => v));
}

interface Violation {
  what: string;
  path: string;
  query: string;
  body?: unknown;
  rawBody?: string;
}

function violations(r: DocRoute): fc.Arbitrary<Violation> {
  const fillPath = (bad?: { param: string; value: string }) =>
    r.path.replace(/\{([^}]+)\}/g, (_, p) => (bad && p === bad.param ? encodeURIComponent(bad.value) : "1"));
  const okQuery = sampleQuery(r);
  const validBody = r.body ? sample(r.body) : undefined;
  const arbs: fc.Arbitrary<Violation>[] = [];
  if (r.body) {
    const bodySchema = resolve(r.body);
    arbs.push(
      fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.array(fc.boolean(), { maxLength: 2 })).map((body) => ({ what: "body of the wrong JSON type", path: fillPath(), query: okQuery, body })),
      fc.constantFrom("{", '{"a":', "[1,2", "nul", '{"x": tru}').map((rawBody) => ({ what: "malformed JSON", path: fillPath(), query: okQuery, rawBody })),
    );
    for (const field of (bodySchema.required ?? []) as string[]) {
      if (typeOf(bodySchema.properties?.[field] ?? {}) === "any") continue; // any JSON value is valid there
      arbs.push(
        wrongValue(typeOf(bodySchema.properties?.[field] ?? {})).map((v) => ({
          what: `required field ${field} of the wrong type`,
          path: fillPath(),
          query: okQuery,
          body: { ...(validBody as object), [field]: v },
        })),
      );
    }
  }
  for (const param of r.pathParams) {
    arbs.push(
      fc.constantFrom("abc", "-1", "0", "1.5", "1e400", "99999999999999999999", "%00", " ").map((value) => ({
        what: `path parameter ${param} = ${JSON.stringify(value)}`,
        path: fillPath({ param, value }),
        query: okQuery,
        body: validBody,
      })),
    );
  }
  for (const q of r.query) {
    const t = typeOf(q.schema);
    if (t !== "integer" && t !== "number" && t !== "enum") continue;
    const qs = resolve(q.schema);
    const outOfRange = [qs.maximum !== undefined ? String(qs.maximum + 1) : null, qs.minimum !== undefined ? String(qs.minimum - 1) : null].filter((x): x is string => x !== null);
    const bad = t === "enum" ? fc.constantFrom("no-such-value", "", "ASC ") : fc.constantFrom("abc", "1e400", ...(t === "integer" ? ["1.5"] : []), ...outOfRange);
    arbs.push(
      bad.map((value) => ({
        what: `query ${q.name} = ${JSON.stringify(value)}`,
        path: fillPath(),
        query: `${okQuery ? `${okQuery}&` : "?"}${encodeURIComponent(q.name)}=${encodeURIComponent(value)}`,
        body: validBody,
      })),
    );
  }
  return arbs.length ? fc.oneof(...arbs) : fc.constant({ what: "none", path: "", query: "" });
}

const fuzzable = ROUTES.filter((r) => r.body || r.pathParams.length || r.query.some((q) => ["integer", "number", "enum"].includes(typeOf(q.schema))));

describe("schema-violating input: 4xx with the error body, never 5xx", () => {
  it("covers most of the document", () => expect(fuzzable.length).toBeGreaterThan(60));
  for (const r of fuzzable) {
    it(label(r), async () => {
      await fc.assert(
        fc.asyncProperty(violations(r), async (v) => {
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
        { numRuns: RUNS_PER_ROUTE },
      );
    });
  }
});
