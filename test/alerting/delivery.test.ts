/**
 * Notification delivery against real local receivers: the webhook receiver
 * of the fixture hub (scriptable status codes, raw body and headers recorded) and the
 * SMTP sink (test/fixtures/servers/smtp.ts). Signatures are verified here with
 * WebCrypto, independently of the service's code. Retries are driven by calling
 * AlertState.deliverNow with a clock moved past the backoff; the Cron Trigger is fired
 * through the worker's scheduled handler.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { jobs } from "../../src/jobs";
import { loadConfig } from "../../src/env";
import { MAX_DELIVERY_ATTEMPTS } from "../../src/modules/alerting/delivery";
import { alertStateOf, emitEvent, emitEvents } from "../../src/modules/alerting/emit";
import { call, pollUntil, signup, unique, type Org } from "../helpers";
import { certScanEvent, ctLogEvent } from "./events";

const E = env as any;
const base = E.FIXTURE_URL as string;
const smtpPort = Number(E.SMTP_SINK_PORT);
/** Nothing listens there (test/fixtures/servers/refusing.ts); it is on the test egress allow-list. */
const refusingPort = Number(E.REFUSING_PORT);

interface Received {
  headers: Record<string, string>;
  body: string;
}

async function inbox(name: string): Promise<Received[]> {
  return (await (await fetch(`${base}/webhook/__control/${name}`)).json<any>()).received;
}
async function script(name: string, statuses: number[]) {
  const r = await fetch(`${base}/webhook/__control/${name}/script`, { method: "POST", body: JSON.stringify({ statuses }) });
  expect(r.status).toBe(200);
}
async function sinkMessages(to: string): Promise<{ envelope: { mailFrom: string | null; rcptTo: string[] }; data: string }[]> {
  return (await (await fetch(`${base}/smtp/__control/messages?to=${encodeURIComponent(to)}`)).json<any>()).messages;
}

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const sig = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message)));
  return [...sig].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Verifies `X-TrustPlane-Signature: t=<unix>,v1=<hex>` over `${t}.${rawBody}`; returns t. */
async function verifySignature(r: Received, secret: string): Promise<number> {
  const header = r.headers["x-trustplane-signature"];
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? "");
  if (!m) throw new Error(`bad signature header: ${header}`);
  expect(m[2]).toBe(await hmacHex(secret, `${m[1]}.${r.body}`));
  return Number(m[1]);
}

