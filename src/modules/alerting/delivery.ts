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
import { and, eq, inArray, lte, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rawStatement } from "../../db/raw";
import { alertDeliveries, alertHistory, notificationChannels, type DeliveryAttempt } from "../../db/schema";
import type { Config } from "../../env";
import { logUnexpected } from "../../platform/collection/log";
import { jsonArrayChunks } from "../../platform/groups";
import type { AlertMessage, DeliveryAction, SendResult } from "./channels/provider";
import { openChannel, sendToOpenChannel, type OpenChannel } from "./channels/service";

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

type Channel = typeof notificationChannels.$inferSelect;
type Due = { d: typeof alertDeliveries.$inferSelect; h: typeof alertHistory.$inferSelect; c: Channel | null };

/**
 * One attempt of one delivery. Never throws: its outcome is written with the run's other
 * outcomes in one batch, so a fault of ours in one delivery must not take the others'
 * outcomes with it (they were sent: unrecorded, they would be sent again). Such a fault
 * is retried like a network error, with its cause.
 */
async function attemptDelivery(db: Db, config: Config, open: (c: Channel) => Promise<OpenChannel>, { d, h, c }: Due, now: Date): Promise<SendResult> {
  if (!c) return { ok: false, retryable: false, errorClass: "internal", error: "channel deleted" };
  if (!c.enabled) return { ok: false, retryable: false, errorClass: "internal", error: "channel disabled" };
  try {
    return await sendToOpenChannel(db, config, await open(c), alertMessageOf(config, h, d.action), now);
  } catch (err) {
    logUnexpected(`alerting: delivery ${d.id} to channel ${c.id}`, err);
    return { ok: false, retryable: true, errorClass: "internal", error: "internal fault while delivering (logged); retried" };
  }
}

/** One delivery's outcome, as a row of the run's outcome statement (its JSON array, read by position in `outcomeStatement`). */
type OutcomeRow = [id: number, attemptsRead: number, status: string, attempts: number, lastError: string | null, responseStatus: number | null, attemptLog: DeliveryAttempt[], deliveredAt: string | null, nextAttemptAt: string | null];

/**
 * Outcome rows of one statement: one JSON parameter of at most this many characters
 * (a run's 100 outcomes take 30-40 KB, at most about 450 KB with six long attempts each;
 * D1 takes a value of up to 2 MB, and a character is at most 3 bytes of UTF-8 here).
 */
const OUTCOME_JSON_CHARS = 600_000;

/**
 * The outcomes of a run as one UPDATE, each row read from the JSON parameter, and written
 * only over the state the run read (`attempts` unchanged): an outcome never lands twice
 * or over a newer one. One statement instead of one per delivery: D1 prepares, sends and
 * runs one, and the run builds one string instead of 100 query objects.
 */
function outcomeStatement(rows: string, nowIso: string): SQL {
  return sql`UPDATE alert_deliveries SET status = o.status, attempts = o.attempts, last_error = o.last_error, response_status = o.response_status,
      attempt_log = o.attempt_log, delivered_at = o.delivered_at, next_attempt_at = o.next_attempt_at, updated_at = ${nowIso}
    FROM (SELECT value ->> '$[0]' AS id, value ->> '$[1]' AS attempts_read, value ->> '$[2]' AS status, value ->> '$[3]' AS attempts, value ->> '$[4]' AS last_error,
      value ->> '$[5]' AS response_status, value -> '$[6]' AS attempt_log, value ->> '$[7]' AS delivered_at, value ->> '$[8]' AS next_attempt_at FROM json_each(${rows})) AS o
    WHERE alert_deliveries.id = o.id AND alert_deliveries.attempts = o.attempts_read`;
}

/**
 * The run's outcomes in one D1 batch (atomic: all or none), with the query for when the
 * next delivery is due read after them in the same round trip. Should the batch fail,
 * each outcome is written on its own: a failing statement then loses only its own
 * outcome, not the run's (those deliveries were sent; unrecorded, they would be sent again).
 */
async function writeOutcomes(db: Db, rows: OutcomeRow[], nowIso: string, nextDue: D1PreparedStatement): Promise<string | null> {
  const writes = (chunks: string[]) => chunks.map((json) => rawStatement(db, outcomeStatement(json, nowIso)));
  try {
    const results = await db.$client.batch<{ at: string | null }>([...writes(jsonArrayChunks(rows, OUTCOME_JSON_CHARS)), nextDue]);
    return results.at(-1)?.results[0]?.at ?? null;
  } catch (err) {
    logUnexpected(`alerting: writing ${rows.length} delivery outcomes in one batch`, err);
    const single = await Promise.allSettled(writes(rows.map((r) => JSON.stringify([r]))).map((w) => w.run()));
    const lost = single.filter((r) => r.status === "rejected").length;
    if (lost) throw new Error(`${lost} of ${rows.length} delivery outcomes could not be written: those deliveries are attempted again`);
    return (await nextDue.first<{ at: string | null }>())?.at ?? null;
  }
}

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
  // Each channel is opened (secrets unsealed, settings parsed) once per run, however many
  // deliveries of the run go to it.
  const opened = new Map<number, Promise<OpenChannel>>();
  const openOnce = (c: Channel) => {
    let o = opened.get(c.id);
    if (!o) opened.set(c.id, (o = openChannel(config, c)));
    return o;
  };
  // Every delivery is sent first (at once), its outcome kept; then the outcomes of the run
  // are written in one D1 batch: one round trip for up to 100 deliveries instead of one
  // each (the sends dominate a run; the writes were a second round trip per delivery).
  const outcomes = await Promise.all(
    due.map(async (delivery): Promise<OutcomeRow> => {
      const { d } = delivery;
      const attempts = d.attempts + 1;
      const result = await attemptDelivery(db, config, openOnce, delivery, now);
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
      return [
        d.id,
        d.attempts,
        status,
        attempts,
        attempt.error,
        result.status ?? null,
        [...d.attemptLog, attempt].slice(-MAX_DELIVERY_ATTEMPTS),
        result.ok ? nowIso : null,
        status === "retrying" ? new Date(now.getTime() + waitMs).toISOString() : null,
      ];
    }),
  );
  // A delivery waiting for an earlier action is due when that one is done (its own run reschedules).
  const nextDue = rawStatement(
    db,
    sql`SELECT min(${alertDeliveries.nextAttemptAt}) AS at FROM ${alertDeliveries}
      WHERE ${and(eq(alertDeliveries.organizationId, organizationId), or(eq(alertDeliveries.status, "pending"), eq(alertDeliveries.status, "retrying")), sql`NOT ${earlierPending}`)}`,
  );
  const next = await writeOutcomes(db, outcomes, nowIso, nextDue);
  return { ...counts, nextDueAt: next };
}
