/**
 * The D1 writes of one scheduled run, from the domains' assessments (assessment.ts).
 *
 * D1 caps the queries of one Worker invocation (1,000 on the paid plan) and bills rows
 * written, so the common cases cost a few statements for the whole run, not a few per
 * domain:
 *  - Domains where nothing happened: ONE statement moves their `last_checked_at` and
 *    `last_success_at` (one row each, the only write an unchanged domain costs).
 *  - `last_success_at` (when the domain's data was last collected: status ok or partial)
 *    and the collection state (platform/collection: failure run, class, message, next
 *    attempt) ride on the domain-state statements every domain already gets, as columns
 *    of the same row update, so they cost no statement and no row.
 *  - Baselines, lookup errors set or cleared, re-read SPF/DMARC, domain state: one
 *    statement per kind for all domains, the rows given as one JSON parameter read with
 *    json_each (D1 allows 100 bound parameters, so per-row parameters would not scale).
 *    These writes are state, not history: repeating them is harmless.
 *  - Confirmed changes (rare) keep their own statements so each is guarded: the record
 *    set is updated only if it still holds the old values, and its history item and facts
 *    are inserted only if that update is what the set now holds (the domain's DNSSEC
 *    status likewise). Two overlapping runs therefore record a change once, and the
 *    event goes out only from the run whose guarded writes applied. A changed domain's
 *    statements are atomic (one D1 batch); several domains share a batch, and a failing
 *    batch is retried domain by domain so one bad domain does not hold back the others.
 */
import { groupsUnderBudget } from "../../platform/groups";
import type { DomainAssessment, HistoryEntry } from "./assessment";

export interface CommitOutcome {
  /** Domains whose change writes applied (their events may go out). */
  applied: Set<number>;
  /** Domains whose writes failed, with the reason (they stay due for the next run). */
  failed: Map<number, string>;
  /** D1's own count of rows written (meta.rows_written) over every statement. */
  rowsWritten: number;
  statements: number;
}

/** Rows of a JSON parameter: kept well under D1's 1 MB value and 100 KB statement limits. */
const JSON_PARAMETER_BYTES = 64_000;
/** Statements per D1 batch of change writes. */
const CHANGE_BATCH_STATEMENTS = 100;

const json = (v: unknown) => JSON.stringify(v);

/** Splits rows so that each group's JSON stays under `budget` bytes ("[", "]" and a comma per row counted). */
const byJsonSize = <T>(rows: readonly T[], budget = JSON_PARAMETER_BYTES): T[][] => groupsUnderBudget(rows, (row) => json(row).length + 1, budget - 2);

function stateRow(a: DomainAssessment) {
  const s = a.state;
  const c = s.collection;
  return [
    a.domain.id, s.status, s.detail, s.dnssecStatus, s.dnssecError, s.spf === null ? null : json(s.spf), s.dmarc === null ? null : json(s.dmarc),
    c.failingSince, c.consecutiveFailures, c.nextAttemptAt, c.errorClass, c.errorMessage, a.email.stateChanged ? json(s.email) : a.domain.emailJson,
  ];
}

/** A record set's lookup outcome as a row of the errorMarks JSON parameter. */
const errorMarkRow = (e: DomainAssessment["errorMarks"][number]) => [e.id, e.error, e.errorClass, e.failures, e.failingSince, e.lastSuccessAt];

/**
 * A parsed SPF / DMARC policy is written only while its record set is still watched: a
 * record set deleted while the run was resolving must not bring the policy back into the
 * domain view (deleting it clears the policy, service.ts). Reads an index, writes nothing.
 */
const POLICY_IF_WATCHED = {
  spf: (value: string) =>
    `CASE WHEN EXISTS (SELECT 1 FROM dns_record_sets r WHERE r.domain_id = dns_domains.id AND r.name = dns_domains.domain_name AND r.type = 'TXT') THEN ${value} END`,
  dmarc: (value: string) =>
    `CASE WHEN EXISTS (SELECT 1 FROM dns_record_sets r WHERE r.domain_id = dns_domains.id AND r.name = '_dmarc.' || dns_domains.domain_name AND r.type = 'TXT') THEN ${value} END`,
};

