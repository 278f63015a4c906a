/**
 * Certificate Transparency, read from what the CT log module records: each match's
 * occurrences carry the CAA verdict made when the entry was observed (`caa` JSON:
 * `has_records && !authorized` is a violation, as in the CT-Log event). A
 * certificate seen in several logs is one violation (its newest occurrence); only the
 * newest `evidenceLimit` are read, a second statement counts them all.
 *
 * Assets are the organization's filters. Freshness: CT entries are read for every
 * organization at once by one cursor per monitored log, so the module's data is as
 * fresh as the cursors' real progress (ct_log_states, written at the end of every run
 * and at every verified batch; see ctLogCollectedThrough). The category is assessed on
 * the monitored logs of the log list in use (shared sources): "Monitoring data stale"
 * sums them up in one line, and a report's appendix lists each with its state.
 */
import { count, eq, gte, isNull, max, or, sql } from "drizzle-orm";
import { ctFilters, ctLogListCache, ctLogStates, ctMatchFilters, ctMatches, ctMatchOccurrences } from "../../../db/schema/ct-log";
import { MONITORED_STATES, storedLogFailure } from "../../ct-log/contract";
import type { MonitoredAsset } from "../document";
import { collectedWithin, collectionState, NEVER_COLLECTED, type CollectionRecord } from "../../../platform/collection";
import { coverageOf, enabledAt, iso, jsonArray, num, rawSelect, type AuditScope, type ReaderPlan } from "./scope";
import type { AuditFacts, CaaViolationFact, ModuleCoverage } from "./types";

/** Matches are kept 30 days (docs/decisions.md#ct-filters-and-matches); the appendix counts them over that window. */
const MATCH_WINDOW_MS = 30 * 86_400_000;

/** Word for word the condition of the partial index ct_occurrences_caa_violation_idx (src/db/schema/ct-log.ts), so SQLite uses it. */
const violation = sql`json_extract(caa, '$.has_records') = 1 AND json_extract(caa, '$.authorized') = 0`;

/** A log cursor's published state (ct_log_states), as far as freshness needs it. */
export interface CursorProgress {
  verifiedPosition: number | null;
  treeSize: number | null;
  verifiedTreeHeadAt: string | null;
  lastEntryAt: string | null;
  lastRunAt: string | null;
  consecutiveFailures: number;
}

const later = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a > b ? a : b);

/**
 * Up to when a log's entries have been read, verified and matched (null: never):
 *  - the last run succeeded and left nothing unread of the newest tree head it saw:
 *    everything the log had at that run (its start);
 *  - behind that head (catching up, or stopped by failures): up to the newest entry
 *    verified, as the log timestamped it;
 *  - caught up but failing since (e.g. the log unreachable): up to the tree head the
 *    position was verified against, or the newest entry if later.
 * A run that only found the cursor backing off records nothing, so a log failing for
 * an hour ages by an hour.
 */
export function ctLogCollectedThrough(s: CursorProgress | null): string | null {
  if (!s || s.verifiedPosition === null) return null;
  const caughtUp = s.treeSize === null || s.verifiedPosition >= s.treeSize;
  if (!caughtUp) return s.lastEntryAt;
  if (s.consecutiveFailures === 0 && s.lastRunAt) return s.lastRunAt;
  return later(s.verifiedTreeHeadAt, s.lastEntryAt);
}

/** The coverage item standing for the missing log list: with filters and no log monitored, nothing is read for them. */
export const NO_LOG_MONITORED = "no CT log monitored (the log list in use has none)";

/**
 * A log's collection record as its cursor publishes it: collected up to
 * ctLogCollectedThrough, failing after consecutive failed runs with the last error as
 * the cursor classified it (ct-log/collection.ts storedLogFailure).
 */
function logRecord(l: LogRow): CollectionRecord {
  const lastSuccessAt = ctLogCollectedThrough({
    verifiedPosition: l.verified_position,
    treeSize: l.tree_size,
    verifiedTreeHeadAt: l.verified_tree_head_at,
    lastEntryAt: l.last_entry_at,
    lastRunAt: l.last_run_at,
    consecutiveFailures: num(l.consecutive_failures),
  });
  const failures = num(l.consecutive_failures);
  if (!failures) return { ...NEVER_COLLECTED, lastAttemptAt: l.last_run_at, lastSuccessAt };
  const error = storedLogFailure(l.last_error || "failed", l.last_error_class, { description: l.log ?? "the CT log", readUrl: l.read_url ?? "" });
  return {
    ...NEVER_COLLECTED,
    lastAttemptAt: l.last_run_at,
    lastSuccessAt,
    failingSince: l.failing_since ?? l.last_run_at,
    consecutiveFailures: failures,
    errorClass: error?.class ?? null,
    errorMessage: error?.message ?? null,
  };
}

