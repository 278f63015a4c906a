/**
 * Notification channels: organization-wide destinations of alerts, each of one
 * provider's kind (registry.ts). What is generic lives here, once for every provider:
 *
 *   - a provider's settings split by their declaration: secret settings sealed
 *     (AES-GCM, src/platform/sealed.ts) into `secret_ciphertext`, never returned; the
 *     others, and each secret in its masked form, in `settings` (what is shown back);
 *   - an edit that leaves a secret out, or sends back what it was shown, keeps the
 *     sealed value (the form never had it); a generated secret is returned once;
 *   - the provider's check (destinations through the egress policy) on every save,
 *     and the egress policy again before every send (http.ts).
 */
import { asc, eq } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { notificationChannels } from "../../../db/schema";
import type { Config } from "../../../env";
import { badRequest } from "../../../platform/errors";
import { seal, unseal } from "../../../platform/sealed";
import type { Tenant } from "../../../platform/tenant";
import { maskSecret } from "./mask";
import { settingMeta, type AlertMessage, type ChannelProvider, type SendResult } from "./provider";
import { providerOf } from "./registry";

type Channel = typeof notificationChannels.$inferSelect;

export interface ChannelInput {
  name: string;
  kind: string;
  enabled?: boolean;
  rotate_secret?: boolean;
  [setting: string]: unknown;
}

const BASE_FIELDS = new Set(["name", "kind", "enabled", "rotate_secret"]);

function providerOr400(kind: string): ChannelProvider<any> {
  const p = providerOf(kind);
  if (!p) throw badRequest("Invalid channel", [{ path: "kind", message: `no provider of kind ${kind}` }]);
  return p;
}

/** Names of a provider's secret settings, with how each is shown. */
function secretsOf(p: ChannelProvider<any>) {
  return Object.entries(p.settings.shape as Record<string, any>)
    .map(([name, schema]) => ({ name, ...settingMeta(schema) }))
    .filter((f) => f.secret);
}

