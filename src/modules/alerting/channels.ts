/**
 * Notification channels (ADDENDUM 7): organization-wide destinations of alerts.
 *  - webhook: JSON POST, signed: `X-TrustPlane-Signature: t=<unix>,v1=<hex>` where
 *    v1 = HMAC-SHA256(secret, "<t>.<raw body>") (timestamped against replay).
 *  - slack: a Slack-compatible incoming webhook, `{"text": ...}`.
 *  - email: SMTP via cloudflare:sockets, to a list of recipients; the channel may
 *    carry its own SMTP_URL, else the service's; with neither the mail goes to the
 *    outbox (the development mailbox).
 * Secrets (signing secret, Slack URL, SMTP URL) are sealed (AES-GCM) and never
 * returned after creation.
 */
import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { notificationChannels } from "../../db/schema";
import type { Config } from "../../env";
import { badRequest, notFound } from "../../platform/errors";
import { enqueueMail, smtpTransport } from "../../platform/mailer";
import { hmacSha256Hex, seal, unseal } from "../../platform/sealed";
import { generateSecret } from "../../platform/secrets";

export type ChannelKind = "webhook" | "slack" | "email";

export interface ChannelInput {
  name: string;
  kind: ChannelKind;
  enabled?: boolean;
  url?: string;
  secret?: string;
  recipients?: string[];
  smtp_url?: string;
}

interface ChannelSecrets {
  secret?: string;
  url?: string;
  smtp_url?: string;
}

/** What is sent: one fired alert. */
export interface AlertPayload {
  id: number;
  event_id: string;
  module: string;
  rule: { id: number | null; name: string; severity: string };
  subject: string;
  message: { subject: string; body: string };
  event: unknown;
  fired_at: string;
  test?: boolean;
}

export interface SendResult {
  ok: boolean;
  /** Retrying may help (network error, 5xx, 408, 429). */
  retryable: boolean;
  status?: number;
  error?: string;
}

