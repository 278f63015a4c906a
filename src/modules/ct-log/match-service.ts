/**
 * CT matches (docs/decisions.md#ct-filters-and-matches): the certificates that matched a
 * filter in the 30-day window, one match's detail, the poll for new ones, and the
 * pruning of matches (and typosquatting matches) that left the window.
 */
import { asc, count, desc, eq, gt, gte, sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { inJsonArray } from "../../db/in-json";
import { ctFilters, ctMatchFilters, ctMatchOccurrences, ctMatches, ctPublicationClock, ctTyposquatMatches, ctTyposquatOccurrences } from "../../db/schema";
import { notFound } from "../../platform/errors";
import { direction, pageOffset, readPage } from "../../platform/paging";
import type { Tenant } from "../../platform/tenant";
import { AUTHORIZATION_SEVERITY, AUTHORIZATION_VERDICTS, worstAuthorization, type Authorization, type AuthorizationVerdict } from "./authorization";
import { withKeyHashes } from "./events";
import type { MATCH_SORTS } from "./schema";
import { pageOf, type PageQuery } from "./listing";

/** Matches are kept and listed for 30 days (docs/decisions.md#ct-filters-and-matches). */
export const MATCH_WINDOW_MS = 30 * 24 * 3600_000;

export const windowStart = (now: Date) => new Date(now.getTime() - MATCH_WINDOW_MS).toISOString();
// Spelled out: drizzle renders a column of the single selected table unqualified, which inside this subquery would mean o.id.
const logCountOf = sql<number>`(SELECT count(DISTINCT o.log_id) FROM ct_match_occurrences o WHERE o.match_id = "ct_matches"."id")`;

export const occurrenceView = (o: typeof ctMatchOccurrences.$inferSelect | typeof ctTyposquatOccurrences.$inferSelect) => ({
  log_name: o.logName,
  log_id: o.logId,
  log_index: o.logIndex,
  sha256: o.sha256,
  is_precert: o.isPrecert,
  observed_at: o.observedAt,
});

export async function listMatches(t: Tenant, q: PageQuery<(typeof MATCH_SORTS)[number]>, now: Date) {
  const dir = direction(q.sort_order);
  const where = t.where(ctMatches, gte(ctMatches.lastMatchedAt, windowStart(now)));
  const sortColumn: Record<(typeof MATCH_SORTS)[number], SQL | AnySQLiteColumn> = {
    certificate_domain: ctMatches.certificateDomain,
    log_count: logCountOf,
    matched_at: ctMatches.firstMatchedAt,
  };
  const { rows, total } = await readPage(
    t.db
      .select({ m: ctMatches, logCount: logCountOf })
      .from(ctMatches)
      .where(where)
      .orderBy(dir(sortColumn[q.sort_by]), dir(ctMatches.id))
      .limit(q.page_size)
      .offset(pageOffset(q)),
    t.db.select({ n: count() }).from(ctMatches).where(where),
  );
  const ids = rows.map((r) => r.m.id);
  const [occurrences, filters] = ids.length
    ? await Promise.all([
        t.db
          .select({ matchId: ctMatchOccurrences.matchId, isPrecert: ctMatchOccurrences.isPrecert, cert: ctMatchOccurrences.cert, caa: ctMatchOccurrences.caa })
          .from(ctMatchOccurrences)
          .where(t.where(ctMatchOccurrences, inJsonArray(ctMatchOccurrences.matchId, ids)))
          .orderBy(asc(ctMatchOccurrences.observedAt), asc(ctMatchOccurrences.id))
          .all(),
        // The (match, filter) pairs through their match: the organization's own.
        t.db
          .select({ matchId: ctMatchFilters.matchId, filterId: ctMatchFilters.filterId, pattern: ctFilters.pattern, authorization: ctMatchFilters.authorization })
          .from(ctMatchFilters)
          .innerJoin(ctMatches, eq(ctMatches.id, ctMatchFilters.matchId))
          .innerJoin(ctFilters, eq(ctFilters.id, ctMatchFilters.filterId))
          .where(t.where(ctMatches, inJsonArray(ctMatchFilters.matchId, ids)))
          .orderBy(asc(ctMatchFilters.filterId))
          .all(),
      ])
    : [[], []];
  return {
    matches: rows.map(({ m, logCount }) => {
      const occ = occurrences.filter((o) => o.matchId === m.id);
      const first = occ[0];
      const own = filters.filter((f) => f.matchId === m.id);
      return {
        id: m.id,
        sha256: m.sha256,
        certificate_domain: m.certificateDomain,
        matched_names: m.matchedNames,
        filter_ids: own.map((f) => f.filterId),
        filters: own.map((f) => ({ id: f.filterId, pattern: f.pattern })),
        authorization: judgedOrPending(own.map((f) => f.authorization)),
        subject: first?.cert.subject ?? "",
        issuer: first?.cert.issuer ?? "",
        not_before: first?.cert.not_before ?? "",
        not_after: first?.cert.not_after ?? "",
        is_precert: Boolean(first?.isPrecert),
        has_precert: occ.some((o) => o.isPrecert),
        has_final: occ.some((o) => !o.isPrecert),
        log_count: Number(logCount),
        caa_violation: occ.some((o) => o.caa.has_records && !o.caa.authorized),
        matched_at: m.firstMatchedAt,
        last_seen_at: m.lastMatchedAt,
      };
    }),
    total,
    ...pageOf(q),
  };
}

export async function matchDetail(t: Tenant, sha256: string, logName: string | undefined, now: Date) {
  const fp = sha256.toLowerCase();
  const byLog = logName !== undefined ? eq(ctMatchOccurrences.logName, logName) : undefined;
  const chosen = await t
    .select(ctMatchOccurrences, eq(ctMatchOccurrences.sha256, fp), byLog)
    .orderBy(asc(ctMatchOccurrences.observedAt), asc(ctMatchOccurrences.id))
    .get();
  if (!chosen) throw notFound("Match");
  const m = await t.first(ctMatches, eq(ctMatches.id, chosen.matchId), gte(ctMatches.lastMatchedAt, windowStart(now)));
  if (!m) throw notFound("Match");
  const [occurrences, allLogs, filters] = await Promise.all([
    t.select(ctMatchOccurrences, eq(ctMatchOccurrences.matchId, m.id), byLog).orderBy(asc(ctMatchOccurrences.observedAt), asc(ctMatchOccurrences.id)).all(),
    t.db.select({ n: sql<number>`count(DISTINCT ${ctMatchOccurrences.logId})` }).from(ctMatchOccurrences).where(t.where(ctMatchOccurrences, eq(ctMatchOccurrences.matchId, m.id))).get(),
    t.db
      .select({ filterId: ctMatchFilters.filterId, names: ctMatchFilters.matchedNames, pattern: ctFilters.pattern, matchType: ctFilters.matchType, authorization: ctMatchFilters.authorization })
      .from(ctMatchFilters)
      .innerJoin(ctFilters, eq(ctFilters.id, ctMatchFilters.filterId))
      .where(t.where(ctFilters, eq(ctMatchFilters.matchId, m.id)))
      .orderBy(asc(ctMatchFilters.filterId))
      .all(),
  ]);
  return {
    id: m.id,
    sha256: fp,
    certificate_domain: m.certificateDomain,
    matched_names: m.matchedNames,
    filters: filters.map((f) => ({ filter_id: f.filterId, pattern: f.pattern, match_type: f.matchType, matched_names: f.names, authorization: f.authorization ?? null })),
    authorization: judgedOrPending(filters.map((f) => f.authorization)),
    cert: withKeyHashes(chosen.cert),
    caa: chosen.caa,
    log_count: Number(allLogs?.n ?? 0),
    occurrences: occurrences.map(occurrenceView),
    matched_at: m.firstMatchedAt,
    last_seen_at: m.lastMatchedAt,
  };
}

/** The worst verdict of a match's filters; null while one of them is not judged yet (its event is pending). */
function judgedOrPending(verdicts: readonly (Authorization | null)[]): Authorization | null {
  if (!verdicts.length || verdicts.some((v) => v === null)) return null;
  return worstAuthorization(verdicts as Authorization[]);
}

/** The visibility clock before any publication: every match ever published is later. */
const CLOCK_ORIGIN = new Date(0).toISOString();

/**
 * Matches that became visible after `since` (strictly), and the watermark to poll from
 * next. `as_of` is the publication clock (store.ts) read in the same transaction as the
 * count: every match visible then has a time <= as_of, every later publication a time
 * > as_of. So `since = previous as_of` counts each match exactly once, however the
 * client's clock stands against the database's, and however long a certificate
 * waited in a log's backlog.
 */
export async function checkNewMatches(t: Tenant, since: string, now: Date) {
  const sinceIso = new Date(since).toISOString();
  const inWindow = gte(ctMatches.lastMatchedAt, windowStart(now));
  const [clock, fresh, latest] = await t.db.batch([
    t.db.select({ at: ctPublicationClock.at }).from(ctPublicationClock).where(eq(ctPublicationClock.id, 1)),
    t.db
      .select({ n: count(), ...verdictCounts })
      .from(ctMatches)
      .where(t.where(ctMatches, inWindow, gt(ctMatches.firstMatchedAt, sinceIso))),
    // The newest first, read down the (organization, first_matched_at) index to the first
    // one still in the window: a client polls this every few seconds, and max() over the
    // window read every match of the last 30 days (2,048: 2.6 ms instead of 0.05 ms in
    // SQLite). The unary + keeps SQLite from choosing the last_matched_at index instead.
    t.db
      .select({ at: ctMatches.firstMatchedAt })
      .from(ctMatches)
      .where(t.where(ctMatches, sql`+${ctMatches.lastMatchedAt} >= ${windowStart(now)}`))
      .orderBy(desc(ctMatches.firstMatchedAt))
      .limit(1),
  ]);
  const f = fresh[0];
  const n = f?.n ?? 0;
  const byVerdict = { unknown_key: f?.unknown_key ?? 0, unexpected_issuer: f?.unexpected_issuer ?? 0, caa_violation: f?.caa_violation ?? 0 };
  const unexpected = byVerdict.unknown_key + byVerdict.unexpected_issuer + byVerdict.caa_violation;
  const routine = f?.authorized ?? 0;
  return {
    has_new: n > 0,
    count: n,
    routine,
    unexpected,
    unexpected_by_verdict: byVerdict,
    not_judged: n - routine - unexpected,
    latest_timestamp: latest[0]?.at ?? null,
    as_of: clock[0]?.at ?? CLOCK_ORIGIN,
  };
}

/**
 * Per verdict, how many of the selected matches have it as their verdict: the worst over
 * their filters, as the match list shows it (judgedOrPending). A match with a filter not
 * judged yet (its event still pending) or with no filter left counts under none of them.
 * Correlated on the (match_id, filter_id) key: only the new matches are read.
 */
const matchFilterVerdicts = (what: SQL) => sql`(SELECT ${what} FROM ct_match_filters f WHERE f.match_id = "ct_matches"."id")`;
const worstSeverity = matchFilterVerdicts(
  sql.raw(`max(CASE json_extract(f."authorization", '$.verdict') ${Object.entries(AUTHORIZATION_SEVERITY).map(([v, n]) => `WHEN '${v}' THEN ${n}`).join(" ")} END)`),
);
const pendingFilters = matchFilterVerdicts(sql`count(*) - count(f."authorization")`);
// Aliased: D1 returns rows keyed by column name, and the four expressions differ only in a bound parameter.
const verdictCounts = Object.fromEntries(
  AUTHORIZATION_VERDICTS.map((v) => [v, sql<number>`coalesce(sum(${pendingFilters} = 0 AND ${worstSeverity} = ${AUTHORIZATION_SEVERITY[v]}), 0)`.mapWith(Number).as(`${v}_count`)]),
) as Record<AuthorizationVerdict, SQL.Aliased<number>>;

/** Deletes matches and typosquatting matches not seen for 30 days (with their occurrences and filter links); a system job over every organization. */
export async function pruneMatches(db: Db, now: Date): Promise<number> {
  const old = sql`(SELECT id FROM ct_matches WHERE last_matched_at < ${windowStart(now)})`;
  const oldTyposquat = sql`(SELECT id FROM ct_typosquat_matches WHERE last_seen_at < ${windowStart(now)})`;
  const [, , deleted, , deletedTyposquat] = await db.batch([
    db.delete(ctMatchOccurrences).where(sql`${ctMatchOccurrences.matchId} IN ${old}`),
    db.delete(ctMatchFilters).where(sql`${ctMatchFilters.matchId} IN ${old}`),
    db.delete(ctMatches).where(sql`${ctMatches.lastMatchedAt} < ${windowStart(now)}`),
    db.delete(ctTyposquatOccurrences).where(sql`${ctTyposquatOccurrences.matchId} IN ${oldTyposquat}`),
    db.delete(ctTyposquatMatches).where(sql`${ctTyposquatMatches.lastSeenAt} < ${windowStart(now)}`),
  ]);
  return deleted.meta.changes + deletedTyposquat.meta.changes;
}