/** The email state is written only while the domain's email checks are on (turning them off while a run resolves keeps it cleared). */
const EMAIL_IF_CHECKED = (value: string) => `CASE WHEN dns_domains.email_checks = 1 THEN ${value} ELSE dns_domains.email_json END`;

// ---- the bulk statements (every domain without a confirmed change) -------------------

const BULK_SQL = {
  baselines: `UPDATE dns_record_sets SET values_json = u.v, rcode = u.r, last_error = NULL
    FROM (SELECT value ->> '$[0]' AS id, value ->> '$[1]' AS v, value ->> '$[2]' AS r FROM json_each(?)) AS u
    WHERE dns_record_sets.id = u.id AND dns_record_sets.values_json IS NULL`,
  errorMarks: `UPDATE dns_record_sets SET last_error = u.e, collection_error_class = u.c, collection_failures = u.n, collection_failing_since = u.fs, last_success_at = u.ls
    FROM (SELECT value ->> '$[0]' AS id, value ->> '$[1]' AS e, value ->> '$[2]' AS c, value ->> '$[3]' AS n, value ->> '$[4]' AS fs, value ->> '$[5]' AS ls FROM json_each(?)) AS u
    WHERE dns_record_sets.id = u.id`,
  states: `UPDATE dns_domains SET last_checked_at = ?1, last_success_at = CASE WHEN u.s = 'error' THEN dns_domains.last_success_at ELSE ?1 END, last_check_status = u.s, last_check_detail = u.d, dnssec_status = u.ds, dnssec_error = u.de, spf_json = ${POLICY_IF_WATCHED.spf("u.spf")}, dmarc_json = ${POLICY_IF_WATCHED.dmarc("u.dm")},
      collection_failing_since = u.cfs, collection_failures = u.cn, collection_next_attempt_at = u.cna, collection_error_class = u.cc, collection_error = u.ce, email_json = ${EMAIL_IF_CHECKED("u.em")}
    FROM (SELECT value ->> '$[0]' AS id, value ->> '$[1]' AS s, value ->> '$[2]' AS d, value ->> '$[3]' AS ds, value ->> '$[4]' AS de, value ->> '$[5]' AS spf, value ->> '$[6]' AS dm,
      value ->> '$[7]' AS cfs, value ->> '$[8]' AS cn, value ->> '$[9]' AS cna, value ->> '$[10]' AS cc, value ->> '$[11]' AS ce, value ->> '$[12]' AS em FROM json_each(?2)) AS u
    WHERE dns_domains.id = u.id`,
  quiet: `UPDATE dns_domains SET last_checked_at = ?1, last_success_at = ?1, last_check_status = 'ok', last_check_detail = NULL,
      collection_failing_since = NULL, collection_failures = 0, collection_next_attempt_at = ?3, collection_error_class = NULL, collection_error = NULL
    WHERE id IN (SELECT value FROM json_each(?2))`,
};

function bulkStatements(d1: D1Database, plain: DomainAssessment[], resolvedAt: string, nextAttemptAt: string | null): D1PreparedStatement[] {
  const stmts: D1PreparedStatement[] = [];
  const baselines = plain.flatMap((a) => a.baselines.map((b) => [b.id, json(b.values), b.rcode]));
  const errorMarks = plain.flatMap((a) => a.errorMarks.map(errorMarkRow));
  const states = plain.filter((a) => !a.quiet).map(stateRow);
  const quiet = plain.filter((a) => a.quiet).map((a) => a.domain.id);
  for (const rows of byJsonSize(baselines)) stmts.push(d1.prepare(BULK_SQL.baselines).bind(json(rows)));
  for (const rows of byJsonSize(errorMarks)) stmts.push(d1.prepare(BULK_SQL.errorMarks).bind(json(rows)));
  for (const rows of byJsonSize(states)) stmts.push(d1.prepare(BULK_SQL.states).bind(resolvedAt, json(rows)));
  for (const ids of byJsonSize(quiet)) stmts.push(d1.prepare(BULK_SQL.quiet).bind(resolvedAt, json(ids), nextAttemptAt));
  return stmts;
}

// ---- the guarded statements of a domain with confirmed changes -----------------------

/**
 * SQL condition for inserting the history item `h` (and its facts): the write it records
 * is what D1 now holds (the record set has this run's values and change time; for DNSSEC,
 * the domain still has the status this run started from: these inserts run before the
 * domain's own update), and the same item is not recorded yet (two runs with the same
 * scheduled time would otherwise both pass the first test).
 */
