/**
 * No silent suppression: de-duplication keys on the rule, the asset and the content, and
 * every match that is not sent (duplicate, throttled) is an alert_history row with
 * status "suppressed", its reason and the alert it repeats, counted on the rule. Driven
 * by real certificate scans: monitors, a registered agent leasing jobs and posting the
 * results of real scanner runs (test/cert-watcher/fixtures).
 */
import { describe, expect, it } from "vitest";
import { call, createToken } from "../helpers";
import { agentCall, createMonitor, fireCron, newOrg, registerAgent, result } from "../cert-watcher/helpers";

/** One scheduler run, then every leased job answered with `scan` (all targets due at every run). */
async function scanAll(agentToken: string, scan: unknown) {
  await fireCron(new Date(), { SCAN_INTERVAL_SECONDS: "0" });
  const lease = await agentCall("lease", agentToken, { max_jobs: 100 });
  expect(lease.status).toBe(200);
  const posted = [];
  for (const job of lease.body.jobs) {
    const r = await agentCall("results", agentToken, { job_id: job.job_id, result: scan });
    expect(r.status).toBe(200);
    posted.push({ monitor_id: job.monitor_id as number, alerts_fired: r.body.alerts_fired as number });
  }
  return posted.sort((a, b) => a.monitor_id - b.monitor_id);
}

async function history(token: string, query = "") {
  const r = await call("GET", `/api/cert-watcher/alert-history?limit=100${query}`, { token });
  expect(r.status).toBe(200);
  return r.body.alerts as any[];
}

describe("de-duplication per rule, asset and content", () => {
  it("two monitors of one endpoint each alert; their repeated scans are suppressed, visible and counted", async () => {
    const org = await newOrg();
    const t = org.session;
    const rule = await call("POST", "/api/cert-watcher/alert-rules", { token: t, body: { name: "expiring", expression: "validity_days < 30", severity: "high" } });
    expect(rule.status).toBe(201);
    // One endpoint (name, address, port), watched twice: once by its name, once with the name as explicit SNI.
    const a = await createMonitor(t, { cn: "shared.example.test", ip_addresses: ["192.0.2.210"] });
    const b = await createMonitor(t, { cn: "shared.example.test", target_dns: "shared.example.test", ip_addresses: ["192.0.2.210"] });
    const agent = await registerAgent(t);
    const scan = result("ecdsaTrusted", { daysLeft: 9 });

    expect(await scanAll(agent.token, scan)).toEqual([{ monitor_id: a, alerts_fired: 1 }, { monitor_id: b, alerts_fired: 1 }]);
    const sent = await history(t);
    expect(sent.map((x) => [x.status, x.asset])).toEqual([
      ["fired", `monitor:${b}|192.0.2.210`],
      ["fired", `monitor:${a}|192.0.2.210`],
    ]);

    // The same result again within 24 h: not sent, but in the history, each naming its own monitor's alert.
    expect(await scanAll(agent.token, scan)).toEqual([{ monitor_id: a, alerts_fired: 0 }, { monitor_id: b, alerts_fired: 0 }]);
    const held = await history(t, "&status=suppressed");
    const alertOf = (m: number) => sent.find((x) => x.asset === `monitor:${m}|192.0.2.210`).id;
    expect(held.map((x) => [x.asset, x.suppressed_reason, x.repeats_alert_id]).sort()).toEqual(
      [
        [`monitor:${a}|192.0.2.210`, "duplicate", alertOf(a)],
        [`monitor:${b}|192.0.2.210`, "duplicate", alertOf(b)],
      ].sort(),
    );
    const repeated = sent.find((x) => x.id === held[0].repeats_alert_id);
    expect(Date.parse(held[0].suppressed_until) - Date.parse(repeated.fired_at)).toBe(24 * 3_600_000);
    expect(held[0]).toMatchObject({ rule_id: rule.body.id, rule_name: "expiring", severity: "high", deliveries: [] });

    // Counted on the rule, in its list and on its own.
    const listed = await call("GET", "/api/cert-watcher/alert-rules", { token: t });
    expect(listed.body.rules.find((r: any) => r.id === rule.body.id).alerts_last_24h).toEqual({ fired: 2, suppressed: 2 });
    // A day later the counts are empty (the request's clock, moved; a session would have expired).
    const { token: reader } = await createToken(t, ["cert-watcher:view_alert_rules"]);
    const later = await call("GET", `/api/cert-watcher/alert-rules/${rule.body.id}`, { token: reader, headers: { "x-trust-plane-now": new Date(Date.now() + 25 * 3_600_000).toISOString() } });
    expect(later.body.alerts_last_24h).toEqual({ fired: 0, suppressed: 0 });

    // Another content (a day less) for the same monitors is sent again.
    expect(await scanAll(agent.token, result("ecdsaTrusted", { daysLeft: 8 }))).toEqual([{ monitor_id: a, alerts_fired: 1 }, { monitor_id: b, alerts_fired: 1 }]);
  });
});

