/**
 * A notification provider: one kind of channel (webhook, Slack, PagerDuty, ...), in one
 * folder beside this file, listed once in registry.ts. A provider declares
 *
 *   - its settings as one zod object: validation of the API request, the OpenAPI
 *     document and the console's channel form all come from it. A secret setting is
 *     declared with `secretSetting()`: sealed at rest, never returned, shown as its
 *     `x-shown-as` (writeOnly in the OpenAPI document);
 *   - `check()`: what the schema cannot say (a destination through the egress policy);
 *   - `send()`: how an alert is rendered for its medium, escaped for it, and sent.
 *
 * Everything generic (sealing, masking, keeping a secret on edit, the egress check at
 * send time, retries and their record) is done once, in service.ts, http.ts and
 * ../delivery.ts, never by a provider.
 */
import type { z } from "@hono/zod-openapi";
import type { Db } from "../../../db/client";
import type { DELIVERY_ACTIONS } from "../../../db/schema";
import type { Config } from "../../../env";
import type { CollectionErrorClass } from "../../../platform/collection";
import { badRequest } from "../../../platform/errors";
import { redactUrl, type ShownAs } from "./mask";

export type DeliveryAction = (typeof DELIVERY_ACTIONS)[number];

/** What a channel is told: one alert, and what just happened to it (`action`). */
export interface AlertMessage {
  /** The alert (history id); 0 for a test-send. */
  id: number;
  event_id: string;
  module: string;
  rule: { id: number | null; name: string; severity: string };
  /** What the alert is about (the throttling subject), e.g. a certificate's SHA-256 or a domain. */
  subject: string;
  /** The rendered message (the rule's template, or the default). */
  message: { subject: string; body: string };
  event: unknown;
  fired_at: string;
  test?: boolean;
  /** trigger: opened, or updated while open; acknowledge; resolve. */
  action: DeliveryAction;
  /** Stable per rule, asset and subject: PagerDuty's dedup_key, Opsgenie's alias. */
  alert_key: string;
  state: "open" | "acknowledged" | "resolved";
  /** Matches this alert stands for (grows while it is open). */
  occurrences: number;
  /** One line about the event. */
  summary: string;
  acknowledged_by: string | null;
  resolved_at: string | null;
  /** Why it was resolved, in words. */
  resolution: string | null;
  /** The alert in the console. */
  url: string;
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
  /** In the collection vocabulary: timeout, connect, http_status, rate_limited, blocked, ... */
  errorClass?: CollectionErrorClass;
  /** What failed, naming the host (never a secret of the destination). */
  error?: string;
  failure?: FailureClass;
  /** The wait the receiver asked for (Retry-After, Discord's retry_after). */
  retryAfterSeconds?: number;
}

export interface SendContext {
  config: Config;
  db: Db;
  now: Date;
  organizationId: number;
  channel: { id: number; name: string };
}

export interface CheckContext {
  config: Config;
}


export const SECRET_MARK = "x-secret";
export const SHOWN_AS_MARK = "x-shown-as";

interface SettingMeta {
  title: string;
  description: string;
  /** An example value the console's form shows as a placeholder. */
  placeholder?: string;
}

/** A setting shown back as stored. */
export function setting<T extends z.ZodType>(schema: T, meta: SettingMeta): T {
  return schema.meta({ title: meta.title, description: meta.description, ...(meta.placeholder ? { examples: [meta.placeholder] } : {}) }) as T;
}

/** A secret setting: sealed, never returned after creation, shown as `shownAs`. */
export function secretSetting<T extends z.ZodType>(schema: T, meta: SettingMeta & { shownAs: ShownAs }): T {
  return schema.meta({
    title: meta.title,
    description: `${meta.description} Secret: sealed and never returned; ${SHOWN_DESCRIPTIONS[meta.shownAs]}.`,
    writeOnly: true,
    [SECRET_MARK]: true,
    [SHOWN_AS_MARK]: meta.shownAs,
    ...(meta.placeholder ? { examples: [meta.placeholder] } : {}),
  }) as T;
}

const SHOWN_DESCRIPTIONS: Record<ShownAs, string> = {
  url: "shown as scheme, host and port, the rest masked",
  origin: "shown as its origin followed by …",
  last4: "shown as its last four characters",
  hidden: "never shown",
};

/** The metadata of one setting, looking through optional/default wrappers. */
export function settingMeta(schema: z.ZodType): { secret: boolean; shownAs?: ShownAs } {
  for (let s: any = schema; s; s = s.unwrap?.() ?? s._def?.innerType) {
    const meta = s.meta?.() as Record<string, unknown> | undefined;
    if (meta?.[SECRET_MARK]) return { secret: true, shownAs: meta[SHOWN_AS_MARK] as ShownAs };
    if (meta?.title) return { secret: false };
    if (!s.unwrap && !s._def?.innerType) break;
  }
  return { secret: false };
}

export interface ChannelProvider<S extends z.ZodObject = z.ZodObject, K extends string = string> {
  kind: K;
  /** In the console's kind selector. */
  label: string;
  /** One sentence: what the channel does with an alert. */
  description: string;
  settings: S;
  /** A secret generated when the request leaves it out at creation (or asks rotate_secret), returned once. */
  generated?: { field: keyof z.output<S> & string; generate(): string };
  /** What the schema cannot check; throws the 400 (see `invalidSetting`). */
  check?(values: z.output<S>, ctx: CheckContext): Promise<void>;
  /** The settings shown back; by default each setting, secrets as their `x-shown-as`. For a provider whose stored shape predates that. */
  shown?(values: z.output<S>): Record<string, unknown>;
  send(alert: AlertMessage, values: z.output<S>, ctx: SendContext): Promise<SendResult>;
  /** A test-send; by default `send()` of a test alert. An incident tool resolves what it opened. */
  testSend?(alert: AlertMessage, values: z.output<S>, ctx: SendContext): Promise<SendResult>;
}

/** Type-checks a provider against its own settings. */
export const defineProvider = <S extends z.ZodObject, K extends string>(p: ChannelProvider<S, K>): ChannelProvider<S, K> => p;

/** The 400 a provider's check throws for one setting. */
export const invalidSetting = (path: string, message: string) => badRequest("Invalid channel", [{ path, message }]);

/** The URL a failure message may name: the destination's secrets (path tokens, query keys) masked. */
export const shownDestination = (url: string) => {
  try {
    return redactUrl(url);
  } catch {
    return "the destination";
  }
};
