/**
 * CT log module rules (spec "CT filter", "CT certificate match", ADDENDUM 5, 11):
 * filters (canonical patterns, uniqueness among live filters, quota, soft
 * delete, typosquatting eligibility), the 30-day match window, feed proposals.
 *
 * Every filter change bumps ct_filter_generation in the same batch, so every
 * CtLogCursor rebuilds its index before its next batch: a disabled or deleted
 * filter stops matching at once.
 */
import { and, asc, count, desc, eq, gt, gte, inArray, isNull, max, sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { ctFilters, ctMatchFilters, ctMatchOccurrences, ctMatches, ctProposals, ctTyposquatMatches, ctTyposquatOccurrences, organizations } from "../../db/schema";
import { ApiError, badRequest, conflict, notFound } from "../../platform/errors";
import { assertQuota, registerUsageCounter, remaining, type Tier } from "../../platform/quotas";
import { bumpFilterGeneration } from "./filter-source";
import { parseFilterPattern } from "./filters/pattern";
import { typosquatEligibility } from "./typosquat/eligibility";
import type { FILTER_SORTS, MATCH_SORTS, TYPOSQUAT_FILTER_SORTS, TYPOSQUAT_MATCH_SORTS } from "./schema";

/** Matches are kept and listed for 30 days (spec "Limits"). */
export const MATCH_WINDOW_MS = 30 * 24 * 3600_000;

const live = (organizationId: number) => and(eq(ctFilters.organizationId, organizationId), isNull(ctFilters.deletedAt));

async function liveFilterCount(db: Db, organizationId: number): Promise<number> {
  return (await db.select({ n: count() }).from(ctFilters).where(live(organizationId)).get())?.n ?? 0;
}
// Soft-deleted filters do not count (ADDENDUM 11).
registerUsageCounter("ct_filters", liveFilterCount);

async function tierOf(db: Db, organizationId: number): Promise<Tier> {
  const org = await db.select({ tier: organizations.tier }).from(organizations).where(eq(organizations.id, organizationId)).get();
  return (org?.tier ?? "free") as Tier;
}

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
  if (!t.eligible) throw new ApiError(400, "typosquat_ineligible", `Typosquatting detection cannot be enabled for '${pattern}': ${t.reason}`, [{ path: "typosquat_enabled", message: t.reason }]);
}

async function assertUnique(db: Db, organizationId: number, pattern: string, matchType: "wide" | "exact", exceptId?: number) {
  const clash = await db
    .select({ id: ctFilters.id })
    .from(ctFilters)
    .where(and(live(organizationId), eq(ctFilters.pattern, pattern), eq(ctFilters.matchType, matchType)))
    .get();
  if (clash && clash.id !== exceptId) throw conflict(`A filter for '${pattern}' (${matchType}) already exists`, [{ path: "pattern", message: `filter ${clash.id} has the same pattern and match_type` }]);
}

/** The unique index is the last word (two concurrent creates): its violation is a 409 too. */
function rethrowUnique(err: unknown, pattern: string): never {
  if (String((err as Error)?.message ?? err).includes("UNIQUE")) throw conflict(`A filter for '${pattern}' already exists`);
  throw err;
}

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

export async function listFilters(db: Db, organizationId: number, q: PageQuery<(typeof FILTER_SORTS)[number]>) {
  const dir = q.sort_order === "asc" ? asc : desc;
  const [rows, total] = await Promise.all([
    db
      .select()
      .from(ctFilters)
      .where(live(organizationId))
      .orderBy(dir(FILTER_SORT_COLUMNS[q.sort_by]), dir(ctFilters.id))
      .limit(q.page_size)
      .offset((q.page - 1) * q.page_size)
      .all(),
    liveFilterCount(db, organizationId),
  ]);
  return { filters: rows.map(filterView), total, page: q.page, page_size: q.page_size, sort_by: q.sort_by, sort_order: q.sort_order };
}

async function liveFilter(db: Db, organizationId: number, filterId: number): Promise<FilterRecord> {
  const f = await db.select().from(ctFilters).where(and(live(organizationId), eq(ctFilters.id, filterId))).get();
  if (!f) throw notFound("Filter");
  return f;
}

export async function getFilter(db: Db, organizationId: number, filterId: number) {
  return filterView(await liveFilter(db, organizationId, filterId));
}

