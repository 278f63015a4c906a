/**
 * Delivery of alerts: at least once, with retries and exponential backoff. Each
 * (alert, channel, action) is an `alert_deliveries` row: pending -> delivered, or ->
 * retrying (next_attempt_at = now + backoff, or later when the receiver asked to wait:
 * Retry-After, Discord's retry_after) ... -> failed after MAX_DELIVERY_ATTEMPTS or on a
 * permanent error (4xx other than 408/429). Every attempt is kept in the row's
 * `attempt_log` (time, HTTP status, error class and message, the wait asked for).
 *
 * Actions of one alert reach one channel in order: an acknowledgement or resolution
 * waits until the trigger before it was delivered or gave up (PagerDuty ignores a
 * resolve for a key it never saw opened, and would then open it for good).
 *
 * The organization's AlertState Durable Object runs `deliverDue` from its alarm, which
 * serializes delivery per organization (no double sends from concurrent workers).
 */
import { and, eq, inArray, lte, min, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { alertDeliveries, alertHistory, notificationChannels, type DeliveryAttempt } from "../../db/schema";
import type { Config } from "../../env";
import type { AlertMessage, DeliveryAction } from "./channels/provider";
import { sendToChannel } from "./channels/service";

export const MAX_DELIVERY_ATTEMPTS = 6;
const BASE_BACKOFF_SECONDS = 5;
/** Deliveries attempted per run (the next run follows at once while some are due). */
const DELIVERIES_PER_RUN = 100;

/** 5 s, 10 s, 20 s, ... capped at 15 min, with up to 20% jitter so retries do not align. */
export function deliveryBackoffMs(attempt: number, random = Math.random): number {
  const base = Math.min(900, BASE_BACKOFF_SECONDS * 2 ** (attempt - 1)) * 1000;
  return Math.round(base * (1 + 0.2 * random()));
}

/** The link to an alert in the console. */
export const alertUrl = (config: Config, h: { module: string; id: number }) => `${config.publicBaseUrl}/alerting?section=${h.module}&tab=history&alert=${h.id}`;

/** What a channel is told about an alert, for one action. */
export function alertMessageOf(config: Config, h: typeof alertHistory.$inferSelect, action: DeliveryAction): AlertMessage {
  return {
    id: h.id,
    event_id: h.eventId,
    module: h.module,
    rule: { id: h.ruleId, name: h.ruleName, severity: h.severity },
    subject: h.subject,
    message: h.message,
    event: h.event,
    fired_at: h.firedAt,
    action,
    alert_key: h.alertKey,
    state: h.state ?? "open",
    occurrences: h.occurrences,
    summary: h.eventSummary,
    acknowledged_by: h.acknowledgedBy,
    resolved_at: h.resolvedAt,
    resolution: h.resolution,
    url: alertUrl(config, h),
  };
}

export interface DeliveryRunResult {
  delivered: number;
  retrying: number;
  failed: number;
  nextDueAt: string | null;
}

/** An earlier action of the same alert to the same channel is still on its way. */
const earlierPending = sql`EXISTS (SELECT 1 FROM alert_deliveries e WHERE e.history_id = ${alertDeliveries.historyId} AND e.channel_id = ${alertDeliveries.channelId} AND e.id < ${alertDeliveries.id} AND e.status IN ('pending', 'retrying'))`;

/** One delivery run at the job's clock `now` (its start: every row it writes carries that time, so tests move it). */
export async function deliverDue(db: Db, config: Config, organizationId: number, now: Date): Promise<DeliveryRunResult> {
  const nowIso = now.toISOString();
  const due = await db
    .select({ d: alertDeliveries, h: alertHistory, c: notificationChannels })
    .from(alertDeliveries)
    .innerJoin(alertHistory, eq(alertHistory.id, alertDeliveries.historyId))
    .leftJoin(notificationChannels, and(eq(notificationChannels.id, alertDeliveries.channelId), eq(notificationChannels.organizationId, organizationId)))
    .where(and(eq(alertDeliveries.organizationId, organizationId), inArray(alertDeliveries.status, ["pending", "retrying"]), lte(alertDeliveries.nextAttemptAt, nowIso), sql`NOT ${earlierPending}`))
    .orderBy(alertDeliveries.id)
    .limit(DELIVERIES_PER_RUN)
    .all();
  const counts = { delivered: 0, retrying: 0, failed: 0 };
  await Promise.all(
    due.map(async ({ d, h, c }) => {
      const attempts = d.attempts + 1;
      const result = c
        ? c.enabled
          ? await sendToChannel(db, config, c, alertMessageOf(config, h, d.action), now)
          : { ok: false, retryable: false, errorClass: "internal" as const, error: "channel disabled" }
        : { ok: false, retryable: false, errorClass: "internal" as const, error: "channel deleted" };
      const status = result.ok ? "delivered" : result.retryable && attempts < MAX_DELIVERY_ATTEMPTS ? "retrying" : "failed";
      counts[status]++;
      const waitMs = status === "retrying" ? Math.max(deliveryBackoffMs(attempts), (result.retryAfterSeconds ?? 0) * 1000) : 0;
      const attempt: DeliveryAttempt = {
        at: nowIso,
        outcome: status,
        status: result.status ?? null,
        error_class: result.ok ? null : (result.errorClass ?? "internal"),
        error: result.ok ? null : (result.error ?? "failed").slice(0, 500),
        retry_after_seconds: result.retryAfterSeconds ?? null,
      };
      await db
        .update(alertDeliveries)
        .set({
          status,
          attempts,
          lastError: attempt.error,
          responseStatus: result.status ?? null,
          attemptLog: [...d.attemptLog, attempt].slice(-MAX_DELIVERY_ATTEMPTS),
          deliveredAt: result.ok ? nowIso : null,
          nextAttemptAt: status === "retrying" ? new Date(now.getTime() + waitMs).toISOString() : null,
          updatedAt: nowIso,
        })
        .where(eq(alertDeliveries.id, d.id))
        .run();
    }),
  );
  const next = await db
    .select({ at: min(alertDeliveries.nextAttemptAt) })
    .from(alertDeliveries)
    // A delivery waiting for an earlier action is due when that one is done (its own run reschedules).
    .where(and(eq(alertDeliveries.organizationId, organizationId), or(eq(alertDeliveries.status, "pending"), eq(alertDeliveries.status, "retrying")), sql`NOT ${earlierPending}`))
    .get();
  return { ...counts, nextDueAt: next?.at ?? null };
}
