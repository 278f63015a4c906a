/**
 * PagerDuty against its local receiver (receiver.ts: the Events API v2 contract, with
 * its incidents by dedup_key): real certificate-scan events open, update, acknowledge
 * and resolve one PagerDuty alert under one key; the routing key is sealed and never
 * returned; 429, 5xx and timeouts are retried and each attempt recorded.
 */
import { describe, expect, it } from "vitest";
import { call, signup } from "../../../../../test/helpers";
import { createChannel, createRule, deliverNow, deliverWith, deliveriesOf, emitScan, faults, history, HOSTILE_SUBJECT, hostileScanEvent, inboxName, received } from "../../../../../test/alerting/providers";

async function setup(region?: "us" | "eu") {
  const org = await signup();
  const key = inboxName();
  const ch = await createChannel(org, { kind: "pagerduty", routing_key: key, ...(region ? { region } : {}) });
  const tpl = await call("POST", "/api/cert-watcher/alert-templates", { token: org.session, body: { name: "t", subject: "Expiring: {{certificate.subject}}", body: "{{certificate.subject}} expires in {{validity_days}} days" } });
  const ruleId = await createRule(org, "cert-watcher", { name: "expiring", expression: "validity_days < 14", severity: "critical", channel_ids: [ch.id], template_id: tpl.body.id });
  return { org, key, ch, ruleId };
}