async function channel(token: string, body: Record<string, unknown>) {
  const r = await call("POST", "/api/notification-channels", { token, body: { name: `ch-${unique()}`, ...body } });
  if (r.status !== 201) throw new Error(`channel create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: number; secret?: string };
}

async function rule(token: string, module: string, body: Record<string, unknown>): Promise<number> {
  const r = await call("POST", `/api/${module}/alert-rules`, { token, body: { name: "rule", severity: "high", ...body } });
  if (r.status !== 201) throw new Error(`rule create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

async function alerts(token: string, module: string): Promise<any[]> {
  const r = await call("GET", `/api/${module}/alert-history?limit=100`, { token });
  expect(r.status).toBe(200);
  return r.body.alerts;
}

interface DeliveryRun {
  delivered: number;
  retrying: number;
  failed: number;
  nextDueAt: string | null;
}
/** What these tests call on the AlertState Durable Object. */
interface AlertStateApi {
  deliverNow(organizationId: number, nowMs?: number): Promise<DeliveryRun>;
  process(organizationId: number, module: string, event: Record<string, unknown>, nowMs?: number): Promise<{ fired: unknown[] }>;
}

/** Runs `fn` inside the organization's AlertState (stub untyped: its RPC type is too deep for tsc). */
function inAlertState<R>(org: Org, fn: (o: AlertStateApi, state: DurableObjectState) => Promise<R>): Promise<R> {
  const stub = alertStateOf(E, org.organizationId) as unknown as DurableObjectStub;
  return runInDurableObject(stub, (o: DurableObject, state) => fn(o as unknown as AlertStateApi, state));
}

const deliverNow = (org: Org, nowMs?: number) => inAlertState(org, (o) => o.deliverNow(org.organizationId, nowMs));

/** The single delivery of the single alert of `module`. */
async function onlyDelivery(token: string, module: string) {
  const a = await alerts(token, module);
  expect(a.length).toBe(1);
  expect(a[0].deliveries.length).toBe(1);
  return a[0].deliveries[0];
}

/** An org with a webhook channel to a fresh inbox and a cert-watcher rule sending to it. */
async function webhookSetup(statuses: number[] = []) {
  const org = await signup();
  const box = unique();
  if (statuses.length) await script(box, statuses);
  const ch = await channel(org.session, { kind: "webhook", url: `${base}/webhook/${box}` });
  const ruleId = await rule(org.session, "cert-watcher", { name: "expiring", expression: "validity_days < 14", channel_ids: [ch.id] });
  return { org, box, ch, ruleId };
}

describe("webhook delivery", () => {
  it("POSTs the alert as JSON signed with HMAC-SHA256 of the secret returned at creation", async () => {
    const { org, box, ch, ruleId } = await webhookSetup();
    expect(ch.secret).toMatch(/^whsec_[0-9A-Za-z]+$/);
    const event = certScanEvent();
    const fired = await emitEvent(E, "cert-watcher", org.organizationId, event);
    expect(fired.fired.length).toBe(1);
    const before = Math.floor(Date.now() / 1000);
    await deliverNow(org);
    const got = await inbox(box);
    expect(got.length).toBe(1);
    const t = await verifySignature(got[0], ch.secret!);
    expect(Math.abs(t - before)).toBeLessThan(30);
    // A different secret does not verify: the check can fail.
    await expect(verifySignature(got[0], "whsec_wrong")).rejects.toThrow();
    expect(got[0].headers["content-type"]).toContain("application/json");
    const payload = JSON.parse(got[0].body);
    expect(payload).toMatchObject({
      id: fired.fired[0].history_id,
      event_id: fired.event_id,
      module: "cert-watcher",
      rule: { id: ruleId, name: "expiring", severity: "high" },
      subject: "mail.example.com|192.0.2.25",
      event,
    });
    expect(payload.message.subject).toContain("expiring");
    expect(got[0].headers["x-trustplane-event-id"]).toBe(fired.event_id);
    const d = await onlyDelivery(org.session, "cert-watcher");
    expect(d).toMatchObject({ channel_id: ch.id, channel_kind: "webhook", status: "delivered", attempts: 1, response_status: 200, last_error: null, next_attempt_at: null });
    expect(d.delivered_at).toEqual(expect.any(String));
    // Nothing left to send: another run sends nothing more.
    await deliverNow(org, Date.now() + 3_600_000);
    expect((await inbox(box)).length).toBe(1);
  });

  it("signs with a secret given at creation", async () => {
    const org = await signup();
    const box = unique();
    const secret = "my-own-signing-secret-0123456789";
    const ch = await channel(org.session, { kind: "webhook", url: `${base}/webhook/${box}`, secret });
    expect(ch.secret).toBeUndefined();
    await rule(org.session, "ct-log", { expression: "rate.count > 0", channel_ids: [ch.id] });
    await emitEvent(E, "ct-log", org.organizationId, ctLogEvent());
    await deliverNow(org);
    const got = await inbox(box);
    expect(got.length).toBe(1);
    await verifySignature(got[0], secret);
  });

  it("retries on 500 with growing backoff until delivered ([500, 500, 200])", async () => {
    const { org, box, ch } = await webhookSetup([500, 500, 200]);
    const t0 = Date.now();
    await emitEvent(E, "cert-watcher", org.organizationId, certScanEvent());
    await deliverNow(org);
    let d = await onlyDelivery(org.session, "cert-watcher");
    const receiver = `${new URL(base).origin}/***`;
    expect(d).toMatchObject({ status: "retrying", attempts: 1, response_status: 500, last_error: `webhook delivery: HTTP 500 from ${receiver}` });
    const next1 = Date.parse(d.next_attempt_at);
    expect(next1 - t0).toBeGreaterThanOrEqual(5_000);
    expect(next1 - Date.now()).toBeLessThanOrEqual(6_000);

    // Not yet due: nothing is sent.
    await deliverNow(org, next1 - 1_000);
    expect((await inbox(box)).length).toBe(1);
    expect((await onlyDelivery(org.session, "cert-watcher")).attempts).toBe(1);

    await deliverNow(org, next1);
    d = await onlyDelivery(org.session, "cert-watcher");
    expect(d).toMatchObject({ status: "retrying", attempts: 2, response_status: 500 });
    const next2 = Date.parse(d.next_attempt_at);
    expect(next2 - next1).toBeGreaterThanOrEqual(10_000);
    expect(next2 - next1).toBeLessThanOrEqual(12_000);

    await deliverNow(org, next2);
    d = await onlyDelivery(org.session, "cert-watcher");
    expect(d).toMatchObject({ status: "delivered", attempts: 3, response_status: 200, last_error: null, next_attempt_at: null });
    // Each attempt is in the delivery's list, with its time, status and class.
    expect(d.attempt_log).toEqual([
      { at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), outcome: "retrying", status: 500, error_class: "http_status", error: `webhook delivery: HTTP 500 from ${receiver}`, retry_after_seconds: null },
      { at: new Date(next1).toISOString(), outcome: "retrying", status: 500, error_class: "http_status", error: `webhook delivery: HTTP 500 from ${receiver}`, retry_after_seconds: null },
      { at: new Date(next2).toISOString(), outcome: "delivered", status: 200, error_class: null, error: null, retry_after_seconds: null },
    ]);
    const got = await inbox(box);
    expect(got.length).toBe(3);
    // The same alert every time (at-least-once: the receiver de-duplicates by alert id), each attempt freshly signed.
    expect(new Set(got.map((g) => JSON.parse(g.body).id)).size).toBe(1);
    const ts = [];
    for (const g of got) ts.push(await verifySignature(g, ch.secret!));
    expect(ts[2]).toBe(Math.floor(next2 / 1000));
  });

  it("fails after the maximum number of attempts when the receiver keeps failing", async () => {
    const { org, box } = await webhookSetup(Array(20).fill(503));
    await emitEvent(E, "cert-watcher", org.organizationId, certScanEvent());
    await deliverNow(org);
    let d = await onlyDelivery(org.session, "cert-watcher");
    for (let i = 0; i < 20 && d.status === "retrying"; i++) {
      await deliverNow(org, Date.parse(d.next_attempt_at));
      d = await onlyDelivery(org.session, "cert-watcher");
    }
    expect(MAX_DELIVERY_ATTEMPTS).toBeGreaterThan(2);
    expect(d).toMatchObject({ status: "failed", attempts: MAX_DELIVERY_ATTEMPTS, response_status: 503, last_error: `webhook delivery: HTTP 503 from ${new URL(base).origin}/***`, next_attempt_at: null, delivered_at: null });
    expect(d.attempt_log.map((a: any) => a.outcome)).toEqual([...Array(MAX_DELIVERY_ATTEMPTS - 1).fill("retrying"), "failed"]);
    expect((await inbox(box)).length).toBe(MAX_DELIVERY_ATTEMPTS);
    await deliverNow(org, Date.now() + 86_400_000);
    expect((await inbox(box)).length).toBe(MAX_DELIVERY_ATTEMPTS);
  });

  it("does not retry a 400 (permanent); retries 429", async () => {
    const { org, box } = await webhookSetup([400]);
    await emitEvent(E, "cert-watcher", org.organizationId, certScanEvent());
    await deliverNow(org);
    const d = await onlyDelivery(org.session, "cert-watcher");
    expect(d).toMatchObject({ status: "failed", attempts: 1, response_status: 400, next_attempt_at: null });
    await deliverNow(org, Date.now() + 3_600_000);
    expect((await inbox(box)).length).toBe(1);

    const s2 = await webhookSetup([429, 200]);
    await emitEvent(E, "cert-watcher", s2.org.organizationId, certScanEvent());
    await deliverNow(s2.org);
    const d2 = await onlyDelivery(s2.org.session, "cert-watcher");
    expect(d2).toMatchObject({ status: "retrying", attempts: 1, response_status: 429 });
    await deliverNow(s2.org, Date.parse(d2.next_attempt_at));
    expect(await onlyDelivery(s2.org.session, "cert-watcher")).toMatchObject({ status: "delivered", attempts: 2 });
  });

  it("an unreachable receiver is retried with the network error recorded", async () => {
    const org = await signup();
    const ch = await channel(org.session, { kind: "webhook", url: `http://127.0.0.1:${refusingPort}/unreachable` });
    await rule(org.session, "cert-watcher", { expression: "true", channel_ids: [ch.id] });
    await emitEvent(E, "cert-watcher", org.organizationId, certScanEvent());
    await deliverNow(org);
    const d = await onlyDelivery(org.session, "cert-watcher");
    expect(d).toMatchObject({ status: "retrying", attempts: 1, response_status: null });
    expect(d.last_error).toEqual(expect.any(String));
  });

  it("a run's outcomes are written together: the receiver failing midway loses no alert and sends none twice", async () => {
    const org = await signup();
    const box = unique();
    // Twelve deliveries sent at once; the receiver fails the fifth and sixth it receives.
    await script(box, [200, 200, 200, 200, 500, 503]);
    const ch = await channel(org.session, { kind: "webhook", url: `${base}/webhook/${box}` });
    await rule(org.session, "cert-watcher", { expression: "validity_days < 14", channel_ids: [ch.id], throttle_seconds: 0 });
    // One batch of twelve events: their twelve deliveries are due together, for one delivery run
    // (the AlertState's alarm, or this call if it comes first: runs are chained, never overlap).
    const events = Array.from({ length: 12 }, (_, i) => ({ id: `midway-${box}-${i}`, event: { ...certScanEvent(), monitor_id: i + 1, ip_address: `192.0.2.${i + 1}` } }));
    await emitEvents(E, "cert-watcher", org.organizationId, events);
    await deliverNow(org);

    // Each delivery's own state, as written by the run's one batch.
    const fired = await alerts(org.session, "cert-watcher");
    expect(fired.length).toBe(12);
    const retried = fired.filter((x) => x.deliveries[0].status === "retrying");
    expect(retried.map((x) => x.deliveries[0].response_status).sort()).toEqual([500, 503]);
    for (const x of retried) {
      const d = x.deliveries[0];
      expect(d).toMatchObject({ attempts: 1, delivered_at: null, last_error: expect.stringMatching(/^webhook delivery: HTTP 50[03] from /) });
      expect(d.attempt_log).toEqual([expect.objectContaining({ outcome: "retrying", status: d.response_status, error_class: "http_status" })]);
      expect(Date.parse(d.next_attempt_at)).toBeGreaterThan(Date.now());
    }
    for (const x of fired.filter((y) => !retried.includes(y))) {
      expect(x.deliveries[0]).toMatchObject({ status: "delivered", attempts: 1, response_status: 200, last_error: null, next_attempt_at: null, delivered_at: expect.any(String) });
    }
    // The next due time is read after the outcomes, in the same round trip.
    const nexts = retried.map((x) => Date.parse(x.deliveries[0].next_attempt_at));
    expect(await deliverNow(org)).toEqual({ delivered: 0, retrying: 0, failed: 0, nextDueAt: new Date(Math.min(...nexts)).toISOString() });
    const first = (await inbox(box)).map((g) => JSON.parse(g.body).id);
    expect(first.length).toBe(12);
    expect(new Set(first).size).toBe(12);

    // The next run sends only the two that failed; the ten delivered are not sent again.
    // (Its own run, or the alarm's when the machine is slow enough for it to come first.)
    expect((await deliverNow(org, Math.max(...nexts))).nextDueAt).toBeNull();
    const again = (await inbox(box)).slice(12).map((g) => JSON.parse(g.body).id);
    expect(again.sort()).toEqual(retried.map((x) => x.id).sort());
    expect(await deliverNow(org, Date.now() + 86_400_000)).toEqual({ delivered: 0, retrying: 0, failed: 0, nextDueAt: null });
    expect((await inbox(box)).length).toBe(14);
    expect((await alerts(org.session, "cert-watcher")).every((x) => x.deliveries.length === 1 && x.deliveries[0].status === "delivered")).toBe(true);
  });

  it("the history shows the delivery status per channel", async () => {
    const org = await signup();
    const okBox = unique();
    const badBox = unique();
    await script(badBox, [400]);
    const good = await channel(org.session, { name: "good hook", kind: "webhook", url: `${base}/webhook/${okBox}` });
    const bad = await channel(org.session, { name: "bad hook", kind: "webhook", url: `${base}/webhook/${badBox}` });
    const slackBox = unique();
    await script(slackBox, [500, 200]);
    const slack = await channel(org.session, { name: "slack", kind: "slack", url: `${base}/webhook/${slackBox}` });
    const disabled = await channel(org.session, { name: "off", kind: "webhook", url: `${base}/webhook/${unique()}`, enabled: false });
    await rule(org.session, "ct-log", { expression: "!caa.authorized", channel_ids: [good.id, bad.id, slack.id, disabled.id] });
    await emitEvent(E, "ct-log", org.organizationId, ctLogEvent());
    await deliverNow(org);
    const [a] = await alerts(org.session, "ct-log");
    const byChannel = Object.fromEntries(a.deliveries.map((d: any) => [d.channel_id, d]));
    expect(byChannel[good.id]).toMatchObject({ channel_name: "good hook", channel_kind: "webhook", status: "delivered", attempts: 1 });
    expect(byChannel[bad.id]).toMatchObject({ channel_name: "bad hook", status: "failed", response_status: 400 });
    expect(byChannel[slack.id]).toMatchObject({ channel_kind: "slack", status: "retrying", attempts: 1 });
    expect(byChannel[disabled.id]).toMatchObject({ status: "failed", attempts: 1, last_error: "channel disabled" });
    await deliverNow(org, Date.parse(byChannel[slack.id].next_attempt_at));
    const [a2] = await alerts(org.session, "ct-log");
    expect(a2.deliveries.find((d: any) => d.channel_id === slack.id)).toMatchObject({ status: "delivered", attempts: 2 });
    expect(a2.deliveries.find((d: any) => d.channel_id === good.id).attempts).toBe(1);
    expect((await inbox(okBox)).length).toBe(1);
  });
});

describe("channel CRUD", () => {
  it("another organization's channel is 404; the kind cannot change; a deleted channel's delivery fails", async () => {
    const org = await signup();
    const other = await signup();
    const box = unique();
    const ch = await channel(org.session, { name: "hook", kind: "webhook", url: `${base}/webhook/${box}` });
    const got = await call("GET", `/api/notification-channels/${ch.id}`, { token: org.session });
    expect(got.body).toMatchObject({ id: ch.id, name: "hook", kind: "webhook", enabled: true, settings: { url: `${base}/***` } });
    for (const [method, body] of [["GET", undefined], ["PUT", { name: "x", kind: "webhook", url: "https://x.example/" }], ["DELETE", undefined]] as const) {
      expect((await call(method, `/api/notification-channels/${ch.id}`, { token: other.session, body })).status).toBe(404);
    }
    expect((await call("GET", "/api/notification-channels", { token: other.session })).body.channels).toEqual([]);
    const kind = await call("PUT", `/api/notification-channels/${ch.id}`, { token: org.session, body: { name: "x", kind: "slack", url: "https://x.example/" } });
    expect(kind.status).toBe(400);

    await rule(org.session, "cert-watcher", { expression: "true", channel_ids: [ch.id] });
    expect((await call("DELETE", `/api/notification-channels/${ch.id}`, { token: org.session })).status).toBe(200);
    expect((await call("GET", `/api/notification-channels/${ch.id}`, { token: org.session })).status).toBe(404);
    await emitEvent(E, "cert-watcher", org.organizationId, certScanEvent());
    await deliverNow(org);
    expect(await onlyDelivery(org.session, "cert-watcher")).toMatchObject({ status: "failed", attempts: 1, last_error: "channel deleted" });
    expect((await inbox(box)).length).toBe(0);
  });
});

describe("slack delivery", () => {
  it('the receiver sees a Slack-compatible {"text": ...} body', async () => {
    const org = await signup();
    const box = unique();
    const ch = await channel(org.session, { kind: "slack", url: `${base}/webhook/${box}` });
    expect(ch.secret).toBeUndefined();
    await rule(org.session, "cert-watcher", { name: "expiring soon", expression: "validity_days < 14", severity: "critical", channel_ids: [ch.id] });
    await emitEvent(E, "cert-watcher", org.organizationId, certScanEvent());
    await deliverNow(org);
    const got = await inbox(box);
    expect(got.length).toBe(1);
    const body = JSON.parse(got[0].body);
    // Slack's incoming-webhook body; link previews off, so a hostile URL in an event is not unfurled.
    expect(body).toMatchObject({ unfurl_links: false, unfurl_media: false });
    expect(body.text).toContain("[CRITICAL]");
    expect(body.text).toContain("expiring soon");
    expect(body.text).toContain("mail.example.com");
    expect(got[0].headers["content-type"]).toContain("application/json");
    expect(got[0].headers["x-trustplane-signature"]).toBeUndefined();
    expect((await onlyDelivery(org.session, "cert-watcher")).status).toBe("delivered");
  });
});

describe("channel test-send", () => {
  it("reports delivered, or a generic failure class that never carries the receiver's answer", async () => {
    const org = await signup();
    const box = unique();
    const ch = await channel(org.session, { kind: "webhook", url: `${base}/webhook/${box}` });
    let r = await call("POST", `/api/notification-channels/${ch.id}/test`, { token: org.session });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ delivered: true, error: null });
    const got = await inbox(box);
    expect(got.length).toBe(1);
    await verifySignature(got[0], ch.secret!);
    expect(JSON.parse(got[0].body)).toMatchObject({ test: true, module: "test" });

    await script(box, [503]);
    r = await call("POST", `/api/notification-channels/${ch.id}/test`, { token: org.session });
    expect(r.body).toEqual({ delivered: false, error: "rejected" });
    expect(JSON.stringify(r.body)).not.toContain("503");

    const dead = await channel(org.session, { kind: "webhook", url: `http://127.0.0.1:${refusingPort}/nothing` });
    r = await call("POST", `/api/notification-channels/${dead.id}/test`, { token: org.session });
    expect(r.body).toEqual({ delivered: false, error: "unreachable" });

    const slackBox = unique();
    const slack = await channel(org.session, { kind: "slack", url: `${base}/webhook/${slackBox}` });
    r = await call("POST", `/api/notification-channels/${slack.id}/test`, { token: org.session });
    expect(r.body).toEqual({ delivered: true, error: null });
    expect(JSON.parse((await inbox(slackBox))[0].body).text).toContain("test");

    // Another organization's channel is 404.
    const other = await signup();
    expect((await call("POST", `/api/notification-channels/${ch.id}/test`, { token: other.session })).status).toBe(404);
    expect((await inbox(box)).length).toBe(2);
  });
});