function guardOf(a: DomainAssessment, h: HistoryEntry, resolvedAt: string, table: "dns_history" | "dns_change_facts", factKind?: string): { sql: string; params: unknown[] } {
  // The same item: same time, record and kind (a history kind, or the fact's kind).
  const notYet = `NOT EXISTS (SELECT 1 FROM ${table} WHERE domain_id = ? AND observed_at = ? AND record_name = ? AND record_type IS ? AND kind = ?)`;
  const notYetParams = [a.domain.id, resolvedAt, h.name, h.type, factKind ?? h.kind];
  if (h.kind === "record") {
    return { sql: `EXISTS (SELECT 1 FROM dns_record_sets WHERE id = ? AND last_changed_at = ? AND values_json = ?) AND ${notYet}`, params: [h.setId, resolvedAt, json(h.new), ...notYetParams] };
  }
  // An SPF verdict change: the domain still holds the analysis this run started from (spf_json as read).
  if (h.kind === "spf") return { sql: `EXISTS (SELECT 1 FROM dns_domains WHERE id = ? AND spf_json IS ?) AND ${notYet}`, params: [a.domain.id, a.domain.spfJson, ...notYetParams] };
  // An email regression: the domain still holds the email state this run started from (its inputs digest moves with every regression).
  if (h.kind === "email") return { sql: `EXISTS (SELECT 1 FROM dns_domains WHERE id = ? AND email_json IS ?) AND ${notYet}`, params: [a.domain.id, a.domain.emailJson, ...notYetParams] };
  return { sql: `EXISTS (SELECT 1 FROM dns_domains WHERE id = ? AND dnssec_status = ?) AND ${notYet}`, params: [a.domain.id, a.domain.dnssecStatus, ...notYetParams] };
}

interface GuardedPlan {
  domainId: number;
  statements: D1PreparedStatement[];
  /** Indexes of the statements that must each change a row for the change to count. */
  guarded: number[];
}

function changePlan(d1: D1Database, a: DomainAssessment, resolvedAt: string): GuardedPlan {
  const d = a.domain;
  const statements: D1PreparedStatement[] = [];
  const guarded: number[] = [];
  for (const b of a.baselines) statements.push(d1.prepare("UPDATE dns_record_sets SET values_json = ?, rcode = ?, last_error = NULL WHERE id = ? AND values_json IS NULL").bind(json(b.values), b.rcode, b.id));
  if (a.errorMarks.length) statements.push(d1.prepare(BULK_SQL.errorMarks).bind(json(a.errorMarks.map(errorMarkRow))));
  for (const c of a.changes) {
    guarded.push(statements.length);
    statements.push(
      d1
        .prepare("UPDATE dns_record_sets SET values_json = ?, rcode = ?, last_error = NULL, last_changed_at = ? WHERE id = ? AND values_json IS ?")
        .bind(json(c.values), c.rcode, resolvedAt, c.set.id, json(c.set.values)),
    );
  }
  for (const h of a.history) {
    const guard = guardOf(a, h, resolvedAt, "dns_history");
    statements.push(
      d1
        .prepare(
          `INSERT INTO dns_history (organization_id, domain_id, observed_at, kind, record_name, record_type, old_values, new_values, detail, analysis_json)
           SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${guard.sql}`,
        )
        .bind(d.organizationId, d.id, resolvedAt, h.kind, h.name, h.type, json(h.old), json(h.new), h.detail, h.analysis === null ? null : json(h.analysis), ...guard.params),
    );
    for (const kind of h.facts) {
      const factGuard = guardOf(a, h, resolvedAt, "dns_change_facts", kind);
      statements.push(
        d1
          .prepare(
            `INSERT INTO dns_change_facts (organization_id, domain_id, domain_name, observed_at, kind, record_name, record_type, old_values, new_values, detail)
             SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${factGuard.sql}`,
          )
          .bind(d.organizationId, d.id, d.name, resolvedAt, kind, h.name, h.type, json(h.old), json(h.new), h.detail, ...factGuard.params),
      );
    }
  }
  const [id, status, detail, dnssecStatus, dnssecError, spf, dmarc, cfs, cn, cna, cc, ce, em] = stateRow(a);
  // A recorded DNSSEC status or SPF verdict change is guarded like a record change: it applies once.
  const dnssecGuard = a.history.some((h) => h.kind === "dnssec");
  const spfGuard = a.history.some((h) => h.kind === "spf");
  const emailGuard = a.history.some((h) => h.kind === "email");
  if (dnssecGuard || spfGuard || emailGuard) guarded.push(statements.length);
  statements.push(
    d1
      .prepare(
        `UPDATE dns_domains SET last_checked_at = ?, last_success_at = CASE WHEN ? = 'error' THEN last_success_at ELSE ? END, last_check_status = ?, last_check_detail = ?,
           dnssec_status = ?, dnssec_error = ?, spf_json = ${POLICY_IF_WATCHED.spf("?")}, dmarc_json = ${POLICY_IF_WATCHED.dmarc("?")},
           collection_failing_since = ?, collection_failures = ?, collection_next_attempt_at = ?, collection_error_class = ?, collection_error = ?, email_json = ${EMAIL_IF_CHECKED("?")}
         WHERE id = ?${dnssecGuard ? " AND dnssec_status = ?" : ""}${spfGuard ? " AND spf_json IS ?" : ""}${emailGuard ? " AND email_json IS ?" : ""}`,
      )
      .bind(
        resolvedAt, status, resolvedAt, status, detail, dnssecStatus, dnssecError, spf, dmarc, cfs, cn, cna, cc, ce, em, id,
        ...(dnssecGuard ? [d.dnssecStatus] : []), ...(spfGuard ? [d.spfJson] : []), ...(emailGuard ? [d.emailJson] : []),
      ),
  );
  return { domainId: d.id, statements, guarded };
}

