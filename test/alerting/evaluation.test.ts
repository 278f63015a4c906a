/**
 * Rule evaluation on real emission (emitEvent -> the organization's AlertState Durable
 * Object): in_list over IPv4/IPv6/CIDR/domain lists, list change propagation (at once
 * through the API, and within 60 s when the API's notice is lost), throttling per rule
 * and subject, de-duplication, disabled rules, templates. Time is moved with the
 * `nowMs` parameter of AlertState.process, never by sleeping.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { alertStateOf, emitEvent, emitEvents } from "../../src/modules/alerting/emit";
import type { ModuleName } from "../../src/modules/alerting/cel/variables";
import type { AlertState } from "../../durable-objects/alert-state";
import type { ProcessResult } from "../../src/modules/alerting/alert-state-contract";
import { call, signup } from "../helpers";
import { certScanEvent, ctLogEvent, dnsChangeEvent, rdapChangeEvent } from "./events";

const E = env as any;

async function createRule(token: string, module: string, body: Record<string, unknown>): Promise<number> {
  const r = await call("POST", `/api/${module}/alert-rules`, { token, body: { name: "rule", ...body } });
  if (r.status !== 201) throw new Error(`rule create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

async function createList(token: string, name: string, list_type: "ip" | "domain", entries: string[]): Promise<number> {
  const r = await call("POST", "/api/lists", { token, body: { name, list_type, entries } });
  if (r.status !== 201) throw new Error(`list create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

async function history(token: string, module: string) {
  const r = await call("GET", `/api/${module}/alert-history?limit=100`, { token });
  expect(r.status).toBe(200);
  return r.body as { alerts: any[]; total: number };
}

/** AlertState.process with an explicit clock. */
function processAt(organizationId: number, module: ModuleName, event: Record<string, unknown>, nowMs: number): Promise<ProcessResult> {
  // The stub goes untyped: its RPC type is too deep for tsc here.
  const stub = alertStateOf(E, organizationId) as unknown as DurableObjectStub;
  return runInDurableObject(stub, (o: DurableObject) => (o as unknown as AlertState).process(organizationId, module, event, nowMs));
}

const scanAt = (ip: string, extra: Record<string, unknown> = {}) => ({ ...certScanEvent(), ip_address: ip, ...extra });