describe("secrets are never returned", () => {
  it("GET channel and the channel list show no signing secret, Slack URL or SMTP URL", async () => {
    const org = await signup();
    const slackPath = `/webhook/slack-${unique()}/T000/B000/XXXXSECRETXXXX`;
    const hook = await channel(org.session, { kind: "webhook", url: `${base}/webhook/${unique()}` });
    const slack = await channel(org.session, { kind: "slack", url: `${base}${slackPath}` });
    const mail = await channel(org.session, { kind: "email", recipients: ["ops@example.com"], smtp_url: `smtp://user:p4ssw0rd-secret@127.0.0.1:${smtpPort}` });
    const list = await call("GET", "/api/notification-channels", { token: org.session });
    expect(list.status).toBe(200);
    const views = [list.body, ...(await Promise.all([hook, slack, mail].map(async (c) => (await call("GET", `/api/notification-channels/${c.id}`, { token: org.session })).body)))];
    for (const v of views) {
      const text = JSON.stringify(v);
      expect(text).not.toContain(hook.secret!);
      expect(text).not.toContain("XXXXSECRETXXXX");
      expect(text).not.toContain("p4ssw0rd");
      expect(text).not.toContain('"secret"');
    }
    const slackView = list.body.channels.find((c: any) => c.id === slack.id);
    expect(Object.keys(slackView.settings)).toEqual(["url_hint"]);
    expect(slackView.settings.url_hint.startsWith(base)).toBe(true);
    const mailView = list.body.channels.find((c: any) => c.id === mail.id);
    expect(mailView.settings.recipients).toEqual(["ops@example.com"]);
    // An update keeps the secret unless rotated, and does not show it.
    const put = await call("PUT", `/api/notification-channels/${hook.id}`, { token: org.session, body: { name: "renamed", kind: "webhook", url: `${base}/webhook/${unique()}` } });
    expect(put.status).toBe(200);
    expect(put.body.secret).toBeUndefined();
    const rotated = await call("PUT", `/api/notification-channels/${hook.id}`, { token: org.session, body: { name: "renamed", kind: "webhook", url: `${base}/webhook/x`, rotate_secret: true } });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(hook.secret);
  });

  it("an update without a new secret keeps signing with the old one; rotation switches", async () => {
    const org = await signup();
    const box = unique();
    const ch = await channel(org.session, { kind: "webhook", url: `${base}/webhook/${box}` });
    await call("PUT", `/api/notification-channels/${ch.id}`, { token: org.session, body: { name: "n", kind: "webhook", url: `${base}/webhook/${box}` } });
    await call("POST", `/api/notification-channels/${ch.id}/test`, { token: org.session });
    await verifySignature((await inbox(box))[0], ch.secret!);
    const rotated = await call("PUT", `/api/notification-channels/${ch.id}`, { token: org.session, body: { name: "n", kind: "webhook", url: `${base}/webhook/${box}`, rotate_secret: true } });
    await call("POST", `/api/notification-channels/${ch.id}/test`, { token: org.session });
    await verifySignature((await inbox(box))[1], rotated.body.secret);
  });
});