export interface FilterInput {
  pattern: string;
  match_type: "wide" | "exact";
  enabled: boolean;
  description: string;
  feed_dns_enabled: boolean;
  feed_certs_enabled: boolean;
  typosquat_enabled: boolean;
}

export async function createFilter(db: Db, organizationId: number, input: FilterInput, now: Date) {
  const pattern = canonicalPattern(input.pattern);
  assertTyposquatAllowed(pattern, input.typosquat_enabled);
  const tier = await tierOf(db, organizationId);
  const used = await liveFilterCount(db, organizationId);
  assertQuota(tier, "ct_filters", used);
  await assertUnique(db, organizationId, pattern, input.match_type);
  const at = now.toISOString();
  let id: number;
  try {
    const [inserted] = await db.batch([
      db
        .insert(ctFilters)
        .values({
          organizationId,
          pattern,
          matchType: input.match_type,
          enabled: input.enabled,
          description: input.description,
          feedDnsEnabled: input.feed_dns_enabled,
          feedCertsEnabled: input.feed_certs_enabled,
          typosquatEnabled: input.typosquat_enabled,
          createdAt: at,
          updatedAt: at,
        })
        .returning({ id: ctFilters.id }),
      bumpFilterGeneration(db),
    ]);
    id = inserted[0].id;
  } catch (err) {
    rethrowUnique(err, pattern);
  }
  return { id, message: "Filter created", quota_remaining: remaining(tier, "ct_filters", used + 1) };
}

export async function updateFilter(db: Db, organizationId: number, filterId: number, input: Partial<FilterInput>, now: Date) {
  const f = await liveFilter(db, organizationId, filterId);
  const pattern = input.pattern !== undefined ? canonicalPattern(input.pattern) : f.pattern;
  const matchType = input.match_type ?? f.matchType;
  const typosquat = input.typosquat_enabled ?? f.typosquatEnabled;
  assertTyposquatAllowed(pattern, typosquat);
  if (pattern !== f.pattern || matchType !== f.matchType) await assertUnique(db, organizationId, pattern, matchType, f.id);
  try {
    await db.batch([
      db
        .update(ctFilters)
        .set({
          pattern,
          matchType,
          enabled: input.enabled ?? f.enabled,
          description: input.description ?? f.description,
          feedDnsEnabled: input.feed_dns_enabled ?? f.feedDnsEnabled,
          feedCertsEnabled: input.feed_certs_enabled ?? f.feedCertsEnabled,
          typosquatEnabled: typosquat,
          updatedAt: now.toISOString(),
        })
        .where(eq(ctFilters.id, f.id)),
      bumpFilterGeneration(db),
    ]);
  } catch (err) {
    rethrowUnique(err, pattern);
  }
  return { message: "Filter updated" };
}

export async function deleteFilter(db: Db, organizationId: number, filterId: number, now: Date) {
  const f = await liveFilter(db, organizationId, filterId);
  const at = now.toISOString();
  await db.batch([db.update(ctFilters).set({ deletedAt: at, updatedAt: at }).where(eq(ctFilters.id, f.id)), bumpFilterGeneration(db)]);
  return { message: "Filter deleted" };
}

export async function listTyposquatFilters(db: Db, organizationId: number, q: PageQuery<(typeof TYPOSQUAT_FILTER_SORTS)[number]>) {
  const dir = q.sort_order === "asc" ? asc : desc;
  const where = and(live(organizationId), eq(ctFilters.enabled, true));
  const [rows, total] = await Promise.all([
    db
      .select()
      .from(ctFilters)
      .where(where)
      .orderBy(dir(FILTER_SORT_COLUMNS[q.sort_by]), dir(ctFilters.id))
      .limit(q.page_size)
      .offset((q.page - 1) * q.page_size)
      .all(),
    db.select({ n: count() }).from(ctFilters).where(where).get(),
  ]);
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
    total: total?.n ?? 0,
    page: q.page,
    page_size: q.page_size,
    sort_by: q.sort_by,
    sort_order: q.sort_order,
  };
}

// ---- matches ------------------------------------------------------------------

const windowStart = (now: Date) => new Date(now.getTime() - MATCH_WINDOW_MS).toISOString();
// Spelled out: drizzle renders a column of the single selected table unqualified, which inside this subquery would mean o.id.
const logCountOf = sql<number>`(SELECT count(DISTINCT o.log_id) FROM ct_match_occurrences o WHERE o.match_id = "ct_matches"."id")`;

