// CT filters API (docs/decisions.md#ct-filters-and-matches, #uniqueness): defaults, canonical
// patterns, paging and the six sorts, validation, 409 uniqueness among live filters,
// the ct_filters quota (soft-deleted filters do not count), soft delete, typosquat
// eligibility, the typosquatting filters listing and cross-organization 404s.
import { describe, expect, it } from "vitest";
import { call, createToken, expectError, signup } from "../helpers";

const create = (token: string, body: Record<string, unknown>) => call("POST", "/api/ct-log/filters", { token, body });

describe("CT filters API", () => {
  it("creates with defaults, canonical pattern, typosquat eligibility and quota_remaining", async () => {
    const org = await signup("Filters");
    const r = await create(org.session, { pattern: "  Example.COM. ", match_type: "wide" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ message: expect.any(String), quota_remaining: 9 });
    const got = await call("GET", `/api/ct-log/filters/${r.body.id}`, { token: org.session });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: r.body.id,
      pattern: "example.com",
      match_type: "wide",
      enabled: true,
      description: "",
      feed_dns_enabled: false,
      feed_certs_enabled: false,
      typosquat_enabled: false,
      typosquat_eligible: true,
      typosquat_ineligible_reason: "",
    });
    expect(Date.parse(got.body.created_at)).not.toBeNaN();

    const idn = await create(org.session, { pattern: "bücher.de", match_type: "exact" });
    expect((await call("GET", `/api/ct-log/filters/${idn.body.id}`, { token: org.session })).body.pattern).toBe("xn--bcher-kva.de");

    const wild = await create(org.session, { pattern: "*.shop.example.com", match_type: "exact" });
    const w = (await call("GET", `/api/ct-log/filters/${wild.body.id}`, { token: org.session })).body;
    expect(w.typosquat_eligible).toBe(false);
    expect(w.typosquat_ineligible_reason).toMatch(/wildcard/);
  });

  it("validates bodies: bad pattern, bad match_type, wrong types, missing fields", async () => {
    const org = await signup("Filters");
    const bad = await create(org.session, { pattern: "https://example.com/x", match_type: "wide" });
    expectError(bad, 400, "validation_error");
    expect(bad.body.error.details[0].path).toBe("pattern");
    expectError(await create(org.session, { pattern: "example.com", match_type: "fuzzy" }), 400, "validation_error");
    expectError(await create(org.session, { pattern: "example.com" }), 400, "validation_error");
    expectError(await create(org.session, { pattern: "example.com", match_type: "wide", enabled: "yes" }), 400, "validation_error");
    expectError(await create(org.session, { pattern: "exa*mple.com", match_type: "wide" }), 400, "validation_error");
  });

  it("409 on a duplicate (pattern, match_type) among live filters; a soft-deleted one frees it", async () => {
    const org = await signup("Filters");
    const a = await create(org.session, { pattern: "dup.example", match_type: "wide" });
    expect(a.status).toBe(201);
    expectError(await create(org.session, { pattern: "DUP.example.", match_type: "wide" }), 409, "conflict");
    expect((await create(org.session, { pattern: "dup.example", match_type: "exact" })).status).toBe(201);
    // PUT into a clash is a 409 too.
    const b = await create(org.session, { pattern: "other.example", match_type: "wide" });
    expectError(await call("PUT", `/api/ct-log/filters/${b.body.id}`, { token: org.session, body: { pattern: "dup.example" } }), 409, "conflict");
    expect((await call("DELETE", `/api/ct-log/filters/${a.body.id}`, { token: org.session })).status).toBe(200);
    expect((await create(org.session, { pattern: "dup.example", match_type: "wide" })).status).toBe(201);
    // Another organization may use the same pattern.
    const other = await signup("Filters");
    expect((await create(other.session, { pattern: "dup.example", match_type: "wide" })).status).toBe(201);
  });

  it("enforces the free quota of 10; soft-deleted filters do not count", async () => {
    const org = await signup("Quota");
    let last: any;
    for (let i = 0; i < 10; i++) {
      last = await create(org.session, { pattern: `q${i}.example`, match_type: "wide" });
      expect(last.status).toBe(201);
      expect(last.body.quota_remaining).toBe(9 - i);
    }
    expectError(await create(org.session, { pattern: "q10.example", match_type: "wide" }), 403, "quota_exceeded");
    expect((await call("DELETE", `/api/ct-log/filters/${last.body.id}`, { token: org.session })).status).toBe(200);
    const again = await create(org.session, { pattern: "q10.example", match_type: "wide" });
    expect(again.status).toBe(201);
    expect(again.body.quota_remaining).toBe(0);
    const sub = await call("GET", "/api/admin/subscription", { token: org.session });
    if (sub.status === 200) expect(sub.body.usage.ct_filters).toBe(10);
  });

  it("PUT changes only given fields; typosquat on an ineligible pattern is 400 typosquat_ineligible", async () => {
    const org = await signup("Put");
    const f = await create(org.session, { pattern: "brand.example", match_type: "wide", description: "main", typosquat_enabled: true });
    expect(f.status).toBe(201);
    const put = await call("PUT", `/api/ct-log/filters/${f.body.id}`, { token: org.session, body: { enabled: false, feed_dns_enabled: true } });
    expect(put.status).toBe(200);
    expect(put.body.message).toEqual(expect.any(String));
    const got = (await call("GET", `/api/ct-log/filters/${f.body.id}`, { token: org.session })).body;
    expect(got).toMatchObject({ pattern: "brand.example", description: "main", enabled: false, feed_dns_enabled: true, typosquat_enabled: true });
    expect(got.updated_at >= got.created_at).toBe(true);

    // Moving a typosquat-enabled filter to a subdomain pattern would make it ineligible.
    expectError(await call("PUT", `/api/ct-log/filters/${f.body.id}`, { token: org.session, body: { pattern: "www.brand.example" } }), 400, "typosquat_ineligible");
    expectError(await create(org.session, { pattern: "*.brand.example", match_type: "wide", typosquat_enabled: true }), 400, "typosquat_ineligible");
    expectError(await create(org.session, { pattern: "co.uk", match_type: "wide", typosquat_enabled: true }), 400, "typosquat_ineligible");
    const sub = await create(org.session, { pattern: "app.brand.example", match_type: "wide" });
    expectError(await call("PUT", `/api/ct-log/filters/${sub.body.id}`, { token: org.session, body: { typosquat_enabled: true } }), 400, "typosquat_ineligible");
    expect((await create(org.session, { pattern: "brand.co.uk", match_type: "exact", typosquat_enabled: true })).status).toBe(201);
  });

  it("pages and sorts by each of the six keys; rejects unknown sort keys and out-of-range pages", async () => {
    const org = await signup("Sort");
    const specs = [
      { pattern: "c.example", match_type: "wide", description: "bravo", enabled: true },
      { pattern: "a.example", match_type: "exact", description: "delta", enabled: false },
      { pattern: "d.example", match_type: "exact", description: "alpha", enabled: true },
      { pattern: "b.example", match_type: "wide", description: "charlie", enabled: false },
    ];
    const ids: number[] = [];
    for (const s of specs) ids.push((await create(org.session, s)).body.id);
    await call("PUT", `/api/ct-log/filters/${ids[0]}`, { token: org.session, body: { description: "bravo!" } });

    const list = async (q: string) => (await call("GET", `/api/ct-log/filters?${q}`, { token: org.session })).body;
    const def = await list("");
    expect(def).toMatchObject({ total: 4, page: 1, page_size: 10, sort_by: "pattern", sort_order: "asc" });
    expect(def.filters.map((f: any) => f.pattern)).toEqual(["a.example", "b.example", "c.example", "d.example"]);
    expect((await list("sort_by=pattern&sort_order=desc")).filters.map((f: any) => f.pattern)).toEqual(["d.example", "c.example", "b.example", "a.example"]);
    expect((await list("sort_by=description")).filters.map((f: any) => f.description)).toEqual(["alpha", "bravo!", "charlie", "delta"]);
    expect((await list("sort_by=match_type")).filters.map((f: any) => f.match_type)).toEqual(["exact", "exact", "wide", "wide"]);
    expect((await list("sort_by=enabled")).filters.map((f: any) => f.enabled)).toEqual([false, false, true, true]);
    expect((await list("sort_by=created_at")).filters.map((f: any) => f.id)).toEqual(ids);
    expect((await list("sort_by=updated_at&sort_order=desc")).filters[0].id).toBe(ids[0]);
    const p2 = await list("page=2&page_size=3");
    expect(p2).toMatchObject({ total: 4, page: 2, page_size: 3 });
    expect(p2.filters.map((f: any) => f.pattern)).toEqual(["d.example"]);

    expectError(await call("GET", "/api/ct-log/filters?sort_by=id", { token: org.session }), 400, "validation_error");
    expectError(await call("GET", "/api/ct-log/filters?sort_order=up", { token: org.session }), 400, "validation_error");
    expectError(await call("GET", "/api/ct-log/filters?page=0", { token: org.session }), 400, "validation_error");
    expectError(await call("GET", "/api/ct-log/filters?page_size=101", { token: org.session }), 400, "validation_error");

    // Typosquatting listing: enabled filters only, with eligibility.
    const ts = (await call("GET", "/api/ct-log/typosquatting/filters?sort_by=pattern", { token: org.session })).body;
    expect(ts.total).toBe(2);
    expect(ts.filters.map((f: any) => f.pattern)).toEqual(["c.example", "d.example"]);
    expect(ts.filters[0]).toMatchObject({ typosquat_enabled: false, typosquat_eligible: true, typosquat_ineligible_reason: "" });
    expectError(await call("GET", "/api/ct-log/typosquatting/filters?sort_by=description", { token: org.session }), 400, "validation_error");
  });

  it("soft delete hides the filter; another organization's filter is 404; permissions are enforced", async () => {
    const org = await signup("Iso");
    const other = await signup("Iso");
    const f = await create(org.session, { pattern: "iso.example", match_type: "wide" });
    for (const [method, body] of [["GET"], ["PUT", { enabled: false }], ["DELETE"]] as const) {
      expectError(await call(method, `/api/ct-log/filters/${f.body.id}`, { token: other.session, body }), 404, "not_found");
    }
    expect((await call("DELETE", `/api/ct-log/filters/${f.body.id}`, { token: org.session })).status).toBe(200);
    expectError(await call("GET", `/api/ct-log/filters/${f.body.id}`, { token: org.session }), 404, "not_found");
    expectError(await call("DELETE", `/api/ct-log/filters/${f.body.id}`, { token: org.session }), 404, "not_found");
    expect((await call("GET", "/api/ct-log/filters", { token: org.session })).body.total).toBe(0);

    const viewer = await createToken(org.session, ["ct-log:view_monitoring"]);
    expect((await call("GET", "/api/ct-log/filters", { token: viewer.token })).status).toBe(200);
    expectError(await create(viewer.token, { pattern: "v.example", match_type: "wide" }), 403, "forbidden");
    expectError(await call("GET", "/api/ct-log/filters"), 401, "unauthorized");
  });
});
