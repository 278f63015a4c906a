/**
 * Alerting (docs/modules/alerting.md): per-module alert rules and templates, organization-wide
 * notification channels, fired alerts (history) and their per-channel deliveries.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

import { MONITORING_MODULES } from "../../platform/permissions";
import { id, organizationId, createdAt, updatedAt } from "./columns";

const SEVERITIES = ["info", "low", "medium", "high", "critical"] as const;
export const ALERT_STATUSES = ["fired", "suppressed"] as const;
/** An alert sent is open until someone acknowledges or resolves it, or its condition ends by itself. */
export const ALERT_STATES = ["open", "acknowledged", "resolved"] as const;
/** What a delivery tells the channel: an alert opened (or updated while open), acknowledged, resolved. */
export const DELIVERY_ACTIONS = ["trigger", "acknowledge", "resolve"] as const;
/** duplicate: this rule already alerted on the same content for the same asset within 24 h; throttled: within the rule's throttle_seconds for the subject. */
export const SUPPRESSED_REASONS = ["duplicate", "throttled"] as const;

export const alertTemplates = sqliteTable(
  "alert_templates",
  {
    id: id(),
    organizationId: organizationId(),
    module: text("module", { enum: MONITORING_MODULES }).notNull(),
    name: text("name").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("alert_templates_org_module_idx").on(t.organizationId, t.module)],
);

