/** Typosquatting matches: certificates for names close to a filter's registrable domain, within the 30-day match window. */
import { asc, count, eq, gte, sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { ctFilters, ctTyposquatMatches, ctTyposquatOccurrences } from "../../db/schema";
import { notFound } from "../../platform/errors";
import { direction, pageOffset, readPage } from "../../platform/paging";
import type { Tenant } from "../../platform/tenant";
import { withKeyHashes } from "./events";
import type { Evidence } from "./typosquat/detect";
import type { TYPOSQUAT_MATCH_SORTS } from "./schema";
import { pageOf, type PageQuery } from "./listing";
import { occurrenceView, windowStart } from "./match-service";

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
