/**
 * Delivery of fired alerts: at least once, with retries and exponential backoff.
 * Each (alert, channel) pair is an `alert_deliveries` row: pending -> delivered, or
 * -> retrying (next_attempt_at = now + backoff) ... -> failed after MAX_ATTEMPTS or
 * on a permanent error (4xx other than 408/429). The organization's AlertState
 * Durable Object runs `deliverDue` from its alarm, which serializes delivery per
 * organization (no double sends from concurrent workers).
 */
import { and, eq, inArray, lte, min, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { alertDeliveries, alertHistory, notificationChannels } from "../../db/schema";
import type { Config } from "../../env";
import { sendToChannel, type AlertPayload } from "./channels";

export const MAX_DELIVERY_ATTEMPTS = 6;
const BASE_BACKOFF_SECONDS = 5;

/** 5 s, 10 s, 20 s, ... capped at 15 min, with up to 20% jitter so retries do not align. */
export function deliveryBackoffMs(attempt: number, random = Math.random): number {
  const base = Math.min(900, BASE_BACKOFF_SECONDS * 2 ** (attempt - 1)) * 1000;
  return Math.round(base * (1 + 0.2 * random()));
}

export function payloadOf(h: typeof alertHistory.$inferSelect): AlertPayload {
  return {
    id: h.id,
    event_id: h.eventId,
    module: h.module,
    rule: { id: h.ruleId, name: h.ruleName, severity: h.severity },
    subject: h.subject,
    message: h.message,
    event: h.event,
    fired_at: h.firedAt,
  };
}

export interface DeliveryRunResult {
  delivered: number;
  retrying: number;
  failed: number;
  nextDueAt: string | null;
}

/** One delivery run at the job's clock `now` (its start: every row it writes carries that time, so tests move it). */
export async function deliverDue(db: Db, config: Config, organizationId: number, now: Date): Promise<DeliveryRunResult> {
  const nowIso = now.toISOString();
  const due = await db
    .select({ d: alertDeliveries, h: alertHistory, c: notificationChannels })
    .from(alertDeliveries)
    .innerJoin(alertHistory, eq(alertHistory.id, alertDeliveries.historyId))
    .leftJoin(notificationChannels, and(eq(notificationChannels.id, alertDeliveries.channelId), eq(notificationChannels.organizationId, organizationId)))
    .where(
      and(
        eq(alertDeliveries.organizationId, organizationId),
        inArray(alertDeliveries.status, ["pending", "retrying"]),
        lte(alertDeliveries.nextAttemptAt, nowIso),
      ),
    )
    .limit(100)
    .all();
  const counts = { delivered: 0, retrying: 0, failed: 0 };
  await Promise.all(
    due.map(async ({ d, h, c }) => {
      const attempts = d.attempts + 1;
      const result = c
        ? c.enabled
          ? await sendToChannel(db, config, c, payloadOf(h), now)
          : { ok: false, retryable: false, error: "channel disabled" }
        : { ok: false, retryable: false, error: "channel deleted" };
      const status = result.ok ? "delivered" : result.retryable && attempts < MAX_DELIVERY_ATTEMPTS ? "retrying" : "failed";
      counts[status]++;
      await db
        .update(alertDeliveries)
        .set({
          status,
          attempts,
          lastError: result.ok ? null : (result.error ?? "failed").slice(0, 500),
          responseStatus: result.status ?? null,
          deliveredAt: result.ok ? nowIso : null,
          nextAttemptAt: status === "retrying" ? new Date(now.getTime() + deliveryBackoffMs(attempts)).toISOString() : null,
          updatedAt: nowIso,
        })
        .where(eq(alertDeliveries.id, d.id))
        .run();
    }),
  );
  const next = await db
    .select({ at: min(alertDeliveries.nextAttemptAt) })
    .from(alertDeliveries)
    .where(and(eq(alertDeliveries.organizationId, organizationId), or(eq(alertDeliveries.status, "pending"), eq(alertDeliveries.status, "retrying"))))
    .get();
  return { ...counts, nextDueAt: next?.at ?? null };
}