export const alertRules = sqliteTable(
  "alert_rules",
  {
    id: id(),
    organizationId: organizationId(),
    module: text("module", { enum: MONITORING_MODULES }).notNull(),
    name: text("name").notNull(),
    expression: text("expression").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    severity: text("severity", { enum: SEVERITIES }).notNull().default("medium"),
    templateId: integer("template_id").references(() => alertTemplates.id),
    channelIds: text("channel_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    throttleSeconds: integer("throttle_seconds").notNull().default(0),
    /** Incremented on every change; the AlertState DO compiles once per version. */
    version: integer("version").notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("alert_rules_org_module_idx").on(t.organizationId, t.module)],
);

/** Which lists a rule's expression names: a referenced list cannot be deleted (409). */
export const alertRuleLists = sqliteTable(
  "alert_rule_lists",
  {
    ruleId: integer("rule_id")
      .notNull()
      .references(() => alertRules.id, { onDelete: "cascade" }),
    organizationId: integer("organization_id").notNull(),
    listName: text("list_name").notNull(),
  },
  (t) => [primaryKey({ columns: [t.ruleId, t.listName] }), index("alert_rule_lists_org_name_idx").on(t.organizationId, t.listName)],
);

export const notificationChannels = sqliteTable(
  "notification_channels",
  {
    id: id(),
    organizationId: organizationId(),
    name: text("name").notNull(),
    /** The provider (channels/registry.ts); not an enum here: the registry is the one list. */
    kind: text("kind").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    /** Non-secret settings shown back: webhook URL origin, email recipients. */
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** AES-GCM encrypted JSON of the secret settings (webhook signing secret, Slack URL, SMTP URL). */
    secretCiphertext: text("secret_ciphertext").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("notification_channels_org_idx").on(t.organizationId)],
);

export const alertHistory = sqliteTable(
  "alert_history",
  {
    id: id(),
    organizationId: organizationId(),
    module: text("module", { enum: MONITORING_MODULES }).notNull(),
    ruleId: integer("rule_id"),
    ruleName: text("rule_name").notNull(),
    severity: text("severity").notNull(),
    /** What the alert is about (throttling key), e.g. the certificate or domain. */
    subject: text("subject").notNull(),
    eventId: text("event_id").notNull(),
    eventSummary: text("event_summary").notNull(),
    message: text("message", { mode: "json" }).$type<{ subject: string; body: string }>().notNull(),
    event: text("event", { mode: "json" }).$type<unknown>().notNull(),
    /** When the rule matched (for a suppressed row: when it matched and was not sent). */
    firedAt: text("fired_at").notNull(),
    /**
     * `fired`: sent to the rule's channels. `suppressed`: the rule matched but nothing
     * was sent (`suppressedReason` says why, `repeatsAlertId` which alert it repeats):
     * kept so that no match ever disappears without a trace.
     */
    status: text("status", { enum: ALERT_STATUSES }).notNull().default("fired"),
    suppressedReason: text("suppressed_reason", { enum: SUPPRESSED_REASONS }),
    repeatsAlertId: integer("repeats_alert_id"),
    /** Until when the same match stays suppressed (end of the de-duplication or throttle window). */
    suppressedUntil: text("suppressed_until"),
    /** The organization's monitored thing the event is about (e.g. `monitor:12|192.0.2.25`): with rule and content, the de-duplication key. */
    asset: text("asset").notNull().default(""),
    /**
     * Stable per rule, asset and subject: while an alert of this key is open, a new match
     * updates it instead of opening another; PagerDuty's dedup_key and Opsgenie's alias.
     */
    alertKey: text("alert_key").notNull().default(""),
    /** Sent alerts only (null on suppressed rows). */
    state: text("state", { enum: ALERT_STATES }),
    /** Matches this alert stands for: 1, plus one per match that updated it while open. */
    occurrences: integer("occurrences").notNull().default(1),
    lastMatchedAt: text("last_matched_at"),
    acknowledgedAt: text("acknowledged_at"),
    /** Who acknowledged: the user's email. */
    acknowledgedBy: text("acknowledged_by"),
    resolvedAt: text("resolved_at"),
    /** The user's email, or "automatic" when the condition ended by itself. */
    resolvedBy: text("resolved_by"),
    /** Why it was resolved, in words (an automatic resolution names the event that ended it). */
    resolution: text("resolution"),
  },
  (t) => [
    index("alert_history_org_module_fired_idx").on(t.organizationId, t.module, t.firedAt),
    index("alert_history_org_rule_fired_idx").on(t.organizationId, t.ruleId, t.firedAt),
    index("alert_history_org_key_state_idx").on(t.organizationId, t.alertKey, t.state),
    index("alert_history_org_asset_state_idx").on(t.organizationId, t.module, t.asset, t.state),
  ],
);

/** One attempt of a delivery, as the alert's delivery list shows it. */
export interface DeliveryAttempt {
  at: string;
  /** delivered, retrying (another attempt follows), failed (the last). */
  outcome: "delivered" | "retrying" | "failed";
  /** The receiver's HTTP status, when it answered. */
  status: number | null;
  /** The collection vocabulary's class (timeout, connect, http_status, rate_limited, blocked, ...), null when delivered. */
  error_class: string | null;
  error: string | null;
  /** The wait the receiver asked for (Retry-After, Discord's retry_after), in seconds. */
  retry_after_seconds: number | null;
}

export const alertDeliveries = sqliteTable(
  "alert_deliveries",
  {
    id: id(),
    organizationId: organizationId(),
    historyId: integer("history_id")
      .notNull()
      .references(() => alertHistory.id, { onDelete: "cascade" }),
    channelId: integer("channel_id").notNull(),
    action: text("action", { enum: DELIVERY_ACTIONS }).notNull().default("trigger"),
    status: text("status", { enum: ["pending", "retrying", "delivered", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: text("next_attempt_at"),
    lastError: text("last_error"),
    responseStatus: integer("response_status"),
    /** Every attempt (at most MAX_DELIVERY_ATTEMPTS). */
    attemptLog: text("attempt_log", { mode: "json" }).$type<DeliveryAttempt[]>().notNull().default(sql`'[]'`),
    deliveredAt: text("delivered_at"),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("alert_deliveries_history_idx").on(t.historyId),
    index("alert_deliveries_due_idx").on(t.organizationId, t.status, t.nextAttemptAt),
  ],
);
