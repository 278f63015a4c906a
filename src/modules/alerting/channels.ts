/**
 * Notification channels: organization-wide destinations of alerts.
 *  - webhook: JSON POST, signed: `X-TrustPlane-Signature: t=<unix>,v1=<hex>` where
 *    v1 = HMAC-SHA256(secret, "<t>.<raw body>") (timestamped against replay).
 *  - slack: a Slack-compatible incoming webhook, `{"text": ...}`.
 *  - email: SMTP via cloudflare:sockets, to a list of recipients; the channel may
 *    carry its own SMTP_URL, else the service's; with neither the mail goes to the
 *    outbox (the development mailbox).
 * Secrets (signing secret, webhook URL, Slack URL, SMTP URL) are sealed (AES-GCM) and
 * never returned after creation; a webhook URL is shown with userinfo and query
 * values masked. Every destination a user gives passes the egress policy
 * (src/platform/egress/) when saved and again before every send.
 */
import { asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { notificationChannels } from "../../db/schema";
import type { Config } from "../../env";
import { assertUrlAllowed, checkUrl, egressPolicy } from "../../platform/egress";
import { badRequest } from "../../platform/errors";
import { enqueueMail, parseSmtpUrl, smtpTransport } from "../../platform/mailer";
import { hmacSha256Hex, seal, unseal } from "../../platform/sealed";
import { generateSecret } from "../../platform/secrets";
import { recipient } from "./schema";
import type { Tenant } from "../../platform/tenant";

export type ChannelKind = "webhook" | "slack" | "email";
type Channel = typeof notificationChannels.$inferSelect;

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

/**
 * Why a send failed, in words that reveal nothing about the remote: what a test-send
 * reports (the receiver's status line and body stay out of the API, so a channel
 * cannot be used to probe what answers where).
 */
export type FailureClass = "blocked" | "unreachable" | "timeout" | "rejected" | "misconfigured";

export interface SendResult {
  ok: boolean;
  /** Retrying may help (network error, 5xx, 408, 429). */
  retryable: boolean;
  status?: number;
  error?: string;
  failure?: FailureClass;
}

const HTTP_SCHEMES = ["http:", "https:"] as const;
const SMTP_SCHEMES = ["smtp:", "smtps:"] as const;

/**
 * A URL for display: scheme, host and port only. Everything else may be a credential:
 * userinfo, query values, and the path too (Discord, Teams and Slack-style webhooks
 * carry their secret as `/webhooks/<id>/<token>`), so anything after the host is
 * shown as `/***`.
 */
export function redactUrl(url: string): string {
  const u = new URL(url);
  const hidden = u.username !== "" || u.password !== "" || u.pathname !== "/" || u.search !== "" || u.hash !== "";
  return `${u.protocol}//${u.host}/${hidden ? "***" : ""}`;
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

/** Validates the kind-specific settings (destinations through the egress policy) and splits them into shown settings and sealed secrets. */
async function prepare(config: Config, input: ChannelInput): Promise<{ settings: Record<string, unknown>; secrets: ChannelSecrets; generatedSecret?: string }> {
  const policy = egressPolicy(config);
  if (input.kind === "webhook") {
    const url = httpUrl(input.url, "url");
    await assertUrlAllowed(policy, "url", url, HTTP_SCHEMES);
    if (input.secret !== undefined && input.secret.length < 16) throw badRequest("Invalid channel", [{ path: "secret", message: "at least 16 characters" }]);
    const generated = input.secret === undefined ? `whsec_${generateSecret("api").slice(4)}` : undefined;
    return { settings: { url: redactUrl(url) }, secrets: { secret: input.secret ?? generated, url }, generatedSecret: generated };
  }
  if (input.kind === "slack") {
    const url = httpUrl(input.url, "url");
    await assertUrlAllowed(policy, "url", url, HTTP_SCHEMES);
    return { settings: { url_hint: `${new URL(url).origin}/…` }, secrets: { url } };
  }
  const recipients = input.recipients ?? [];
  if (!recipients.length) throw badRequest("Invalid channel", [{ path: "recipients", message: "at least one recipient" }]);
  const bad = recipients.findIndex((r) => !isRecipient(r));
  if (bad >= 0) throw badRequest("Invalid channel", [{ path: `recipients.${bad}`, message: "not an email address" }]);
  if (input.smtp_url !== undefined) {
    try {
      parseSmtpUrl(input.smtp_url);
    } catch {
      throw badRequest("Invalid channel", [{ path: "smtp_url", message: "must be smtp://user:pass@host:port or smtps://..." }]);
    }
    await assertUrlAllowed(policy, "smtp_url", input.smtp_url, SMTP_SCHEMES);
  }
  return { settings: { recipients, smtp: input.smtp_url ? "channel" : "service" }, secrets: { smtp_url: input.smtp_url } };
}

/** A plain email address, nothing around it (what the request schema accepts). */
const isRecipient = (r: string) => recipient.safeParse(r).success && r === r.trim();

export function channelView(c: Channel) {
  // Redacted again on the way out: rows saved before the path was masked show it masked too.
  const settings = typeof c.settings.url === "string" ? { ...c.settings, url: redactStored(c.settings.url) } : c.settings;
  return { id: c.id, name: c.name, kind: c.kind, enabled: c.enabled, settings, created_at: c.createdAt, updated_at: c.updatedAt };
}

function redactStored(url: string): string {
  try {
    return redactUrl(url);
  } catch {
    return "***";
  }
}

export async function createChannel(t: Tenant, config: Config, input: ChannelInput, now: Date) {
  const p = await prepare(config, input);
  const nowIso = now.toISOString();
  const [row] = await t
    .insert(notificationChannels, {
      name: input.name,
      kind: input.kind,
      enabled: input.enabled ?? true,
      settings: p.settings,
      secretCiphertext: await seal(config.secretsKey, JSON.stringify(p.secrets)),
      createdAt: nowIso,
      updatedAt: nowIso,
    })
    .returning();
  return { id: row.id, message: "Channel created", ...(p.generatedSecret ? { secret: p.generatedSecret } : {}) };
}

export async function listChannels(t: Tenant) {
  return (await t.select(notificationChannels).orderBy(asc(notificationChannels.id)).all()).map(channelView);
}

export const channelOf = (t: Tenant, id: number) => t.getOr404(notificationChannels, id, "Channel");

/** Replaces a channel's settings; the sealed signing secret is replaced only when a new one is given or rotation asked. */
export async function updateChannel(t: Tenant, config: Config, id: number, input: ChannelInput & { rotate_secret?: boolean }, now: Date) {
  const current = await channelOf(t, id);
  if (input.kind !== current.kind) throw badRequest("Invalid channel", [{ path: "kind", message: "a channel's kind cannot change" }]);
  const old = JSON.parse(await unseal(config.secretsKey, current.secretCiphertext)) as ChannelSecrets;
  const keepSecret = input.kind === "webhook" && input.secret === undefined && !input.rotate_secret;
  // The URL is never shown in full, so an edit form sends back what it was shown (or
  // nothing): that keeps the sealed URL instead of saving the masked one.
  const shown = channelView(current).settings;
  const keepUrl = input.kind !== "email" && old.url !== undefined && (input.url === undefined || input.url === shown.url || input.url === shown.url_hint);
  const p = await prepare(config, { ...input, ...(keepSecret ? { secret: old.secret } : {}), ...(keepUrl ? { url: old.url } : {}) });
  await t
    .update(
      notificationChannels,
      { name: input.name, enabled: input.enabled ?? true, settings: p.settings, secretCiphertext: await seal(config.secretsKey, JSON.stringify(p.secrets)), updatedAt: now.toISOString() },
      eq(notificationChannels.id, current.id),
    )
    .run();
  return { message: "Channel updated", ...(p.generatedSecret ? { secret: p.generatedSecret } : {}) };
}

export async function deleteChannel(t: Tenant, id: number) {
  const c = await channelOf(t, id);
  await t.delete(notificationChannels, eq(notificationChannels.id, c.id)).run();
  return { message: "Channel deleted" };
}

const TIMEOUT_MS = 10_000;

async function post(config: Config, url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
  // Again at send time: the policy may have changed, a name may resolve elsewhere today.
  const verdict = await checkUrl(egressPolicy(config), url, HTTP_SCHEMES);
  if (!verdict.allowed) return { ok: false, retryable: false, failure: "blocked", error: `destination refused: ${verdict.reason}` };
  try {
    // redirect "manual": a receiver cannot send the request on to an internal address.
    const res = await fetch(url, { method: "POST", body, headers: { "content-type": "application/json", "user-agent": "Trust-Plane-Alerts/1", ...headers }, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: "manual" });
    await res.body?.cancel();
    if (res.status >= 200 && res.status < 300) return { ok: true, retryable: false, status: res.status };
    const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
    return { ok: false, retryable, status: res.status, error: `HTTP ${res.status}`, failure: "rejected" };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return { ok: false, retryable: true, failure: timedOut ? "timeout" : "unreachable", error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
}

/** Sends one alert to one channel; never throws. */
export async function sendToChannel(db: Db, config: Config, channel: Channel, payload: AlertPayload, now: Date): Promise<SendResult> {
  let secrets: ChannelSecrets;
  try {
    secrets = JSON.parse(await unseal(config.secretsKey, channel.secretCiphertext)) as ChannelSecrets;
  } catch {
    return { ok: false, retryable: false, failure: "misconfigured", error: "channel secret cannot be unsealed (SECRETS_KEY changed?)" };
  }
  if (channel.kind === "webhook") {
    const body = JSON.stringify(payload);
    const t = Math.floor(now.getTime() / 1000);
    const v1 = await hmacSha256Hex(secrets.secret ?? "", `${t}.${body}`);
    return post(config, secrets.url ?? String(channel.settings.url), body, {
      "x-trustplane-signature": `t=${t},v1=${v1}`,
      "x-trustplane-event-id": payload.event_id,
      "x-trustplane-alert-id": String(payload.id),
    });
  }
  if (channel.kind === "slack") {
    const text = `*[${payload.rule.severity.toUpperCase()}] ${payload.message.subject}*\n${payload.message.body}`;
    return post(config, secrets.url ?? "", JSON.stringify({ text }), {});
  }
  return sendEmail(db, config, channel, secrets, payload, now);
}

async function sendEmail(db: Db, config: Config, channel: Channel, secrets: ChannelSecrets, payload: AlertPayload, now: Date): Promise<SendResult> {
  const recipients = (channel.settings.recipients as string[]) ?? [];
  // Checked again before RCPT TO: a row saved before addresses were validated strictly
  // must not put a line break or a control character into the SMTP dialogue.
  if (!recipients.every(isRecipient)) return { ok: false, retryable: false, failure: "misconfigured", error: "a recipient is not a plain email address" };
  const message = { organizationId: channel.organizationId, subject: `[Trust-Plane] ${payload.message.subject}`, body: payload.message.body, kind: "alert" };
  try {
    if (secrets.smtp_url) {
      // The channel's own server is a user's destination: checked like a webhook, and
      // connected to by the address the policy judged (no second reading of the host).
      const verdict = await checkUrl(egressPolicy(config), secrets.smtp_url, SMTP_SCHEMES);
      if (!verdict.allowed) return { ok: false, retryable: false, failure: "blocked", error: `destination refused: ${verdict.reason}` };
      const settings = { ...parseSmtpUrl(secrets.smtp_url), host: verdict.host.replace(/^\[|\]$/g, ""), port: verdict.port };
      const transport = smtpTransport(config, settings);
      for (const to of recipients) await transport.send({ ...message, to });
      return { ok: true, retryable: false };
    }
    if (!config.smtpUrl) {
      // No SMTP anywhere: the outbox is the mailbox (development).
      for (const to of recipients) await enqueueMail(db, config, { ...message, to }, now).run();
      return { ok: true, retryable: false };
    }
    const transport = smtpTransport(config);
    for (const to of recipients) await transport.send({ ...message, to });
    return { ok: true, retryable: false };
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    return { ok: false, retryable: true, failure: /timed? ?out/i.test(text) ? "timeout" : "unreachable", error: text };
  }
}
