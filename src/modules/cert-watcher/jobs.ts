/**
 * Scan scheduling: every due target becomes one scan job for the agents to lease.
 *
 * Due = enabled target of an enabled monitor, last scanned at or before
 * now - SCAN_INTERVAL_SECONDS (never scanned: due at once; interval 0: every run),
 * and without an open job. The partial unique index on open jobs per target makes a
 * concurrent second run harmless (ON CONFLICT DO NOTHING).
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { ScheduledJob } from "../../platform/scheduler";
import { LEASE_SECONDS } from "./agents";
import { emitCollectionEvents, recordUnansweredJobs } from "./collection";

export async function enqueueDueScans(db: Db, now: Date, intervalSeconds: number, organizationId?: number): Promise<number> {
  const nowIso = now.toISOString();
  const cutoff = new Date(now.getTime() - intervalSeconds * 1000).toISOString();
  const orgFilter = organizationId === undefined ? sql`` : sql`AND t.organization_id = ${organizationId}`;
  const res = await db.run(sql`
    INSERT INTO cert_scan_jobs (organization_id, monitor_id, target_id, status, created_at, attempts)
    SELECT t.organization_id, t.monitor_id, t.id, 'pending', ${nowIso}, 0
    FROM cert_targets t JOIN cert_monitors m ON m.id = t.monitor_id
    WHERE t.enabled = 1 AND m.enabled = 1
      AND (t.last_scan_at IS NULL OR t.last_scan_at <= ${cutoff})
      AND NOT EXISTS (SELECT 1 FROM cert_scan_jobs j WHERE j.target_id = t.id AND j.status <> 'done')
      ${orgFilter}
    ON CONFLICT DO NOTHING`);
  return res.meta.changes ?? 0;
}

/** Completed jobs are bookkeeping only (the scan keeps its job_id); they are dropped after a week. */
export async function pruneDoneJobs(db: Db, now: Date, keepSeconds = 7 * 86_400): Promise<number> {
  const before = new Date(now.getTime() - keepSeconds * 1000).toISOString();
  const res = await db.run(sql`DELETE FROM cert_scan_jobs WHERE status = 'done' AND completed_at < ${before}`);
  return res.meta.changes ?? 0;
}

/**
 * Runs at every Cron Trigger (the query is cheap); the per-target interval decides what
 * is due, so a new monitor is scanned at the next run rather than an interval later.
 */
export const enqueueScansJob: ScheduledJob = {
  name: "cert-watcher.enqueue_scans",
  intervalSeconds: 0,
  async run({ env, db, config, now }) {
    // Jobs that ended without a result are their targets' failed attempts (collection.ts).
    const transitions = await recordUnansweredJobs(db, now, { scanIntervalSeconds: config.scanIntervalSeconds, leaseSeconds: LEASE_SECONDS });
    await emitCollectionEvents(env, transitions);
    const created = await enqueueDueScans(db, now, config.scanIntervalSeconds);
    return { jobs_created: created, jobs_pruned: await pruneDoneJobs(db, now), targets_failing: transitions.filter((x) => x.transition === "failing").length };
  },
};