describe("the rule test endpoint says what a real event would become", () => {
  it("would fire, would be suppressed as a duplicate or throttled (with the alert it repeats), rule disabled", async () => {
    const org = await newOrg();
    const t = org.session;
    const created = await call("POST", "/api/cert-watcher/alert-rules", { token: t, body: { name: "expiring", expression: "validity_days < 30", throttle_seconds: 3600 } });
    const ruleId = created.body.id as number;
    const mon = await createMonitor(t, { cn: "preview.example.test", ip_addresses: ["192.0.2.211"] });
    const agent = await registerAgent(t);
    const test = (event: unknown, rule_id: number | null = ruleId) =>
      call("POST", "/api/cert-watcher/alert-rules/test", { token: t, body: { expression: "validity_days < 30", event, ...(rule_id === null ? {} : { rule_id }) } });

    await scanAll(agent.token, result("ecdsaTrusted", { daysLeft: 9 }));
    const [alert] = await history(t);
    // The very event that was scanned (as the history keeps it).
    const stored = await call("GET", `/api/cert-watcher/alert-history?limit=1`, { token: t });
    expect(stored.body.alerts[0].id).toBe(alert.id);
    const event = JSON.parse(stored.body.alerts[0].message.body.split("Event:\n")[1]);
    expect(event.monitor_id).toBe(mon);

    const dup = await test(event);
    expect(dup.status).toBe(200);
    expect(dup.body).toMatchObject({
      matched: true,
      outcome: "would_be_suppressed",
      suppression: { reason: "duplicate", repeats_alert_id: alert.id, asset: `monitor:${mon}|192.0.2.211` },
    });
    expect(dup.body.explanation).toContain(`alert #${alert.id}`);

    const throttled = await test({ ...event, validity_days: 8 });
    expect(throttled.body).toMatchObject({ outcome: "would_be_suppressed", suppression: { reason: "throttled", repeats_alert_id: alert.id } });
    expect(Date.parse(throttled.body.suppression.until) - Date.parse(alert.fired_at)).toBe(3_600_000);

    // Another monitor's identical result would be sent.
    expect((await test({ ...event, monitor_id: mon + 1000, monitor_cn: "other.example.test" })).body).toMatchObject({ outcome: "would_fire", suppression: null });
    // Without rule_id only the expression is judged; no match says so.
    expect((await test(event, null)).body).toMatchObject({ outcome: "would_fire", suppression: null });
    expect((await test({ ...event, validity_days: 90 })).body).toMatchObject({ matched: false, outcome: "no_match" });

    expect((await call("PATCH", `/api/cert-watcher/alert-rules/${ruleId}`, { token: t, body: { enabled: false } })).status).toBe(200);
    expect((await test(event)).body).toMatchObject({ matched: true, outcome: "rule_disabled" });

    // Nothing was recorded by testing; another organization's rule is a 404.
    expect((await history(t)).length).toBe(1);
    const other = await newOrg();
    const foreign = await call("POST", "/api/cert-watcher/alert-rules/test", { token: other.session, body: { expression: "true", event, rule_id: ruleId } });
    expect(foreign.status).toBe(404);
  });
});