/** A log's line in the report's appendix of shared sources. */
function logAsset(l: LogRow, windowSeconds: number, now: Date): MonitoredAsset {
  const record = logRecord(l);
  const base = { module: "ct-log" as const, asset: l.log ?? "CT log", last_collected_at: record.lastSuccessAt };
  const progress = l.verified_position === null ? "nothing verified yet" : `${l.verified_position} of ${l.tree_size ?? "?"} entries verified`;
  if (record.errorMessage) return { ...base, status: "problem", state: collectionState(record) === "failing" ? "Failing" : "Last read failed", detail: record.errorMessage };
  if (!record.lastSuccessAt) return { ...base, status: "pending", state: "Not read yet", detail: progress };
  if (!collectedWithin(record, now, windowSeconds)) return { ...base, status: "attention", state: "Behind", detail: progress };
  return { ...base, status: "ok", state: "Read", detail: progress };
}

interface ViolationRow {
  names: string;
  sha256: string;
  log_name: string;
  observed_at: string;
  issuer: string | null;
  records: string | null;
}

interface LogRow {
  log: string | null;
  read_url: string | null;
  verified_position: number | null;
  tree_size: number | null;
  verified_tree_head_at: string | null;
  last_entry_at: string | null;
  last_run_at: string | null;
  consecutive_failures: number | null;
  last_error: string | null;
  last_error_class: string | null;
  failing_since: string | null;
}

