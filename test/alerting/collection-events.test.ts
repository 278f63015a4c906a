/**
 * The event convention every module shares: `event_type` (a closed enum per module) and
 * the `collection.*` fields, in each module's CEL schema and introspection; one builder
 * per module for collection events; rules written before collection events existed keep
 * their meaning (they never match a collection event).
 */
import { describe, expect, it } from "vitest";
import { compileRule, evaluate } from "../../src/modules/alerting/cel/engine";
import { introspect } from "../../src/modules/alerting/cel/introspection";
import { validateTemplate, renderTemplate } from "../../src/modules/alerting/cel/template";
import { MODULE_NAMES, type ModuleName } from "../../src/modules/alerting/cel/variables";
import { eventSubject, eventSummary } from "../../src/modules/alerting/subjects";
import { buildCertCollectionEvent, CertScanEventSchema } from "../../src/modules/cert-watcher/events";
import { buildCtLogCollectionEvent, CtLogEventSchema } from "../../src/modules/ct-log/events";
import { buildDnsCollectionEvent, DnsWatcherEventSchema } from "../../src/modules/dns-watcher/events";
import { buildRdapCollectionEvent, RdapEventSchema } from "../../src/modules/rdap/events";
import { NEVER_COLLECTED, recordAttempt } from "../../src/platform/collection";
import { certScanEvent, ctLogEvent, dnsChangeEvent, rdapChangeEvent } from "./events";

const T0 = "2026-11-01T00:00:00.000Z";
const T1 = "2026-11-01T01:00:00.000Z";
const T2 = "2026-11-01T02:00:00.000Z";
const timeout = { class: "timeout" as const, message: "no answer from rdap.example:443 in time" };
const first = recordAttempt(NEVER_COLLECTED, { ok: false, error: timeout }, T0, T1);
const failing = recordAttempt(first.record, { ok: false, error: timeout }, T1, T2);
const recovered = recordAttempt(failing.record, { ok: true }, T2, null);

/** One collection_failing event per module, as its builder makes it. */
function failingEvents(transition: "failing" | "recovered" = "failing"): Record<ModuleName, Record<string, unknown>> {
  const c = transition === "failing" ? { transition, record: failing.record, previous: first.record } : { transition, record: recovered.record, previous: failing.record };
  return {
    "dns-watcher": buildDnsCollectionEvent({
      ...c,
      domain: "example.com",
      dnssec: { status: "validated", error: "" },
      spf: null,
      dmarc: null,
      failingRecordSets: [{ name: "example.com", type: "MX", error: timeout }],
      attemptedAt: T1,
    }),
    rdap: buildRdapCollectionEvent({ ...c, domain: "example.com", tld: "com", lastSnapshot: null, attemptedAt: T1, rdapServer: "https://rdap.example/", httpStatus: 0 }),
    "cert-watcher": buildCertCollectionEvent({ monitorId: 1, monitorCn: "mail.example.com", port: 587, sni: "mail.example.com", ipAddress: "192.0.2.25", starttls: null }, c),
    "ct-log": buildCtLogCollectionEvent({ ...c, log: { name: "Example Log 2026", url: "https://ct.example/2026/", log_id: "AAAA" }, attemptedAt: T1 }),
  };
}

const OWN_EVENTS: Record<ModuleName, () => Record<string, unknown>> = {
  "dns-watcher": dnsChangeEvent,
  rdap: () => rdapChangeEvent({ ldhName: "example.com" }, { ldhName: "example.com", status: ["active"] }, "example.com", "com"),
  "cert-watcher": certScanEvent,
  "ct-log": ctLogEvent,
};

const SCHEMAS = { "dns-watcher": DnsWatcherEventSchema, rdap: RdapEventSchema, "cert-watcher": CertScanEventSchema, "ct-log": CtLogEventSchema };

const compiled = (module: ModuleName, expression: string) => {
  const c = compileRule(module, expression, []);
  if (!c.ok) throw new Error(`${module}: ${expression}: ${c.message}`);
  return c;
};