describe("in_list on emitted events", () => {
  it("ip list: single IPv4 (/32), IPv4 CIDR, single IPv6 (/128), IPv6 CIDR; garbage does not match", async () => {
    const org = await signup();
    await createList(org.session, "dmz", "ip", ["192.0.2.25", "198.51.100.0/25", "2001:db8::443", "2001:db8:10::/48"]);
    const ruleId = await createRule(org.session, "cert-watcher", { expression: 'in_list(ip_address, lists["dmz"])' });
    const cases: [string, boolean][] = [
      ["192.0.2.25", true],
      ["192.0.2.26", false],
      ["198.51.100.0", true],
      ["198.51.100.127", true],
      ["198.51.100.128", false],
      ["2001:db8::443", true],
      ["2001:0DB8:0:0:0:0:0:443", true],
      ["2001:db8::444", false],
      ["2001:db8:10:ffff::1", true],
      ["2001:db8:11::1", false],
      ["::ffff:198.51.100.9", true],
      ["not-an-ip", false],
      ["192.0.2.025", false],
      ["", false],
    ];
    for (const [ip, matched] of cases) {
      const r = await emitEvent(E, "cert-watcher", org.organizationId, scanAt(ip));
      expect(r.duplicate, ip).toBe(false);
      expect(r.fired.map((f) => f.rule_id), ip).toEqual(matched ? [ruleId] : []);
      expect(r.errors, ip).toEqual([]);
    }
    expect((await history(org.session, "cert-watcher")).total).toBe(cases.filter((c) => c[1]).length);
  });

  it("an invalid value does not match and the rest of the rule still evaluates (entry rule 5)", async () => {
    const org = await signup();
    await createList(org.session, "dmz", "ip", ["192.0.2.0/24"]);
    const ruleId = await createRule(org.session, "cert-watcher", { expression: 'in_list(ip_address, lists["dmz"]) || validity_days < 0' });
    expect((await emitEvent(E, "cert-watcher", org.organizationId, scanAt("garbage", { validity_days: -3 }))).fired.map((f) => f.rule_id)).toEqual([ruleId]);
    expect((await emitEvent(E, "cert-watcher", org.organizationId, scanAt("garbage", { validity_days: 30 }))).fired).toEqual([]);
    const negated = await createRule(org.session, "cert-watcher", { name: "outside", expression: '!in_list(ip_address, lists["dmz"])' });
    const r = await emitEvent(E, "cert-watcher", org.organizationId, scanAt("203.0.113.1", { validity_days: 31 }));
    expect(r.fired.map((f) => f.rule_id)).toEqual([negated]);
  });

  it("domain list: exact, case-insensitive, trailing dot ignored, parent and subdomain separate", async () => {
    const org = await signup();
    await createList(org.session, "vip", "domain", ["cloudflare.com", "www.xn--bcher-kva.example"]);
    const ruleId = await createRule(org.session, "ct-log", { expression: 'cert.dns_names.exists(n, in_list(n, lists["vip"]))' });
    const withNames = (names: string[]) => {
      const e = ctLogEvent();
      e.cert.dns_names = names;
      e.cert.sha256 = names.join(","); // a distinct certificate each time
      return e;
    };
    const cases: [string[], boolean][] = [
      [["26d54cff.sni.cloudflaressl.com", "cloudflare.com"], true],
      [["CloudFlare.COM"], true],
      [["cloudflare.com."], true],
      [["www.cloudflare.com"], false],
      [["com"], false],
      [["xn--bcher-kva.example"], false],
      [["www.xn--bcher-kva.example"], true],
      [["WWW.Bücher.example"], true], // a U-label in the event matches its stored A-label
      [["bücher.example"], false],
      [["192.0.2.1"], false],
    ];
    for (const [names, matched] of cases) {
      const r = await emitEvent(E, "ct-log", org.organizationId, withNames(names));
      expect(r.fired.map((f) => f.rule_id), names.join()).toEqual(matched ? [ruleId] : []);
    }
  });

  it("rules of every module fire on realistic events; history records rule, severity, subject and summary", async () => {
    const org = await signup();
    await createList(org.session, "ours", "domain", ["example.com", "google.com"]);
    const ct = await createRule(org.session, "ct-log", { name: "caa violation", expression: "caa.has_records && !caa.authorized", severity: "critical" });
    const dns = await createRule(org.session, "dns-watcher", { name: "mx hijack", expression: 'in_list(domain, lists["ours"]) && changed_records.exists(r, r.type == "MX")', severity: "high" });
    const rdap = await createRule(org.session, "rdap", { name: "ns change", expression: 'in_list(domain, lists["ours"]) && rdap.current.ldhName != rdap.previous.ldhName', severity: "low" });
    expect((await emitEvent(E, "ct-log", org.organizationId, ctLogEvent())).fired.map((f) => f.rule_id)).toEqual([ct]);
    expect((await emitEvent(E, "dns-watcher", org.organizationId, dnsChangeEvent())).fired.map((f) => f.rule_id)).toEqual([dns]);
    const ev = rdapChangeEvent({ ldhName: "GOOGLE.COM", status: ["active"] }, { ldhName: "google.com", status: ["active"] }, "google.com", "com");
    expect((await emitEvent(E, "rdap", org.organizationId, ev)).fired.map((f) => f.rule_id)).toEqual([rdap]);
    // Events of one module never reach rules of another.
    expect((await emitEvent(E, "cert-watcher", org.organizationId, certScanEvent())).fired).toEqual([]);

    const h = (await history(org.session, "ct-log")).alerts;
    expect(h.length).toBe(1);
    expect(h[0]).toMatchObject({
      rule_id: ct,
      rule_name: "caa violation",
      severity: "critical",
      subject: "950a3399ff699fc3748dd03e59b80ae620690b64e4664f5c0c81b4b9dd1c3955",
      event_summary: "Certificate for 26d54cff.sni.cloudflaressl.com, cloudflare.com in Google 'Argon2025h2' log",
      deliveries: [],
    });
    expect(h[0].message.subject).toContain("caa violation");
    expect((await history(org.session, "dns-watcher")).alerts[0]).toMatchObject({ rule_id: dns, subject: "example.com", severity: "high" });
    expect((await history(org.session, "rdap")).alerts[0]).toMatchObject({ rule_id: rdap, subject: "google.com" });
    expect((await history(org.session, "cert-watcher")).total).toBe(0);
    // History is per organization.
    const other = await signup();
    expect((await history(other.session, "ct-log")).total).toBe(0);
  });

  it("a rule whose evaluation errors reports the error and does not stop the other rules", async () => {
    const org = await signup();
    const bad = await createRule(org.session, "ct-log", { name: "key size", expression: "cert.key_size < 3072" });
    const good = await createRule(org.session, "ct-log", { name: "any", expression: "rate.count > 0" });
    const r = await emitEvent(E, "ct-log", org.organizationId, ctLogEvent()); // EC certificate: no key_size
    expect(r.fired.map((f) => f.rule_id)).toEqual([good]);
    expect(r.errors.map((e) => e.rule_id)).toEqual([bad]);
    expect(r.errors[0].error).toContain("key_size");
  });
});