export async function listMatches(db: Db, organizationId: number, q: PageQuery<(typeof MATCH_SORTS)[number]>, now: Date) {
  const dir = q.sort_order === "asc" ? asc : desc;
  const where = and(eq(ctMatches.organizationId, organizationId), gte(ctMatches.lastMatchedAt, windowStart(now)));
  const sortColumn: Record<(typeof MATCH_SORTS)[number], SQL | AnySQLiteColumn> = {
    certificate_domain: ctMatches.certificateDomain,
    log_count: logCountOf,
    matched_at: ctMatches.firstMatchedAt,
  };
  const [rows, total] = await Promise.all([
    db
      .select({ m: ctMatches, logCount: logCountOf })
      .from(ctMatches)
      .where(where)
      .orderBy(dir(sortColumn[q.sort_by]), dir(ctMatches.id))
      .limit(q.page_size)
      .offset((q.page - 1) * q.page_size)
      .all(),
    db.select({ n: count() }).from(ctMatches).where(where).get(),
  ]);
  const ids = rows.map((r) => r.m.id);
  const occurrences = ids.length
    ? await db
        .select({ matchId: ctMatchOccurrences.matchId, isPrecert: ctMatchOccurrences.isPrecert, observedAt: ctMatchOccurrences.observedAt, cert: ctMatchOccurrences.cert, caa: ctMatchOccurrences.caa })
        .from(ctMatchOccurrences)
        .where(inArray(ctMatchOccurrences.matchId, ids))
        .orderBy(asc(ctMatchOccurrences.observedAt), asc(ctMatchOccurrences.id))
        .all()
    : [];
  const filters = ids.length
    ? await db.select({ matchId: ctMatchFilters.matchId, filterId: ctMatchFilters.filterId }).from(ctMatchFilters).where(inArray(ctMatchFilters.matchId, ids)).all()
    : [];
  return {
    matches: rows.map(({ m, logCount }) => {
      const occ = occurrences.filter((o) => o.matchId === m.id);
      const first = occ[0];
      const cert = (first?.cert ?? {}) as Record<string, any>;
      return {
        id: m.id,
        sha256: m.sha256,
        certificate_domain: m.certificateDomain,
        matched_names: m.matchedNames,
        filter_ids: filters.filter((f) => f.matchId === m.id).map((f) => f.filterId).sort((a, b) => a - b),
        subject: String(cert.subject ?? ""),
        issuer: String(cert.issuer ?? ""),
        not_before: String(cert.not_before ?? ""),
        not_after: String(cert.not_after ?? ""),
        is_precert: Boolean(first?.isPrecert),
        has_precert: occ.some((o) => o.isPrecert),
        has_final: occ.some((o) => !o.isPrecert),
        log_count: Number(logCount),
        caa_violation: occ.some((o) => (o.caa as any)?.has_records === true && (o.caa as any)?.authorized === false),
        matched_at: m.firstMatchedAt,
        last_seen_at: m.lastMatchedAt,
      };
    }),
    total: total?.n ?? 0,
    page: q.page,
    page_size: q.page_size,
    sort_by: q.sort_by,
    sort_order: q.sort_order,
  };
}

