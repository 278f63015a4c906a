/**
 * The security suite generated from the OpenAPI document (issue 13, item 6): for every
 * route it declares, without a credential 401, with a token of the organization that
 * holds every permission except the route's own 403, and with another organization's
 * administrator on this organization's real ids 404. New routes are covered by being
 * in the document; what cannot be exercised generically is listed (route-objects.ts).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ALL_PERMISSIONS } from "../../src/platform/permissions";
import { call, createToken, expectErrorShape, signup, type Org } from "../helpers";
import { label, ROUTES, sample, sampleQuery, type DocRoute } from "./openapi-routes";
import { BODY_OVERRIDES, EXCEPTIONS, NOT_CREATABLE, PARAM_OBJECTS, PUBLIC_ROUTES } from "./route-objects";

let owner: Org;
let stranger: Org;
/** Concrete paths of the owner's objects, per route path (built once). */
const concrete = new Map<string, string | null>();
/** Tokens of the owner holding everything but a set of permissions, by that set. */
const tokensWithout = new Map<string, string>();

beforeAll(async () => {
  owner = await signup("Owner");
  stranger = await signup("Stranger");
  // Enterprise tier: the suite creates many objects of every kind.
  expect((await call("PUT", "/api/admin/subscription", { token: owner.session, body: { tier: "enterprise" } })).status).toBe(200);
});

/** The route's path with the owner's real ids, or null when a parameter's object cannot be made. */
async function ownersPath(r: DocRoute): Promise<string | null> {
  if (concrete.has(r.path)) return concrete.get(r.path)!;
  const ids: Record<string, string> = {};
  let path: string | null = r.path;
  for (const p of r.pathParams) {
    if (NOT_CREATABLE[p]) {
      path = null;
      break;
    }
    const make = PARAM_OBJECTS[p];
    if (!make) throw new Error(`${label(r)}: no way to build an object for {${p}}: add it to PARAM_OBJECTS or NOT_CREATABLE (test/security/route-objects.ts)`);
    ids[p] = await make(owner, r.path, ids);
    path = path.replace(`{${p}}`, encodeURIComponent(ids[p]));
  }
  concrete.set(r.path, path);
  return path;
}

/** Any path for checks that stop before the handler (401, 403): the owner's ids, or placeholders. */
async function anyPath(r: DocRoute): Promise<string> {
  return (await ownersPath(r)) ?? r.path.replace(/\{[^}]+\}/g, "0000000000000000000000000000000000000000000000000000000000000000");
}

async function tokenWithout(required: string[]): Promise<string> {
  const key = [...required].sort().join(",");
  let t = tokensWithout.get(key);
  if (!t) {
    t = (await createToken(owner.session, ALL_PERMISSIONS.filter((p) => !required.includes(p)), 1, `without ${key}`)).token;
    tokensWithout.set(key, t);
  }
  return t;
}

const send = (r: DocRoute, path: string, token?: string) =>
  call(r.method, path + sampleQuery(r), { token, body: BODY_OVERRIDES[label(r)] ?? (r.body ? sample(r.body) : undefined) });

const permissionsOf = (r: DocRoute): string[] | null =>
  Array.isArray(r.permission) ? r.permission : r.permission.includes(":") ? [r.permission] : null;

describe("every route of the OpenAPI document", () => {
  it("the document declares a required permission for every route", () => {
    expect(ROUTES.length).toBeGreaterThan(50);
    for (const r of ROUTES) expect(r.permission, label(r)).toBeDefined();
  });

  describe("without a credential: 401", () => {
    for (const r of ROUTES.filter((r) => !PUBLIC_ROUTES[label(r)])) {
      it(label(r), async () => expectErrorShape(await send(r, await anyPath(r)), 401, "unauthorized"));
    }
  });

  describe("with a token of the organization lacking the route's permission: 403", () => {
    for (const r of ROUTES.filter((r) => permissionsOf(r))) {
      it(`${label(r)} without ${permissionsOf(r)!.join(" and ")}`, async () =>
        expectErrorShape(await send(r, await anyPath(r), await tokenWithout(permissionsOf(r)!)), 403, "forbidden"));
    }
  });

  describe("another organization's administrator on this organization's ids: 404", () => {
    for (const r of ROUTES.filter((r) => r.pathParams.length && !PUBLIC_ROUTES[label(r)])) {
      const exception = EXCEPTIONS[label(r)]?.notFound ?? r.pathParams.map((p) => NOT_CREATABLE[p]).find(Boolean);
      it.skipIf(exception)(`${label(r)}${exception ? ` (not applicable: ${exception})` : ""}`, async () => {
        const path = await ownersPath(r);
        expectErrorShape(await send(r, path!, stranger.session), 404, "not_found");
      });
    }
  });
});
