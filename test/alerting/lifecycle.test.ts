/**
 * Alerts that end by themselves, with the events the modules build (the DNS watcher's
 * own SPF analysis and DMARC parser, the collection-state contract's transitions), sent
 * to a PagerDuty receiver so the resolve is seen where the on-call sees it: DNSSEC back
 * to validated, a DMARC policy restored (and not by a weaker one), SPF no longer allowing
 * every sender, an asset's collection recovered. And people racing each other on one
 * alert: every answer a 200 or a 409, never a 500, and each change sent once.
 */
import { describe, expect, it } from "vitest";
import { buildDnsChangeEvent, buildDnsCollectionEvent, type DnsChangeEventInput } from "../../src/modules/dns-watcher/events";
import { dmarcRegressions, parseDmarc } from "../../src/modules/dns-watcher/dmarc";
import { analyzeSpf, type SpfDns } from "../../src/modules/dns-watcher/spf";
import { buildRdapCollectionEvent } from "../../src/modules/rdap/events";
import { emitEvent } from "../../src/modules/alerting/emit";
import { NEVER_COLLECTED, recordAttempt } from "../../src/platform/collection";
import { call, signup, unique, type Org } from "../helpers";
import { createChannel, createRule, deliverNow, E_ENV, history, inboxName, received } from "./providers";

/** SPF records here name no include or redirect target: nothing to look up. */
const noLookups: SpfDns = { lookup: async () => [] };

async function dnsEvent(domain: string, o: { dnssec?: string; previousDnssec?: string; spf?: string; previousSpf?: string; dmarc?: string; previousDmarc?: string; at: string }) {
  const spf = o.spf ? await analyzeSpf(domain, [o.spf], noLookups) : null;
  const previousSpf = o.previousSpf ? await analyzeSpf(domain, [o.previousSpf], noLookups) : null;
  const dmarc = o.dmarc ? parseDmarc([o.dmarc]) : null;
  const previousDmarc = o.previousDmarc ? parseDmarc([o.previousDmarc]) : null;
  const input: DnsChangeEventInput = {
    domain,
    changedRecords: [],
    dnssec: { status: o.dnssec ?? "validated", previousStatus: o.previousDnssec ?? o.dnssec ?? "validated", error: o.dnssec === "bogus" ? "RRSIG expired" : "", edeCodes: o.dnssec === "bogus" ? [7] : [] },
    spf: { current: spf, previous: previousSpf, changed: previousSpf !== null, becamePermissive: !!spf?.allows_all && !previousSpf?.allows_all, changedTargets: [] },
    dmarc: { current: dmarc, previous: previousDmarc, changed: previousDmarc !== null, regressions: dmarc && previousDmarc ? dmarcRegressions(previousDmarc, dmarc) : [] },
    resolvedAt: o.at,
  };
  return buildDnsChangeEvent(input);
}

async function setup(module: "dns-watcher" | "rdap", expression: string) {
  const org = await signup("Lifecycle");
  const key = inboxName();
  const ch = await createChannel(org, { kind: "pagerduty", routing_key: key });
  await createRule(org, module, { name: `rule ${unique()}`, expression, severity: "high", channel_ids: [ch.id] });
  return { org, key };
}

async function expectAutoResolved(org: Org, module: string, key: string, resolution: RegExp) {
  await deliverNow(org);
  const [alert] = (await history(org, module)).filter((a) => a.status === "fired");
  expect(alert).toMatchObject({ state: "resolved", resolved_by: "automatic" });
  expect(alert.resolution).toMatch(resolution);
  expect((await received(key)).incidents[alert.alert_key]).toEqual({ status: "resolved", actions: ["trigger", "resolve"] });
  return alert;
}

