/**
 * Concurrency (issue 13, item 7): for every create route (create-routes.ts), 20
 * parallel creates end with exactly the allowed number of successes, the rest 409
 * (duplicate) or 403 (quota) or the route's own refusal, never a 500, and the stored
 * count matches. Once with 20 identical bodies (a unique resource admits one, an
 * idempotent action succeeds for all and stores one), once with 20 distinct ones (the
 * tier's quota admits `allowed`). Every POST route of the OpenAPI document that
 * answers 201 must be a row of the table or say why not.
 */
import { describe, expect, it } from "vitest";
import { call, expectErrorShape } from "../helpers";
import { CREATE_ROUTES, freshOrg, NOT_RACED, type CreateRoute, type Target } from "./create-routes";
import { label, openApiDocument, ROUTES } from "./openapi-routes";

const N = 20;

const asTarget = (t: string | Target): Target => (typeof t === "string" ? { path: t } : t);

async function race(route: CreateRoute, identical: boolean) {
  const { org, run } = await freshOrg();
  const target = asTarget(route.setup ? await route.setup(org, run) : route.path);
  const pathOf = (i: number) => (typeof target.path === "function" ? target.path(i) : target.path);
  const results = await Promise.all(
    Array.from({ length: N }, (_, i) => {
      const k = identical ? 0 : i;
      return call("POST", pathOf(k), { token: route.anonymous ? undefined : org.session, body: route.body(k, run, target.context) });
    }),
  );
  const success = route.success ?? 201;
  const statuses = results.map((r) => r.status);
  const succeeded = statuses.filter((s) => s === success).length;
  const refusals = [{ status: 403, code: "quota_exceeded" }, { status: 409, code: "conflict" }, ...(route.losers ?? [])];
  for (const r of results) {
    if (r.status === success) continue;
    const refusal = refusals.find((x) => x.status === r.status && x.code === r.body?.error?.code);
    expect(refusal, `${r.status} ${JSON.stringify(r.body)}`).toBeDefined();
    expectErrorShape(r, refusal!.status, refusal!.code);
  }
  const stored = identical && (route.unique || route.idempotent) ? 1 : Math.min(N, route.allowed);
  const allowed = identical && route.idempotent ? N : stored;
  expect(succeeded, `statuses: ${statuses.join(",")}`).toBe(allowed);
  expect(await route.count(org, pathOf(0), run)).toBe(stored * (route.perRequest ?? 1));
}

describe("20 parallel creates per create route", () => {
  for (const route of CREATE_ROUTES) {
    const name = `${route.path}${route.perRequest ? ` (batches of ${route.perRequest})` : ""}`;
    const races = route.races ?? ["identical", "distinct"];
    it.skipIf(!races.includes("identical"))(`${name}: identical bodies`, () => race(route, true));
    it.skipIf(!races.includes("distinct"))(`${name}: distinct bodies within the quota`, () => race(route, false));
  }

  it("every POST route of the OpenAPI document that answers 201 is raced here, or says why not", () => {
    const creates = ROUTES.filter((r) => r.method === "POST" && openApiDocument.paths[r.path].post.responses?.["201"]).map(label);
    expect(creates.length).toBeGreaterThan(15);
    const raced = new Set(CREATE_ROUTES.map((r) => `POST ${r.path}`));
    const unaccounted = creates.filter((c) => !raced.has(c) && !NOT_RACED[c]);
    expect(unaccounted, "add a row to CREATE_ROUTES (test/security/create-routes.ts) or a reason to NOT_RACED").toEqual([]);
    // And nothing listed there that the document no longer has.
    for (const listed of [...raced, ...Object.keys(NOT_RACED)]) expect(ROUTES.map(label), listed).toContain(listed);
  });
});

/**
 * A parent deleted while children are added (a list while entries go in, a domain while
 * record sets are added): each create is a 201 or the parent's 404, the delete succeeds,
 * never a 500, and nothing is left hanging from the deleted parent.
 */
describe("parent deleted during parallel child creates", () => {
  for (const route of CREATE_ROUTES.filter((r) => r.childCollection && !r.perRequest)) {
    it(`${route.path}: creates race the parent's DELETE`, async () => {
      const { org, run } = await freshOrg();
      const path = asTarget(await route.setup!(org, run)).path as string;
      const parent = path.slice(0, path.lastIndexOf("/"));
      const creates = Array.from({ length: 10 }, (_, i) => call("POST", path, { token: org.session, body: route.body(i, run) }));
      const deleted = call("DELETE", parent, { token: org.session });
      const results = await Promise.all([...creates, deleted]);
      const del = results.pop()!;
      expect([200, 204]).toContain(del.status);
      for (const r of results) {
        expect([201, 404], JSON.stringify(r.body)).toContain(r.status);
        if (r.status === 404) expectErrorShape(r, 404, "not_found");
      }
      expect((await call("GET", parent, { token: org.session })).status).toBe(404);
    });
  }
});
