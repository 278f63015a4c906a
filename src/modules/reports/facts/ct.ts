/**
 * Certificate Transparency, read from what the CT log module records: each match's
 * occurrences carry the CAA verdict made when the entry was observed (`caa` JSON:
 * `has_records && !authorized` is a violation, spec "CT-Log event fields").
 *
 * Assets are the organization's live (not deleted) filters. Freshness: CT entries are
 * read for every organization at once by the `ct-log.poke_cursors` job at each Cron
 * run, so the module's data is as fresh as that job's last successful start.
 */
import { count, desc, eq, gte, isNull, lt, max, sql } from "drizzle-orm";
import { ctFilters, ctMatchFilters, ctMatches, ctMatchOccurrences } from "../../../db/schema/ct-log";
import { jobRuns } from "../../../db/schema/platform";
import type { MonitoredAsset } from "../document";
import { coverageOf, iso, jsonArray, type AuditScope, type ModuleReading } from "./scope";
import type { CaaViolationFact } from "./types";

/** The scheduled job that reads the CT logs (src/modules/ct-log/jobs.ts). */
export const CT_POLL_JOB = "ct-log.poke_cursors";
/** Matches are kept 30 days (spec "Limits"); the appendix counts them over that window. */
const MATCH_WINDOW_MS = 30 * 86_400_000;

/** Word for word the condition of the partial index ct_occurrences_caa_violation_idx (src/db/schema/ct-log.ts), so SQLite uses it. */
const violation = sql`json_extract(caa, '$.has_records') = 1 AND json_extract(caa, '$.authorized') = 0`;

export async function readCt(scope: AuditScope): Promise<ModuleReading<{ caa_violations: CaaViolationFact[] }>> {
  const { t, now } = scope;
  const since = iso(scope.window.start);
  const [occurrences, filters, job] = await Promise.all([
    t.db
      .select({
        matchId: ctMatches.id,
        names: ctMatches.matchedNames,
        sha256: ctMatchOccurrences.sha256,
        logName: ctMatchOccurrences.logName,
        observedAt: ctMatchOccurrences.observedAt,
        issuer: sql<string | null>`json_extract(${ctMatchOccurrences.cert}, '$.issuer')`,
        records: sql<string | null>`json_extract(${ctMatchOccurrences.caa}, '$.records')`,
      })
      .from(ctMatchOccurrences)
      .innerJoin(ctMatches, eq(ctMatches.id, ctMatchOccurrences.matchId))
      .where(t.where(ctMatchOccurrences, gte(ctMatchOccurrences.observedAt, since), lt(ctMatchOccurrences.observedAt, iso(scope.window.end)), violation))
      .orderBy(desc(ctMatchOccurrences.observedAt))
      .limit(2000)
      .all(),
    t.db
      .select({ id: ctFilters.id, pattern: ctFilters.pattern, matchType: ctFilters.matchType, enabled: ctFilters.enabled, createdAt: ctFilters.createdAt })
      .from(ctFilters)
      .where(t.where(ctFilters, isNull(ctFilters.deletedAt)))
      .orderBy(ctFilters.pattern)
      .all(),
    t.db.select({ startedAt: jobRuns.lastStartedAt, status: jobRuns.lastStatus, error: jobRuns.lastError }).from(jobRuns).where(eq(jobRuns.name, CT_POLL_JOB)).get(),
  ]);

  // A certificate seen in several logs is one violation (its newest occurrence).
  const seen = new Set<number>();
  const caa_violations: CaaViolationFact[] = [];
  for (const o of occurrences) {
    if (seen.has(o.matchId)) continue;
    seen.add(o.matchId);
    caa_violations.push({
      names: o.names,
      sha256: o.sha256,
      issuer: o.issuer ?? "unknown issuer",
      log_name: o.logName,
      observed_at: o.observedAt,
      caa_records: jsonArray(o.records),
    });
  }

  // Freshness is the poll job's (a service-wide table), shared by every filter: one item stands for the module.
  const lastPoll = job && job.status !== "error" ? job.startedAt : null;
  const enabled = filters.filter((f) => f.enabled);
  const poll = {
    asset: job?.status === "error" ? `CT log polling (last run failed: ${job.error ?? "error"})` : "CT log polling",
    enabled: true,
    createdAt: enabled.reduce((oldest, f) => (f.createdAt < oldest ? f.createdAt : oldest), iso(now)),
    lastCollectedAt: lastPoll,
  };
  const coverage = { ...coverageOf("ct-log", scope, enabled.length ? [poll] : []), enabled_assets: enabled.length };

  let assets: MonitoredAsset[] = [];
  if (scope.withAssets && filters.length > 0) {
    const recent = iso(new Date(now.getTime() - MATCH_WINDOW_MS));
    const perFilter = await t.db
      .select({ filterId: ctMatchFilters.filterId, matches: count(), lastMatch: max(ctMatches.lastMatchedAt) })
      .from(ctMatchFilters)
      .innerJoin(ctMatches, eq(ctMatches.id, ctMatchFilters.matchId))
      .where(t.where(ctMatches, gte(ctMatches.lastMatchedAt, recent)))
      .groupBy(ctMatchFilters.filterId)
      .all();
    const stats = new Map(perFilter.map((s) => [s.filterId, s]));
    const violationsByName = new Set(caa_violations.flatMap((v) => v.names));
    assets = filters.map((f): MonitoredAsset => {
      const s = stats.get(f.id);
      const base = { module: "ct-log" as const, asset: `${f.pattern} (${f.matchType})`, last_collected_at: f.enabled ? lastPoll : null };
      const detail = `${s?.matches ?? 0} matching certificate(s) in 30 days${s?.lastMatch ? `, last ${s.lastMatch.slice(0, 10)}` : ""}`;
      if (!f.enabled) return { ...base, status: "paused", state: "Paused", detail };
      const violated = [...violationsByName].some((n) => n === f.pattern.replace(/^\*?\./, "") || n.endsWith("." + f.pattern.replace(/^\*?\./, "")));
      if (violated) return { ...base, status: "attention", state: "CAA violation", detail };
      return { ...base, status: "ok", state: "Watching", detail };
    });
  }
  return { facts: { caa_violations }, coverage, assets };
}