function httpUrl(value: string | undefined, path: string): string {
  let u: URL;
  try {
    u = new URL(value ?? "");
  } catch {
    throw badRequest("Invalid channel", [{ path, message: "must be an absolute http(s) URL" }]);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw badRequest("Invalid channel", [{ path, message: "must be an http or https URL" }]);
  return u.toString();
}

/** Validates the kind-specific settings and splits them into shown settings and sealed secrets. */
function prepare(input: ChannelInput): { settings: Record<string, unknown>; secrets: ChannelSecrets; generatedSecret?: string } {
  if (input.kind === "webhook") {
    const url = httpUrl(input.url, "url");
    if (input.secret !== undefined && input.secret.length < 16) throw badRequest("Invalid channel", [{ path: "secret", message: "at least 16 characters" }]);
    const generated = input.secret === undefined ? `whsec_${generateSecret("api").slice(4)}` : undefined;
    return { settings: { url }, secrets: { secret: input.secret ?? generated }, generatedSecret: generated };
  }
  if (input.kind === "slack") {
    const url = httpUrl(input.url, "url");
    return { settings: { url_hint: `${new URL(url).origin}/…` }, secrets: { url } };
  }
  const recipients = input.recipients ?? [];
  if (!recipients.length) throw badRequest("Invalid channel", [{ path: "recipients", message: "at least one recipient" }]);
  const bad = recipients.findIndex((r) => !/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/.test(r));
  if (bad >= 0) throw badRequest("Invalid channel", [{ path: `recipients.${bad}`, message: "not an email address" }]);
  if (input.smtp_url !== undefined) {
    try {
      const u = new URL(input.smtp_url);
      if (u.protocol !== "smtp:" && u.protocol !== "smtps:") throw new Error();
    } catch {
      throw badRequest("Invalid channel", [{ path: "smtp_url", message: "must be smtp://user:pass@host:port or smtps://..." }]);
    }
  }
  return { settings: { recipients, smtp: input.smtp_url ? "channel" : "service" }, secrets: { smtp_url: input.smtp_url } };
}

export function channelView(c: typeof notificationChannels.$inferSelect) {
  return { id: c.id, name: c.name, kind: c.kind, enabled: c.enabled, settings: c.settings, created_at: c.createdAt, updated_at: c.updatedAt };
}

export async function createChannel(db: Db, config: Config, organizationId: number, input: ChannelInput, now: Date) {
  const p = prepare(input);
  const nowIso = now.toISOString();
  const row = await db
    .insert(notificationChannels)
    .values({
      organizationId,
      name: input.name,
      kind: input.kind,
      enabled: input.enabled ?? true,
      settings: p.settings,
      secretCiphertext: await seal(config.secretsKey, JSON.stringify(p.secrets)),
      createdAt: nowIso,
      updatedAt: nowIso,
    })
    .returning()
    .get();
  return {
    id: row.id,
    message: "Channel created",
    ...(p.generatedSecret ? { secret: p.generatedSecret } : {}),
  };
}

export async function listChannels(db: Db, organizationId: number) {
  const rows = await db.select().from(notificationChannels).where(eq(notificationChannels.organizationId, organizationId)).orderBy(asc(notificationChannels.id)).all();
  return rows.map(channelView);
}

export async function channelOf(db: Db, organizationId: number, id: number) {
  const c = await db
    .select()
    .from(notificationChannels)
    .where(and(eq(notificationChannels.id, id), eq(notificationChannels.organizationId, organizationId)))
    .get();
  if (!c) throw notFound("Channel");
  return c;
}

/** Replaces a channel's settings; the sealed secret is replaced only when a new one is given. */
export async function updateChannel(db: Db, config: Config, organizationId: number, id: number, input: ChannelInput & { rotate_secret?: boolean }, now: Date) {
  const current = await channelOf(db, organizationId, id);
  if (input.kind !== current.kind) throw badRequest("Invalid channel", [{ path: "kind", message: "a channel's kind cannot change" }]);
  const old = JSON.parse(await unseal(config.secretsKey, current.secretCiphertext)) as ChannelSecrets;
  const keepSecret = input.kind === "webhook" && input.secret === undefined && !input.rotate_secret;
  const p = prepare(keepSecret ? { ...input, secret: old.secret } : input);
  await db
    .update(notificationChannels)
    .set({
      name: input.name,
      enabled: input.enabled ?? true,
      settings: p.settings,
      secretCiphertext: await seal(config.secretsKey, JSON.stringify(p.secrets)),
      updatedAt: now.toISOString(),
    })
    .where(eq(notificationChannels.id, current.id))
    .run();
  return { message: "Channel updated", ...(p.generatedSecret ? { secret: p.generatedSecret } : {}) };
}

export async function deleteChannel(db: Db, organizationId: number, id: number) {
  const c = await channelOf(db, organizationId, id);
  await db.delete(notificationChannels).where(eq(notificationChannels.id, c.id)).run();
  return { message: "Channel deleted" };
}

const TIMEOUT_MS = 10_000;

async function post(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
  try {
    const res = await fetch(url, { method: "POST", body, headers: { "content-type": "application/json", "user-agent": "Trust-Plane-Alerts/1", ...headers }, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: "manual" });
    await res.body?.cancel();
    if (res.status >= 200 && res.status < 300) return { ok: true, retryable: false, status: res.status };
    const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
    return { ok: false, retryable, status: res.status, error: `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, retryable: true, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
}

/** Sends one alert to one channel; never throws. */
export async function sendToChannel(
  db: Db,
  config: Config,
  channel: typeof notificationChannels.$inferSelect,
  payload: AlertPayload,
  now: Date,
): Promise<SendResult> {
  let secrets: ChannelSecrets;
  try {
    secrets = JSON.parse(await unseal(config.secretsKey, channel.secretCiphertext)) as ChannelSecrets;
  } catch {
    return { ok: false, retryable: false, error: "channel secret cannot be unsealed (SECRETS_KEY changed?)" };
  }
  if (channel.kind === "webhook") {
    const body = JSON.stringify(payload);
    const t = Math.floor(now.getTime() / 1000);
    const v1 = await hmacSha256Hex(secrets.secret ?? "", `${t}.${body}`);
    return post(String(channel.settings.url), body, {
      "x-trustplane-signature": `t=${t},v1=${v1}`,
      "x-trustplane-event-id": payload.event_id,
      "x-trustplane-alert-id": String(payload.id),
    });
  }
  if (channel.kind === "slack") {
    const text = `*[${payload.rule.severity.toUpperCase()}] ${payload.message.subject}*\n${payload.message.body}`;
    return post(secrets.url ?? "", JSON.stringify({ text }), {});
  }
  const recipients = (channel.settings.recipients as string[]) ?? [];
  const smtpUrl = secrets.smtp_url || config.smtpUrl;
  const message = { organizationId: channel.organizationId, subject: `[Trust-Plane] ${payload.message.subject}`, body: payload.message.body, kind: "alert" };
  try {
    if (!smtpUrl) {
      // No SMTP anywhere: the outbox is the mailbox (development).
      for (const to of recipients) await enqueueMail(db, config, { ...message, to }, now).run();
      return { ok: true, retryable: false };
    }
    const transport = smtpTransport({ ...config, smtpUrl });
    for (const to of recipients) await transport.send({ ...message, to });
    return { ok: true, retryable: false };
  } catch (err) {
    return { ok: false, retryable: true, error: err instanceof Error ? err.message : String(err) };
  }
}
