/**
 * CT log module rules (docs/decisions.md#ct-filters-and-matches):
 * filters (canonical patterns, uniqueness among live filters, quota, soft delete,
 * typosquatting eligibility), the 30-day match window, feed proposals (an accepted
 * certificate proposal becomes a certificate monitor), and each log's ingestion state.
 *
 * Every query of an organization's data goes through its Tenant handle. Every filter
 * change bumps ct_filter_generation, so every CtLogCursor rebuilds its index before
 * its next batch: a disabled or deleted filter stops matching at once.
 */
import { asc, count, desc, eq, gt, gte, isNull, sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { inJsonArray } from "../../db/in-json";
import {
  certMonitors,
  ctFilters,
  ctLogStates,
  ctMatchFilters,
  ctMatchOccurrences,
  ctMatches,
  ctProposals,
  ctPublicationClock,
  ctTyposquatMatches,
  ctTyposquatOccurrences,
} from "../../db/schema";
import type { Config } from "../../env";
import { ApiError, badRequest, forbidden, notFound } from "../../platform/errors";
import { direction, pageOffset, readPage } from "../../platform/paging";
import { registerUsageCounter } from "../../platform/quotas";
import { tenantDb, type Tenant } from "../../platform/tenant";
import { createMonitor } from "../cert-watcher/contract";
import { watchProposedName } from "../dns-watcher/contract";
import { bumpFilterGeneration } from "./filter-source";
import { parseFilterPattern } from "./filters/pattern";
import { logCollection, logRecord } from "./collection";
import { currentLogList } from "./loglist-service";
import { monitoredLogs } from "./loglist";
import { AUTHORIZATION_SEVERITY, AUTHORIZATION_VERDICTS, worstAuthorization, type Authorization, type AuthorizationVerdict, type AuthorizedIssuer } from "./authorization";
import { withKeyHashes } from "./events";
import type { Evidence } from "./typosquat/detect";
import { typosquatEligibility } from "./typosquat/eligibility";
import type { FILTER_SORTS, MATCH_SORTS, TYPOSQUAT_FILTER_SORTS, TYPOSQUAT_MATCH_SORTS } from "./schema";

/** Matches are kept and listed for 30 days (docs/decisions.md#ct-filters-and-matches). */
export const MATCH_WINDOW_MS = 30 * 24 * 3600_000;

/** Filters that are not deleted: they are listed, unique and counted toward the quota (docs/decisions.md#uniqueness). */
const notDeleted = isNull(ctFilters.deletedAt);
const liveUsage = (t: Tenant) => t.usage(ctFilters, notDeleted);
registerUsageCounter("ct_filters", (db, organizationId) => tenantDb(db, organizationId).count(ctFilters, notDeleted));

type FilterRecord = typeof ctFilters.$inferSelect;

export function filterView(f: FilterRecord) {
  const t = typosquatEligibility(f.pattern);
  return {
    id: f.id,
    pattern: f.pattern,
    match_type: f.matchType,
    enabled: f.enabled,
    description: f.description,
    feed_dns_enabled: f.feedDnsEnabled,
    feed_certs_enabled: f.feedCertsEnabled,
    typosquat_enabled: f.typosquatEnabled,
    typosquat_eligible: t.eligible,
    typosquat_ineligible_reason: t.reason,
    authorized_issuers: f.authorizedIssuers ?? null,
    created_at: f.createdAt,
    updated_at: f.updatedAt,
  };
}

function canonicalPattern(input: string): string {
  const parsed = parseFilterPattern(input);
  if (!parsed.ok) throw badRequest("Invalid filter pattern", [{ path: "pattern", message: parsed.error }]);
  return parsed.value.pattern;
}

function assertTyposquatAllowed(pattern: string, typosquatEnabled: boolean): void {
  if (!typosquatEnabled) return;
  const t = typosquatEligibility(pattern);
  if (!t.eligible) throw new ApiError("typosquat_ineligible", `Typosquatting detection cannot be enabled for '${pattern}': ${t.reason}`, [{ path: "typosquat_enabled", message: t.reason }]);
}

const duplicate = (pattern: string, matchType: string) => `A filter for '${pattern}' (${matchType}) already exists`;

const FILTER_SORT_COLUMNS = {
  pattern: ctFilters.pattern,
  match_type: ctFilters.matchType,
  enabled: ctFilters.enabled,
  description: ctFilters.description,
  created_at: ctFilters.createdAt,
  updated_at: ctFilters.updatedAt,
  typosquat_enabled: ctFilters.typosquatEnabled,
} as const;

interface PageQuery<S extends string> {
  page: number;
  page_size: number;
  sort_by: S;
  sort_order: "asc" | "desc";
}

const pageOf = <S extends string>(q: PageQuery<S>) => ({ page: q.page, page_size: q.page_size, sort_by: q.sort_by, sort_order: q.sort_order });

export async function listFilters(t: Tenant, q: PageQuery<(typeof FILTER_SORTS)[number]>) {
  const dir = direction(q.sort_order);
  const { rows, total } = await readPage(
    t.select(ctFilters, notDeleted).orderBy(dir(FILTER_SORT_COLUMNS[q.sort_by]), dir(ctFilters.id)).limit(q.page_size).offset(pageOffset(q)),
    t.countQuery(ctFilters, notDeleted),
  );
  return { filters: rows.map(filterView), total, ...pageOf(q) };
}

async function liveFilter(t: Tenant, filterId: number): Promise<FilterRecord> {
  const f = await t.first(ctFilters, eq(ctFilters.id, filterId), notDeleted);
  if (!f) throw notFound("Filter");
  return f;
}

export async function getFilter(t: Tenant, filterId: number) {
  return filterView(await liveFilter(t, filterId));
}

export interface FilterInput {
  pattern: string;
  match_type: "wide" | "exact";
  enabled: boolean;
  description: string;
  feed_dns_enabled: boolean;
  feed_certs_enabled: boolean;
  typosquat_enabled: boolean;
  /** Issuers authorized for this filter's names; null (or empty): the organization's issuance policy. */
  authorized_issuers: AuthorizedIssuer[] | null;
}

/** A filter's own authorized issuers as stored: an empty list declares nothing (the policy applies). */
const storedIssuers = (issuers: AuthorizedIssuer[] | null | undefined) => (issuers && issuers.length ? issuers : null);

/** Unique (pattern, match_type) among filters that are not deleted (409); the tier's quota counts those only (403). */
export async function createFilter(t: Tenant, input: FilterInput, now: Date) {
  const pattern = canonicalPattern(input.pattern);
  assertTyposquatAllowed(pattern, input.typosquat_enabled);
  const at = now.toISOString();
  const { row, quotaRemaining } = await t.create(
    ctFilters,
    {
      pattern,
      matchType: input.match_type,
      enabled: input.enabled,
      description: input.description,
      feedDnsEnabled: input.feed_dns_enabled,
      feedCertsEnabled: input.feed_certs_enabled,
      typosquatEnabled: input.typosquat_enabled,
      authorizedIssuers: storedIssuers(input.authorized_issuers),
      createdAt: at,
      updatedAt: at,
    },
    { quota: "ct_filters", usage: liveUsage(t), duplicate: duplicate(pattern, input.match_type) },
  );
  // Cursors pick the new filter up before their next batch (and within a minute regardless).
  await bumpFilterGeneration(t.db).run();
  return { id: row.id, message: "Filter created", quota_remaining: quotaRemaining ?? 0 };
}

export async function updateFilter(t: Tenant, filterId: number, input: Partial<FilterInput>, now: Date) {
  const f = await liveFilter(t, filterId);
  const pattern = input.pattern !== undefined ? canonicalPattern(input.pattern) : f.pattern;
  const matchType = input.match_type ?? f.matchType;
  const typosquat = input.typosquat_enabled ?? f.typosquatEnabled;
  assertTyposquatAllowed(pattern, typosquat);
  const change = t.update(
    ctFilters,
    {
      pattern,
      matchType,
      enabled: input.enabled ?? f.enabled,
      description: input.description ?? f.description,
      feedDnsEnabled: input.feed_dns_enabled ?? f.feedDnsEnabled,
      feedCertsEnabled: input.feed_certs_enabled ?? f.feedCertsEnabled,
      typosquatEnabled: typosquat,
      authorizedIssuers: input.authorized_issuers !== undefined ? storedIssuers(input.authorized_issuers) : f.authorizedIssuers,
      updatedAt: now.toISOString(),
    },
    eq(ctFilters.id, f.id),
  );
  await t.run(() => t.db.batch([change, bumpFilterGeneration(t.db)]), { duplicate: duplicate(pattern, matchType) });
  return { message: "Filter updated" };
}

export async function deleteFilter(t: Tenant, filterId: number, now: Date) {
  const f = await liveFilter(t, filterId);
  const at = now.toISOString();
  await t.db.batch([t.update(ctFilters, { deletedAt: at, updatedAt: at }, eq(ctFilters.id, f.id)), bumpFilterGeneration(t.db)]);
  return { message: "Filter deleted" };
}

export async function listTyposquatFilters(t: Tenant, q: PageQuery<(typeof TYPOSQUAT_FILTER_SORTS)[number]>) {
  const dir = direction(q.sort_order);
  const enabled = eq(ctFilters.enabled, true);
  const { rows, total } = await readPage(
    t.select(ctFilters, notDeleted, enabled).orderBy(dir(FILTER_SORT_COLUMNS[q.sort_by]), dir(ctFilters.id)).limit(q.page_size).offset(pageOffset(q)),
    t.countQuery(ctFilters, notDeleted, enabled),
  );
  return {
    filters: rows.map((f) => {
      const v = filterView(f);
      return {
        id: v.id,
        pattern: v.pattern,
        match_type: v.match_type,
        typosquat_enabled: v.typosquat_enabled,
        typosquat_eligible: v.typosquat_eligible,
        typosquat_ineligible_reason: v.typosquat_ineligible_reason,
      };
    }),
    total,
    ...pageOf(q),
  };
}

// ---- matches ------------------------------------------------------------------

const windowStart = (now: Date) => new Date(now.getTime() - MATCH_WINDOW_MS).toISOString();
// Spelled out: drizzle renders a column of the single selected table unqualified, which inside this subquery would mean o.id.
const logCountOf = sql<number>`(SELECT count(DISTINCT o.log_id) FROM ct_match_occurrences o WHERE o.match_id = "ct_matches"."id")`;

const occurrenceView = (o: typeof ctMatchOccurrences.$inferSelect | typeof ctTyposquatOccurrences.$inferSelect) => ({
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

// ---- typosquatting matches ------------------------------------------------------------

// Spelled out, as logCountOf: the subquery must name the outer table.
const typosquatLogCountOf = sql<number>`(SELECT count(DISTINCT o.log_id) FROM ct_typosquat_occurrences o WHERE o.match_id = "ct_typosquat_matches"."id")`;

type TyposquatRecord = typeof ctTyposquatMatches.$inferSelect;

function typosquatRow(m: TyposquatRecord, filterPattern: string, logCount: number) {
  return {
    id: m.id,
    sha256: m.sha256,
    filter_id: m.filterId,
    filter_pattern: filterPattern,
    candidate_domain: m.candidateDomain,
    certificate_name: m.certificateName,
    evidence: m.evidence as Evidence[],
    edit_distance: m.editDistance,
    confidence: m.confidence,
    log_count: Number(logCount),
    detected_at: m.detectedAt,
    last_seen_at: m.lastSeenAt,
  };
}

export async function listTyposquatMatches(t: Tenant, q: PageQuery<(typeof TYPOSQUAT_MATCH_SORTS)[number]>, now: Date) {
  const dir = direction(q.sort_order);
  const where = t.where(ctTyposquatMatches, gte(ctTyposquatMatches.lastSeenAt, windowStart(now)));
  const sortColumn: Record<(typeof TYPOSQUAT_MATCH_SORTS)[number], SQL | AnySQLiteColumn> = {
    candidate_domain: ctTyposquatMatches.candidateDomain,
    filter_pattern: ctFilters.pattern,
    evidence: ctTyposquatMatches.evidenceKey,
    log_count: typosquatLogCountOf,
    detected_at: ctTyposquatMatches.detectedAt,
  };
  const { rows, total } = await readPage(
    t.db
      .select({ m: ctTyposquatMatches, pattern: ctFilters.pattern, logCount: typosquatLogCountOf })
      .from(ctTyposquatMatches)
      .innerJoin(ctFilters, eq(ctFilters.id, ctTyposquatMatches.filterId))
      .where(where)
      .orderBy(dir(sortColumn[q.sort_by]), dir(ctTyposquatMatches.id))
      .limit(q.page_size)
      .offset(pageOffset(q)),
    t.db.select({ n: count() }).from(ctTyposquatMatches).where(where),
  );
  return {
    matches: rows.map((r) => ({
      ...typosquatRow(r.m, r.pattern, r.logCount),
      subject: r.m.cert.subject,
      issuer: r.m.cert.issuer,
      not_before: r.m.cert.not_before,
      not_after: r.m.cert.not_after,
    })),
    total,
    ...pageOf(q),
  };
}

/**
 * One typosquatting match: the organization's row for (filter, candidate domain) whose certificate
 * has this fingerprint (its first entry's, or any occurrence's: precertificate or final certificate).
 */
export async function typosquatMatchDetail(t: Tenant, sha256: string, filterId: number, candidateDomain: string, now: Date) {
  const fp = sha256.toLowerCase();
  const domain = candidateDomain.trim().toLowerCase().replace(/\.$/, "");
  const bySha = sql`(${ctTyposquatMatches.sha256} = ${fp} OR ${ctTyposquatMatches.id} IN (SELECT match_id FROM ct_typosquat_occurrences WHERE organization_id = ${t.organizationId} AND sha256 = ${fp}))`;
  const found = await t.db
    .select({ m: ctTyposquatMatches, pattern: ctFilters.pattern, logCount: typosquatLogCountOf })
    .from(ctTyposquatMatches)
    .innerJoin(ctFilters, eq(ctFilters.id, ctTyposquatMatches.filterId))
    .where(
      t.where(
        ctTyposquatMatches,
        eq(ctTyposquatMatches.filterId, filterId),
        eq(ctTyposquatMatches.candidateDomain, domain),
        gte(ctTyposquatMatches.lastSeenAt, windowStart(now)),
        bySha,
      ),
    )
    .orderBy(asc(ctTyposquatMatches.id))
    .get();
  if (!found) throw notFound("Typosquatting match");
  const occurrences = await t
    .select(ctTyposquatOccurrences, eq(ctTyposquatOccurrences.matchId, found.m.id))
    .orderBy(asc(ctTyposquatOccurrences.observedAt), asc(ctTyposquatOccurrences.id))
    .all();
  return { ...typosquatRow(found.m, found.pattern, found.logCount), cert: withKeyHashes(found.m.cert), occurrences: occurrences.map(occurrenceView) };
}

// ---- proposals ----------------------------------------------------------------------

export async function listProposals(t: Tenant, q: { page: number; page_size: number; status?: "proposed" | "accepted" | "dismissed"; kind?: "dns" | "certs" }) {
  const conds = [q.status ? eq(ctProposals.status, q.status) : undefined, q.kind ? eq(ctProposals.kind, q.kind) : undefined];
  const { rows, total } = await readPage(
    t
      .select(ctProposals, ...conds)
      .orderBy(desc(ctProposals.createdAt), desc(ctProposals.id))
      .limit(q.page_size)
      .offset(pageOffset(q)),
    t.countQuery(ctProposals, ...conds),
  );
  return {
    proposals: rows.map((p) => ({
      id: p.id,
      kind: p.kind,
      hostname: p.hostname,
      filter_id: p.filterId,
      source_sha256: p.sourceSha256,
      status: p.status,
      cert_monitor_id: p.certMonitorId,
      created_at: p.createdAt,
      decided_at: p.decidedAt,
    })),
    total,
    page: q.page,
    page_size: q.page_size,
  };
}

/** What the caller may do beyond accepting a proposal (ct-log:update_monitoring). */
export interface ProposalGrants {
  /** dns-watcher:create_monitoring: a `dns` proposal may create a watched DNS domain. */
  createDnsDomains: boolean;
}

/**
 * Accepting a `certs` proposal creates a certificate monitor for the hostname on port
 * 443 (within the tier's cert_monitors quota: 403 otherwise, and the proposal stays
 * proposed); a monitor that already exists for it is linked instead. A `dns` proposal
 * becomes a watched record set (or domain) of the DNS watcher (quota `dns_domains`);
 * it needs dns-watcher:create_monitoring (403 otherwise, nothing changed).
 * `createdDnsDomainId`: the DNS domain this call created (its creation is audited as
 * such by the route), null when none was.
 */
export async function acceptProposal(t: Tenant, proposalId: number, now: Date, grants: ProposalGrants) {
  const p = await t.getOr404(ctProposals, proposalId, "Proposal");
  if (p.kind === "dns") {
    if (!grants.createDnsDomains) throw forbidden("Accepting a dns proposal creates DNS watcher domains: it requires dns-watcher:create_monitoring");
    // It may be over quota (403): the proposal then stays proposed.
    const watched = await watchProposedName(t, p.hostname, now);
    await t.update(ctProposals, { status: "accepted", decidedAt: now.toISOString() }, eq(ctProposals.id, p.id)).run();
    return {
      body: { message: `Proposal accepted: ${watched.message}`, dns_domain_id: watched.domain_id },
      createdDnsDomainId: watched.created ? watched.domain_id : null,
    };
  }
  const monitorId = p.certMonitorId ?? (await monitorFor(t, p, now));
  await t.update(ctProposals, { status: "accepted", decidedAt: now.toISOString(), certMonitorId: monitorId }, eq(ctProposals.id, p.id)).run();
  return {
    body: { message: `Proposal accepted: certificate monitor ${monitorId} watches ${p.hostname}:443`, cert_monitor_id: monitorId },
    createdDnsDomainId: null,
  };
}

/** The organization's certificate monitor of the proposal's hostname on 443: the existing one, or a new one (quota: 403). */
async function monitorFor(t: Tenant, p: typeof ctProposals.$inferSelect, now: Date): Promise<number> {
  const existing = async () => (await t.first(certMonitors, eq(certMonitors.cn, p.hostname), eq(certMonitors.port, 443), eq(certMonitors.targetDns, "")))?.id;
  const found = await existing();
  if (found !== undefined) return found;
  try {
    const created = await createMonitor(
      t,
      { cn: p.hostname, port: 443, enabled: true, notes: `Proposed by CT filter ${p.filterId} (certificate ${p.sourceSha256})`, starttls: "auto", ip_addresses: [] },
      now,
    );
    return created.id;
  } catch (err) {
    // Created meanwhile by someone else: link that one.
    if (!(err instanceof ApiError && err.code === "conflict")) throw err;
    const meanwhile = await existing();
    if (meanwhile === undefined) throw err;
    return meanwhile;
  }
}

export async function dismissProposal(t: Tenant, proposalId: number, now: Date) {
  const p = await t.getOr404(ctProposals, proposalId, "Proposal");
  await t.update(ctProposals, { status: "dismissed", decidedAt: now.toISOString() }, eq(ctProposals.id, p.id)).run();
  return { message: "Proposal dismissed" };
}

// ---- the logs and their ingestion state -------------------------------------------------

type IngestionState = "not_started" | "up_to_date" | "catching_up" | "backing_off";

/**
 * Every monitored log of the log list in use, with the state its cursor last recorded
 * (ct_log_states, written at every verified batch) and its collection state, and the log
 * list itself as a source (fetched or bundled, and why). Lag in seconds: between the
 * newest tree head and the last verified entry, as the log timestamped them (0 when
 * caught up). As the organization sees it: `relied_upon` when it has an enabled filter.
 */
export async function listLogs(t: Tenant, config: Pick<Config, "ctLogListUrl" | "ctLogListPublicKey">, now: Date) {
  const cached = await currentLogList(t.db, config, now);
  const logs = monitoredLogs(cached.list);
  const [stateRows, filters] = await Promise.all([t.db.select().from(ctLogStates).all(), t.count(ctFilters, eq(ctFilters.enabled, true), isNull(ctFilters.deletedAt))]);
  const states = new Map(stateRows.map((s) => [s.logId, s]));
  const rows = logs.map((log) => {
    const s = states.get(log.logId);
    const lagEntries = s?.treeSize != null && s.verifiedPosition != null ? Math.max(0, s.treeSize - s.verifiedPosition) : null;
    const lagSeconds =
      lagEntries === null ? null : lagEntries === 0 || !s?.treeHeadAt || !s.lastEntryAt ? 0 : Math.max(0, Math.round((Date.parse(s.treeHeadAt) - Date.parse(s.lastEntryAt)) / 1000));
    const backingOff = s?.backoffUntil != null && Date.parse(s.backoffUntil) > now.getTime();
    const collection = logCollection(logRecord(s, log), now);
    return {
      log_id: log.logId,
      description: log.description,
      operator: log.operator,
      protocol: log.protocol,
      url: log.readUrl,
      state: log.state?.name ?? "unknown",
      ingestion: (!s || s.verifiedPosition === null ? "not_started" : backingOff ? "backing_off" : lagEntries ? "catching_up" : "up_to_date") as IngestionState,
      tree_size: s?.treeSize ?? null,
      verified_position: s?.verifiedPosition ?? null,
      lag_entries: lagEntries,
      lag_seconds: lagSeconds,
      tree_head_at: s?.treeHeadAt ?? null,
      verified_tree_head_at: s?.verifiedTreeHeadAt ?? null,
      last_entry_at: s?.lastEntryAt ?? null,
      last_run_at: s?.lastRunAt ?? null,
      last_error: collection.error?.message ?? null,
      consecutive_failures: s?.consecutiveFailures ?? 0,
      next_retry_at: backingOff ? s!.backoffUntil : null,
      entries_processed: s?.entriesProcessed ?? 0,
      matches_found: s?.matchesFound ?? 0,
      collection,
    };
  });
  const count = (state: string) => rows.filter((r) => r.collection.state === state).length;
  return {
    log_list: {
      source: cached.source === "remote" ? ("fetched" as const) : ("bundled" as const),
      url: cached.url,
      fetched_at: cached.fetchedAt,
      version: cached.list.version,
      log_list_timestamp: cached.list.logListTimestamp,
      error: cached.remoteError && cached.remoteErrorClass ? { class: cached.remoteErrorClass, message: cached.remoteError } : null,
    },
    summary: {
      monitored: rows.length,
      ok: count("ok"),
      failing: count("failing"),
      pending: count("pending"),
      relied_upon: filters > 0,
      last_success_at: rows.map((r) => r.collection.last_success_at).reduce<string | null>((m, x) => (x !== null && (m === null || x > m) ? x : m), null),
    },
    logs: rows,
  };
}
