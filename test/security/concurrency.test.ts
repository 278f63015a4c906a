/**
 * Concurrency (issue 13, item 7): for every create route (create-routes.ts), 20
 * parallel creates end with exactly the allowed number of 201s, the rest 409
 * (duplicate) or 403 (quota), never a 500, and the stored count matches. Once with
 * 20 identical bodies (a unique resource admits one), once with 20 distinct ones
 * (the tier's quota admits `allowed`).
 */
import { describe, expect, it } from "vitest";
import { call, expectErrorShape } from "../helpers";
import { CREATE_ROUTES, freshOrg, type CreateRoute } from "./create-routes";

const N = 20;

async function race(route: CreateRoute, identical: boolean) {
  const { org, run } = await freshOrg();
  const path = route.setup ? await route.setup(org, run) : route.path;
  const results = await Promise.all(
    Array.from({ length: N }, (_, i) => call("POST", path, { token: org.session, body: route.body(identical ? 0 : i, run) })),
  );
  const statuses = results.map((r) => r.status);
  const created = statuses.filter((s) => s === 201).length;
  for (const r of results) {
    if (r.status === 201) continue;
    expect([403, 409], JSON.stringify(r.body)).toContain(r.status);
    expectErrorShape(r, r.status, r.status === 403 ? "quota_exceeded" : "conflict");
  }
  const allowed = identical && route.unique ? 1 : Math.min(N, route.allowed);
  expect(created, `statuses: ${statuses.join(",")}`).toBe(allowed);
  expect(await route.count(org, path)).toBe(allowed * (route.perRequest ?? 1));
}

describe("20 parallel creates per create route", () => {
  for (const route of CREATE_ROUTES) {
    const label = `${route.path}${route.perRequest ? ` (batches of ${route.perRequest})` : ""}`;
    it.skipIf(route.awaiting)(`${label}: identical bodies`, () => race(route, true));
    it.skipIf(route.awaiting)(`${label}: distinct bodies within the quota`, () => race(route, false));
  }
});

/**
 * A parent deleted while children are added (a list while entries go in, a domain while
 * record sets are added): each create is a 201 or the parent's 404, the delete succeeds,
 * never a 500, and nothing is left hanging from the deleted parent.
 */
describe("parent deleted during parallel child creates", () => {
  for (const route of CREATE_ROUTES.filter((r) => r.setup && !r.perRequest)) {
    it(`${route.path}: creates race the parent's DELETE`, async () => {
      const { org, run } = await freshOrg();
      const path = await route.setup!(org, run);
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