/** Groups whole plans into batches of about CHANGE_BATCH_STATEMENTS statements. */
function batchesOf(plans: GuardedPlan[]): GuardedPlan[][] {
  const out: GuardedPlan[][] = [];
  let current: GuardedPlan[] = [];
  let size = 0;
  for (const p of plans) {
    if (current.length > 0 && size + p.statements.length > CHANGE_BATCH_STATEMENTS) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(p);
    size += p.statements.length;
  }
  if (current.length) out.push(current);
  return out;
}

const rowsOf = (results: D1Result[]) => results.reduce((n, r) => n + (r.meta?.rows_written ?? r.meta?.changes ?? 0), 0);

export async function commitAssessments(d1: D1Database, assessments: readonly DomainAssessment[], resolvedAt: string, nextAttemptAt: string | null = null): Promise<CommitOutcome> {
  const outcome: CommitOutcome = { applied: new Set(), failed: new Map(), rowsWritten: 0, statements: 0 };
  // A first DNSSEC status is a baseline (no history): state like the rest, no guard needed.
  const withChanges = assessments.filter((a) => a.history.length > 0);
  const plain = assessments.filter((a) => a.history.length === 0);

  const bulk = bulkStatements(d1, plain, resolvedAt, nextAttemptAt);
  if (bulk.length) {
    try {
      outcome.rowsWritten += rowsOf(await d1.batch(bulk));
      outcome.statements += bulk.length;
    } catch (err) {
      for (const a of plain) outcome.failed.set(a.domain.id, String(err));
    }
  }

  const record = (plan: GuardedPlan, results: D1Result[]) => {
    if (plan.guarded.every((i) => (results[i]?.meta?.changes ?? 0) > 0)) outcome.applied.add(plan.domainId);
  };
  const runBatch = async (plans: GuardedPlan[]) => {
    const results = await d1.batch(plans.flatMap((p) => p.statements));
    outcome.rowsWritten += rowsOf(results);
    outcome.statements += results.length;
    let offset = 0;
    for (const p of plans) {
      record(p, results.slice(offset, offset + p.statements.length));
      offset += p.statements.length;
    }
  };
  for (const group of batchesOf(withChanges.map((a) => changePlan(d1, a, resolvedAt)))) {
    try {
      await runBatch(group);
    } catch {
      for (const plan of group) {
        try {
          await runBatch([plan]);
        } catch (err) {
          outcome.failed.set(plan.domainId, String(err));
        }
      }
    }
  }
  return outcome;
}
