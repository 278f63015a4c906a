/**
 * The RDAP poll end to end: the Cron Trigger (the Worker's scheduled handler) looks
 * domains up at the local RDAP server (test/fixtures/servers/rdap.ts, discovered through
 * its bootstrap file), which serves real RFC 9083 answers from shared/data/rdap, changed
 * between polls. Checks what is stored (content-addressed snapshots, history, facts),
 * what is emitted (alert rules firing), and the history/snapshot/diff/changes endpoints.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, signup, unique } from "../helpers";
import { clone, control, rdapJson, requestCounts } from "./data";
import { clock, createMonitor, monitorOf, rowCount, runCron, runCronAt } from "./poll-helpers";

const THIN = "domain/registry-thin/verisign-hhgames.com.json";
const GOOGLE = "domain/registry-thin/verisign-google.com-2021.json";

/** The real .com answer for HHGAMES.COM, re-labelled as `name` (upper case, as Verisign writes it). */
async function thinAnswer(name: string): Promise<any> {
  const doc = clone(await rdapJson(THIN));
  doc.ldhName = name.toUpperCase();
  return doc;
}
const serve = (name: string, body: unknown) => control(`domain/${name}`, { body });
const registrarOf = (doc: any) => doc.entities.find((e: any) => e.roles.includes("registrar"));
const setEvent = (doc: any, action: string, date: string) => {
  doc.events.find((e: any) => e.eventAction === action).eventDate = date;
};

async function history(token: string, name: string, query = ""): Promise<any> {
  const r = await call("GET", `/api/rdap/domains/${name}/history${query}`, { token });
  expect(r.status).toBe(200);
  return r.body;
}

async function alertsOf(token: string): Promise<any[]> {
  const r = await call("GET", "/api/rdap/alert-history?limit=100", { token });
  expect(r.status).toBe(200);
  return r.body.alerts;
}

