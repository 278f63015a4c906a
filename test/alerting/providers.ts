/**
 * What the provider tests (src/modules/alerting/channels/<kind>/<kind>.test.ts) share:
 * the local receivers' inboxes (test/fixtures/servers/providers.ts), real module events
 * carrying hostile values, and delivery runs at a chosen time.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { ScanResult } from "@trust-plane/scan-contract";
import { createDb, type Db } from "../../src/db/client";
import { loadConfig, type Bindings, type Config } from "../../src/env";
import { deliverDue } from "../../src/modules/alerting/delivery";
import { alertStateOf, emitEvent } from "../../src/modules/alerting/emit";
import { analyseScan } from "../../src/modules/cert-watcher/scan-result";
import { call, unique, type Org } from "../helpers";
import ecdsaTrusted from "../cert-watcher/fixtures/ecdsa-trusted.json";

const E = env as any;
export const HUB = E.FIXTURE_URL as string;

export interface Received {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
  json: any;
  region: string;
  status: number;
}

export async function received(inbox: string): Promise<{ received: Received[]; incidents: Record<string, { status: string; actions: string[] }> }> {
  return (await fetch(`${HUB}/providers/__control/${encodeURIComponent(inbox)}`)).json();
}

export type Fault = { kind: "rate_limit"; seconds: number } | { kind: "status"; status: number } | { kind: "hang"; ms: number };

export async function faults(inbox: string, list: Fault[]) {
  expect((await fetch(`${HUB}/providers/__control/${encodeURIComponent(inbox)}/script`, { method: "POST", body: JSON.stringify({ faults: list }) })).status).toBe(200);
}

/** A fresh inbox name (also usable as a 32-character PagerDuty routing key). */
export const inboxName = () => `box${unique()}`.replace(/[^A-Za-z0-9]/g, "").padEnd(32, "0").slice(0, 32);

export async function createChannel(org: Org, body: Record<string, unknown>) {
  const r = await call("POST", "/api/notification-channels", { token: org.session, body: { name: `ch-${unique()}`, ...body } });
  if (r.status !== 201) throw new Error(`channel create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: number; secret?: string };
}

export async function createRule(org: Org, module: string, body: Record<string, unknown>): Promise<number> {
  const r = await call("POST", `/api/${module}/alert-rules`, { token: org.session, body: { name: "rule", severity: "high", ...body } });
  if (r.status !== 201) throw new Error(`rule create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

export async function history(org: Org, module: string): Promise<any[]> {
  const r = await call("GET", `/api/${module}/alert-history?limit=100`, { token: org.session });
  expect(r.status).toBe(200);
  return r.body.alerts;
}

/**
 * What a certificate scan of an attacker's endpoint makes: the cert-watcher module's own
 * analysis of a real scanner result whose certificate subject is hostile, as the Worker
 * builds the event from an accepted result (the scan contract's normalisation included).
 */
export function hostileScanEvent(opts: { subject: string; monitorId?: number; ip?: string; daysLeft?: number; sha256?: string; now?: Date }) {
  const now = opts.now ?? new Date();
  const raw = structuredClone(ecdsaTrusted) as any;
  raw.certificate.subject = opts.subject;
  if (opts.sha256) raw.certificate.sha256 = opts.sha256;
  const days = opts.daysLeft ?? 5;
  raw.certificate.not_after = new Date(now.getTime() + days * 86_400_000 + 3_600_000).toISOString();
  raw.certificate.not_before = new Date(now.getTime() - 30 * 86_400_000).toISOString();
  return analyseScan(ScanResult.parse(raw), { monitorId: opts.monitorId ?? 1, monitorCn: "shop.example.test", port: 443, sni: "shop.example.test", ipAddress: opts.ip ?? "192.0.2.80", starttls: null, now }).event;
}

/** The markup an attacker would put in a certificate subject for each medium. */
export const HOSTILE_SUBJECT =
  'CN=<!channel> <https://evil.example/login|sign in again> @everyone [click](https://evil.example/x) **urgent** _x_ {{DATE(2017-02-14T06:08:00Z, SHORT)}} <b>bold</b> & "quoted"';

export const emitScan = (org: Org, event: ReturnType<typeof hostileScanEvent>) => emitEvent(E, "cert-watcher", org.organizationId, event);

/** Runs the organization's due deliveries at `nowMs`, inside its AlertState (as its alarm does). */
export function deliverNow(org: Org, nowMs?: number) {
  const stub = alertStateOf(E, org.organizationId) as unknown as DurableObjectStub;
  type Run = { delivered: number; retrying: number; failed: number; nextDueAt: string | null };
  const inside = runInDurableObject as unknown as (s: DurableObjectStub, fn: (o: any) => Promise<Run>) => Promise<Run>;
  return inside(stub, (o) => o.deliverNow(org.organizationId, nowMs));
}

/** A delivery run with a configuration of the test's choosing (e.g. a short delivery timeout). */
export function deliverWith(org: Org, overrides: (c: Config) => Config, now = new Date()) {
  const config = overrides(loadConfig(E as Bindings));
  return deliverDue(createDb(E.DB as D1Database) as Db, config, org.organizationId, now);
}

/** The deliveries of an organization's newest alert of a module, oldest first. */
export async function deliveriesOf(org: Org, module: string, alertId?: number) {
  const alerts = await history(org, module);
  const a = alertId === undefined ? alerts.find((x) => x.status === "fired") : alerts.find((x) => x.id === alertId);
  return a.deliveries as any[];
}

/** Sends the alert, then a 429 asking to wait `seconds`: the retry is due no earlier than that (returns the delivery). */
export async function expectRetryAfterHonoured(org: Org, module: string, inbox: string, seconds: number) {
  await faults(inbox, [{ kind: "rate_limit", seconds }]);
  const t0 = Date.now();
  await deliverNow(org, t0);
  const [d] = await deliveriesOf(org, module);
  expect(d).toMatchObject({ status: "retrying", attempts: 1, response_status: expect.any(Number) });
  expect(d.attempt_log[0]).toMatchObject({ outcome: "retrying", retry_after_seconds: seconds });
  // Measured from the attempt itself: the AlertState's own alarm may have made it a
  // millisecond before t0 (its clock, not the test's).
  expect(Date.parse(d.next_attempt_at) - Date.parse(d.attempt_log[0].at)).toBeGreaterThanOrEqual(seconds * 1000);
  // Not before: nothing sent; at that time: delivered.
  await deliverNow(org, Date.parse(d.next_attempt_at) - 1000);
  expect((await deliveriesOf(org, module))[0].attempts).toBe(1);
  await deliverNow(org, Date.parse(d.next_attempt_at));
  const after = (await deliveriesOf(org, module))[0];
  expect(after).toMatchObject({ status: "delivered", attempts: 2 });
  return after;
}

export const E_ENV = E;