describe("conditions that end by themselves resolve their alert", () => {
  it("DNSSEC validation back to validated", async () => {
    const { org, key } = await setup("dns-watcher", 'dnssec.status != "validated"');
    const domain = `dnssec-${unique()}.example`;
    const bogus = await emitEvent(E_ENV, "dns-watcher", org.organizationId, await dnsEvent(domain, { dnssec: "bogus", previousDnssec: "validated", at: "2026-11-20T10:00:00Z" }));
    expect(bogus.fired.length).toBe(1);
    await deliverNow(org);
    // Another domain validating says nothing about this one.
    const other = await emitEvent(E_ENV, "dns-watcher", org.organizationId, await dnsEvent(`other-${unique()}.example`, { dnssec: "validated", previousDnssec: "bogus", at: "2026-11-20T10:05:00Z" }));
    expect(other.resolved).toEqual([]);
    const back = await emitEvent(E_ENV, "dns-watcher", org.organizationId, await dnsEvent(domain, { dnssec: "validated", previousDnssec: "bogus", at: "2026-11-20T10:10:00Z" }));
    expect(back.fired).toEqual([]);
    expect(back.resolved.length).toBe(1);
    await expectAutoResolved(org, "dns-watcher", key, new RegExp(`^${domain.replace(/\./g, "\\.")}: DNSSEC validation is back to validated \\(2026-11-20T10:10:00Z\\)\\.$`));
  });

  it("a DMARC policy restored, and not by a weaker policy than before", async () => {
    const { org, key } = await setup("dns-watcher", "size(dmarc.regressions) > 0");
    const domain = `dmarc-${unique()}.example`;
    const weakened = await dnsEvent(domain, { previousDmarc: "v=DMARC1; p=reject; rua=mailto:d@x.example", dmarc: "v=DMARC1; p=none; rua=mailto:d@x.example", at: "2026-11-20T11:00:00Z" });
    expect(weakened.dmarc.regressions.length).toBeGreaterThan(0);
    expect((await emitEvent(E_ENV, "dns-watcher", org.organizationId, weakened)).fired.length).toBe(1);
    await deliverNow(org);
    // p=none -> quarantine is no regression of its own, but weaker than the reject the alert lost: still open.
    const partly = await emitEvent(E_ENV, "dns-watcher", org.organizationId, await dnsEvent(domain, { previousDmarc: "v=DMARC1; p=none", dmarc: "v=DMARC1; p=quarantine", at: "2026-11-20T11:30:00Z" }));
    expect(partly).toMatchObject({ fired: [], resolved: [] });
    expect((await history(org, "dns-watcher")).find((a) => a.status === "fired").state).toBe("open");
    const restored = await emitEvent(E_ENV, "dns-watcher", org.organizationId, await dnsEvent(domain, { previousDmarc: "v=DMARC1; p=quarantine", dmarc: "v=DMARC1; p=reject", at: "2026-11-20T12:00:00Z" }));
    expect(restored.resolved.length).toBe(1);
    await expectAutoResolved(org, "dns-watcher", key, /: the DMARC policy is restored \(p=reject\) \(2026-11-20T12:00:00Z\)\.$/);
  });

  it("SPF no longer allowing every sender", async () => {
    const { org, key } = await setup("dns-watcher", "spf.allows_all");
    const domain = `spf-${unique()}.example`;
    const open = await dnsEvent(domain, { previousSpf: "v=spf1 mx -all", spf: "v=spf1 +all", at: "2026-11-20T13:00:00Z" });
    expect(open.spf.allows_all).toBe(true);
    expect((await emitEvent(E_ENV, "dns-watcher", org.organizationId, open)).fired.length).toBe(1);
    await deliverNow(org);
    const fixed = await emitEvent(E_ENV, "dns-watcher", org.organizationId, await dnsEvent(domain, { previousSpf: "v=spf1 +all", spf: "v=spf1 mx -all", at: "2026-11-20T13:20:00Z" }));
    expect(fixed.resolved.length).toBe(1);
    await expectAutoResolved(org, "dns-watcher", key, /: SPF no longer allows every sender \(2026-11-20T13:20:00Z\)\.$/);
  });

  it("an asset's collection recovered (collection_failing, then collection_recovered)", async () => {
    const { org, key } = await setup("rdap", 'event_type == "collection_failing"');
    const domain = `rdap-${unique()}.example`;
    const timeout = { class: "timeout" as const, message: `RDAP lookup of ${domain}: no answer from rdap.example:443 in time` };
    const first = recordAttempt(NEVER_COLLECTED, { ok: false, error: timeout }, "2026-11-20T14:00:00.000Z", "2026-11-20T15:00:00.000Z");
    const failing = recordAttempt(first.record, { ok: false, error: timeout }, "2026-11-20T15:00:00.000Z", "2026-11-20T16:00:00.000Z");
    const recovered = recordAttempt(failing.record, { ok: true }, "2026-11-20T16:00:00.000Z", null);
    expect([failing.transition, recovered.transition]).toEqual(["failing", "recovered"]);
    const common = { domain, tld: "example", lastSnapshot: null, rdapServer: "https://rdap.example/", httpStatus: 0 };
    const failed = await emitEvent(E_ENV, "rdap", org.organizationId, buildRdapCollectionEvent({ ...common, transition: "failing", record: failing.record, previous: first.record, attemptedAt: "2026-11-20T15:00:00.000Z" }));
    expect(failed.fired.length).toBe(1);
    await deliverNow(org);
    const back = await emitEvent(E_ENV, "rdap", org.organizationId, buildRdapCollectionEvent({ ...common, transition: "recovered", record: recovered.record, previous: failing.record, attemptedAt: "2026-11-20T16:00:00.000Z" }));
    expect(back.resolved.length).toBe(1);
    await expectAutoResolved(org, "rdap", key, /^Collection recovered.*: the asset is collected again\.$/);
  });

  it("a DNS collection recovering does not end a DNSSEC alert (another condition)", async () => {
    const { org } = await setup("dns-watcher", 'dnssec.status != "validated"');
    const domain = `dnsfail-${unique()}.example`;
    expect((await emitEvent(E_ENV, "dns-watcher", org.organizationId, await dnsEvent(domain, { dnssec: "bogus", previousDnssec: "validated", at: "2026-11-20T17:00:00Z" }))).fired.length).toBe(1);
    const timeout = { class: "timeout" as const, message: "no answer from ns.example:53 in time" };
    const first = recordAttempt(NEVER_COLLECTED, { ok: false, error: timeout }, "2026-11-20T17:00:00.000Z", "2026-11-20T17:05:00.000Z");
    const failing = recordAttempt(first.record, { ok: false, error: timeout }, "2026-11-20T17:05:00.000Z", "2026-11-20T17:10:00.000Z");
    const recovered = recordAttempt(failing.record, { ok: true }, "2026-11-20T17:10:00.000Z", null);
    const r = await emitEvent(
      E_ENV,
      "dns-watcher",
      org.organizationId,
      buildDnsCollectionEvent({ transition: "recovered", record: recovered.record, previous: failing.record, domain, dnssec: { status: "bogus", error: "" }, spf: null, dmarc: null, failingRecordSets: [], attemptedAt: "2026-11-20T17:10:00.000Z" }),
    );
    expect(r.resolved).toEqual([]);
    expect((await history(org, "dns-watcher")).find((a) => a.status === "fired").state).toBe("open");
  });
});

