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
 *    records its status and when to retry; the last snapshot stays the base.
 */
import { and, eq, exists, inArray, isNull, max, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { insertWhere } from "../../db/insert-where";
import { rdapChangeFacts, rdapHistory, rdapMonitors, rdapSnapshots, type RdapCheckStatus } from "../../db/schema/rdap";
import type { DueMonitor } from "./due";
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
const successfulCheck = (checkedAt: string) => ({
  lastCheckedAt: checkedAt,
  lastSuccessAt: checkedAt,
  lastCheckStatus: "success" as const,
  lastCheckDetail: null,
  retryAt: null,
  failureCount: 0,
});

export interface Answer {
  domain: string;
  hash: string;
  bodyText: string;
  fetchedAt: string;
  rdapServer: string;
  httpStatus: number;
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
        .set({ lastSnapshotId: snapshotIdOf(db, answer.hash), ...successfulCheck(answer.fetchedAt) })
        .where(stillBasedOn(m)),
    );
  }
  for (let i = 0; i < unchanged.length; i += IN_CHUNK) {
    const ids = unchanged.slice(i, i + IN_CHUNK).map((m) => m.id);
    statements.push(db.update(rdapMonitors).set(successfulCheck(answer.fetchedAt)).where(inArray(rdapMonitors.id, ids)));
  }
  return { statements, recordedAt, snapshotAt };
}

/**
 * The statements recording a check that produced no snapshot: its status and detail,
 * and when the monitor is due again (a transient failure retries sooner, with backoff).
 */
export function checkWithoutSnapshotWrites(
  db: Db,
  monitors: DueMonitor[],
  check: { status: RdapCheckStatus; checkedAt: string; detail: string | null; serverNotBefore: number; countsAsFailure: boolean; intervalSeconds: number },
) {
  const transient = TRANSIENT_STATUSES.has(check.status);
  return monitors.map((m) => {
    const failures = transient ? m.failureCount + (check.countsAsFailure ? 1 : 0) : 0;
    const retry = monitorRetryAt(check.status, Math.max(1, failures), Date.parse(check.checkedAt), check.intervalSeconds, check.serverNotBefore);
    return db
      .update(rdapMonitors)
      .set({
        lastCheckedAt: check.checkedAt,
        lastCheckStatus: check.status,
        lastCheckDetail: check.detail,
        retryAt: retry === null ? null : new Date(retry).toISOString(),
        failureCount: failures,
      })
      .where(eq(rdapMonitors.id, m.id));
  });
}