describe("event_type and collection in every module", () => {
  it("are in each module's introspection, with the module's own type first", () => {
    const own = { "dns-watcher": "dns_changed", rdap: "rdap_changed", "cert-watcher": "scan_completed", "ct-log": "match" };
    for (const module of MODULE_NAMES) {
      const vars = introspect(module).variables;
      const byPath = new Map(vars.map((v) => [v.path, v]));
      expect(byPath.get("event_type")?.type, module).toBe("string");
      expect(byPath.get("event_type")?.description, module).toContain(`"${own[module]}"`);
      expect(byPath.get("event_type")?.description, module).toContain('"collection_failing"');
      for (const f of ["state", "error_class", "error_message", "failing_since"]) expect(byPath.get(`collection.${f}`)?.type, `${module} collection.${f}`).toBe("string");
    }
  });

  it("a collection_failing event of each module matches the issue's rule, once built; its own events do not", () => {
    const rule = 'event_type == "collection_failing" && collection.error_class == "timeout" && collection.state == "failing"';
    const events = failingEvents();
    for (const module of MODULE_NAMES) {
      const c = compiled(module, rule);
      expect(SCHEMAS[module].safeParse(events[module]).success, module).toBe(true);
      expect(evaluate(c, events[module]), module).toEqual({ matched: true });
      expect(evaluate(c, OWN_EVENTS[module]()), module).toEqual({ matched: false });
      expect(evaluate(compiled(module, 'collection.state == "failing"'), events[module]), module).toEqual({ matched: true });
    }
  });

  it("a recovery says the run of failures it ended, so two recoveries never read alike", () => {
    const events = failingEvents("recovered");
    for (const module of MODULE_NAMES) {
      expect(events[module], module).toMatchObject({ event_type: "collection_recovered", collection: { state: "ok", error_class: "", error_message: "", failing_since: T0 } });
      expect(evaluate(compiled(module, 'event_type == "collection_recovered"'), events[module]), module).toEqual({ matched: true });
    }
  });

  it("rules that read neither event_type nor collection keep their meaning: they never match a collection event", () => {
    const events = failingEvents();
    const older: Record<ModuleName, string> = {
      "dns-watcher": 'domain == "example.com" && dmarc.current.p != "reject"',
      rdap: 'domain == "example.com"',
      "cert-watcher": '!has_error && monitor_cn == "mail.example.com"',
      "ct-log": 'filter_id == 0 || kind != "match"',
    };
    for (const module of MODULE_NAMES) {
      const c = compiled(module, older[module]);
      expect(c.seesCollectionEvents, module).toBe(false);
      expect(evaluate(c, events[module]), module).toEqual({ matched: false, notForCollectionEvents: true });
    }
    // The same rule matches the module's own event as before.
    expect(evaluate(compiled("rdap", older.rdap), OWN_EVENTS.rdap())).toEqual({ matched: true });
    // Reading collection anywhere (in has(), a comprehension) opts in.
    expect(compiled("dns-watcher", 'has(collection.state) && domain == "example.com"').seesCollectionEvents).toBe(true);
    expect(compiled("dns-watcher", 'failing_record_sets.exists(s, s.type == "MX") && event_type != "dns_changed"').seesCollectionEvents).toBe(true);
    expect(evaluate(compiled("dns-watcher", 'failing_record_sets.exists(s, s.type == "MX") && event_type != "dns_changed"'), events["dns-watcher"])).toEqual({ matched: true });
    // A string literal that says "collection" is no reading of the field.
    expect(compiled("rdap", 'domain != "collection"').seesCollectionEvents).toBe(false);
  });

  it("a domain whose policies were never read states none in its event: a rule reading them does not match, has() says absent", () => {
    const e = failingEvents()["dns-watcher"] as any;
    expect(e.spf).toMatchObject({ allows_all: null, current: { allows_all: null, lookup_count: null, record: null } });
    expect(e.dmarc.current).toMatchObject({ p: null, pct: null, t: null, rua: null });
    // With the parsers' empty defaults this matched: "SPF does not allow all, DMARC on 100 %" nobody observed.
    expect(evaluate(compiled("dns-watcher", 'event_type == "collection_failing" && spf.allows_all == false'), e).matched).toBe(false);
    expect(evaluate(compiled("dns-watcher", 'event_type == "collection_failing" && dmarc.current.pct == 100'), e).matched).toBe(false);
    expect(evaluate(compiled("dns-watcher", 'event_type == "collection_failing" && !has(dmarc.current.pct) && !has(spf.current.allows_all)'), e)).toEqual({ matched: true });
    expect(renderTemplate("[{{spf.current.allows_all}}][{{dmarc.current.pct}}]", e)).toBe("[][]");
  });

  it("templates name the collection fields; the alert's subject and summary say which asset went blind and why", () => {
    const events = failingEvents();
    const identity: Record<ModuleName, string> = { "dns-watcher": "example.com", rdap: "example.com", "cert-watcher": "mail.example.com", "ct-log": "Example Log 2026" };
    for (const module of MODULE_NAMES) {
      expect(validateTemplate(module, "{{event_type}}: {{collection.error_class}} {{collection.error_message}} since {{collection.failing_since}}"), module).toEqual([]);
      expect(renderTemplate("{{collection.error_message}}", events[module])).toBe(timeout.message);
      const summary = eventSummary(module, events[module]);
      expect(summary, module).toContain(identity[module]);
      expect(summary, module).toContain(timeout.message);
      // The throttling subject is the asset: the domain, the target, the log's URL.
      expect(eventSubject(module, events[module]), module).toContain(module === "ct-log" ? "https://ct.example/2026/" : identity[module]);
    }
    expect(eventSummary("rdap", failingEvents("recovered").rdap)).toMatch(/example\.com.*collected again/);
  });
});
