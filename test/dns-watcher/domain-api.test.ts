/**
 * The DNS watcher API around resolved data: record set ids and tenant isolation, PATCH
 * (a domain switched back on) and DELETE of a domain, history paging, the policies cleared with their record set,
 * the per-domain record set cap. Resolutions run against the fake DoH resolver of the
 * fixture hub (fake-doh.ts), called directly like the Cron Trigger does.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, expectError, signup, unique } from "../helpers";
import { fakeResolver, fakeZone } from "./fake-doh";
import { forgetWatchedDomains, lastRunAt, runWatch, watchDomain } from "./lab";

const E = env as any;

beforeEach(forgetWatchedDomains);

const records = async (token: string, domainId: number) => (await call("GET", `/api/dns-watcher/domains/${domainId}/records`, { token })).body.records as { id: number; name: string; type: string }[];

describe("record sets", () => {
  it("a record id of another organization, or under another domain of the same organization, is 404; under its own domain it is deleted", async () => {
    const a = await signup();
    const b = await signup();
    const a1 = await watchDomain(a, `a1-${unique()}.test`);
    const a2 = await watchDomain(a, `a2-${unique()}.test`);
    const b1 = await watchDomain(b, `b1-${unique()}.test`);
    const recA1 = (await records(a.session, a1))[0].id;
    const recB1 = (await records(b.session, b1))[0].id;
    // Another organization's record id, under the caller's own domain.
    expectError(await call("DELETE", `/api/dns-watcher/domains/${a1}/records/${recB1}`, { token: a.session }), 404, "not_found");
    // The caller's record id, under another of its domains.
    expectError(await call("DELETE", `/api/dns-watcher/domains/${a2}/records/${recA1}`, { token: a.session }), 404, "not_found");
    expect(await records(a.session, a1)).toHaveLength(7);
    expect(await records(b.session, b1)).toHaveLength(7);
    const ok = await call("DELETE", `/api/dns-watcher/domains/${a1}/records/${recA1}`, { token: a.session });
    expect(ok.status).toBe(200);
    expect((await records(a.session, a1)).map((r) => r.id)).not.toContain(recA1);
  });

  it("a domain watches at most 50 record sets, also under parallel adds (403 quota_exceeded, like a monitor's target cap)", async () => {
    const org = await signup();
    const id = await watchDomain(org, `cap-${unique()}.test`);
    const add = (i: number) => call("POST", `/api/dns-watcher/domains/${id}/records`, { token: org.session, body: { name: `h${i}`, type: "A" } });
    for (let i = 0; i < 30; i++) expect((await add(i)).status).toBe(201);
    const parallel = await Promise.all(Array.from({ length: 20 }, (_, i) => add(100 + i)));
    expect(parallel.filter((r) => r.status === 201)).toHaveLength(13); // 7 default + 30 + 13 = 50
    for (const r of parallel.filter((x) => x.status !== 201)) expectError(r, 403, "quota_exceeded");
    expect(await records(org.session, id)).toHaveLength(50);
    const over = await add(999);
    expectError(over, 403, "quota_exceeded");
    expect(over.body.error.message).toMatch(/at most 50 record sets/);
  });

  it("deleting the apex TXT or the _dmarc TXT record set clears the parsed SPF or DMARC policy with it", async () => {
    const org = await signup();
    const domain = `pol-${unique()}.test`;
    const id = await watchDomain(org, domain);
    const resolver = await fakeResolver(fakeZone(domain, { spf: "v=spf1 mx -all" }));
    await runWatch({ resolverUrls: [resolver.url] });
    const before = (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
    expect(before.spf).toMatchObject({ watched: true, record: "v=spf1 mx -all", all: "-all" });
    expect(before.dmarc).toMatchObject({ watched: true, p: "reject" });

    const sets = await records(org.session, id);
    for (const name of [domain, `_dmarc.${domain}`]) {
      const set = sets.find((s) => s.name === name && s.type === "TXT")!;
      expect((await call("DELETE", `/api/dns-watcher/domains/${id}/records/${set.id}`, { token: org.session })).status).toBe(200);
    }
    const after = (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
    // Not watched: nothing is known (never "none": no lookup said so), and nothing else is stated:
    // no "allows_all: false", no "pct: 100" beside an unknown status.
    expect(after.spf).toEqual({
      status: "unknown", watched: false, record: null, mechanisms: null, includes: null, redirect: null, lookup_count: null, void_lookups: null,
      all: null, allows_all: null, allows_all_via: null, errors: null, target_records: null,
    });
    expect(after.dmarc).toEqual({
      status: "unknown", watched: false, record: null, valid: null, p: null, sp: null, np: null, pct: null, t: null, adkim: null, aspf: null,
      rua: null, ruf: null, psd: null, fo: null, errors: null,
    });
    const row = await E.DB.prepare("SELECT spf_json, dmarc_json FROM dns_domains WHERE id = ?").bind(id).first();
    expect(row).toEqual({ spf_json: null, dmarc_json: null });
    // A later run does not bring them back.
    await runWatch({ resolverUrls: [resolver.url] });
    expect(await E.DB.prepare("SELECT spf_json, dmarc_json FROM dns_domains WHERE id = ?").bind(id).first()).toEqual({ spf_json: null, dmarc_json: null });
    // Watched again: parsed again at the next run.
    expect((await call("POST", `/api/dns-watcher/domains/${id}/records`, { token: org.session, body: { name: "@", type: "TXT" } })).status).toBe(201);
    const readded = (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
    expect(readded.spf).toMatchObject({ watched: true, status: "unknown", allows_all: null, lookup_count: null });
    expect(readded.records.find((r: any) => r.name === domain && r.type === "TXT")).toMatchObject({ values: null, collection: { state: "pending", last_attempt_at: null, error: null } });
    await runWatch({ resolverUrls: [resolver.url] });
    expect((await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body.spf).toMatchObject({ watched: true, record: "v=spf1 mx -all" });
  });
});

describe("domains", () => {
  it("PATCH notes and enabled, DELETE; a disabled domain is not resolved, and is again once enabled", async () => {
    const org = await signup();
    const on = `on-${unique()}.test`;
    const off = `off-${unique()}.test`;
    const idOn = await watchDomain(org, on);
    const idOff = await watchDomain(org, off);
    const resolver = await fakeResolver([...fakeZone(on), ...fakeZone(off)]);
    const patched = await call("PATCH", `/api/dns-watcher/domains/${idOff}`, { token: org.session, body: { enabled: false, notes: "paused during the migration" } });
    expect(patched.status).toBe(200);
    const d = (await call("GET", `/api/dns-watcher/domains/${idOff}`, { token: org.session })).body;
    expect(d).toMatchObject({ enabled: false, notes: "paused during the migration" });
    expectError(await call("PATCH", `/api/dns-watcher/domains/${idOff}`, { token: org.session, body: {} }), 400, "validation_error");

    const run = await runWatch({ resolverUrls: [resolver.url] });
    expect(run.summary.due_domains).toBe(1);
    expect((await resolver.log()).every((q) => !q.name.endsWith(off))).toBe(true);
    expect((await call("GET", `/api/dns-watcher/domains/${idOff}`, { token: org.session })).body.last_checked_at).toBeNull();

    expect((await call("PATCH", `/api/dns-watcher/domains/${idOff}`, { token: org.session, body: { enabled: true } })).status).toBe(200);
    expect((await runWatch({ resolverUrls: [resolver.url] })).summary.due_domains).toBe(2);
    expect((await call("GET", `/api/dns-watcher/domains/${idOff}`, { token: org.session })).body).toMatchObject({ enabled: true, notes: "paused during the migration", last_check_status: "ok" });

    const deleted = await call("DELETE", `/api/dns-watcher/domains/${idOn}`, { token: org.session });
    expect(deleted.status).toBe(200);
    expectError(await call("GET", `/api/dns-watcher/domains/${idOn}`, { token: org.session }), 404, "not_found");
    expect(await E.DB.prepare("SELECT count(*) AS n FROM dns_record_sets WHERE domain_id = ?").bind(idOn).first()).toEqual({ n: 0 });
    expect((await runWatch({ resolverUrls: [resolver.url] })).summary.due_domains).toBe(1);
  });

  it("switched back on: asked at the next minute when its next attempt passed while it was paused, otherwise its schedule stands", async () => {
    const org = await signup();
    const name = `reenabled-${unique()}.test`;
    const id = await watchDomain(org, name);
    const resolver = await fakeResolver(fakeZone(name));
    await runWatch({ resolverUrls: [resolver.url], intervalSeconds: 3600 });
    const ranAt = lastRunAt();
    const collection = async () => (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body.collection;
    const patch = async (enabled: boolean, at: number) => {
      const r = await call("PATCH", `/api/dns-watcher/domains/${id}`, { token: org.session, body: { enabled }, headers: { "x-trust-plane-now": new Date(at).toISOString() } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    };
    const scheduled = new Date(ranAt + 3600_000).toISOString();
    expect(await collection()).toMatchObject({ state: "ok", next_attempt_at: scheduled });

    await patch(false, ranAt + 60_000);
    expect(await collection()).toMatchObject({ state: "paused", next_attempt_at: null });
    // Back on before its next attempt: that attempt stands.
    await patch(true, ranAt + 120_000);
    expect(await collection()).toMatchObject({ state: "ok", next_attempt_at: scheduled });

    await patch(false, ranAt + 180_000);
    // Back on two hours later (25 s into a minute): asked at the next minute, not at a time already past.
    const minute = Math.floor(ranAt / 60_000) * 60_000 + 2 * 3600_000;
    await patch(true, minute + 25_000);
    expect(await collection()).toMatchObject({ state: "ok", last_attempt_at: new Date(ranAt).toISOString(), next_attempt_at: new Date(minute + 60_000).toISOString() });
  });

  it("history pages newest first, with the total", async () => {
    const org = await signup();
    const domain = `hist-${unique()}.test`;
    const id = await watchDomain(org, domain);
    const resolver = await fakeResolver(fakeZone(domain, { a: "192.0.2.1" }));
    await runWatch({ resolverUrls: [resolver.url] });
    for (let i = 2; i <= 6; i++) {
      await resolver.set(fakeZone(domain, { a: `192.0.2.${i}` }));
      expect((await runWatch({ resolverUrls: [resolver.url] })).summary.changes).toBe(1);
    }
    const page = (q: string) => call("GET", `/api/dns-watcher/domains/${id}/history${q}`, { token: org.session });
    const first = (await page("?limit=2")).body;
    expect(first).toMatchObject({ total: 5, limit: 2, offset: 0 });
    expect(first.changes.map((c: any) => c.new_values)).toEqual([["192.0.2.6"], ["192.0.2.5"]]);
    const second = (await page("?limit=2&offset=2")).body;
    expect(second.changes.map((c: any) => c.new_values)).toEqual([["192.0.2.4"], ["192.0.2.3"]]);
    const last = (await page("?limit=2&offset=4")).body;
    expect(last.changes.map((c: any) => [c.old_values, c.new_values])).toEqual([[["192.0.2.1"], ["192.0.2.2"]]]);
    const all = (await page("")).body;
    expect(all.changes.map((c: any) => c.observed_at)).toEqual([...all.changes.map((c: any) => c.observed_at)].sort().reverse());
    expectError(await page("?limit=101"), 400, "validation_error");
  });
});