describe("pagerduty", () => {
  it("a scan's alert becomes one PagerDuty event as documented; the routing key is never returned", async () => {
    const { org, key, ch } = await setup();
    const shown = await call("GET", `/api/notification-channels/${ch.id}`, { token: org.session });
    expect(shown.body.settings).toEqual({ routing_key: `…${key.slice(-4)}`, region: "us" });
    expect(JSON.stringify((await call("GET", "/api/notification-channels", { token: org.session })).body)).not.toContain(key);

    const r = await emitScan(org, hostileScanEvent({ subject: HOSTILE_SUBJECT }));
    expect(r.fired.length).toBe(1);
    await deliverNow(org);
    const [alert] = await history(org, "cert-watcher");
    const got = (await received(key)).received;
    expect(got.length).toBe(1);
    expect(got[0].status).toBe(202);
    const e = got[0].json;
    expect(e).toMatchObject({ routing_key: key, event_action: "trigger", dedup_key: alert.alert_key, client: "Trust-Plane", client_url: expect.stringContaining(`alert=${alert.id}`) });
    // JSON all the way: the hostile subject arrives as the text it is, and PagerDuty shows text.
    expect(e.payload).toMatchObject({ summary: `Expiring: ${HOSTILE_SUBJECT}`, severity: "critical", source: "shop.example.test|192.0.2.80", component: "cert-watcher", group: "expiring" });
    expect(e.payload.custom_details.event.certificate.subject).toBe(HOSTILE_SUBJECT);
    expect(alert.deliveries).toMatchObject([{ channel_kind: "pagerduty", action: "trigger", status: "delivered", response_status: 202 }]);
  });

  it("trigger, update while open, acknowledge, resolve: one PagerDuty incident under one key; each change audited", async () => {
    const { org, key } = await setup();
    await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test", daysLeft: 9 }));
    await deliverNow(org);
    // Another match for the same monitor while the alert is open: the same alert, sent again.
    const again = await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test", daysLeft: 8 }));
    expect(again.fired).toMatchObject([{ updated: true }]);
    await deliverNow(org);
    let alerts = (await history(org, "cert-watcher")).filter((a) => a.status === "fired");
    expect(alerts.length).toBe(1);
    const alert = alerts[0];
    expect(alert).toMatchObject({ state: "open", occurrences: 2 });

    const ack = await call("POST", `/api/cert-watcher/alert-history/${alert.id}/acknowledge`, { token: org.session });
    expect(ack.status).toBe(200);
    expect(ack.body).toEqual({ message: "Alert acknowledged", state: "acknowledged" });
    expect((await call("POST", `/api/cert-watcher/alert-history/${alert.id}/acknowledge`, { token: org.session })).status).toBe(409);
    await deliverNow(org);
    expect((await received(key)).incidents[alert.alert_key]).toEqual({ status: "acknowledged", actions: ["trigger", "trigger", "acknowledge"] });

    expect((await call("POST", `/api/cert-watcher/alert-history/${alert.id}/resolve`, { token: org.session })).status).toBe(200);
    expect((await call("POST", `/api/cert-watcher/alert-history/${alert.id}/resolve`, { token: org.session })).status).toBe(409);
    await deliverNow(org);
    const pd = await received(key);
    expect(pd.incidents[alert.alert_key]).toEqual({ status: "resolved", actions: ["trigger", "trigger", "acknowledge", "resolve"] });
    expect(pd.received.map((r) => [r.json.event_action, r.json.dedup_key])).toEqual([
      ["trigger", alert.alert_key],
      ["trigger", alert.alert_key],
      ["acknowledge", alert.alert_key],
      ["resolve", alert.alert_key],
    ]);
    alerts = await history(org, "cert-watcher");
    expect(alerts[0]).toMatchObject({ state: "resolved", acknowledged_by: org.email, resolved_by: org.email, resolution: `Resolved by ${org.email}.` });
    expect(alerts[0].deliveries.map((d: any) => [d.action, d.status])).toEqual([
      ["trigger", "delivered"],
      ["trigger", "delivered"],
      ["acknowledge", "delivered"],
      ["resolve", "delivered"],
    ]);
    const audit = await call("GET", "/api/admin/audit-logs?limit=50", { token: org.session });
    const actions = JSON.stringify(audit.body);
    expect(actions).toContain("cert-watcher.alert.acknowledge");
    expect(actions).toContain("cert-watcher.alert.resolve");

    // After resolution a new match opens a new alert, under the same key, and PagerDuty a new incident.
    await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test", daysLeft: 7 }));
    await deliverNow(org);
    const reopened = (await history(org, "cert-watcher")).filter((a) => a.status === "fired");
    expect(reopened.map((a) => a.state)).toEqual(["open", "resolved"]);
    expect(reopened[0].alert_key).toBe(alert.alert_key);
    expect((await received(key)).incidents[alert.alert_key]).toMatchObject({ status: "triggered" });
  });

  it("a renewed certificate resolves the alert by itself, and PagerDuty's with it", async () => {
    const { org, key } = await setup();
    await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test", daysLeft: 3 }));
    await deliverNow(org);
    const renewed = await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test", daysLeft: 89, sha256: "ab".repeat(32) }));
    expect(renewed.fired).toEqual([]);
    expect(renewed.resolved.length).toBe(1);
    await deliverNow(org);
    const [alert] = await history(org, "cert-watcher");
    expect(alert).toMatchObject({ state: "resolved", resolved_by: "automatic" });
    expect(alert.resolution).toMatch(/^The certificate was renewed or redeployed: shop\.example\.test at 192\.0\.2\.80 now serves another certificate \(abababab/);
    expect((await received(key)).incidents[alert.alert_key]).toEqual({ status: "resolved", actions: ["trigger", "resolve"] });
  });

  it("429 and 5xx are retried, a timeout too; every attempt is recorded with its class", async () => {
    const { org, key } = await setup();
    await faults(key, [{ kind: "rate_limit", seconds: 1 }, { kind: "status", status: 502 }]);
    await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test" }));
    const t0 = Date.now();
    await deliverNow(org, t0);
    let [d] = await deliveriesOf(org, "cert-watcher");
    expect(d.attempt_log[0]).toMatchObject({ outcome: "retrying", status: 429, error_class: "rate_limited" });
    await deliverNow(org, Date.parse(d.next_attempt_at));
    [d] = await deliveriesOf(org, "cert-watcher");
    expect(d.attempt_log[1]).toMatchObject({ outcome: "retrying", status: 502, error_class: "http_status" });
    // The receiver takes longer than the delivery timeout: a timeout, retried.
    await faults(key, [{ kind: "hang", ms: 1500 }]);
    await deliverWith(org, (c) => ({ ...c, alerting: { ...c.alerting, deliveryTimeoutMs: 200 } }), new Date(Date.parse(d.next_attempt_at)));
    [d] = await deliveriesOf(org, "cert-watcher");
    expect(d.attempt_log[2]).toMatchObject({ outcome: "retrying", status: null, error_class: "timeout" });
    expect(d.attempt_log[2].error).toMatch(/^PagerDuty trigger event: no answer from 127\.0\.0\.1:\d+ in time$/);
    await deliverNow(org, Date.parse(d.next_attempt_at));
    [d] = await deliveriesOf(org, "cert-watcher");
    expect(d).toMatchObject({ status: "delivered", attempts: 4 });
    // Four requests arrived: two refused, the one that timed out (answered after the timeout) and the one delivered.
    const got = (await received(key)).received;
    expect(got.map((r) => r.json.dedup_key)).toEqual(Array(4).fill(got[0].json.dedup_key));
    expect([got[0].status, got[1].status, got[3].status]).toEqual([429, 502, 202]);
  });

  it("the EU service region goes to the EU endpoint; a test-send opens and resolves a test incident", async () => {
    const { org, key, ch } = await setup("eu");
    const r = await call("POST", `/api/notification-channels/${ch.id}/test`, { token: org.session });
    expect(r.body).toEqual({ delivered: true, error: null });
    const got = await received(key);
    expect(got.received.map((x) => [x.region, x.json.event_action])).toEqual([
      ["eu", "trigger"],
      ["eu", "resolve"],
    ]);
    expect(Object.values(got.incidents)).toEqual([{ status: "resolved", actions: ["trigger", "resolve"] }]);
  });

  it("an invalid routing key is a 400 naming it; nothing saved", async () => {
    const org = await signup();
    const r = await call("POST", "/api/notification-channels", { token: org.session, body: { name: "pd", kind: "pagerduty", routing_key: "short" } });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([{ path: "routing_key", message: "the 32-character integration key of an Events API v2 integration" }]);
    expect((await call("GET", "/api/notification-channels", { token: org.session })).body.channels).toEqual([]);
  });
});