export async function matchDetail(db: Db, organizationId: number, sha256: string, logName: string | undefined, now: Date) {
  const fp = sha256.toLowerCase();
  const conds = [eq(ctMatchOccurrences.organizationId, organizationId), eq(ctMatchOccurrences.sha256, fp)];
  if (logName !== undefined) conds.push(eq(ctMatchOccurrences.logName, logName));
  const chosen = await db
    .select()
    .from(ctMatchOccurrences)
    .where(and(...conds))
    .orderBy(asc(ctMatchOccurrences.observedAt), asc(ctMatchOccurrences.id))
    .get();
  if (!chosen) throw notFound("Match");
  const m = await db
    .select()
    .from(ctMatches)
    .where(and(eq(ctMatches.id, chosen.matchId), eq(ctMatches.organizationId, organizationId), gte(ctMatches.lastMatchedAt, windowStart(now))))
    .get();
  if (!m) throw notFound("Match");
  const occConds = [eq(ctMatchOccurrences.matchId, m.id)];
  if (logName !== undefined) occConds.push(eq(ctMatchOccurrences.logName, logName));
  const [occurrences, allLogs, filters] = await Promise.all([
    db.select().from(ctMatchOccurrences).where(and(...occConds)).orderBy(asc(ctMatchOccurrences.observedAt), asc(ctMatchOccurrences.id)).all(),
    db.select({ n: sql<number>`count(DISTINCT ${ctMatchOccurrences.logId})` }).from(ctMatchOccurrences).where(eq(ctMatchOccurrences.matchId, m.id)).get(),
    db
      .select({ filterId: ctMatchFilters.filterId, names: ctMatchFilters.matchedNames, pattern: ctFilters.pattern, matchType: ctFilters.matchType })
      .from(ctMatchFilters)
      .innerJoin(ctFilters, eq(ctFilters.id, ctMatchFilters.filterId))
      .where(eq(ctMatchFilters.matchId, m.id))
      .orderBy(asc(ctMatchFilters.filterId))
      .all(),
  ]);
  return {
    id: m.id,
    sha256: fp,
    certificate_domain: m.certificateDomain,
    matched_names: m.matchedNames,
    filters: filters.map((f) => ({ filter_id: f.filterId, pattern: f.pattern, match_type: f.matchType, matched_names: f.names })),
    cert: chosen.cert as any,
    caa: chosen.caa as any,
    log_count: Number(allLogs?.n ?? 0),
    occurrences: occurrences.map((o) => ({ log_name: o.logName, log_id: o.logId, log_index: o.logIndex, sha256: o.sha256, is_precert: o.isPrecert, observed_at: o.observedAt })),
    matched_at: m.firstMatchedAt,
    last_seen_at: m.lastMatchedAt,
  };
}

export async function checkNewMatches(db: Db, organizationId: number, since: string, now: Date) {
  const sinceIso = new Date(since).toISOString();
  const inWindow = and(eq(ctMatches.organizationId, organizationId), gte(ctMatches.lastMatchedAt, windowStart(now)));
  const [fresh, latest] = await Promise.all([
    db.select({ n: count() }).from(ctMatches).where(and(inWindow, gt(ctMatches.firstMatchedAt, sinceIso))).get(),
    db.select({ at: max(ctMatches.firstMatchedAt) }).from(ctMatches).where(inWindow).get(),
  ]);
  const n = fresh?.n ?? 0;
  return { has_new: n > 0, count: n, latest_timestamp: latest?.at ?? null };
}

/** Deletes matches and typosquatting matches not seen for 30 days (with their occurrences and filter links). */
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
  const cert = m.cert as Record<string, any>;
  return {
    id: m.id,
    sha256: m.sha256,
    filter_id: m.filterId,
    filter_pattern: filterPattern,
    candidate_domain: m.candidateDomain,
    certificate_name: m.certificateName,
    evidence: m.evidence,
    edit_distance: m.editDistance,
    subject: String(cert.subject ?? ""),
    issuer: String(cert.issuer ?? ""),
    not_before: String(cert.not_before ?? ""),
    not_after: String(cert.not_after ?? ""),
    log_count: Number(logCount),
    detected_at: m.detectedAt,
    last_seen_at: m.lastSeenAt,
  };
}

export async function listTyposquatMatches(db: Db, organizationId: number, q: PageQuery<(typeof TYPOSQUAT_MATCH_SORTS)[number]>, now: Date) {
  const dir = q.sort_order === "asc" ? asc : desc;
  const where = and(eq(ctTyposquatMatches.organizationId, organizationId), gte(ctTyposquatMatches.lastSeenAt, windowStart(now)));
  const sortColumn: Record<(typeof TYPOSQUAT_MATCH_SORTS)[number], SQL | AnySQLiteColumn> = {
    candidate_domain: ctTyposquatMatches.candidateDomain,
    filter_pattern: ctFilters.pattern,
    evidence: ctTyposquatMatches.evidenceKey,
    log_count: typosquatLogCountOf,
    detected_at: ctTyposquatMatches.detectedAt,
  };
  const [rows, total] = await Promise.all([
    db
      .select({ m: ctTyposquatMatches, pattern: ctFilters.pattern, logCount: typosquatLogCountOf })
      .from(ctTyposquatMatches)
      .innerJoin(ctFilters, eq(ctFilters.id, ctTyposquatMatches.filterId))
      .where(where)
      .orderBy(dir(sortColumn[q.sort_by]), dir(ctTyposquatMatches.id))
      .limit(q.page_size)
      .offset((q.page - 1) * q.page_size)
      .all(),
    db.select({ n: count() }).from(ctTyposquatMatches).where(where).get(),
  ]);
  return {
    matches: rows.map((r) => typosquatRow(r.m, r.pattern, r.logCount)),
    total: total?.n ?? 0,
    page: q.page,
    page_size: q.page_size,
    sort_by: q.sort_by,
    sort_order: q.sort_order,
  };
}