/** What is shown of a channel's settings: the provider's view, else each setting with secrets masked. */
function shownSettings(p: ChannelProvider<any>, values: Record<string, unknown>): Record<string, unknown> {
  if (p.shown) return p.shown(values);
  const secret = new Map(secretsOf(p).map((f) => [f.name, f.shownAs ?? "hidden"]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    const kind = secret.get(k);
    if (!kind) out[k] = v;
    else if (typeof v === "string") {
      const masked = maskSecret(kind, v);
      if (masked !== null) out[k] = masked;
    }
  }
  return out;
}

/** Validates a provider's settings (its schema, then its check) and returns them whole (secrets included). */
async function validated(config: Config, p: ChannelProvider<any>, input: Record<string, unknown>) {
  const settings = Object.fromEntries(Object.entries(input).filter(([k]) => !BASE_FIELDS.has(k)));
  const parsed = p.settings.safeParse(settings);
  if (!parsed.success) {
    throw badRequest(
      "Invalid channel",
      parsed.error.issues.map((i: { path: PropertyKey[]; message: string }) => ({ path: i.path.map(String).join("."), message: i.message })),
    );
  }
  const values = parsed.data as Record<string, unknown>;
  await p.check?.(values, { config });
  return values;
}

async function sealed(config: Config, p: ChannelProvider<any>, values: Record<string, unknown>) {
  const names = new Set(secretsOf(p).map((f) => f.name));
  const secrets = Object.fromEntries(Object.entries(values).filter(([k, v]) => names.has(k) && v !== undefined));
  // Stored shown form: secrets already masked, so the row holds no secret in clear.
  return { settings: shownSettings(p, values), secretCiphertext: await seal(config.secretsKey, JSON.stringify(secrets)) };
}

/** A stored channel's settings, secrets unsealed and stored values re-read through the schema. */
async function storedValues(config: Config, p: ChannelProvider<any>, c: Channel): Promise<Record<string, unknown>> {
  const secrets = JSON.parse(await unseal(config.secretsKey, c.secretCiphertext)) as Record<string, unknown>;
  const shownNames = new Set(Object.keys(p.settings.shape));
  const plain = Object.fromEntries(Object.entries(c.settings).filter(([k]) => shownNames.has(k) && !secretsOf(p).some((s) => s.name === k)));
  return { ...plain, ...secrets };
}

export function channelView(c: Channel) {
  const p = providerOf(c.kind);
  // Masked again on the way out: rows saved before a mask existed (or was stricter) show it masked too.
  const settings = p ? remask(p, c.settings) : c.settings;
  return { id: c.id, name: c.name, kind: c.kind, enabled: c.enabled, settings, created_at: c.createdAt, updated_at: c.updatedAt };
}

/** URL masks are idempotent: applied again to what is stored, so a row stored with a laxer mask shows the strict one. */
function remask(p: ChannelProvider<any>, settings: Record<string, unknown>) {
  const out = { ...settings };
  for (const f of secretsOf(p)) {
    const v = out[f.name];
    if (typeof v === "string" && f.shownAs === "url") out[f.name] = maskSecret("url", v);
  }
  return out;
}

export async function createChannel(t: Tenant, config: Config, input: ChannelInput, now: Date) {
  const p = providerOr400(input.kind);
  const settings: Record<string, unknown> = { ...input };
  const generated = p.generated && settings[p.generated.field] === undefined ? p.generated.generate() : undefined;
  if (generated !== undefined) settings[p.generated!.field] = generated;
  const values = await validated(config, p, settings);
  const nowIso = now.toISOString();
  const [row] = await t
    .insert(notificationChannels, { name: input.name, kind: p.kind, enabled: input.enabled ?? true, ...(await sealed(config, p, values)), createdAt: nowIso, updatedAt: nowIso })
    .returning();
  return { id: row.id, message: "Channel created", ...(generated !== undefined ? { secret: generated } : {}) };
}

export async function listChannels(t: Tenant) {
  return (await t.select(notificationChannels).orderBy(asc(notificationChannels.id)).all()).map(channelView);
}

export const channelOf = (t: Tenant, id: number) => t.getOr404(notificationChannels, id, "Channel");

/**
 * Replaces a channel's settings. A secret left out, or sent back as it was shown, keeps
 * its sealed value; a generated one is replaced only when a new one is given or
 * `rotate_secret` asks for it (and then returned once).
 */
export async function updateChannel(t: Tenant, config: Config, id: number, input: ChannelInput, now: Date) {
  const current = await channelOf(t, id);
  if (input.kind !== current.kind) throw badRequest("Invalid channel", [{ path: "kind", message: "a channel's kind cannot change" }]);
  const p = providerOr400(current.kind);
  const old = await storedValues(config, p, current);
  const shown = channelView(current).settings;
  const settings: Record<string, unknown> = { ...input };
  for (const f of secretsOf(p)) {
    const given = settings[f.name];
    const wasShown = given !== undefined && Object.values(shown).includes(given);
    if (given === undefined || wasShown) settings[f.name] = old[f.name];
  }
  let generated: string | undefined;
  if (p.generated && input.rotate_secret) settings[p.generated.field] = generated = p.generated.generate();
  else if (p.generated && input[p.generated.field] === undefined && old[p.generated.field] === undefined) settings[p.generated.field] = generated = p.generated.generate();
  const values = await validated(config, p, settings);
  await t
    .update(notificationChannels, { name: input.name, enabled: input.enabled ?? true, ...(await sealed(config, p, values)), updatedAt: now.toISOString() }, eq(notificationChannels.id, current.id))
    .run();
  return { message: "Channel updated", ...(generated !== undefined ? { secret: generated } : {}) };
}

export async function deleteChannel(t: Tenant, id: number) {
  const c = await channelOf(t, id);
  await t.delete(notificationChannels, eq(notificationChannels.id, c.id)).run();
  return { message: "Channel deleted" };
}

/**
 * A channel ready to send: its provider and its settings (secrets unsealed, stored values
 * re-read through the provider's schema), or the failure every send to it would have.
 * A delivery run opens each of its channels once, however many of its deliveries go there.
 */
export type OpenChannel = { channel: Channel; provider: ChannelProvider<any>; settings: unknown } | { failure: SendResult };

/** Opens a channel for sending; never throws. */
export async function openChannel(config: Config, channel: Channel): Promise<OpenChannel> {
  const p = providerOf(channel.kind);
  if (!p) return { failure: { ok: false, retryable: false, failure: "misconfigured", errorClass: "internal", error: `no provider of kind ${channel.kind} any more` } };
  let values: Record<string, unknown>;
  try {
    values = await storedValues(config, p, channel);
  } catch {
    return { failure: { ok: false, retryable: false, failure: "misconfigured", errorClass: "internal", error: "channel secret cannot be unsealed (SECRETS_KEY changed?)" } };
  }
  const parsed = p.settings.safeParse(values);
  if (!parsed.success) {
    return { failure: { ok: false, retryable: false, failure: "misconfigured", errorClass: "internal", error: `the channel's stored settings are not valid any more: ${parsed.error.issues[0]?.message ?? "?"}` } };
  }
  return { channel, provider: p, settings: parsed.data };
}

/** Sends one alert to an opened channel; never throws. `test`: the provider's test-send. */
export async function sendToOpenChannel(db: Db, config: Config, open: OpenChannel, alert: AlertMessage, now: Date, opts: { test?: boolean } = {}): Promise<SendResult> {
  if ("failure" in open) return open.failure;
  const { channel, provider: p, settings } = open;
  const ctx = { config, db, now, organizationId: channel.organizationId, channel: { id: channel.id, name: channel.name } };
  try {
    return await (opts.test && p.testSend ? p.testSend(alert, settings, ctx) : p.send(alert, settings, ctx));
  } catch (err) {
    // A provider's own fault: said, never thrown into the delivery loop.
    return { ok: false, retryable: false, failure: "misconfigured", errorClass: "internal", error: `the ${p.kind} provider failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300) };
  }
}

/** Sends one alert to one channel; never throws. `test`: the provider's test-send. */
export async function sendToChannel(db: Db, config: Config, channel: Channel, alert: AlertMessage, now: Date, opts: { test?: boolean } = {}): Promise<SendResult> {
  return sendToOpenChannel(db, config, await openChannel(config, channel), alert, now, opts);
}

/** The test alert of a test-send. */
export function testAlert(config: Config, channel: Channel, now: Date): AlertMessage {
  const at = now.toISOString();
  return {
    id: 0,
    event_id: `test-${now.getTime()}`,
    module: "test",
    rule: { id: null, name: "Test notification", severity: "info" },
    subject: "test",
    message: { subject: "Trust-Plane test notification", body: `This is a test of channel "${channel.name}" sent at ${at}.` },
    event: {},
    fired_at: at,
    test: true,
    action: "trigger",
    alert_key: `trust-plane:test:${channel.organizationId}:${channel.id}:${now.getTime()}`,
    state: "open",
    occurrences: 1,
    summary: "Test notification",
    acknowledged_by: null,
    resolved_at: null,
    resolution: null,
    url: `${config.publicBaseUrl}/alerting?section=channels`,
  };
}