describe("RDAP poll: change detection and storage", () => {
  it("baseline, volatile-only change (nothing stored, no event), then registrar, nameserver, status and expiry changes", async () => {
    const org = await signup();
    const t = org.session;
    const name = `reg-${unique()}.com`;
    await createMonitor(t, name);
    const anyChange = await call("POST", "/api/rdap/alert-rules", {
      token: t,
      body: { name: "any change", expression: `domain == "${name}" && metadata.http_status == 200`, throttle_seconds: 0 },
    });
    expect(anyChange.status).toBe(201);
    const registrarRule = await call("POST", "/api/rdap/alert-rules", {
      token: t,
      body: {
        name: "registrar changed",
        severity: "critical",
        throttle_seconds: 0,
        expression:
          'rdap.current.entities.filter(e, "registrar" in e.roles)[0].handle != rdap.previous.entities.filter(e, "registrar" in e.roles)[0].handle',
      },
    });
    expect(registrarRule.status).toBe(201);

    const v1 = await thinAnswer(name);
    await serve(name, v1);
    const snapshotsBefore = await rowCount("rdap_snapshots");
    await runCron();
    let m = await monitorOf(t, name);
    expect(m.last_check_status).toBe("success");
    expect(Date.parse(m.last_checked_at)).toBeGreaterThanOrEqual(clock.now());
    let h = await history(t, name);
    expect(h.total).toBe(1);
    expect(h.snapshots[0]).toMatchObject({ changed: false });
    expect(typeof h.snapshots[0].id).toBe("string");
    expect(await rowCount("rdap_snapshots")).toBe(snapshotsBefore + 1);
    expect(await alertsOf(t)).toHaveLength(0); // a baseline is not a change
    const baselineHash = h.snapshots[0].hash;

    // Only the "last update of RDAP database" event moved (Verisign moves it on every query).
    const volatile = clone(v1);
    setEvent(volatile, "last update of RDAP database", "2025-08-06T01:02:03Z");
    await serve(name, volatile);
    const requestsBefore = (await requestCounts())[name];
    const historyRows = await rowCount("rdap_history");
    const factRows = await rowCount("rdap_change_facts");
    await runCron();
    expect((await requestCounts())[name]).toBe(requestsBefore + 1);
    m = await monitorOf(t, name);
    expect(Date.parse(m.last_checked_at)).toBeGreaterThanOrEqual(clock.now());
    expect(m.last_check_status).toBe("success");
    expect(await rowCount("rdap_snapshots")).toBe(snapshotsBefore + 1);
    expect(await rowCount("rdap_history")).toBe(historyRows);
    expect(await rowCount("rdap_change_facts")).toBe(factRows);
    expect((await history(t, name)).total).toBe(1);
    expect(await alertsOf(t)).toHaveLength(0);

    // Registrar change: Sea Wasp, LLC (IANA 411) -> MarkMonitor Inc. (IANA 292), the real entity from google.com.
    const v2 = clone(volatile);
    v2.entities = v2.entities.filter((e: any) => !e.roles.includes("registrar")).concat([registrarOf(await rdapJson(GOOGLE))]);
    await serve(name, v2);
    await runCron();
    h = await history(t, name);
    expect(h.total).toBe(2);
    expect(h.snapshots[0].changed).toBe(true);
    let d = (await call("GET", `/api/rdap/domains/${name}/diff`, { token: t })).body;
    expect(d.changed).toBe(true);
    expect(d.summary.registrar.from).toMatchObject({ iana_id: "411", name: "Sea Wasp, LLC" });
    expect(d.summary.registrar.to).toMatchObject({ iana_id: "292", name: "MarkMonitor Inc." });
    expect(d.summary.nameservers).toBeUndefined();
    expect(d.removed.map((x: any) => x.path)).toContain("$.entities[registrar:411]");
    expect(d.added.map((x: any) => x.path)).toContain("$.entities[registrar:292]");
    let alerts = await alertsOf(t);
    expect(alerts.map((a: any) => a.rule_name).sort()).toEqual(["any change", "registrar changed"]);

    // Nameserver change: the fabulous.com set -> google.com's.
    const v3 = clone(v2);
    v3.nameservers = clone((await rdapJson(GOOGLE)).nameservers);
    await serve(name, v3);
    await runCron();
    d = (await call("GET", `/api/rdap/domains/${name}/diff`, { token: t })).body;
    expect(d.summary.nameservers).toEqual({
      added: ["ns1.google.com", "ns2.google.com", "ns3.google.com", "ns4.google.com"],
      removed: ["ns1.fabulous.com", "ns2.fabulous.com", "ns3.fabulous.com", "ns4.fabulous.com"],
    });
    expect(d.summary.registrar).toBeUndefined();

    // Status change: google.com's server locks added.
    const v4 = clone(v3);
    v4.status = clone((await rdapJson(GOOGLE)).status);
    await serve(name, v4);
    await runCron();
    d = (await call("GET", `/api/rdap/domains/${name}/diff`, { token: t })).body;
    expect(d.summary.status).toEqual({ added: ["server delete prohibited", "server transfer prohibited", "server update prohibited"], removed: [] });

    // Expiry moved by a year (a renewal).
    const v5 = clone(v4);
    setEvent(v5, "expiration", "2027-07-04T19:21:02Z");
    await serve(name, v5);
    await runCron();
    d = (await call("GET", `/api/rdap/domains/${name}/diff`, { token: t })).body;
    expect(d.summary.expiration).toEqual({ from: "2026-07-04T19:21:02Z", to: "2027-07-04T19:21:02Z" });
    expect(d.modified).toEqual([{ path: "$.events[expiration].eventDate", from: "2026-07-04T19:21:02Z", to: "2027-07-04T19:21:02Z" }]);

    h = await history(t, name);
    expect(h.total).toBe(5);
    expect(h.snapshots.map((s: any) => s.changed)).toEqual([true, true, true, true, false]);
    expect(h.snapshots[4].hash).toBe(baselineHash);

    // Derived facts for the weekly audit, one row per history row.
    const rows = (
      await (env as any).DB.prepare(
        "SELECT registrar_changed, registrant_changed, nameservers_changed, status_changed, expiration_date, previous_expiration_date FROM rdap_change_facts WHERE domain_name = ? ORDER BY observed_at",
      )
        .bind(name)
        .all()
    ).results;
    expect(rows).toEqual([
      { registrar_changed: 0, registrant_changed: 0, nameservers_changed: 0, status_changed: 0, expiration_date: "2026-07-04T19:21:02Z", previous_expiration_date: null },
      { registrar_changed: 1, registrant_changed: 0, nameservers_changed: 0, status_changed: 0, expiration_date: "2026-07-04T19:21:02Z", previous_expiration_date: "2026-07-04T19:21:02Z" },
      { registrar_changed: 0, registrant_changed: 0, nameservers_changed: 1, status_changed: 0, expiration_date: "2026-07-04T19:21:02Z", previous_expiration_date: "2026-07-04T19:21:02Z" },
      { registrar_changed: 0, registrant_changed: 0, nameservers_changed: 0, status_changed: 1, expiration_date: "2026-07-04T19:21:02Z", previous_expiration_date: "2026-07-04T19:21:02Z" },
      { registrar_changed: 0, registrant_changed: 0, nameservers_changed: 0, status_changed: 0, expiration_date: "2027-07-04T19:21:02Z", previous_expiration_date: "2026-07-04T19:21:02Z" },
    ]);

    // Every change reached the alert rules and was sent: "any change" matched 4 times. Each
    // match of a rule for the domain while its alert is open updates that alert (one alert
    // per rule and domain, its matches counted, the latest change as its event); distinct
    // changes are never suppressed as duplicates.
    alerts = await alertsOf(t);
    expect(alerts.every((a: any) => a.status === "fired")).toBe(true);
    const anyChangeAlerts = alerts.filter((a: any) => a.rule_name === "any change");
    expect(anyChangeAlerts.map((a: any) => [a.state, a.occurrences])).toEqual([["open", 4]]);
    expect(anyChangeAlerts[0].message.body).toContain('"eventDate": "2027-07-04T19:21:02Z"');
    const registrarAlerts = alerts.filter((a: any) => a.rule_name === "registrar changed");
    expect(registrarAlerts.map((a: any) => [a.severity, a.occurrences])).toEqual([["critical", 1]]);

    // GET /api/rdap/changes: the four changes, newest first, hashes chained.
    const ch = await call("GET", "/api/rdap/changes", { token: t });
    expect(ch.body.total).toBe(4);
    const hashes = h.snapshots.map((s: any) => s.hash);
    expect(ch.body.changes.map((c: any) => c.current_hash)).toEqual(hashes.slice(0, 4));
    expect(ch.body.changes.map((c: any) => c.previous_hash)).toEqual(hashes.slice(1, 5));
    expect(ch.body.changes[0]).toMatchObject({ domain_name: name, tld: "com", changed_at: h.snapshots[0].timestamp, snapshot_id: h.snapshots[0].id });
    const asc = await call("GET", "/api/rdap/changes?sort_order=asc&limit=2&offset=1", { token: t });
    expect(asc.body.changes.map((c: any) => c.current_hash)).toEqual([hashes[2], hashes[1]]);
    expect(asc.body.total).toBe(4);
  });

  it("a domain watched by several organizations is fetched once per poll and fanned out; disabled monitors are skipped", async () => {
    const a = await signup();
    const b = await signup();
    const name = `shared-${unique()}.com`;
    await createMonitor(a.session, name);
    const idB = await createMonitor(b.session, name);
    const v1 = await thinAnswer(name);
    await serve(name, v1);

    await runCron();
    expect((await requestCounts())[name]).toBe(1);
    expect((await history(a.session, name)).total).toBe(1);
    expect((await history(b.session, name)).total).toBe(1);
    expect(await rowCount("rdap_snapshots", "domain_name = ?", name)).toBe(1);

    const v2 = clone(v1);
    v2.nameservers = v2.nameservers.slice(0, 2);
    await serve(name, v2);
    await runCron();
    expect((await requestCounts())[name]).toBe(2);
    expect(await rowCount("rdap_snapshots", "domain_name = ?", name)).toBe(2); // one body, both organizations
    for (const org of [a, b]) {
      const ch = (await call("GET", "/api/rdap/changes", { token: org.session })).body;
      expect(ch.changes.map((c: any) => c.domain_name)).toEqual([name]);
    }

    // B pauses its monitor: A still gets the next change, B does not (and is not checked).
    expect((await call("PATCH", `/api/rdap/domains/${idB}`, { token: b.session, body: { enabled: false } })).status).toBe(200);
    const checkedB = (await monitorOf(b.session, name)).last_checked_at;
    const v3 = clone(v2);
    setEvent(v3, "expiration", "2030-07-04T19:21:02Z");
    await serve(name, v3);
    await runCron();
    expect((await requestCounts())[name]).toBe(3);
    expect((await history(a.session, name)).total).toBe(3);
    expect((await history(b.session, name)).total).toBe(2);
    expect((await monitorOf(b.session, name)).last_checked_at).toBe(checkedB);
    // /changes covers enabled monitors only.
    expect((await call("GET", "/api/rdap/changes", { token: b.session })).body.total).toBe(0);

    // A third organization arriving now starts from a baseline of the current answer; no new body is stored.
    const c = await signup();
    await createMonitor(c.session, name);
    await runCron();
    expect((await requestCounts())[name]).toBe(4);
    const hc = await history(c.session, name);
    expect(hc.snapshots.map((s: any) => s.changed)).toEqual([false]);
    expect(hc.snapshots[0].hash).toBe((await history(a.session, name)).snapshots[0].hash);
    expect(await rowCount("rdap_snapshots", "domain_name = ?", name)).toBe(3);

    // B re-enables: its next poll compares against ITS last snapshot (v2) and reports the expiry change.
    await call("PATCH", `/api/rdap/domains/${idB}`, { token: b.session, body: { enabled: true } });
    await runCron();
    const hb = await history(b.session, name);
    expect(hb.total).toBe(3);
    expect(hb.snapshots[0].changed).toBe(true);
    const d = (await call("GET", `/api/rdap/domains/${name}/diff`, { token: b.session })).body;
    expect(d.summary.expiration).toEqual({ from: "2026-07-04T19:21:02Z", to: "2030-07-04T19:21:02Z" });
  });

  it("history, snapshot by id and by time, and diff between ids or timestamps", async () => {
    const org = await signup();
    const t = org.session;
    const name = `hist-${unique()}.click`;
    await createMonitor(t, name);
    // A thick registry answer (registrant organization disclosed): microsoft.click, re-labelled.
    const v1 = clone(await rdapJson("domain/registry-thick/microsoft.click.json"));
    v1.ldhName = name;
    v1.unicodeName = name;
    await serve(name, v1);
    await runCron();
    const v2 = clone(v1);
    v2.entities.find((e: any) => e.roles.includes("registrant")).vcardArray[1].find((p: any) => p[0] === "org")[3] = "Contoso Ltd";
    await serve(name, v2);
    clock.advance(3_600_000);
    await runCron();

    const h = await history(t, name);
    expect(h.total).toBe(2);
    const [newer, older] = h.snapshots;
    expect(Date.parse(newer.timestamp) - Date.parse(older.timestamp)).toBeGreaterThanOrEqual(3_600_000);
    const limited = await history(t, name, "?limit=1");
    expect(limited.snapshots).toEqual([newer]);
    expect(limited.total).toBe(2);

    // Snapshot by id: the full JSON as the registry sent it.
    const s1 = await call("GET", `/api/rdap/domains/${name}/snapshot?snapshot_id=${older.id}`, { token: t });
    expect(s1.status).toBe(200);
    expect(s1.body).toEqual(v1);
    const latest = await call("GET", `/api/rdap/domains/${name}/snapshot`, { token: t });
    expect(latest.body).toEqual(v2);
    // By time: the latest at or before `at`.
    const between = new Date(Date.parse(older.timestamp) + 60_000).toISOString();
    expect((await call("GET", `/api/rdap/domains/${name}/snapshot?at=${between}`, { token: t })).body).toEqual(v1);
    expect((await call("GET", `/api/rdap/domains/${name}/snapshot?at=${encodeURIComponent(newer.timestamp)}`, { token: t })).body).toEqual(v2);
    const before = new Date(Date.parse(older.timestamp) - 1).toISOString();
    expect((await call("GET", `/api/rdap/domains/${name}/snapshot?at=${before}`, { token: t })).status).toBe(404);
    expect((await call("GET", `/api/rdap/domains/${name}/snapshot?snapshot_id=999999999`, { token: t })).status).toBe(404);
    expect((await call("GET", `/api/rdap/domains/${name}/snapshot?at=yesterday`, { token: t })).status).toBe(400);
    expect((await call("GET", `/api/rdap/domains/${name}/snapshot?at=${between}&snapshot_id=${older.id}`, { token: t })).status).toBe(400);

    // Diff by ids, by timestamps, and reversed.
    const byId = (await call("GET", `/api/rdap/domains/${name}/diff?from=${older.id}&to=${newer.id}`, { token: t })).body;
    expect(byId.summary.registrant).toEqual({
      from: { handle: null, name: null, organization: "Microsoft Corporation" },
      to: { handle: null, name: null, organization: "Contoso Ltd" },
    });
    expect(byId.modified).toHaveLength(1);
    expect(byId.modified[0]).toMatchObject({ from: "Microsoft Corporation", to: "Contoso Ltd" });
    expect(byId.modified[0].path).toMatch(/^\$\.entities\[registrant\]\.vcardArray\[1\]\[org\]\[3\]$/);
    const byTime = (await call("GET", `/api/rdap/domains/${name}/diff?from=${between}&to=${encodeURIComponent(newer.timestamp)}`, { token: t })).body;
    expect(byTime.summary).toEqual(byId.summary);
    expect(byTime.from.id).toBe(older.id);
    const same = (await call("GET", `/api/rdap/domains/${name}/diff?from=${older.id}&to=${older.id}`, { token: t })).body;
    expect(same).toMatchObject({ changed: false, added: [], removed: [], modified: [], summary: {} });
    expect((await call("GET", `/api/rdap/domains/${name}/diff?from=not-a-ref`, { token: t })).status).toBe(400);
    expect((await call("GET", `/api/rdap/domains/${name}/diff?from=999999999`, { token: t })).status).toBe(404);

    // Another organization cannot read a snapshot id of this one, even monitoring the same domain.
    const other = await signup();
    await createMonitor(other.session, name);
    expect((await call("GET", `/api/rdap/domains/${name}/snapshot?snapshot_id=${older.id}`, { token: other.session })).status).toBe(404);
  });

  it("two overlapping Cron runs record a change once and raise one event", async () => {
    const org = await signup();
    const t = org.session;
    const name = `overlap-${unique()}.com`;
    await createMonitor(t, name);
    const rule = await call("POST", "/api/rdap/alert-rules", { token: t, body: { name: "overlap", expression: `domain == "${name}"`, throttle_seconds: 0 } });
    expect(rule.status).toBe(201);
    const v1 = await thinAnswer(name);
    await serve(name, v1);
    await runCron();
    const v2 = clone(v1);
    v2.nameservers = v2.nameservers.slice(1);
    // The answer arrives slowly, so both runs select the domain before either writes.
    await control(`domain/${name}`, { body: v2, delayMs: 300 });
    clock.advance(1000);
    await Promise.all([runCronAt(clock.now()), runCronAt(clock.now() + 1)]);
    expect((await requestCounts())[name]).toBe(3);
    const h = await history(t, name);
    expect(h.snapshots.map((s: any) => s.changed)).toEqual([true, false]);
    expect(await rowCount("rdap_change_facts", "domain_name = ?", name)).toBe(2);
    expect((await alertsOf(t)).filter((a: any) => a.rule_name === "overlap")).toHaveLength(1);
  });
});
