/**
 * The organization's heartbeat: the team's own dead-man's switch (a healthchecks-style
 * check URL) that Trust-Plane pings after each scheduled run in which the organization's
 * monitoring collected what it should. When Trust-Plane stops (the Cron Trigger no
 * longer fires, a job fails, the organization's collection is failing or stalled), the
 * pings stop and the team's checker tells them: the one failure Trust-Plane cannot
 * alert about itself.
 *
 *  - The URL is a credential (a check's URL is enough to ping it): sealed, shown as
 *    scheme, host and port; checked by the egress policy when saved and before each ping.
 *  - A run pings (POST, a one-line summary as the body, which healthchecks keeps as the
 *    ping's log) when every job of the run finished and the organization's collection is
 *    healthy (reports/overview-service.ts `collectionHealth`); otherwise it does not ping and
 *    records why. A ping that fails is recorded with its cause; the next run (a minute
 *    later) is the retry. `GET /api/admin/heartbeat` shows the latest run's outcome.
 */
import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { organizationHeartbeats } from "../../db/schema/platform";
import type { Config } from "../../env";
import { blockedFailure, classifyFailure, httpStatusFailure, type CollectionError } from "../../platform/collection";
import { assertUrlAllowed, checkUrl, egressPolicy } from "../../platform/egress";
import { notFound } from "../../platform/errors";
import { seal, unseal } from "../../platform/sealed";
import type { JobOutcome } from "../../platform/scheduler";
import { tenantDb, type Tenant } from "../../platform/tenant";
import { redactUrl } from "../alerting/url-contract";
import { collectionHealth } from "../reports/health-contract";

export const HEARTBEAT_SCHEMES = ["https:", "http:"] as const;
/** A ping waits at most this long for the checker's answer. */
export const HEARTBEAT_TIMEOUT_MS = 10_000;
/** Organizations pinged in parallel by one run. */
const CONCURRENCY = 8;

type HeartbeatRow = typeof organizationHeartbeats.$inferSelect;

function heartbeatView(row: HeartbeatRow | undefined) {
  if (!row) return { configured: false as const, url: null, created_at: null, updated_at: null, last_run: null };
  return {
    configured: true as const,
    url: row.urlHint,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    last_run: row.lastRunAt
      ? {
          at: row.lastRunAt,
          outcome: row.lastOutcome!,
          reason: row.lastReason,
          error_class: row.lastErrorClass,
          http_status: row.lastHttpStatus,
          last_pinged_at: row.lastPingedAt,
        }
      : null,
  };
}

const rowOf = (t: Tenant) => t.db.select().from(organizationHeartbeats).where(eq(organizationHeartbeats.organizationId, t.organizationId)).get();

export async function getHeartbeat(t: Tenant) {
  return heartbeatView(await rowOf(t));
}

/** Sets (or replaces) the URL; one statement, so a race of two PUTs leaves one whole URL. */
export async function setHeartbeat(t: Tenant, config: Config, url: string, now: Date) {
  await assertUrlAllowed(egressPolicy(config), "url", url, HEARTBEAT_SCHEMES);
  const values = { urlSealed: await seal(config.secretsKey, url), urlHint: redactUrl(url), updatedAt: now.toISOString() };
  await t.db
    .insert(organizationHeartbeats)
    .values({ organizationId: t.organizationId, ...values, createdAt: now.toISOString() })
    .onConflictDoUpdate({
      target: organizationHeartbeats.organizationId,
      // A new URL starts without the previous one's history.
      set: { ...values, lastRunAt: null, lastOutcome: null, lastReason: null, lastErrorClass: null, lastHttpStatus: null, lastPingedAt: null },
    })
    .run();
  return getHeartbeat(t);
}

export async function deleteHeartbeat(t: Tenant) {
  const res = await t.db.delete(organizationHeartbeats).where(eq(organizationHeartbeats.organizationId, t.organizationId)).run();
  if (!res.meta.changes) throw notFound("Heartbeat");
  return { message: "Heartbeat removed" };
}

