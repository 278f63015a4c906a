/**
 * Opsgenie against its local receiver (receiver.ts: the Alert API v2 contract, alerts by
 * alias): a real scan event creates one alert with alias = the alert's key and mapped
 * priority; acknowledging and resolving in Trust-Plane acknowledge and close it by that
 * alias; the API key is sealed and never returned; 429 with Retry-After is honoured.
 */
import { describe, expect, it } from "vitest";
import { call, signup } from "../../../../../test/helpers";
import { createChannel, createRule, deliverNow, emitScan, expectRetryAfterHonoured, history, HOSTILE_SUBJECT, hostileScanEvent, received } from "../../../../../test/alerting/providers";

async function setup(region?: "us" | "eu") {
  const org = await signup();
  const apiKey = crypto.randomUUID();
  const ch = await createChannel(org, { kind: "opsgenie", api_key: apiKey, ...(region ? { region } : {}) });
  const tpl = await call("POST", "/api/cert-watcher/alert-templates", { token: org.session, body: { name: "t", subject: "Expiring: {{certificate.subject}}", body: "{{certificate.subject}}" } });
  await createRule(org, "cert-watcher", { name: "expiring", expression: "validity_days < 14", severity: "high", channel_ids: [ch.id], template_id: tpl.body.id });
  return { org, apiKey, ch };
}

describe("opsgenie", () => {
  it("create, acknowledge, close by alias; priority mapped; message cut to 130; the key never returned", async () => {
    const { org, apiKey, ch } = await setup();
    expect((await call("GET", `/api/notification-channels/${ch.id}`, { token: org.session })).body.settings).toEqual({ api_key: `…${apiKey.slice(-4)}`, region: "us" });
    expect(JSON.stringify((await call("GET", "/api/notification-channels", { token: org.session })).body)).not.toContain(apiKey);

    await emitScan(org, hostileScanEvent({ subject: HOSTILE_SUBJECT }));
    await deliverNow(org);
    const [alert] = await history(org, "cert-watcher");
    let got = await received(apiKey);
    expect(got.received.length).toBe(1);
    const create = got.received[0];
    expect(create).toMatchObject({ method: "POST", path: "/v2/alerts", status: 202, region: "us" });
    expect(create.headers.authorization).toBe(`GenieKey ${apiKey}`);
    expect(create.json).toMatchObject({ alias: alert.alert_key, priority: "P2", source: "Trust-Plane", entity: "shop.example.test|192.0.2.80", tags: ["trust-plane", "cert-watcher"] });
    // JSON text: the hostile subject arrives as written, cut to Opsgenie's 130 characters.
    expect(create.json.message).toBe(`Expiring: ${HOSTILE_SUBJECT}`.slice(0, 129) + "…");
    expect(create.json.description).toContain(HOSTILE_SUBJECT);

    expect((await call("POST", `/api/cert-watcher/alert-history/${alert.id}/acknowledge`, { token: org.session })).status).toBe(200);
    await deliverNow(org);
    expect((await call("POST", `/api/cert-watcher/alert-history/${alert.id}/resolve`, { token: org.session })).status).toBe(200);
    await deliverNow(org);
    got = await received(apiKey);
    const alias = alert.alert_key; // as the receiver decoded the path
    expect(got.received.slice(1).map((r) => [r.path, r.query.identifierType, r.status, r.json.user])).toEqual([
      [`/v2/alerts/${alias}/acknowledge`, "alias", 202, org.email],
      [`/v2/alerts/${alias}/close`, "alias", 202, "Trust-Plane"],
    ]);
    expect(got.incidents[alert.alert_key]).toEqual({ status: "resolved", actions: ["trigger", "acknowledge", "resolve"] });
  });

  it("429 with Retry-After: retried no earlier than asked; the EU instance gets the EU endpoint", async () => {
    const { org, apiKey } = await setup("eu");
    await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test" }));
    await expectRetryAfterHonoured(org, "cert-watcher", apiKey, 30);
    expect((await received(apiKey)).received.map((r) => [r.region, r.status])).toEqual([
      ["eu", 429],
      ["eu", 202],
    ]);
  });
});
