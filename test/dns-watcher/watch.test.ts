/**
 * The DNS watcher end to end against the real DNS lab (BIND + Unbound + dnsdist, see
 * test/fixtures/dns-lab.ts): zones edited between scheduled runs, the Cron Trigger fired
 * through the Worker's scheduled handler, results read through the API, events through
 * alert rules and a webhook channel to the fixture hub's receiver, facts from D1.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { alertStateOf } from "../../src/modules/alerting/emit";
import { call, expectError, signup, unique, type Org } from "../helpers";
import { rowCount, runCron } from "../rdap/poll-helpers";
import { labDohUrl, putZone, startLab, stopLab, uniqueZone } from "./lab";

const E = env as any;
const base = E.FIXTURE_URL as string;

const ZONE = (txt: string[], extra = "") =>
  `@ IN A 192.0.2.10\n@ IN AAAA 2001:db8::10\n@ IN MX 10 mx1\n@ IN MX 20 mx2\n${txt.map((t) => `@ IN TXT ${t}`).join("\n")}\n@ IN CAA 0 issue "letsencrypt.org"\n_dmarc IN TXT "v=DMARC1; p=reject; rua=mailto:d@x.test"\nmx1 IN A 192.0.2.25\nmx2 IN A 192.0.2.26\n${extra}`;

async function cron(): Promise<void> {
  await runCron({ DOH_RESOLVER_URLS: await labDohUrl(), DNS_CHECK_INTERVAL_SECONDS: "0", DNS_TIMEOUT_MS: "2000" });
}

async function watch(org: Org, domain: string): Promise<number> {
  const r = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: domain } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}
const detail = async (org: Org, id: number) => (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
const changes = async (org: Org, id: number) => (await call("GET", `/api/dns-watcher/domains/${id}/history`, { token: org.session })).body;
const facts = async (domainId: number) =>
  ((await E.DB.prepare("SELECT kind, record_name, record_type, old_values, new_values, detail FROM dns_change_facts WHERE domain_id = ? ORDER BY id").bind(domainId).all()).results as any[]);

describe("scheduled resolution against the DNS lab", () => {
  it("baseline, then each zone edit is exactly one confirmed change; reordering and TTL changes are none", async () => {
    const org = await signup();
    const zone = uniqueZone();
    await putZone(zone, ZONE(['"v=spf1 ip4:192.0.2.0/24 -all"', '"google-site-verification=abc"']));
    const id = await watch(org, zone);
    await cron();
    let d = await detail(org, id);
    expect(d.last_check_status).toBe("ok");
    expect(d.dnssec_status).toBe("validated");
    expect(d.records.find((r: any) => r.type === "MX").values).toEqual([`10 mx1.${zone}.`, `20 mx2.${zone}.`]);
    expect(d.spf).toMatchObject({ status: "ok", all: "-all", allows_all: false, mechanisms: ["ip4:192.0.2.0/24", "-all"] });
    expect(d.dmarc).toMatchObject({ valid: true, p: "reject", rua: ["mailto:d@x.test"] });
    expect((await changes(org, id)).total).toBe(0); // the baseline is not a change

    // TXT order and TTL changed, nothing else: no change, no history row.
    await putZone(zone, ZONE(['"google-site-verification=abc"', '"v=spf1 ip4:192.0.2.0/24 -all"']).replace(/^@ IN MX/gm, "@ 60 IN MX"));
    const historyBefore = await rowCount("dns_history");
    await cron();
    expect(await rowCount("dns_history")).toBe(historyBefore);
    expect((await changes(org, id)).total).toBe(0);

    // An MX edit: exactly one confirmed change, one mx fact.
    await putZone(zone, ZONE(['"google-site-verification=abc"', '"v=spf1 ip4:192.0.2.0/24 -all"']).replace("@ IN MX 20 mx2", "@ IN MX 30 mx2"));
    await cron();
    let h = await changes(org, id);
    expect(h.total).toBe(1);
    expect(h.changes[0]).toMatchObject({ kind: "record", name: zone, type: "MX", old_values: [`10 mx1.${zone}.`, `20 mx2.${zone}.`], new_values: [`10 mx1.${zone}.`, `30 mx2.${zone}.`] });
    await cron(); // seen again: still one
    expect((await changes(org, id)).total).toBe(1);
    expect((await facts(id)).map((f) => f.kind)).toEqual(["mx_changed"]);

    // Apex A change: apex fact.
    await putZone(zone, ZONE(['"google-site-verification=abc"', '"v=spf1 ip4:192.0.2.0/24 -all"']).replace("@ IN MX 20 mx2", "@ IN MX 30 mx2").replace("@ IN A 192.0.2.10", "@ IN A 192.0.2.11"));
    await cron();
    h = await changes(org, id);
    expect(h.total).toBe(2);
    expect(h.changes[0]).toMatchObject({ type: "A", old_values: ["192.0.2.10"], new_values: ["192.0.2.11"] }); // newest first
    expect((await facts(id)).map((f) => f.kind)).toEqual(["mx_changed", "apex_changed"]);
  });

  it("a stopped resolver for one run is a lookup error, never a removal or change", async () => {
    const org = await signup();
    const zone = uniqueZone();
    await putZone(zone, ZONE(['"v=spf1 -all"']));
    const id = await watch(org, zone);
    await cron();
    const before = await detail(org, id);
    await stopLab("unbound"); // dnsdist answers SERVFAIL
    try {
      await cron();
    } finally {
      await startLab("unbound");
    }
    let d = await detail(org, id);
    expect(d.last_check_status).toBe("error");
    expect(d.records.every((r: any) => r.last_error !== null)).toBe(true);
    expect(d.records.map((r: any) => r.values)).toEqual(before.records.map((r: any) => r.values));
    expect(d.dnssec_status).toBe("validated");
    await stopLab("dnsdist"); // connection refused
    try {
      await cron();
    } finally {
      await startLab("dnsdist");
    }
    d = await detail(org, id);
    expect(d.last_check_detail).toMatch(/^[\w.-]+ A: connection to DoH resolver 127\.0\.0\.1:\d+ failed: refused or closed before an answer;/);
    // Two runs in a row resolved nothing: failing since the first, with the latest reason.
    expect(d.collection).toMatchObject({ state: "failing", consecutive_failures: 2, error: { class: "connect" } });
    expect(JSON.stringify(d)).not.toMatch(/internal error/i);
    expect(d.records.map((r: any) => r.values)).toEqual(before.records.map((r: any) => r.values));
    await cron();
    d = await detail(org, id);
    expect(d.last_check_status).toBe("ok");
    expect(d.collection).toMatchObject({ state: "ok", consecutive_failures: 0, failing_since: null, error: null });
    expect(d.records.every((r: any) => r.last_error === null && r.collection.state === "ok")).toBe(true);
    expect((await changes(org, id)).total).toBe(0);
    expect(await facts(id)).toEqual([]);
  });

  it("garbage and HTML from the resolver are lookup errors", async () => {
    const org = await signup();
    const zone = uniqueZone();
    await putZone(zone, ZONE(['"v=spf1 -all"']));
    const id = await watch(org, zone);
    await cron();
    for (const fail of ["garbage", "wrong-type", "http500"]) {
      const ns = `g${unique()}`;
      await fetch(`${base}/doh/__control/zone`, { method: "POST", body: JSON.stringify({ ns, records: [], fail }) });
      await runCron({ DOH_RESOLVER_URLS: `${base}/doh/${ns}/dns-query`, DNS_CHECK_INTERVAL_SECONDS: "0", DNS_TIMEOUT_MS: "1000" });
      const d = await detail(org, id);
      expect(d.last_check_status, fail).toBe("error");
      expect(d.records.find((r: any) => r.type === "A").values).toEqual(["192.0.2.10"]);
    }
    expect((await changes(org, id)).total).toBe(0);
  });

  it("validated, insecure and bogus zones; a zone turning bogus is a confirmed DNSSEC failure with its EDE", async () => {
    const org = await signup();
    const signed = uniqueZone("s");
    const insecure = uniqueZone("i");
    await putZone(signed, ZONE(['"v=spf1 -all"']));
    await putZone(insecure, ZONE(['"v=spf1 -all"']), "insecure");
    const ids = { signed: await watch(org, signed), insecure: await watch(org, insecure), bogus: await watch(org, "bogus.test") };
    await cron();
    expect((await detail(org, ids.signed)).dnssec).toMatchObject({ status: "validated", validated: true });
    expect((await detail(org, ids.insecure)).dnssec).toMatchObject({ status: "insecure", validated: false });
    const bogus = await detail(org, ids.bogus);
    expect(bogus.dnssec.status).toBe("bogus");
    expect(bogus.dnssec.error).toMatch(/SERVFAIL.*EDE/);
    expect(bogus.records.find((r: any) => r.type === "A").values).toBeNull(); // bogus data is never stored
    expect((await facts(ids.bogus)).map((f) => f.kind)).toEqual(["dnssec_failed"]);

    await putZone(signed, ZONE(['"v=spf1 -all"']), "bogus");
    await cron();
    const d = await detail(org, ids.signed);
    expect(d.dnssec.status).toBe("bogus");
    expect(d.records.find((r: any) => r.type === "A").values).toEqual(["192.0.2.10"]); // no false removal
    const h = await changes(org, ids.signed);
    expect(h.changes.map((c: any) => c.kind)).toEqual(["dnssec"]);
    expect((await facts(ids.signed)).map((f) => f.kind)).toEqual(["dnssec_failed"]);
  });

  it("DMARC and SPF regressions become events (rule fired, webhook delivered) and facts", async () => {
    const org = await signup();
    const zone = uniqueZone();
    await putZone(zone, ZONE(['"v=spf1 include:_spf.' + zone + ' -all"'], '_spf IN TXT "v=spf1 ip4:198.51.100.0/24 -all"\n'));
    const id = await watch(org, zone);
    const box = unique();
    const ch = await call("POST", "/api/notification-channels", { token: org.session, body: { name: `ch-${unique()}`, kind: "webhook", url: `${base}/webhook/${box}` } });
    expect(ch.status).toBe(201);
    for (const [name, expression] of [
      ["dmarc weakened", `domain == "${zone}" && "policy_lowered" in dmarc.regressions`],
      ["spf permissive", `domain == "${zone}" && spf.became_permissive`],
    ]) {
      const r = await call("POST", "/api/dns-watcher/alert-rules", { token: org.session, body: { name, expression, severity: "critical", throttle_seconds: 0, channel_ids: [ch.body.id] } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    await cron();
    expect((await detail(org, id)).spf).toMatchObject({ lookup_count: 1, allows_all: false, includes: [`_spf.${zone}`] });

    // The include target turns +all and the apex record changes to use it; DMARC drops to p=none without rua.
    await putZone(zone, ZONE(['"v=spf1 include:_spf.' + zone + ' ~all"'], '_spf IN TXT "v=spf1 +all"\n').replace('"v=DMARC1; p=reject; rua=mailto:d@x.test"', '"v=DMARC1; p=none"'));
    await cron();
    const d = await detail(org, id);
    expect(d.spf).toMatchObject({ allows_all: true, allows_all_via: `include:_spf.${zone}`, all: "~all" });
    expect(d.dmarc).toMatchObject({ p: "none", rua: [] });
    const f = await facts(id);
    expect(f.map((x) => x.kind).sort()).toEqual(["dmarc_weakened", "spf_allows_all"]);
    expect(f.find((x) => x.kind === "dmarc_weakened").detail).toMatch(/^DMARC weakened: policy lowered from reject to none.*aggregate report address removed: mailto:d@x.test/);
    expect(JSON.parse(f.find((x) => x.kind === "spf_allows_all").new_values)).toEqual([`"v=spf1 include:_spf.${zone} ~all"`]);
    const h = await changes(org, id);
    const dm = h.changes.find((c: any) => c.name === `_dmarc.${zone}`);
    expect(dm.analysis.dmarc.regressions.map((r: any) => r.kind)).toEqual(["policy_lowered", "policy_lowered", "policy_lowered", "reporting_removed"]);

    const alerts = (await call("GET", "/api/dns-watcher/alert-history?limit=100", { token: org.session })).body.alerts as any[];
    expect(alerts.length).toBe(2); // one event, both rules fired
    const stub = alertStateOf(E, org.organizationId) as unknown as DurableObjectStub;
    // (untyped: the RPC type of AlertState is too deep for tsc)
    await (runInDurableObject as unknown as (s: DurableObjectStub, fn: (o: any) => Promise<unknown>) => Promise<unknown>)(stub, (o) => o.deliverNow(org.organizationId));
    const inbox = (await (await fetch(`${base}/webhook/__control/${box}`)).json()) as { received: { body: string }[] };
    const got = inbox.received;
    expect(got.length).toBe(2);
    const payload = JSON.parse(got[0].body);
    expect(JSON.stringify(payload)).toContain("policy_lowered");

    // DMARC removed entirely: a dmarc_removed fact.
    await putZone(zone, ZONE(['"v=spf1 include:_spf.' + zone + ' ~all"'], '_spf IN TXT "v=spf1 +all"\n').replace(/_dmarc IN TXT .*\n/, ""));
    await cron();
    expect((await facts(id)).map((x) => x.kind)).toContain("dmarc_removed");
  });
});

describe("DNS watcher API", () => {
  it("creates with the default record sets, normalizes names, 409 on a duplicate, pages and sorts", async () => {
    const org = await signup();
    const r = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: "Corp.TEST.", notes: "internal" } });
    expect(r.status).toBe(201);
    expect(r.body.quota_remaining).toBe(9);
    const rs = await call("GET", `/api/dns-watcher/domains/${r.body.id}/records`, { token: org.session });
    expect(rs.body.records.map((x: any) => `${x.name} ${x.type}`)).toEqual(["_dmarc.corp.test TXT", "corp.test A", "corp.test AAAA", "corp.test CAA", "corp.test MX", "corp.test NS", "corp.test TXT"]);
    expectError(await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: "corp.test" } }), 409, "conflict");
    expect((await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: "bücher.example" } })).status).toBe(201);
    const list = await call("GET", "/api/dns-watcher/domains?sort_by=domain_name&sort_order=desc&limit=1", { token: org.session });
    expect(list.body).toMatchObject({ total: 2, limit: 1, offset: 0, sort_by: "domain_name", sort_order: "desc" });
    expect(list.body.domains[0].domain_name).toBe("xn--bcher-kva.example");
    expectError(await call("GET", "/api/dns-watcher/domains?sort_by=nope", { token: org.session }), 400, "validation_error");
  });

  it("bad input is 400 with the field; nothing half-saved", async () => {
    const org = await signup();
    const bad = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: "not a domain" } });
    expectError(bad, 400, "validation_error");
    expect(bad.body.error.details[0].path).toBe("domain_name");
    const id = (await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: `d${unique()}.test` } })).body.id;
    const type = await call("POST", `/api/dns-watcher/domains/${id}/records`, { token: org.session, body: { name: "@", type: "SPF" } });
    expectError(type, 400, "validation_error");
    expect(type.body.error.details[0].path).toBe("type");
    const outside = await call("POST", `/api/dns-watcher/domains/${id}/records`, { token: org.session, body: { name: "www.elsewhere.test", type: "A" } });
    expectError(outside, 400, "validation_error");
    expect(outside.body.error.details[0].path).toBe("name");
    const ok = await call("POST", `/api/dns-watcher/domains/${id}/records`, { token: org.session, body: { name: "_MTA-STS", type: "TXT" } });
    expect(ok.status).toBe(201);
    expectError(await call("POST", `/api/dns-watcher/domains/${id}/records`, { token: org.session, body: { name: "_mta-sts", type: "TXT" } }), 409, "conflict");
    expect((await call("GET", `/api/dns-watcher/domains/${id}/records`, { token: org.session })).body.records).toHaveLength(8);
  });

  it("tenant isolation: another organization's domain, record set and history are 404", async () => {
    const a = await signup();
    const b = await signup();
    const id = (await call("POST", "/api/dns-watcher/domains", { token: a.session, body: { domain_name: `iso${unique()}.test` } })).body.id;
    const rec = (await call("GET", `/api/dns-watcher/domains/${id}/records`, { token: a.session })).body.records[0].id;
    for (const [method, path, body] of [
      ["GET", `/api/dns-watcher/domains/${id}`],
      ["PATCH", `/api/dns-watcher/domains/${id}`, { notes: "x" }],
      ["DELETE", `/api/dns-watcher/domains/${id}`],
      ["GET", `/api/dns-watcher/domains/${id}/records`],
      ["POST", `/api/dns-watcher/domains/${id}/records`, { name: "@", type: "SOA" }],
      ["DELETE", `/api/dns-watcher/domains/${id}/records/${rec}`],
      ["GET", `/api/dns-watcher/domains/${id}/history`],
    ] as const) {
      expectError(await call(method, path, { token: b.session, body }), 404, "not_found");
    }
    expect((await call("GET", "/api/dns-watcher/domains", { token: b.session })).body.total).toBe(0);
    expect((await call("GET", `/api/dns-watcher/domains/${id}`, { token: a.session })).status).toBe(200);
  });

  it("an accepted CT feed_dns proposal becomes a watched record set, or a domain; within the quota; idempotent", async () => {
    const org = await signup();
    const other = await signup();
    const domain = `feed${unique()}.test`;
    const id = (await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: domain } })).body.id;
    const filter = await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: domain, match_type: "wide", feed_dns_enabled: true } });
    expect(filter.status, JSON.stringify(filter.body)).toBe(201);
    // What CT ingest writes for a name seen in a new certificate (the ingest itself is tested in test/ct-log).
    const propose = async (hostname: string) =>
      (await E.DB.prepare("INSERT INTO ct_proposals (organization_id, kind, hostname, filter_id, source_sha256, created_at) VALUES (?, 'dns', ?, ?, ?, ?) RETURNING id")
        .bind(org.organizationId, hostname, filter.body.id, "ab".repeat(32), new Date().toISOString())
        .first()).id as number;
    const accept = (proposalId: number, token = org.session) => call("POST", `/api/ct-log/proposals/${proposalId}/accept`, { token });
    const sets = async () => (await call("GET", `/api/dns-watcher/domains/${id}/records`, { token: org.session })).body.records.map((r: any) => `${r.name} ${r.type}`);
    const proposal = async (proposalId: number) => (await call("GET", "/api/ct-log/proposals?page_size=100", { token: org.session })).body.proposals.find((p: any) => p.id === proposalId);

    // A name inside a watched domain: its A and AAAA join that domain; a wildcard proposes its base name.
    const shop = await propose(`shop.${domain}`);
    expectError(await accept(shop, other.session), 404, "not_found");
    const inside = await accept(shop);
    expect(inside.status, JSON.stringify(inside.body)).toBe(200);
    expect(inside.body.message).toContain(`shop.${domain} A and AAAA in ${domain}`);
    expect(await sets()).toEqual(expect.arrayContaining([`shop.${domain} A`, `shop.${domain} AAAA`]));
    expect((await proposal(shop)).status).toBe("accepted");
    expect((await accept(await propose(`*.api.${domain}`))).status).toBe(200);
    expect(await sets()).toEqual(expect.arrayContaining([`api.${domain} A`, `api.${domain} AAAA`]));
    const before = (await sets()).length;
    expect((await accept(shop)).status).toBe(200); // accepted again: nothing added twice
    expect(await sets()).toHaveLength(before);

    // A name outside every watched domain becomes a domain of its own, with the default record sets.
    const outside = `other${unique()}.test`;
    expect((await accept(await propose(outside))).status).toBe(200);
    const created = (await call("GET", "/api/dns-watcher/domains", { token: org.session })).body.domains.find((d: any) => d.domain_name === outside);
    expect(created).toMatchObject({ notes: "proposed by a CT filter feed", enabled: true });
    expect((await call("GET", `/api/dns-watcher/domains/${created.id}/records`, { token: org.session })).body.records).toHaveLength(7);

    // The free tier's 10 domains are used up: 403, and the proposal stays open.
    for (let i = 0; i < 8; i++) expect((await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: `fill${i}-${unique()}.test` } })).status).toBe(201);
    const over = await propose(`over${unique()}.test`);
    expectError(await accept(over), 403, "quota_exceeded");
    expect((await proposal(over)).status).toBe("proposed");
  });

  it("record set names read like a zone file: @, a relative label, or a full name in the domain", async () => {
    const org = await signup();
    const domain = `rel${unique()}.test`;
    const id = (await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: domain } })).body.id;
    const add = (name: string, type = "A") => call("POST", `/api/dns-watcher/domains/${id}/records`, { token: org.session, body: { name, type } });
    expect((await add("WWW")).body.message).toBe(`Watching www.${domain} A`);
    expect((await add(`mail.${domain}.`)).body.message).toBe(`Watching mail.${domain} A`);
    expect((await add("_mta-sts", "TXT")).body.message).toBe(`Watching _mta-sts.${domain} TXT`);
    // Underscore labels anywhere below the domain: DKIM selectors, BIMI, TLSA-style service names; relative or in full.
    expect((await add("s1._domainkey", "TXT")).body.message).toBe(`Watching s1._domainkey.${domain} TXT`);
    expect((await add("Default._BIMI", "TXT")).body.message).toBe(`Watching default._bimi.${domain} TXT`);
    expect((await add("_25._tcp.mail", "TXT")).body.message).toBe(`Watching _25._tcp.mail.${domain} TXT`);
    expect((await add(`google_2024._domainkey.${domain}.`, "TXT")).body.message).toBe(`Watching google_2024._domainkey.${domain} TXT`);
    expectError(await add(`S1._DOMAINKEY.${domain}`, "TXT"), 409, "conflict");
    expectError(await add("www"), 409, "conflict");
    for (const name of ["mail.elsewhere.test", "www.", "*.www", "_dmarc.elsewhere.com", `s1._domainkey.elsewhere.test.`, "*._domainkey", "bad_.-label._tcp", "a..b"]) {
      const r = await add(name);
      expectError(r, 400, "validation_error");
      expect(r.body.error.details[0].path, name).toBe("name");
    }
    expect((await add("*.www")).body.error.details[0].message).toMatch(/wildcard/);
  });

  it("the quota holds under parallel creates", async () => {
    const org = await signup();
    const results = await Promise.all(Array.from({ length: 14 }, (_, i) => call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: `q${i}-${unique()}.test` } })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 403, "quota_exceeded");
    expect((await call("GET", "/api/dns-watcher/domains", { token: org.session })).body.total).toBe(10);
  });
});