describe("list change propagation", () => {
  it("a change through the API is seen by the next emitted event", async () => {
    const org = await signup();
    const listId = await createList(org.session, "watch", "ip", []);
    const ruleId = await createRule(org.session, "cert-watcher", { expression: 'in_list(ip_address, lists["watch"])' });
    const fires = async (ip: string, n: number) => (await emitEvent(E, "cert-watcher", org.organizationId, scanAt(ip, { validity_days: n }))).fired.map((f) => f.rule_id);
    expect(await fires("203.0.113.5", 1)).toEqual([]);
    const add = await call("POST", `/api/lists/${listId}/entries`, { token: org.session, body: { entries: ["203.0.113.0/24"] } });
    expect(add.status).toBe(201);
    expect(await fires("203.0.113.5", 2)).toEqual([ruleId]);
    expect((await call("DELETE", `/api/lists/${listId}/entries/${add.body.entries[0].id}`, { token: org.session })).status).toBe(200);
    expect(await fires("203.0.113.5", 3)).toEqual([]);
    expect((await call("PUT", `/api/lists/${listId}/entries`, { token: org.session, body: { entries: ["2001:db8:5::/48", "203.0.113.5"] } })).status).toBe(200);
    expect(await fires("203.0.113.5", 4)).toEqual([ruleId]);
    expect(await fires("2001:db8:5::9", 5)).toEqual([ruleId]);
    expect((await call("PUT", `/api/lists/${listId}/entries`, { token: org.session, body: { entries: [] } })).status).toBe(200);
    expect(await fires("203.0.113.5", 6)).toEqual([]);
  });

  it("a change made behind the API's back (no notice) is seen within 60 s", async () => {
    const org = await signup();
    const listId = await createList(org.session, "watch", "domain", ["old.example.com"]);
    const ruleId = await createRule(org.session, "dns-watcher", { expression: 'in_list(domain, lists["watch"])' });
    const ev = (domain: string, n: number) => ({ ...dnsChangeEvent(), domain, resolved_at: `2025-10-01T12:00:${String(n).padStart(2, "0")}Z` });
    const t = Date.now();
    expect((await processAt(org.organizationId, "dns-watcher", ev("old.example.com", 1), t)).fired.map((f) => f.rule_id)).toEqual([ruleId]);
    expect((await processAt(org.organizationId, "dns-watcher", ev("new.example.com", 2), t)).fired).toEqual([]);

    // Directly in D1: the alert state gets no notice.
    const d1 = E.DB as D1Database;
    await d1.batch([
      d1.prepare("DELETE FROM rule_list_entries WHERE list_id = ?").bind(listId),
      d1.prepare("INSERT INTO rule_list_entries (organization_id, list_id, value, created_at) VALUES (?, ?, ?, ?)").bind(org.organizationId, listId, "new.example.com", new Date(t).toISOString()),
    ]);
    const stored = await call("GET", `/api/lists/${listId}`, { token: org.session });
    expect(stored.body.entries.map((e: any) => e.value)).toEqual(["new.example.com"]);

    // Still the old data shortly after t ...
    expect((await processAt(org.organizationId, "dns-watcher", ev("new.example.com", 3), t + 1_000)).fired).toEqual([]);
    expect((await processAt(org.organizationId, "dns-watcher", ev("old.example.com", 4), t + 1_000)).fired.map((f) => f.rule_id)).toEqual([ruleId]);
    // ... and the new data at t + 60 s.
    expect((await processAt(org.organizationId, "dns-watcher", ev("new.example.com", 5), t + 60_000)).fired.map((f) => f.rule_id)).toEqual([ruleId]);
    expect((await processAt(org.organizationId, "dns-watcher", ev("old.example.com", 6), t + 60_001)).fired).toEqual([]);
  });
});