describe("email delivery", () => {
  it("the SMTP sink fixture is running", () => {
    expect(smtpPort).toBeGreaterThan(0);
  });

  it("an email channel with smtp_url delivers the alert to the local SMTP sink", async () => {
    const org = await signup();
    const to = `ops-${unique()}@example.com`;
    const cc = `sec-${unique()}@example.org`;
    const ch = await channel(org.session, { kind: "email", recipients: [to, cc], smtp_url: `smtp://127.0.0.1:${smtpPort}` });
    await rule(org.session, "cert-watcher", { name: "expiring", expression: "validity_days < 14", channel_ids: [ch.id] });
    await emitEvent(E, "cert-watcher", org.organizationId, certScanEvent());
    await deliverNow(org);
    const d = await onlyDelivery(org.session, "cert-watcher");
    expect(d, JSON.stringify(d)).toMatchObject({ channel_kind: "email", status: "delivered", attempts: 1 });
    const msgs = await pollUntil(async () => ((await sinkMessages(to)).length ? await sinkMessages(to) : null), 3000);
    expect(msgs?.length).toBe(1);
    const m = msgs![0];
    expect(m.envelope.rcptTo).toEqual([to]);
    expect(m.envelope.mailFrom).toBe("no-reply@trust-plane.local");
    const unfolded = m.data.replace(/\r\n[ \t]+/g, " ");
    expect(unfolded).toMatch(/^Subject: \[Trust-Plane\] \[high\] expiring: Scan of mail\.example\.com at 192\.0\.2\.25: 9 days left/m);
    expect(unfolded).toMatch(new RegExp(`^To: .*${to.replace(/[.]/g, "\\.")}`, "m"));
    expect(m.data).toContain("mail.example.com");
    expect((await sinkMessages(cc)).length).toBe(1);
  });

  it("the email channel test-send reaches the sink", async () => {
    const org = await signup();
    const to = `test-${unique()}@example.com`;
    const ch = await channel(org.session, { kind: "email", recipients: [to], smtp_url: `smtp://127.0.0.1:${smtpPort}` });
    const r = await call("POST", `/api/notification-channels/${ch.id}/test`, { token: org.session });
    expect(r.body, JSON.stringify(r.body)).toMatchObject({ delivered: true, error: null });
    const msgs = await sinkMessages(to);
    expect(msgs.length).toBe(1);
    expect(msgs[0].data).toContain("Trust-Plane test notification");
  });

  it("without any SMTP server configured the alert mail lands in the outbox (development mailbox)", async () => {
    expect(loadConfig(E).smtpUrl).toBe("");
    const org = await signup();
    const to = `outbox-${unique()}@example.com`;
    const ch = await channel(org.session, { kind: "email", recipients: [to] });
    expect((await call("GET", `/api/notification-channels/${ch.id}`, { token: org.session })).body.settings).toEqual({ recipients: [to], smtp: "service" });
    await rule(org.session, "cert-watcher", { name: "expiring", expression: "validity_days < 14", channel_ids: [ch.id] });
    await emitEvent(E, "cert-watcher", org.organizationId, certScanEvent());
    await deliverNow(org);
    expect(await onlyDelivery(org.session, "cert-watcher")).toMatchObject({ status: "delivered", attempts: 1 });
    const out = await call("GET", "/api/admin/mail-outbox?limit=100", { token: org.session });
    const mail = out.body.messages.find((m: any) => m.to === to);
    expect(mail).toMatchObject({ kind: "alert", status: "stored" });
    expect(mail.subject).toBe("[Trust-Plane] [high] expiring: Scan of mail.example.com at 192.0.2.25: 9 days left");
    expect((await sinkMessages(to)).length).toBe(0);
  });

  it("an SMTP server that refuses the connection is a retryable failure", async () => {
    const org = await signup();
    const ch = await channel(org.session, { kind: "email", recipients: ["x@example.com"], smtp_url: `smtp://127.0.0.1:${refusingPort}` });
    const r = await call("POST", `/api/notification-channels/${ch.id}/test`, { token: org.session });
    expect(r.body).toEqual({ delivered: false, error: "unreachable" });
  });
});

