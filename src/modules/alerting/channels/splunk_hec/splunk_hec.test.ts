/**
 * Splunk HEC against its local receiver (POST /services/collector/event, `Authorization:
 * Splunk <token>`, 200 code 0; 503 code 9 "Server is busy" with Retry-After): each alert,
 * acknowledgement and resolution is one JSON event in the chosen index and sourcetype,
 * hostile values as JSON strings; the token is never returned.
 */
import { describe, expect, it } from "vitest";
import { call, signup, unique } from "../../../../../test/helpers";
import { createChannel, createRule, deliverNow, emitScan, expectRetryAfterHonoured, history, HOSTILE_SUBJECT, hostileScanEvent, HUB, received } from "../../../../../test/alerting/providers";

async function setup() {
  const org = await signup();
  const box = `splunk${unique()}`;
  const token = "11111111-2222-3333-4444-555555555555";
  const ch = await createChannel(org, { kind: "splunk_hec", url: `${HUB}/providers/splunk_hec/${box}`, token, index: "security", sourcetype: "trust-plane:alert" });
  await createRule(org, "cert-watcher", { name: "expiring", expression: "validity_days < 14", channel_ids: [ch.id] });
  return { org, box, token, ch };
}

describe("splunk_hec", () => {
  it("events for trigger and resolve, with index and sourcetype; the token never returned", async () => {
    const { org, box, token, ch } = await setup();
    const shown = (await call("GET", `/api/notification-channels/${ch.id}`, { token: org.session })).body.settings;
    expect(shown).toEqual({ url: `${HUB}/providers/splunk_hec/${box}`, token: "…5555", index: "security", sourcetype: "trust-plane:alert" });
    await emitScan(org, hostileScanEvent({ subject: HOSTILE_SUBJECT }));
    await deliverNow(org);
    const [alert] = await history(org, "cert-watcher");
    expect((await call("POST", `/api/cert-watcher/alert-history/${alert.id}/resolve`, { token: org.session })).status).toBe(200);
    await deliverNow(org);
    const got = (await received(box)).received;
    expect(got.map((r) => [r.path, r.status, r.headers.authorization])).toEqual([
      ["/services/collector/event", 200, `Splunk ${token}`],
      ["/services/collector/event", 200, `Splunk ${token}`],
    ]);
    expect(got[0].json).toMatchObject({ index: "security", sourcetype: "trust-plane:alert", source: "trust-plane:cert-watcher", event: { action: "trigger", alert: { id: alert.id, alert_key: alert.alert_key } } });
    expect(got[0].json.event.alert.event.certificate.subject).toBe(HOSTILE_SUBJECT);
    expect(got[1].json.event).toMatchObject({ action: "resolve", alert: { state: "resolved", resolution: `Resolved by ${org.email}.` } });
  });

  it("503 Server is busy with Retry-After: retried no earlier than asked", async () => {
    const { org, box } = await setup();
    await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test" }));
    const d = await expectRetryAfterHonoured(org, "cert-watcher", box, 25);
    expect(d.attempt_log[0]).toMatchObject({ status: 503, error_class: "http_status" });
  });

  it("a collector URL with credentials in it is a 400", async () => {
    const org = await signup();
    const r = await call("POST", "/api/notification-channels", { token: org.session, body: { name: "s", kind: "splunk_hec", url: `${HUB}/providers/splunk_hec/x?token=abc`, token: "11111111-2222" } });
    expect(r.status).toBe(400);
    expect(r.body.error.details[0].path).toBe("url");
  });
});