describe("throttling per rule and subject (throttle_seconds)", () => {
  it("same subject within the window is throttled; another subject fires; after the window it fires again", async () => {
    const org = await signup();
    const throttled = await createRule(org.session, "cert-watcher", { name: "expiring", expression: "validity_days < 14", throttle_seconds: 300 });
    const always = await createRule(org.session, "cert-watcher", { name: "always", expression: "validity_days < 14" });
    const t = Date.now();
    const a = (n: number) => scanAt("192.0.2.25", { validity_days: n }); // subject mail.example.com|192.0.2.25
    const b = (n: number) => scanAt("192.0.2.26", { validity_days: n }); // another subject

    let r = await processAt(org.organizationId, "cert-watcher", a(9), t);
    expect(r.fired.map((f) => f.rule_id).sort()).toEqual([throttled, always].sort());
    expect(r.throttled).toEqual([]);
    r = await processAt(org.organizationId, "cert-watcher", a(8), t + 60_000);
    expect(r.fired.map((f) => f.rule_id)).toEqual([always]);
    expect(r.throttled).toEqual([throttled]);
    r = await processAt(org.organizationId, "cert-watcher", b(8), t + 61_000);
    expect(r.fired.map((f) => f.rule_id).sort()).toEqual([throttled, always].sort());
    r = await processAt(org.organizationId, "cert-watcher", a(7), t + 299_999);
    expect(r.throttled).toEqual([throttled]);
    r = await processAt(org.organizationId, "cert-watcher", a(6), t + 300_000);
    expect(r.fired.map((f) => f.rule_id).sort()).toEqual([throttled, always].sort());
    expect(r.throttled).toEqual([]);
    // The window restarts at the last firing, not at the first.
    r = await processAt(org.organizationId, "cert-watcher", a(5), t + 400_000);
    expect(r.throttled).toEqual([throttled]);

    const alerts = (await history(org.session, "cert-watcher")).alerts;
    const sent = alerts.filter((x) => x.status === "fired");
    // While an alert is open, each match sent updates it (one alert per rule and subject, its matches counted).
    const occurrences = (rule: number) => sent.filter((x) => x.rule_id === rule).reduce((n, x) => n + x.occurrences, 0);
    expect(occurrences(throttled)).toBe(3);
    expect(occurrences(always)).toBe(6);
    expect(sent.filter((x) => x.rule_id === always).map((x) => x.occurrences).sort()).toEqual([1, 5]);
    // Each throttled match is in the history, suppressed, naming the alert it repeats.
    const held = alerts.filter((x) => x.status === "suppressed");
    expect(held.map((x) => [x.rule_id, x.suppressed_reason])).toEqual([[throttled, "throttled"], [throttled, "throttled"], [throttled, "throttled"]]);
    const alertOfA = sent.find((x) => x.rule_id === throttled && x.subject === "mail.example.com|192.0.2.25");
    expect(held.at(-1)).toMatchObject({ repeats_alert_id: alertOfA.id, deliveries: [], suppressed_until: new Date(t + 300_000).toISOString() });
  });

  it("the subject of a CT match is the certificate: another certificate fires within the window", async () => {
    const org = await signup();
    const rule = await createRule(org.session, "ct-log", { expression: "rate.count >= 1", throttle_seconds: 3600 });
    const t = Date.now();
    const e1 = ctLogEvent();
    const e2 = { ...ctLogEvent(), matched_at: "2025-09-10T18:25:00Z" }; // same certificate seen again
    const e3 = ctLogEvent();
    e3.cert.sha256 = "0".repeat(64);
    expect((await processAt(org.organizationId, "ct-log", e1, t)).fired.map((f) => f.rule_id)).toEqual([rule]);
    expect((await processAt(org.organizationId, "ct-log", e2, t + 1000)).throttled).toEqual([rule]);
    expect((await processAt(org.organizationId, "ct-log", e3, t + 2000)).fired.map((f) => f.rule_id)).toEqual([rule]);
  });
});