describe("people racing each other on one alert", () => {
  it("concurrent acknowledges and resolves: each a 200 or a 409, never a 500; one change of each kind, sent once", async () => {
    const { org, key } = await setup("dns-watcher", "spf.allows_all");
    await emitEvent(E_ENV, "dns-watcher", org.organizationId, await dnsEvent(`race-${unique()}.example`, { spf: "v=spf1 +all", previousSpf: "v=spf1 -all", at: "2026-11-20T18:00:00Z" }));
    await deliverNow(org);
    const [alert] = await history(org, "dns-watcher");
    const path = (action: string) => `/api/dns-watcher/alert-history/${alert.id}/${action}`;
    const acks = await Promise.all(Array.from({ length: 6 }, () => call("POST", path("acknowledge"), { token: org.session })));
    expect(acks.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    for (const r of acks.filter((x) => x.status === 409)) expect(r.body).toMatchObject({ success: false, error: { code: "conflict" } });

    // Resolves racing a late acknowledge: one resolve wins; the acknowledge of an acknowledged alert is a 409 too.
    const mixed = await Promise.all([...Array.from({ length: 4 }, () => call("POST", path("resolve"), { token: org.session })), call("POST", path("acknowledge"), { token: org.session })]);
    expect(mixed.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(mixed.slice(0, 4).filter((r) => r.status === 200).length).toBe(1);
    expect(mixed[4].status).toBe(409);

    await deliverNow(org);
    const [after] = await history(org, "dns-watcher");
    expect(after).toMatchObject({ state: "resolved", acknowledged_by: org.email, resolved_by: org.email });
    expect(after.deliveries.map((d: any) => d.action)).toEqual(["trigger", "acknowledge", "resolve"]);
    expect((await received(key)).incidents[alert.alert_key]).toEqual({ status: "resolved", actions: ["trigger", "acknowledge", "resolve"] });
  });
});
