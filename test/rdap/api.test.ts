/**
 * RDAP monitor endpoints: creation with normalization, validation,
 * duplicates, quotas, paging and sorting, updates (a monitor switched back on), deletion, tenant isolation and
 * permissions. Polling is covered by poll.test.ts and faults.test.ts.
 */
import { describe, expect, it } from "vitest";
import { call, createToken, expectError, signup, unique } from "../helpers";
import { createMonitor, monitorOf, setTier } from "./poll-helpers";

describe("RDAP monitors: create", () => {
  it("stores the name as a lowercase A-label without trailing dot and reports quota_remaining", async () => {
    const org = await signup();
    const u = unique();
    const r = await call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: `Bücher-${u}.Example.`, notes: "shop" } });
    expect(r.status).toBe(201);
    expect(typeof r.body.id).toBe("number");
    expect(r.body.quota_remaining).toBe(9); // free tier: 10 RDAP monitors
    const list = await call("GET", "/api/rdap/domains", { token: org.session });
    expect(list.status).toBe(200);
    expect(list.body.domains).toHaveLength(1);
    const m = list.body.domains[0];
    expect(m.domain_name).toMatch(/^xn--/);
    expect(m.domain_name).toBe(new URL(`http://bücher-${u}.example/`).hostname);
    expect(m).toMatchObject({ id: r.body.id, tld: "example", enabled: true, notes: "shop", last_checked_at: null, last_check_status: null });
    expect(typeof m.created_at).toBe("string");
  });

  it("refuses invalid names with 400 validation_error", async () => {
    const org = await signup();
    for (const bad of ["", "localhost", "exa mple.com", "https://example.com/", "*.example.com", "-bad-.com", "example.123", "a".repeat(64) + ".com"]) {
      const r = await call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: bad } });
      expectError(r, 400, "validation_error");
    }
    expectError(await call("POST", "/api/rdap/domains", { token: org.session, body: {} }), 400, "validation_error");
    expectError(await call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: "ok.example", enabled: "yes" } }), 400, "validation_error");
  });

  it("one monitor per domain per organization: 409, whatever the spelling", async () => {
    const org = await signup();
    const name = `dup-${unique()}.example`;
    await createMonitor(org.session, name);
    expectError(await call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: name.toUpperCase() + "." } }), 409, "conflict");
    // Another organization may monitor the same domain.
    const other = await signup();
    expect((await call("POST", "/api/rdap/domains", { token: other.session, body: { domain_name: name } })).status).toBe(201);
  });

  it("enforces the tier quota (free 10, pro 100) and counts disabled monitors", async () => {
    const org = await signup();
    const u = unique();
    for (let i = 0; i < 10; i++) {
      const r = await call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: `q${i}-${u}.example`, enabled: i % 2 === 0 } });
      expect(r.status).toBe(201);
      expect(r.body.quota_remaining).toBe(9 - i);
    }
    const over = await call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: `q10-${u}.example` } });
    expectError(over, 403, "quota_exceeded");
    const sub = await call("GET", "/api/admin/subscription", { token: org.session });
    expect(sub.body.usage.rdap_monitors).toBe(10);
    await setTier(org.session, "pro");
    const r = await call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: `q10-${u}.example` } });
    expect(r.status).toBe(201);
    expect(r.body.quota_remaining).toBe(89);
  });
});

