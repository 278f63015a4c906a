/**
 * Collection state of the RDAP monitor against the local RDAP server of the fixture hub
 * and real network faults: a server answering 503, a name that does not resolve, a
 * closed port, a server that hangs, 429, an answer that is not JSON, a redirect the
 * egress policy refuses, no RDAP server for the TLD. Each monitor says its state, the
 * class and a message naming the server; an alert rule on collection events fires once
 * per monitor and transition; nothing carries the runtime's opaque "internal error".
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, signup, unique, type Org } from "../helpers";
import { control, FIXTURE_URL } from "./data";
import { clock, createMonitor, monitorOf, runCron } from "./poll-helpers";

const E = env as any;
const serve = (name: string, scenario: Record<string, unknown>) => control(`domain/${name}`, scenario);

async function rule(org: Org, name: string, expression: string): Promise<number> {
  const r = await call("POST", "/api/rdap/alert-rules", { token: org.session, body: { name, expression, severity: "high", throttle_seconds: 0, channel_ids: [] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}
const alerts = async (org: Org): Promise<any[]> => (await call("GET", "/api/rdap/alert-history?limit=100", { token: org.session })).body.alerts;
const remove = async (org: Org, name: string) => call("DELETE", `/api/rdap/domains/${(await monitorOf(org.session, name)).id}`, { token: org.session });

describe("RDAP collection state", () => {
  it("a server answering 503: monitors turn failing with the status and server, one event per monitor and transition, then recovered", async () => {
    const org = await signup();
    const u = unique();
    const seen = `seen-${u}.com`;
    const never = `never-${u}.com`;
    const failingRule = await rule(org, "RDAP blind", 'event_type == "collection_failing" && collection.error_class == "http_status"');
    const recoveredRule = await rule(org, "RDAP sees again", 'event_type == "collection_recovered"');
    const changeRule = await rule(org, "any RDAP event", `domain.endsWith("${u}.com")`);
    await createMonitor(org.session, seen);
    await runCron();
    const collected = await monitorOf(org.session, seen);
    expect(collected.collection).toMatchObject({ state: "ok", consecutive_failures: 0, error: null, last_success_at: collected.last_checked_at });
    expect(Date.parse(collected.collection.next_attempt_at)).toBeGreaterThan(Date.parse(collected.last_checked_at));

    await createMonitor(org.session, never);
    const created = (await monitorOf(org.session, never)).collection;
    expect(created).toMatchObject({ state: "pending", last_attempt_at: null, error: null });
    // Never asked yet: when it will be is said (the next minute's run), not left unknown.
    expect(Date.parse(created.next_attempt_at) - Date.now()).toBeGreaterThan(0);
    expect(Date.parse(created.next_attempt_at) - Date.now()).toBeLessThanOrEqual(60_000);
    for (const n of [seen, never]) await serve(n, { status: 503 });
    await runCron();
    expect((await monitorOf(org.session, seen)).collection).toMatchObject({ state: "ok", consecutive_failures: 1, error: { class: "http_status" } });
    expect((await monitorOf(org.session, never)).collection).toMatchObject({ state: "pending", consecutive_failures: 1, error: { class: "http_status" } });
    await runCron();
    await runCron();
    for (const n of [seen, never]) {
      const m = await monitorOf(org.session, n);
      expect(m.collection, n).toMatchObject({ state: "failing", consecutive_failures: 3, error: { class: "http_status" } });
      // The server's answer, or (after three 5xx in a row from it) the politeness that stops asking it.
      expect(m.collection.error.message, n).toMatch(
        new RegExp(`^RDAP lookup of ${n.replace(/\./g, "\\.")}: (HTTP 503 from ${FIXTURE_URL}/rdap/domain/${n}|not asked: ${new URL(FIXTURE_URL).origin} is backing off until \\S+ after repeated server errors)$`),
      );
      expect(m.collection.failing_since < m.collection.last_attempt_at, n).toBe(true);
    }
    expect((await monitorOf(org.session, seen)).collection.last_success_at).toBe(collected.last_checked_at);
    expect((await monitorOf(org.session, never)).collection.last_success_at).toBeNull();
    let fired = await alerts(org);
    expect(fired.filter((a) => a.rule_id === failingRule).map((a) => a.subject).sort()).toEqual([never, seen].sort());
    expect(fired.find((a) => a.rule_id === failingRule && a.subject === never).event_summary).toMatch(new RegExp(`^RDAP of ${never.replace(/\./g, "\\.")} cannot be collected since \\S+: RDAP lookup of ${never.replace(/\./g, "\\.")}: HTTP 503`));
    expect(fired.filter((a) => a.rule_id !== failingRule)).toEqual([]);

    for (const n of [seen, never]) await control("reset", { suffix: n });
    clock.advance(10 * 60_000); // past the server's backoff
    await runCron();
    await runCron();
    for (const n of [seen, never]) expect((await monitorOf(org.session, n)).collection, n).toMatchObject({ state: "ok", consecutive_failures: 0, failing_since: null, error: null });
    fired = await alerts(org);
    expect(fired.filter((a) => a.rule_id === failingRule).length).toBe(2);
    expect(fired.filter((a) => a.rule_id === recoveredRule).map((a) => a.subject).sort()).toEqual([never, seen].sort());
    expect(fired.filter((a) => a.rule_id === changeRule)).toEqual([]);
    expect(JSON.stringify(fired)).not.toMatch(/internal error|reference =/i);
    for (const n of [seen, never]) await remove(org, n);
  });

  it("each way a lookup fails has its class and a message naming the server", async () => {
    const org = await signup();
    const u = unique();
    const cases: { name: string; errorClass: string; message: RegExp; scenario?: Record<string, unknown>; config?: Record<string, string> }[] = [
      { name: `nxd-${u}.com`, errorClass: "dns_resolution", message: /^RDAP lookup of nxd-\S+: DNS lookup of rdap\.name-that-does-not-resolve\.invalid failed$/, config: { RDAP_BASE_URL: "http://rdap.name-that-does-not-resolve.invalid/" } },
      { name: `closed-${u}.com`, errorClass: "connect", message: /^RDAP lookup of closed-\S+: connection to 127\.0\.0\.1:\d+ failed: refused or closed before an answer$/, config: { RDAP_BASE_URL: `http://127.0.0.1:${E.REFUSING_PORT}/` } },
      { name: `hang-${u}.com`, errorClass: "timeout", message: /^RDAP lookup of hang-\S+: 127\.0\.0\.1:\d+ gave no complete answer within 700 ms$/, scenario: { mode: "hang" }, config: { RDAP_TIMEOUT_MS: "700" } },
      { name: `slow-${u}.com`, errorClass: "rate_limited", message: /^RDAP lookup of slow-\S+: HTTP 429 Too Many Requests from \S+ \(asked to wait 1 s\)$|not asked: \S+ is backing off until \S+ after it answered HTTP 429$/, scenario: { status: 429, retryAfter: 1 } },
      { name: `junk-${u}.com`, errorClass: "protocol", message: /^RDAP lookup of junk-\S+: unusable answer from 127\.0\.0\.1:\d+: body is not JSON/, scenario: { mode: "malformed" } },
      { name: `inward-${u}.com`, errorClass: "blocked", message: /^RDAP lookup of inward-\S+: destination refused by the egress policy: redirect to http:\/\/10\.0\.0\.1\/domain\/\S+ refused: /, scenario: { redirectTo: "http://10.0.0.1/domain/x" } },
      { name: `orphan-${u}.zz`, errorClass: "protocol", message: /^RDAP lookup of orphan-\S+: no RDAP server for \.zz in the bootstrap registry$/ },
    ];
    for (const c of cases) {
      await createMonitor(org.session, c.name);
      if (c.scenario) await serve(c.name, c.scenario);
      await runCron(c.config);
      await runCron(c.config);
      const m = await monitorOf(org.session, c.name);
      expect(m.collection.error?.message, c.name).toMatch(c.message);
      expect(m.collection, c.name).toMatchObject({ state: "failing", last_success_at: null, error: { class: c.errorClass } });
      expect(m.collection.error.message, c.name).toMatch(c.message);
      expect(JSON.stringify(m), c.name).not.toMatch(/internal error|reference =|network error/i);
      await remove(org, c.name);
      await control("reset", { suffix: c.name });
    }
  }, 90_000);
});