describe("the scheduled safety net (Cron Trigger)", () => {
  it("delivers a delivery left pending with next_attempt_at more than 60 s in the past", async () => {
    const org = await signup();
    const box = unique();
    const ch = await channel(org.session, { kind: "webhook", url: `${base}/webhook/${box}` });
    await rule(org.session, "cert-watcher", { expression: "validity_days < 14", channel_ids: [ch.id] });
    // The alert fired two minutes ago and its alarm was lost.
    const firedAt = Date.now() - 120_000;
    await inAlertState(org, async (o, state) => {
      const r = await o.process(org.organizationId, "cert-watcher", certScanEvent(), firedAt);
      expect(r.fired.length).toBe(1);
      await state.storage.deleteAlarm();
    });
    expect(await inAlertState(org, async (_o, state) => state.storage.getAlarm())).toBeNull();
    let d = await onlyDelivery(org.session, "cert-watcher");
    expect(d).toMatchObject({ status: "pending", attempts: 0 });
    expect(Date.parse(d.next_attempt_at)).toBeLessThan(Date.now() - 60_000);
    expect((await inbox(box)).length).toBe(0);

    // Other modules' periodic jobs are marked as just run, so this cron run exercises the
    // alerting safety net without their network work (every-run jobs still run).
    const scheduledTime = Date.now();
    const d1 = E.DB as D1Database;
    await d1.batch(
      jobs
        .list()
        .filter((j) => j.name !== "alerting.redeliver_overdue")
        .map((j) =>
          d1
            .prepare("INSERT INTO job_runs (name, last_started_at, run_count) VALUES (?1, ?2, 1) ON CONFLICT(name) DO UPDATE SET last_started_at = ?2")
            .bind(j.name, new Date(scheduledTime).toISOString()),
        ),
    );
    // The every-run CT job would poke the public CT logs of the bundled log list; a fresh
    // cached list without logs keeps this cron run on the alerting safety net.
    const emptyLogList = { version: "test", logListTimestamp: new Date(scheduledTime).toISOString(), isAllLogs: true, logs: [] };
    await d1
      .prepare("INSERT OR REPLACE INTO ct_log_list_cache (id, url, source, remote_error, list, fetched_at) VALUES (1, ?, 'remote', NULL, ?, ?)")
      .bind(loadConfig(E).ctLogListUrl, JSON.stringify(emptyLogList), new Date(scheduledTime).toISOString())
      .run();
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime }), E, ctx);
    await waitOnExecutionContext(ctx);
    const run = await d1.prepare("SELECT last_status, last_error FROM job_runs WHERE name = 'alerting.redeliver_overdue'").first<any>();
    expect(run).toEqual({ last_status: "ok", last_error: null });

    d = await onlyDelivery(org.session, "cert-watcher");
    expect(d).toMatchObject({ status: "delivered", attempts: 1 });
    const got = await inbox(box);
    expect(got.length).toBe(1);
    await verifySignature(got[0], ch.secret!);
  });
});