describe("de-duplication, disabled rules, templates", () => {
  it("the same event emitted twice: the second is a duplicate, sent once, and recorded as suppressed", async () => {
    const org = await signup();
    const rule = await createRule(org.session, "ct-log", { expression: "caa.has_records && !caa.authorized" });
    const first = await emitEvent(E, "ct-log", org.organizationId, ctLogEvent());
    expect(first.duplicate).toBe(false);
    expect(first.fired.map((f) => f.rule_id)).toEqual([rule]);
    const alertId = first.fired[0].history_id;
    const second = await emitEvent(E, "ct-log", org.organizationId, ctLogEvent());
    expect(second).toMatchObject({ duplicate: true, fired: [], event_id: first.event_id, suppressed: [{ rule_id: rule, reason: "duplicate", repeats_alert_id: alertId }] });
    // Key order does not make a different event.
    const reordered = Object.fromEntries(Object.entries(ctLogEvent()).reverse()) as ReturnType<typeof ctLogEvent>;
    expect((await emitEvent(E, "ct-log", org.organizationId, reordered)).duplicate).toBe(true);
    const h = await history(org.session, "ct-log");
    expect(h.alerts.map((a) => [a.status, a.suppressed_reason, a.repeats_alert_id])).toEqual([
      ["suppressed", "duplicate", alertId],
      ["suppressed", "duplicate", alertId],
      ["fired", null, null],
    ]);
    expect(h.alerts[0]).toMatchObject({ asset: "filter:7", subject: ctLogEvent().cert.sha256, deliveries: [] });
    const fired = await call("GET", "/api/ct-log/alert-history?status=fired", { token: org.session });
    expect(fired.body.alerts.map((a: any) => a.id)).toEqual([alertId]);
    // One alert by its id (the console's link from a delivery): the suppressed repeats are left out.
    const one = await call("GET", `/api/ct-log/alert-history?alert_id=${alertId}`, { token: org.session });
    expect([one.body.total, one.body.alerts.map((a: any) => a.id)]).toEqual([1, [alertId]]);
    const counts = await call("GET", `/api/ct-log/alert-rules/${rule}`, { token: org.session });
    expect(counts.body.alerts_last_24h).toEqual({ fired: 1, suppressed: 2 });
    // The same event for another organization is not a duplicate there.
    const other = await signup();
    await createRule(other.session, "ct-log", { expression: "true" });
    expect((await emitEvent(E, "ct-log", other.organizationId, ctLogEvent())).duplicate).toBe(false);
  });

  it("an event its producer hands over again (same id, a retried batch) is not a second match", async () => {
    const org = await signup();
    const rule = await createRule(org.session, "ct-log", { expression: "true" });
    const batch = [{ id: "ct-log:match:1:7", event: ctLogEvent() }];
    const first = await emitEvents(E, "ct-log", org.organizationId, batch);
    expect(first).toMatchObject({ events: 1, redelivered: 0, fired: [{ rule_id: rule }] });
    const again = await emitEvents(E, "ct-log", org.organizationId, [...batch, ...batch]);
    expect(again).toMatchObject({ events: 2, redelivered: 2, fired: [], suppressed: [] });
    expect((await history(org.session, "ct-log")).total).toBe(1);
    // Another id with the same content is another observation: a visible duplicate.
    const other = await emitEvents(E, "ct-log", org.organizationId, [{ id: "ct-log:match:2:7", event: ctLogEvent() }]);
    expect(other).toMatchObject({ redelivered: 0, duplicates: 1, suppressed: [{ rule_id: rule, reason: "duplicate", repeats_alert_id: first.fired[0].history_id, event_id: "ct-log:match:2:7" }] });
  });

  it("a disabled rule does not fire; re-enabled it does", async () => {
    const org = await signup();
    const rule = await createRule(org.session, "cert-watcher", { expression: "validity_days < 14", enabled: false });
    expect((await emitEvent(E, "cert-watcher", org.organizationId, scanAt("192.0.2.1", { validity_days: 3 }))).fired).toEqual([]);
    const on = await createRule(org.session, "cert-watcher", { name: "other", expression: "validity_days < 14" });
    expect((await call("PATCH", `/api/cert-watcher/alert-rules/${on}`, { token: org.session, body: { enabled: false } })).status).toBe(200);
    expect((await emitEvent(E, "cert-watcher", org.organizationId, scanAt("192.0.2.1", { validity_days: 4 }))).fired).toEqual([]);
    expect((await call("PATCH", `/api/cert-watcher/alert-rules/${rule}`, { token: org.session, body: { enabled: true } })).status).toBe(200);
    expect((await emitEvent(E, "cert-watcher", org.organizationId, scanAt("192.0.2.1", { validity_days: 5 }))).fired.map((f) => f.rule_id)).toEqual([rule]);
    // A deleted rule does not fire either.
    expect((await call("DELETE", `/api/cert-watcher/alert-rules/${rule}`, { token: org.session })).status).toBe(200);
    expect((await emitEvent(E, "cert-watcher", org.organizationId, scanAt("192.0.2.1", { validity_days: 6 }))).fired).toEqual([]);
  });

  it("deleting a template makes its rules fall back to the default message", async () => {
    const org = await signup();
    const tpl = await call("POST", "/api/rdap/alert-templates", { token: org.session, body: { name: "t", subject: "RDAP {{domain}}", body: "{{metadata.rdap_server}}" } });
    const ruleId = await createRule(org.session, "rdap", { name: "any change", expression: "true", template_id: tpl.body.id });
    const ev = (n: number) => rdapChangeEvent({ ldhName: "example.com", n }, { ldhName: "example.com" }, "example.com", "com");
    await emitEvent(E, "rdap", org.organizationId, ev(1));
    expect((await history(org.session, "rdap")).alerts[0].message.subject).toBe("RDAP example.com");
    expect((await call("DELETE", `/api/rdap/alert-templates/${tpl.body.id}`, { token: org.session })).status).toBe(200);
    expect((await call("GET", `/api/rdap/alert-rules/${ruleId}`, { token: org.session })).body.template_id).toBeNull();
    await emitEvent(E, "rdap", org.organizationId, ev(2));
    const newest = (await history(org.session, "rdap")).alerts[0];
    expect(newest.message.subject).toBe("[medium] any change: RDAP registration of example.com changed");
  });

  it("the history is paged (limit/offset, newest first); out-of-range limit is 400", async () => {
    const org = await signup();
    await createRule(org.session, "cert-watcher", { expression: "true" });
    // Five subjects (an open alert's subject would update it rather than add a row).
    for (let n = 0; n < 5; n++) await processAt(org.organizationId, "cert-watcher", scanAt(`192.0.2.${n + 1}`, { validity_days: n }), Date.now() + n * 1000);
    const page = await call("GET", "/api/cert-watcher/alert-history?limit=2&offset=1", { token: org.session });
    expect(page.status).toBe(200);
    expect([page.body.total, page.body.limit, page.body.offset, page.body.alerts.length]).toEqual([5, 2, 1, 2]);
    const all = (await history(org.session, "cert-watcher")).alerts;
    expect(all.map((a) => a.fired_at)).toEqual([...all.map((a) => a.fired_at)].sort().reverse());
    expect(page.body.alerts.map((a: any) => a.id)).toEqual(all.slice(1, 3).map((a) => a.id));
    expect((await call("GET", "/api/cert-watcher/alert-history?limit=101", { token: org.session })).status).toBe(400);
    expect((await call("GET", "/api/cert-watcher/alert-history?offset=-1", { token: org.session })).status).toBe(400);
  });

  it("a rule with a template renders the template from the event; without, the default message", async () => {
    const org = await signup();
    const tpl = await call("POST", "/api/ct-log/alert-templates", {
      token: org.session,
      body: { name: "caa", subject: "Unauthorized issuer for {{cert.subject}}", body: "Names: {{cert.dns_names}}\nIssuer: {{cert.issuer}}\nCAA: {{caa.records}} authorized={{caa.authorized}}\nRate: {{rate.count}}/{{rate.window}}\nKey: {{cert.key_size}}" },
    });
    expect(tpl.status).toBe(201);
    const withTpl = await createRule(org.session, "ct-log", { name: "templated", expression: "!caa.authorized", template_id: tpl.body.id });
    const plain = await createRule(org.session, "ct-log", { name: "plain", expression: "!caa.authorized", severity: "high" });
    expect((await emitEvent(E, "ct-log", org.organizationId, ctLogEvent())).fired.length).toBe(2);
    const alerts = (await history(org.session, "ct-log")).alerts;
    const t = alerts.find((a) => a.rule_id === withTpl);
    expect(t.message).toEqual({
      subject: "Unauthorized issuer for 26d54cff.sni.cloudflaressl.com",
      body: "Names: 26d54cff.sni.cloudflaressl.com, cloudflare.com\nIssuer: C=US, O=Google Trust Services, CN=WE1\nCAA: digicert.com, letsencrypt.org authorized=false\nRate: 3/1h\nKey: ",
    });
    const p = alerts.find((a) => a.rule_id === plain);
    expect(p.message.subject).toBe("[high] plain: Certificate for 26d54cff.sni.cloudflaressl.com, cloudflare.com in Google 'Argon2025h2' log");
    expect(p.message.body).toContain("950a3399ff699fc3748dd03e59b80ae620690b64e4664f5c0c81b4b9dd1c3955");

    // Editing the template changes the next alert's message.
    expect((await call("PUT", `/api/ct-log/alert-templates/${tpl.body.id}`, { token: org.session, body: { name: "caa", subject: "CAA {{caa.checked_names}}", body: "-" } })).status).toBe(200);
    const e2 = ctLogEvent();
    e2.cert.sha256 = "1".repeat(64);
    await emitEvent(E, "ct-log", org.organizationId, e2);
    const newest = (await history(org.session, "ct-log")).alerts.find((a) => a.rule_id === withTpl && a.subject === "1".repeat(64));
    expect(newest.message).toEqual({ subject: "CAA cloudflare.com", body: "-" });
  });
});
