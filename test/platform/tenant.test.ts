/**
 * The tenant data-access layer under concurrency (src/platform/tenant.ts): a create
 * and its quota are one atomic step, a UNIQUE violation is a 409, never a 500; and
 * the request clock moves with the test header.
 */
import { describe, expect, it } from "vitest";
import { call, signup, unique } from "../helpers";

describe("tenant creates under concurrency", () => {
  it("12 parallel creates of one name: one 201, the rest 409, never 500", async () => {
    const org = await signup("Race");
    const name = `race-${unique()}.example.com`;
    const results = await Promise.all(
      Array.from({ length: 12 }, () => call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: name } })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(11);
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.error.code).toBe("conflict");
  });

  it("20 parallel creates on the free tier (10): exactly 10 succeed, the rest 403 quota_exceeded", async () => {
    const org = await signup("Quota");
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: `q${i}-${unique()}.example.com` } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r.body.error.code).toBe("quota_exceeded");
    // quota_remaining counts what exists after each insert: the ten answers are 0..9 in some order.
    expect(results.filter((r) => r.status === 201).map((r) => r.body.quota_remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const list = await call("GET", "/api/rdap/domains", { token: org.session });
    expect(list.body.total).toBe(10);
  });
});

describe("request clock", () => {
  it("X-Trust-Plane-Now moves the clock a request sees (test configuration only)", async () => {
    const org = await signup("Clock");
    // An hour ahead: far enough to be unmistakable, within the 12 h the session lives.
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const r = await call("POST", "/api/rdap/domains", {
      token: org.session,
      body: { domain_name: `clock-${unique()}.example.com` },
      headers: { "x-trust-plane-now": at },
    });
    expect(r.status).toBe(201);
    const list = await call("GET", "/api/rdap/domains", { token: org.session });
    expect(list.body.domains[0].created_at).toBe(at);
    // The session expires with the moved clock too: 13 h ahead it is refused.
    const late = await call("GET", "/api/rdap/domains", { token: org.session, headers: { "x-trust-plane-now": new Date(Date.now() + 13 * 3_600_000).toISOString() } });
    expect(late.status).toBe(401);
  });
});