describe("RDAP monitors: list", () => {
  it("pages, sorts by each of the five keys, filters by enabled, validates the query", async () => {
    const org = await signup();
    const t = org.session;
    const u = unique();
    const names = [`c-${u}.fr`, `a-${u}.com`, `b-${u}.cz`, `d-${u}.com`];
    for (const [i, n] of names.entries()) await createMonitor(t, n, { enabled: i !== 2 });

    const all = await call("GET", "/api/rdap/domains", { token: t });
    expect(all.body).toMatchObject({ total: 4, limit: 100, offset: 0, sort_by: "domain_name", sort_order: "asc" });
    expect(all.body.domains.map((d: any) => d.domain_name)).toEqual([...names].sort());

    const page = await call("GET", "/api/rdap/domains?limit=2&offset=1&sort_order=desc", { token: t });
    expect(page.body.domains.map((d: any) => d.domain_name)).toEqual([...names].sort().reverse().slice(1, 3));
    expect(page.body.total).toBe(4);

    const byTld = await call("GET", "/api/rdap/domains?sort_by=tld&sort_order=desc", { token: t });
    expect(byTld.body.domains.map((d: any) => d.tld)).toEqual(["fr", "cz", "com", "com"]);
    const byEnabled = await call("GET", "/api/rdap/domains?sort_by=enabled", { token: t });
    expect(byEnabled.body.domains[0].domain_name).toBe(`b-${u}.cz`);
    const byCreated = await call("GET", "/api/rdap/domains?sort_by=created_at", { token: t });
    expect(byCreated.body.domains.map((d: any) => d.domain_name)).toEqual(names);
    const byChecked = await call("GET", "/api/rdap/domains?sort_by=last_checked_at&sort_order=asc", { token: t });
    expect(byChecked.status).toBe(200);
    expect(byChecked.body.sort_by).toBe("last_checked_at");

    const disabled = await call("GET", "/api/rdap/domains?enabled=false", { token: t });
    expect(disabled.body.domains.map((d: any) => d.domain_name)).toEqual([`b-${u}.cz`]);
    expect(disabled.body.total).toBe(1);
    const enabled = await call("GET", "/api/rdap/domains?enabled=true", { token: t });
    expect(enabled.body.total).toBe(3);

    for (const q of ["limit=0", "limit=1001", "offset=-1", "sort_by=name", "sort_order=up", "enabled=maybe", "limit=abc"]) {
      expectError(await call("GET", `/api/rdap/domains?${q}`, { token: t }), 400, "validation_error");
    }
    expect((await call("GET", "/api/rdap/domains?limit=1000", { token: t })).status).toBe(200);
  });

  it("changes: limit default 10 max 100, sort keys validated", async () => {
    const org = await signup();
    const r = await call("GET", "/api/rdap/changes", { token: org.session });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ changes: [], total: 0, limit: 10, offset: 0, sort_by: "changed_at", sort_order: "desc" });
    expectError(await call("GET", "/api/rdap/changes?limit=101", { token: org.session }), 400, "validation_error");
    expectError(await call("GET", "/api/rdap/changes?sort_by=created_at", { token: org.session }), 400, "validation_error");
    expect((await call("GET", "/api/rdap/changes?limit=100&sort_by=tld&sort_order=asc", { token: org.session })).body.sort_by).toBe("tld");
  });
});