interface FilterRow {
  id: number;
  pattern: string;
  matchType: string;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export function readCt(scope: AuditScope): ReaderPlan<{ caa_violations: CaaViolationFact[] }> {
  const { t, now, asOf } = scope;
  const db = t.db;
  const inWindow = t.where(ctMatchOccurrences, sql`${ctMatchOccurrences.observedAt} >= ${iso(scope.window.start)}`, sql`${ctMatchOccurrences.observedAt} < ${iso(scope.window.end)}`, violation);
  const monitoredStates = sql.join(
    MONITORED_STATES.map((s) => sql`${s}`),
    sql`, `,
  );
  // A filter deleted after a report's period end was still there at its end.
  const existing = scope.mode === "live" ? isNull(ctFilters.deletedAt) : or(isNull(ctFilters.deletedAt), sql`${ctFilters.deletedAt} > ${iso(asOf)}`);

  const statements = [
    // The newest violating occurrence of each certificate, the newest `evidenceLimit` certificates.
    // (A bare column beside max(): SQLite takes it from the row holding the maximum.)
    rawSelect<ViolationRow>(db, ["names", "sha256", "log_name", "observed_at", "issuer", "records"], sql`SELECT m.matched_names AS names, o.sha256, o.log_name, o.observed_at,
        json_extract(o.cert, '$.issuer') AS issuer, json_extract(o.caa, '$.records') AS records
      FROM (SELECT id, max(observed_at) AS newest FROM ${ctMatchOccurrences} WHERE ${inWindow}
            GROUP BY match_id ORDER BY newest DESC, id DESC LIMIT ${scope.evidenceLimit}) v
      JOIN ${ctMatchOccurrences} o ON o.id = v.id
      JOIN ${ctMatches} m ON m.id = o.match_id
      ORDER BY o.observed_at DESC, o.id DESC`),
    // All of them, counted: certificates, and the distinct name sets they name.
    rawSelect<{ evidence: number; assets: number }>(db, ["evidence", "assets"], sql`SELECT count(*) AS evidence, count(DISTINCT m.matched_names) AS assets
      FROM (SELECT DISTINCT match_id FROM ${ctMatchOccurrences} WHERE ${inWindow}) v
      JOIN ${ctMatches} m ON m.id = v.match_id`),
    // The filters that existed at asOf (and the live ones, for the appendix).
    db
      .select({
        id: ctFilters.id,
        pattern: ctFilters.pattern,
        matchType: ctFilters.matchType,
        enabled: ctFilters.enabled,
        createdAt: ctFilters.createdAt,
        updatedAt: ctFilters.updatedAt,
        deletedAt: ctFilters.deletedAt,
      })
      .from(ctFilters)
      .where(t.where(ctFilters, existing))
      .orderBy(ctFilters.pattern),
    // Service-wide (every organization's entries come through these cursors): each
    // monitored log of the log list in use, with its cursor's published state.
    rawSelect<LogRow>(db, ["log", "read_url", "verified_position", "tree_size", "verified_tree_head_at", "last_entry_at", "last_run_at", "consecutive_failures", "last_error", "last_error_class", "failing_since"], sql`SELECT json_extract(l.value, '$.description') AS log, json_extract(l.value, '$.readUrl') AS read_url, s.verified_position, s.tree_size, s.verified_tree_head_at,
        s.last_entry_at, s.last_run_at, s.consecutive_failures, s.last_error, s.last_error_class, s.failing_since
      FROM ${ctLogListCache} c, json_each(c.list, '$.logs') l
      LEFT JOIN ${ctLogStates} s ON s.log_id = json_extract(l.value, '$.logId')
      WHERE c.id = 1 AND json_extract(l.value, '$.state.name') IN (${monitoredStates})
      ORDER BY 1`),
    ...(scope.withAssets
      ? [
          db
            .select({ filterId: ctMatchFilters.filterId, matches: count(), lastMatch: max(ctMatches.lastMatchedAt) })
            .from(ctMatchFilters)
            .innerJoin(ctMatches, eq(ctMatches.id, ctMatchFilters.matchId))
            .where(t.where(ctMatches, gte(ctMatches.lastMatchedAt, iso(new Date(now.getTime() - MATCH_WINDOW_MS)))))
            .groupBy(ctMatchFilters.filterId),
        ]
      : []),
  ];

  return {
    statements,
    read(results) {
      const [violations, [total], filters, logs, perFilter] = results as [
        ViolationRow[],
        { evidence: number; assets: number }[],
        FilterRow[],
        LogRow[],
        { filterId: number; matches: number; lastMatch: string | null }[] | undefined,
      ];
      const caa_violations: CaaViolationFact[] = violations.map((o) => ({
        names: jsonArray(o.names),
        sha256: o.sha256,
        issuer: o.issuer ?? "unknown issuer",
        log_name: o.log_name,
        observed_at: o.observed_at,
        caa_records: jsonArray(o.records),
      }));
      const counts: AuditFacts["counts"] = num(total?.evidence) > 0 ? { "ct.caa_violations": { evidence: num(total.evidence), assets: num(total.assets) } } : {};

      const configured = filters.filter((f) => f.createdAt <= iso(asOf));
      const enabled = configured.filter((f) => enabledAt(scope, f));
      // The category is assessed on the monitored logs, shared by every enabled filter
      // (each log counts from the oldest filter's creation); none monitored is itself a gap.
      const since = enabled.reduce((oldest, f) => (f.createdAt < oldest ? f.createdAt : oldest), iso(asOf));
      const logItems = logs.map((l) => ({ asset: l.log ?? "CT log", enabled: true, createdAt: since, collection: logRecord(l) }));
      const coverage: ModuleCoverage = {
        ...coverageOf("ct-log", scope, enabled.length ? logItems : [], "shared"),
        configured_assets: configured.length,
        enabled_assets: enabled.length,
      };
      if (enabled.length && !logs.length) {
        coverage.uncollected.push({
          asset: NO_LOG_MONITORED,
          state: "pending",
          last_collected_at: null,
          failing_since: null,
          error: null,
          stale: since < new Date(asOf.getTime() - coverage.expected_window_seconds * 1000).toISOString(),
        });
      }

      let assets: MonitoredAsset[] = [];
      let sources: MonitoredAsset[] = [];
      if (scope.withAssets) {
        sources = logs.map((l) => logAsset(l, coverage.expected_window_seconds, now));
        // A filter's data is as fresh as the slowest log's.
        const progress = logItems.map((i) => i.collection.lastSuccessAt);
        const collected = progress.length === 0 || progress.includes(null) ? null : (progress as string[]).reduce((a, b) => (a < b ? a : b));
        const stats = new Map((perFilter ?? []).map((s) => [s.filterId, s]));
        const violationsByName = new Set(caa_violations.flatMap((v) => v.names));
        assets = filters
          .filter((f) => f.deletedAt === null)
          .map((f): MonitoredAsset => {
            const s = stats.get(f.id);
            const base = { module: "ct-log" as const, asset: `${f.pattern} (${f.matchType})`, last_collected_at: f.enabled ? collected : null };
            const detail = `${s?.matches ?? 0} matching certificate(s) in 30 days${s?.lastMatch ? `, last ${s.lastMatch.slice(0, 10)}` : ""}`;
            if (!f.enabled) return { ...base, status: "paused", state: "Paused", detail };
            const domain = f.pattern.replace(/^\*?\./, "");
            const violated = [...violationsByName].some((n) => n === domain || n.endsWith("." + domain));
            if (violated) return { ...base, status: "attention", state: "CAA violation", detail };
            return { ...base, status: "ok", state: "Watching", detail };
          });
      }
      return { facts: { caa_violations }, counts, coverage, assets, sources };
    },
  };
}