type RunOutcome =
  | { outcome: "pinged"; status: number }
  | { outcome: "ping_failed"; failure: CollectionError; status?: number }
  | { outcome: "not_pinged"; reason: string };

/** One POST to the check URL: egress-checked again, a timeout, no redirect followed. */
async function ping(config: Config, url: string, summary: string): Promise<RunOutcome> {
  const what = "heartbeat ping";
  const verdict = await checkUrl(egressPolicy(config), url, HEARTBEAT_SCHEMES);
  if (!verdict.allowed) return { outcome: "ping_failed", failure: blockedFailure(verdict.reason, what) };
  const shown = redactUrl(url);
  try {
    const res = await fetch(url, {
      method: "POST",
      body: summary,
      headers: { "content-type": "text/plain; charset=utf-8", "user-agent": "Trust-Plane-Heartbeat/1" },
      signal: AbortSignal.timeout(HEARTBEAT_TIMEOUT_MS),
      redirect: "manual",
    });
    await res.body?.cancel();
    if (res.status >= 200 && res.status < 300) return { outcome: "pinged", status: res.status };
    return { outcome: "ping_failed", failure: httpStatusFailure(res.status, shown, what), status: res.status };
  } catch (err) {
    return { outcome: "ping_failed", failure: classifyFailure(err, { url: shown, what }) };
  }
}

/** What the run's jobs say about the service as a whole: a failed job stops every heartbeat. */
function serviceFault(outcomes: readonly JobOutcome[]): string | null {
  const failed = outcomes.filter((o) => o.status === "error");
  return failed.length ? `scheduled job${failed.length > 1 ? "s" : ""} ${failed.map((f) => f.name).join(", ")} failed in this run` : null;
}

async function judge(db: Db, config: Config, row: HeartbeatRow, fault: string | null, now: Date): Promise<RunOutcome> {
  if (fault) return { outcome: "not_pinged", reason: `not pinged: ${fault}` };
  const health = await collectionHealth(tenantDb(db, row.organizationId), config, now);
  if (!health.healthy) return { outcome: "not_pinged", reason: `not pinged: collection is not keeping up: ${health.causes.join("; ")}` };
  return ping(config, await unseal(config.secretsKey, row.urlSealed), `Trust-Plane: scheduled run at ${now.toISOString()} completed; every monitored asset collected within its window`);
}

/**
 * After a scheduled run: each organization with a heartbeat is judged and pinged (or
 * not, with the reason recorded). Across organizations by design (a system job).
 */
export async function runHeartbeats(ctx: { db: Db; config: Config; now: Date }, outcomes: readonly JobOutcome[]) {
  const { db, config, now } = ctx;
  const rows = await db.select().from(organizationHeartbeats).all();
  const fault = serviceFault(outcomes);
  const counts = { pinged: 0, ping_failed: 0, not_pinged: 0 };
  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const row = rows[next++];
      let result: RunOutcome;
      try {
        result = await judge(db, config, row, fault, now);
      } catch (err) {
        // A fault of ours (the URL does not unseal, the health query failed): recorded, never thrown at the other organizations.
        result = { outcome: "not_pinged", reason: `not pinged: ${classifyFailure(err, { what: "heartbeat" }).message}` };
      }
      counts[result.outcome]++;
      await db
        .update(organizationHeartbeats)
        .set({
          lastRunAt: now.toISOString(),
          lastOutcome: result.outcome,
          lastReason: result.outcome === "pinged" ? null : result.outcome === "not_pinged" ? result.reason : result.failure.message,
          lastErrorClass: result.outcome === "ping_failed" ? result.failure.class : null,
          lastHttpStatus: result.outcome === "not_pinged" ? null : (result.status ?? null),
          ...(result.outcome === "pinged" ? { lastPingedAt: now.toISOString() } : {}),
        })
        // Only the URL judged: a PUT that replaced it meanwhile starts its own history.
        .where(sql`${organizationHeartbeats.organizationId} = ${row.organizationId} AND ${organizationHeartbeats.urlSealed} = ${row.urlSealed}`)
        .run();
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, rows.length) }, worker));
  return counts;
}