describe("RDAP monitors: update, delete, isolation, permissions", () => {
  it("a monitor switched back on after its next attempt passed is asked at the next minute; the collection object says so", async () => {
    const org = await signup();
    const name = `reenabled-${unique()}.example`;
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const at = (ms: number) => ({ "x-trust-plane-now": new Date(ms).toISOString() });
    const created = await call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: name }, headers: at(minute + 10_000) });
    expect(created.status).toBe(201);
    expect((await monitorOf(org.session, name)).collection).toMatchObject({ state: "pending", next_attempt_at: new Date(minute + 60_000).toISOString() });
    const patch = async (enabled: boolean, ms: number) => expect((await call("PATCH", `/api/rdap/domains/${created.body.id}`, { token: org.session, body: { enabled }, headers: at(ms) })).status).toBe(200);
    await patch(false, minute + 20_000);
    expect((await monitorOf(org.session, name)).collection).toMatchObject({ state: "paused", next_attempt_at: null });
    // Three hours later, 25 s into a minute: the next minute, not the attempt that passed while it was off.
    await patch(true, minute + 3 * 3600_000 + 25_000);
    expect((await monitorOf(org.session, name)).collection).toMatchObject({ state: "pending", last_attempt_at: null, next_attempt_at: new Date(minute + 3 * 3600_000 + 60_000).toISOString() });
  });

  it("PATCH updates notes and enabled; DELETE removes; other organizations get 404", async () => {
    const org = await signup();
    const other = await signup();
    const name = `patch-${unique()}.example`;
    const id = await createMonitor(org.session, name);

    const p = await call("PATCH", `/api/rdap/domains/${id}`, { token: org.session, body: { notes: "registrar lock expected", enabled: false } });
    expect(p.status).toBe(200);
    expect(typeof p.body.message).toBe("string");
    let m = (await call("GET", "/api/rdap/domains", { token: org.session })).body.domains[0];
    expect(m).toMatchObject({ notes: "registrar lock expected", enabled: false });
    await call("PATCH", `/api/rdap/domains/${id}`, { token: org.session, body: { enabled: true } });
    m = (await call("GET", "/api/rdap/domains", { token: org.session })).body.domains[0];
    expect(m).toMatchObject({ notes: "registrar lock expected", enabled: true });
    expectError(await call("PATCH", `/api/rdap/domains/${id}`, { token: org.session, body: {} }), 400, "validation_error");
    expectError(await call("PATCH", `/api/rdap/domains/${id}`, { token: org.session, body: { notes: 5 } }), 400, "validation_error");

    // Another organization: 404 for every path keyed by id or domain, and its listing is empty.
    expectError(await call("PATCH", `/api/rdap/domains/${id}`, { token: other.session, body: { notes: "x" } }), 404, "not_found");
    expectError(await call("DELETE", `/api/rdap/domains/${id}`, { token: other.session }), 404, "not_found");
    for (const sub of ["history", "snapshot", "diff"]) {
      expectError(await call("GET", `/api/rdap/domains/${name}/${sub}`, { token: other.session }), 404, "not_found");
    }
    expect((await call("GET", "/api/rdap/domains", { token: other.session })).body.total).toBe(0);

    // History of a monitor never checked: empty; snapshot: 404.
    const h = await call("GET", `/api/rdap/domains/${name.toUpperCase()}/history`, { token: org.session });
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ domain: name, snapshots: [], total: 0 });
    expectError(await call("GET", `/api/rdap/domains/${name}/snapshot`, { token: org.session }), 404, "not_found");
    expectError(await call("GET", `/api/rdap/domains/not a domain/history`, { token: org.session }), 400, "validation_error");

    const d = await call("DELETE", `/api/rdap/domains/${id}`, { token: org.session });
    expect(d.status).toBe(200);
    expectError(await call("DELETE", `/api/rdap/domains/${id}`, { token: org.session }), 404, "not_found");
    expectError(await call("GET", `/api/rdap/domains/${name}/history`, { token: org.session }), 404, "not_found");
    expect((await call("GET", "/api/rdap/domains", { token: org.session })).body.total).toBe(0);
    expectError(await call("PATCH", `/api/rdap/domains/abc`, { token: org.session, body: { notes: "" } }), 400, "validation_error");

    const audit = await call("GET", "/api/admin/audit-logs?limit=20", { token: org.session });
    const actions = JSON.stringify(audit.body);
    for (const a of ["rdap_monitor.create", "rdap_monitor.update", "rdap_monitor.delete"]) expect(actions).toContain(a);
  });

  it("needs the rdap permissions: a token without them is 403, a view-only token cannot create", async () => {
    const org = await signup();
    const listsOnly = await createToken(org.session, ["lists:view_lists"]);
    expectError(await call("GET", "/api/rdap/domains", { token: listsOnly.token }), 403, "forbidden");
    expectError(await call("GET", "/api/rdap/changes", { token: listsOnly.token }), 403, "forbidden");
    const viewer = await createToken(org.session, ["rdap:view_monitoring"]);
    expect((await call("GET", "/api/rdap/domains", { token: viewer.token })).status).toBe(200);
    expectError(await call("POST", "/api/rdap/domains", { token: viewer.token, body: { domain_name: `v-${unique()}.example` } }), 403, "forbidden");
    const id = await createMonitor(org.session, `v-${unique()}.example`);
    expectError(await call("PATCH", `/api/rdap/domains/${id}`, { token: viewer.token, body: { enabled: false } }), 403, "forbidden");
    expectError(await call("DELETE", `/api/rdap/domains/${id}`, { token: viewer.token }), 403, "forbidden");
    expectError(await call("GET", "/api/rdap/domains"), 401, "unauthorized");
  });
});
