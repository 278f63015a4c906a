/**
 * Collection state of the DNS watcher against its real counterparts: the DNS lab's
 * resolver stopped and started again (dnsdist), a resolver that hangs, a closed port, a
 * resolver name that does not resolve, a resolver answering 503. Domains and record sets
 * turn `failing` with the class and a message naming the resolver, the policies keep
 * their last observed values (or say `unknown` when never observed), alert rules on
 * collection events fire once per domain and transition, and nothing anywhere carries
 * the runtime's opaque "internal error" text.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, signup, unique, type Org } from "../helpers";
import { runCron } from "../rdap/poll-helpers";
import { fakeResolver, fakeZone } from "./fake-doh";
import { labDohUrl, putZone, runWatch, startLab, stopLab, uniqueZone } from "./lab";
import type { DnsWatcherEvent } from "../../src/modules/dns-watcher/events";

const E = env as any;

const ZONE = `@ IN A 192.0.2.10\n@ IN AAAA 2001:db8::10\n@ IN MX 10 mx1\n@ IN TXT "v=spf1 ip4:192.0.2.0/24 -all"\n@ IN CAA 0 issue "letsencrypt.org"\n_dmarc IN TXT "v=DMARC1; p=reject"\nmx1 IN A 192.0.2.25\n`;

async function cron(): Promise<void> {
  await runCron({ DOH_RESOLVER_URLS: await labDohUrl(), DNS_CHECK_INTERVAL_SECONDS: "0", DNS_TIMEOUT_MS: "2000" });
}
async function watch(org: Org, domain: string): Promise<number> {
  const r = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: domain } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}
const detail = async (org: Org, id: number) => (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
async function rule(org: Org, name: string, expression: string): Promise<number> {
  const r = await call("POST", "/api/dns-watcher/alert-rules", { token: org.session, body: { name, expression, severity: "high", throttle_seconds: 0, channel_ids: [] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}
async function alerts(org: Org): Promise<any[]> {
  return (await call("GET", "/api/dns-watcher/alert-history?limit=100", { token: org.session })).body.alerts;
}

describe("DNS collection state", () => {
  it("the lab's resolver stops: domains turn failing (connect), policies stay as last observed or unknown, one event per domain and transition, then recovered", async () => {
    const org = await signup();
    const seen = uniqueZone("c");
    const never = uniqueZone("n");
    await putZone(seen, ZONE);
    await putZone(never, ZONE);
    const failingRule = await rule(org, "DNS blind", 'event_type == "collection_failing" && collection.error_class == "connect"');
    const recoveredRule = await rule(org, "DNS sees again", 'event_type == "collection_recovered"');
    // A rule written for changes: it must not fire on collection events.
    const changeRule = await rule(org, "any DNS event", `domain == "${seen}" || domain == "${never}"`);
    // Reads the policies: a domain whose policies were never read has them null (absent to
    // the rule), so only the domain read before matches; defaults would have matched both.
    const policyRule = await rule(org, "DNS blind, policies held", 'event_type == "collection_failing" && spf.allows_all == false && dmarc.current.pct == 100');

    const seenId = await watch(org, seen);
    await cron();
    let a = await detail(org, seenId);
    expect(a.collection).toMatchObject({ state: "ok", consecutive_failures: 0, error: null, failing_since: null });
    expect(a.collection.last_success_at).toBe(a.last_checked_at);
    expect(a.records.every((r: any) => r.collection.state === "ok" && r.collection.last_success_at === a.last_checked_at)).toBe(true);
    expect(a.spf).toMatchObject({ status: "ok", record: "v=spf1 ip4:192.0.2.0/24 -all" });
    expect(a.dmarc).toMatchObject({ status: "ok", p: "reject" });
    const collectedAt = a.last_checked_at;

    // Watched while the resolver is down: never observed.
    const neverId = await watch(org, never);
    let b = await detail(org, neverId);
    expect(b.collection).toMatchObject({ state: "pending", last_attempt_at: null, error: null });
    // Never asked yet: when it will be is said (the next minute's run), not left unknown.
    expect(Date.parse(b.collection.next_attempt_at) - Date.now()).toBeGreaterThan(0);
    expect(Date.parse(b.collection.next_attempt_at) - Date.now()).toBeLessThanOrEqual(60_000);
    expect(b.spf).toMatchObject({ status: "unknown", allows_all: null, lookup_count: null, record: null });
    expect(b.dmarc).toMatchObject({ status: "unknown", pct: null, p: null, valid: null });

    await stopLab("dnsdist"); // connections to the DoH port are refused
    try {
      await cron();
      a = await detail(org, seenId);
      b = await detail(org, neverId);
      // One failed run is not yet failing: the state says collected (or not yet), with the reason.
      expect(a.collection).toMatchObject({ state: "ok", consecutive_failures: 1, last_success_at: collectedAt, error: { class: "connect" } });
      expect(b.collection).toMatchObject({ state: "pending", consecutive_failures: 1, last_success_at: null, error: { class: "connect" } });
      await cron();
      await cron(); // a third failed run: still one event per domain
      a = await detail(org, seenId);
      b = await detail(org, neverId);
    } finally {
      await startLab("dnsdist");
    }
    for (const [d, name] of [[a, seen], [b, never]] as const) {
      expect(d.collection, name).toMatchObject({ state: "failing", consecutive_failures: 3, error: { class: "connect" } });
      expect(d.collection.error.message, name).toMatch(new RegExp(`^no record set of ${name.replace(/\./g, "\\.")} resolved: connection to DoH resolver 127\\.0\\.0\\.1:\\d+ failed: refused or closed before an answer$`));
      expect(d.collection.failing_since < d.collection.last_attempt_at, name).toBe(true);
      expect(d.last_check_status, name).toBe("error");
      for (const r of d.records) expect(r.collection, `${name} ${r.name} ${r.type}`).toMatchObject({ state: "failing", consecutive_failures: 3, error: { class: "connect" } });
    }
    // What was observed stays, said as last observed; what never was is unknown and "not resolved yet".
    expect(a.collection.last_success_at).toBe(collectedAt);
    expect(a.records.every((r: any) => r.values !== null && r.collection.last_success_at === collectedAt)).toBe(true);
    expect(a.spf).toMatchObject({ status: "ok", record: "v=spf1 ip4:192.0.2.0/24 -all" });
    expect(a.dmarc).toMatchObject({ status: "ok", p: "reject" });
    expect(b.spf).toMatchObject({ status: "unknown", allows_all: null, allows_all_via: null, mechanisms: null });
    expect(b.dmarc).toMatchObject({ status: "unknown", pct: null, p: null, t: null, rua: null });
    expect(b.records.every((r: any) => r.values === null && r.collection.last_success_at === null)).toBe(true);
    const list = (await call("GET", "/api/dns-watcher/domains?limit=100", { token: org.session })).body.domains as any[];
    expect(list.map((d) => d.collection.state).sort()).toEqual(["failing", "failing"]);

    let fired = await alerts(org);
    const failing = fired.filter((x) => x.rule_id === failingRule);
    expect(failing.map((x) => x.subject).sort()).toEqual([never, seen].sort());
    expect(failing.find((x) => x.subject === seen).event_summary).toMatch(new RegExp(`^DNS of ${seen.replace(/\./g, "\\.")} cannot be collected since \\S+: no record set`));
    expect(fired.filter((x) => x.rule_id === recoveredRule || x.rule_id === changeRule)).toEqual([]);
    expect(fired.filter((x) => x.rule_id === policyRule).map((x) => x.subject)).toEqual([seen]);

    // The resolver is back: both recover, once.
    await cron();
    await cron();
    a = await detail(org, seenId);
    b = await detail(org, neverId);
    expect(a.collection).toMatchObject({ state: "ok", consecutive_failures: 0, failing_since: null, error: null });
    expect(b.collection).toMatchObject({ state: "ok", consecutive_failures: 0, error: null });
    expect(b.spf.status).toBe("ok");
    expect(b.records.every((r: any) => r.collection.state === "ok" && r.values !== null)).toBe(true);
    fired = await alerts(org);
    expect(fired.filter((x) => x.rule_id === failingRule).length).toBe(2);
    expect(fired.filter((x) => x.rule_id === recoveredRule).map((x) => x.subject).sort()).toEqual([never, seen].sort());
    expect(fired.filter((x) => x.rule_id === changeRule)).toEqual([]);
    expect(JSON.stringify([a, b, fired])).not.toMatch(/internal error|reference =/i);
  });

  it("each way a resolver fails has its class and a message naming it; the event names the failing record sets", async () => {
    const org = await signup();
    const domain = `cls-${unique()}.test`;
    const id = await watch(org, domain);
    const working = await fakeResolver(fakeZone(domain));
    const hanging = await fakeResolver([], { fail: "timeout" });
    const failing503 = await fakeResolver([], { fail: "http500" });
    await runWatch({ resolverUrls: [working.url] });
    const cases: [string, string, RegExp][] = [
      ["timeout", hanging.url, /^no answer from DoH resolver 127\.0\.0\.1:\d+ in time/],
      ["connect", `http://127.0.0.1:${E.REFUSING_PORT}/dns-query`, /^connection to DoH resolver 127\.0\.0\.1:\d+ failed: refused or closed before an answer/],
      ["dns_resolution", "http://doh.name-that-does-not-resolve.invalid/dns-query", /^DNS lookup of DoH resolver doh\.name-that-does-not-resolve\.invalid failed/],
      ["http_status", failing503.url, /^HTTP 500 from http:\/\/127\.0\.0\.1:\d+\//],
    ];
    for (const [errorClass, url, message] of cases) {
      // (Other files' and tests' domains are due too: only this domain's events are read.)
      const ofDomain = (events: DnsWatcherEvent[]) => events.filter((e) => e.domain === domain);
      const first = await runWatch({ resolverUrls: [url], timeoutMs: 500, breakAfterFailures: 3 });
      expect(ofDomain(first.events), errorClass).toEqual([]);
      const second = await runWatch({ resolverUrls: [url], timeoutMs: 500, breakAfterFailures: 3 });
      const d = await detail(org, id);
      expect(d.collection, errorClass).toMatchObject({ state: "failing", error: { class: errorClass } });
      for (const r of d.records) {
        expect(r.collection.error.class, `${errorClass} ${r.name} ${r.type}`).toBe(errorClass);
        expect(r.last_error, `${errorClass} ${r.name} ${r.type}`).toMatch(message);
      }
      expect(ofDomain(second.events).map((e) => e.event_type), errorClass).toEqual(["collection_failing"]);
      const [event] = ofDomain(second.events);
      expect(event.collection).toMatchObject({ state: "failing", error_class: errorClass, failing_since: d.collection.failing_since });
      expect(event.failing_record_sets.map((s) => `${s.name} ${s.type}`).sort()).toEqual(d.records.map((r: any) => `${r.name} ${r.type}`).sort());
      expect(event.failing_record_sets.every((s) => s.error_class === errorClass && message.test(s.error_message))).toBe(true);
      expect(JSON.stringify(d), errorClass).not.toMatch(/internal error|reference =/i);
      const back = await runWatch({ resolverUrls: [working.url] });
      expect(ofDomain(back.events).map((e) => e.event_type), errorClass).toEqual(["collection_recovered"]);
      expect(ofDomain(back.events)[0].collection).toMatchObject({ state: "ok", error_class: "", failing_since: d.collection.failing_since });
    }
  });
});