/**
 * One typosquatting match: the organization's row for (filter, candidate domain) whose certificate
 * has this fingerprint (its first entry's, or any occurrence's: precertificate or final certificate).
 */
export async function typosquatMatchDetail(db: Db, organizationId: number, sha256: string, filterId: number, candidateDomain: string, now: Date) {
  const fp = sha256.toLowerCase();
  const domain = candidateDomain.trim().toLowerCase().replace(/\.$/, "");
  const bySha = sql`(${ctTyposquatMatches.sha256} = ${fp} OR ${ctTyposquatMatches.id} IN (SELECT match_id FROM ct_typosquat_occurrences WHERE organization_id = ${organizationId} AND sha256 = ${fp}))`;
  const found = await db
    .select({ m: ctTyposquatMatches, pattern: ctFilters.pattern, logCount: typosquatLogCountOf })
    .from(ctTyposquatMatches)
    .innerJoin(ctFilters, eq(ctFilters.id, ctTyposquatMatches.filterId))
    .where(
      and(
        eq(ctTyposquatMatches.organizationId, organizationId),
        eq(ctTyposquatMatches.filterId, filterId),
        eq(ctTyposquatMatches.candidateDomain, domain),
        gte(ctTyposquatMatches.lastSeenAt, windowStart(now)),
        bySha,
      ),
    )
    .orderBy(asc(ctTyposquatMatches.id))
    .get();
  if (!found) throw notFound("Typosquatting match");
  const occurrences = await db
    .select()
    .from(ctTyposquatOccurrences)
    .where(eq(ctTyposquatOccurrences.matchId, found.m.id))
    .orderBy(asc(ctTyposquatOccurrences.observedAt), asc(ctTyposquatOccurrences.id))
    .all();
  const { subject: _s, issuer: _i, not_before: _nb, not_after: _na, ...row } = typosquatRow(found.m, found.pattern, found.logCount);
  return {
    ...row,
    cert: found.m.cert as any,
    occurrences: occurrences.map((o) => ({ log_name: o.logName, log_id: o.logId, log_index: o.logIndex, sha256: o.sha256, is_precert: o.isPrecert, observed_at: o.observedAt })),
  };
}

// ---- proposals ----------------------------------------------------------------------

export async function listProposals(
  db: Db,
  organizationId: number,
  q: { page: number; page_size: number; status?: "proposed" | "accepted" | "dismissed"; kind?: "dns" | "certs" },
) {
  const conds = [eq(ctProposals.organizationId, organizationId)];
  if (q.status) conds.push(eq(ctProposals.status, q.status));
  if (q.kind) conds.push(eq(ctProposals.kind, q.kind));
  const where = and(...conds);
  const [rows, total] = await Promise.all([
    db.select().from(ctProposals).where(where).orderBy(desc(ctProposals.createdAt), desc(ctProposals.id)).limit(q.page_size).offset((q.page - 1) * q.page_size).all(),
    db.select({ n: count() }).from(ctProposals).where(where).get(),
  ]);
  return {
    proposals: rows.map((p) => ({
      id: p.id,
      kind: p.kind,
      hostname: p.hostname,
      filter_id: p.filterId,
      source_sha256: p.sourceSha256,
      status: p.status,
      created_at: p.createdAt,
      decided_at: p.decidedAt,
    })),
    total: total?.n ?? 0,
    page: q.page,
    page_size: q.page_size,
  };
}

export async function decideProposal(db: Db, organizationId: number, proposalId: number, decision: "accepted" | "dismissed", now: Date) {
  const p = await db.select().from(ctProposals).where(and(eq(ctProposals.id, proposalId), eq(ctProposals.organizationId, organizationId))).get();
  if (!p) throw notFound("Proposal");
  await db.update(ctProposals).set({ status: decision, decidedAt: now.toISOString() }).where(eq(ctProposals.id, p.id)).run();
  return { message: decision === "accepted" ? "Proposal accepted" : "Proposal dismissed" };
}
