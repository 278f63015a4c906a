/**
 * What a poll writes for one looked-up domain, as D1 statements on the Drizzle schema.
 *
 *  - An answer whose canonical hash equals a monitor's base changes nothing but the
 *    monitor's check bookkeeping.
 *  - A differing answer stores its body once (content-addressed, shared across
 *    organizations) and, per monitor, a history row, a facts row and the new base, in
 *    the caller's ONE batch. Each of those writes is guarded by the comparison base the
 *    poll read (`last_snapshot_id IS <base>`): should two Cron runs overlap on a
 *    domain, the second one's guarded writes change nothing, so a change is recorded
 *    (and its event raised) once.
 *  - A check without a snapshot (a failure, a server backing off, no RDAP server)
 *    records its status, its classified failure and when to retry; the last snapshot
 *    stays the base.
 *  - The collection state (platform/collection) rides on each monitor's update: a check
 *    that took a snapshot clears it, one that did not extends the run of failures.
 */
import { and, eq, exists, inArray, isNull, max, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { insertWhere } from "../../db/insert-where";
import { rdapChangeFacts, rdapHistory, rdapMonitors, rdapSnapshots, type RdapCheckStatus } from "../../db/schema/rdap";
import type { DueMonitor } from "./due";
import { recordAttempt, type CollectionError, type CollectionRecord, type CollectionTransition } from "../../platform/collection";
import type { RdapFacts } from "./facts";
import { monitorRetryAt, TRANSIENT_STATUSES } from "./politeness";

/** D1 binds at most 100 parameters per statement. */
const IN_CHUNK = 90;

/** The monitor still has the comparison base the poll read. */
function stillBasedOn(m: DueMonitor): SQL {
  const base = m.lastSnapshotId === null ? isNull(rdapMonitors.lastSnapshotId) : eq(rdapMonitors.lastSnapshotId, m.lastSnapshotId);
  return and(eq(rdapMonitors.id, m.id), base) as SQL;
}

const snapshotIdOf = (db: Db, hash: string) => sql`(${db.select({ id: rdapSnapshots.id }).from(rdapSnapshots).where(eq(rdapSnapshots.hash, hash))})`;

/** A check that collected the registration data: also the monitor's freshness for the audit (last_success_at). */
const successfulCheck = (checkedAt: string, nextAttemptAt: string) => ({
  lastCheckedAt: checkedAt,
  lastSuccessAt: checkedAt,
  lastCheckStatus: "success" as const,
  lastCheckDetail: null,
  retryAt: null,
  failureCount: 0,
  collectionFailingSince: null,
  collectionFailures: 0,
  collectionNextAttemptAt: nextAttemptAt,
  collectionErrorClass: null,
  collectionError: null,
});

export interface Answer {
  domain: string;
  hash: string;
  bodyText: string;
  fetchedAt: string;
  rdapServer: string;
  httpStatus: number;
  /** When the monitors are due again (the check interval). */
  nextAttemptAt: string;
}

/** A monitor whose base differs from the answer: what to record for it. */
export interface Observation {
  monitor: DueMonitor;
  facts: RdapFacts;
  /** False for the monitor's first snapshot (a baseline, not a change). */
  isChange: boolean;
}

/**
 * The statements recording `answer` for the monitors of one domain, and where in the
 * batch result to read whether each observation was recorded (its guarded history
 * insert returned a row) and whether the body was new.
 */
export function answerWrites(db: Db, answer: Answer, observations: Observation[], unchanged: DueMonitor[]) {
  const statements = [];
  const recordedAt: number[] = [];
  let snapshotAt: number | null = null;
  if (observations.length) {
    snapshotAt = statements.length;
    statements.push(
      db
        .insert(rdapSnapshots)
        .values({
          hash: answer.hash,
          body: answer.bodyText,
          sizeBytes: new TextEncoder().encode(answer.bodyText).byteLength,
          domainName: answer.domain,
          firstSeenAt: answer.fetchedAt,
        })
        .onConflictDoNothing({ target: rdapSnapshots.hash })
        .returning({ id: rdapSnapshots.id }),
    );
  }
  for (const { monitor: m, facts, isChange } of observations) {
    const guard = exists(db.select({ one: sql`1` }).from(rdapMonitors).where(stillBasedOn(m)));
    recordedAt.push(statements.length);
    statements.push(
      insertWhere(
        db,
        rdapHistory,
        {
          organizationId: m.organizationId,
          monitorId: m.id,
          snapshotId: snapshotIdOf(db, answer.hash),
          previousSnapshotId: m.lastSnapshotId,
          observedAt: answer.fetchedAt,
          changed: isChange,
          rdapServer: answer.rdapServer,
          httpStatus: answer.httpStatus,
        },
        guard,
      ).returning({ id: rdapHistory.id }),
      // The facts of the history row just inserted: the monitor's newest, same transaction.
      insertWhere(
        db,
        rdapChangeFacts,
        {
          historyId: sql`(${db.select({ id: max(rdapHistory.id) }).from(rdapHistory).where(eq(rdapHistory.monitorId, m.id))})`,
          organizationId: m.organizationId,
          monitorId: m.id,
          domainName: answer.domain,
          observedAt: answer.fetchedAt,
          registrarChanged: facts.registrar_changed,
          registrantChanged: facts.registrant_changed,
          nameserversChanged: facts.nameservers_changed,
          statusChanged: facts.status_changed,
          expirationDate: facts.expiration_date,
          previousExpirationDate: facts.previous_expiration_date,
        },
        guard,
      ),
      db
        .update(rdapMonitors)
        .set({ lastSnapshotId: snapshotIdOf(db, answer.hash), ...successfulCheck(answer.fetchedAt, answer.nextAttemptAt) })
        .where(stillBasedOn(m)),
    );
  }
  for (let i = 0; i < unchanged.length; i += IN_CHUNK) {
    const ids = unchanged.slice(i, i + IN_CHUNK).map((m) => m.id);
    statements.push(db.update(rdapMonitors).set(successfulCheck(answer.fetchedAt, answer.nextAttemptAt)).where(inArray(rdapMonitors.id, ids)));
  }
  return { statements, recordedAt, snapshotAt };
}

/** When a monitor is due again after a check at `checkedAt` (the Cron runs every minute). */
export const nextCheckAt = (checkedAt: string, intervalSeconds: number) => new Date(Date.parse(checkedAt) + Math.max(intervalSeconds, 60) * 1000).toISOString();

/**
 * The statements recording a check that produced no snapshot: its status, its failure
 * (classified; also `last_check_detail`), and when the monitor is due again (a transient
 * failure retries sooner, with backoff); with each monitor's collection record after it
 * and the transition it caused.
 */
export function checkWithoutSnapshotWrites(
  db: Db,
  monitors: DueMonitor[],
  check: { status: RdapCheckStatus; checkedAt: string; failure: CollectionError; serverNotBefore: number; countsAsFailure: boolean; intervalSeconds: number },
) {
  const transient = TRANSIENT_STATUSES.has(check.status);
  const attempts: { monitor: DueMonitor; record: CollectionRecord; transition: CollectionTransition }[] = [];
  const statements = monitors.map((m) => {
    const failures = transient ? m.failureCount + (check.countsAsFailure ? 1 : 0) : 0;
    const retry = monitorRetryAt(check.status, Math.max(1, failures), Date.parse(check.checkedAt), check.intervalSeconds, check.serverNotBefore);
    const retryAt = retry === null ? null : new Date(retry).toISOString();
    const { record, transition } = recordAttempt(m.collection, { ok: false, error: check.failure }, check.checkedAt, retryAt ?? nextCheckAt(check.checkedAt, check.intervalSeconds));
    attempts.push({ monitor: m, record, transition });
    return db
      .update(rdapMonitors)
      .set({
        lastCheckedAt: check.checkedAt,
        lastCheckStatus: check.status,
        lastCheckDetail: check.failure.message,
        retryAt,
        failureCount: failures,
        collectionFailingSince: record.failingSince,
        collectionFailures: record.consecutiveFailures,
        collectionNextAttemptAt: record.nextAttemptAt,
        collectionErrorClass: record.errorClass,
        collectionError: record.errorMessage,
      })
      .where(eq(rdapMonitors.id, m.id));
  });
  return { statements, attempts };
}
