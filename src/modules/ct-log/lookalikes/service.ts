/**
 * The organization's lookalikes through the API: list, detail (evidence compared
 * character by character, certificates, timeline, DNS, RDAP, collection state), dismiss,
 * export, on-demand discovery. Tenant-scoped (platform/tenant.ts): another
 * organization's lookalike is a 404.
 */
import { asc, count, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { ctLookalikes, ctLookalikeTimeline } from "../../../db/schema";
import { collectionView } from "../../../platform/collection";
import { badRequest, conflict, notFound } from "../../../platform/errors";
import { direction, pageOffset, readPage } from "../../../platform/paging";
import type { Tenant } from "../../../platform/tenant";
import { typosquatEligibility } from "../typosquat/eligibility";
import type { Evidence } from "../typosquat/detect";
import { compareLabels } from "./compare";
import { runOnDemandDiscovery, type DiscoverySettings } from "./discovery";
import { renderExport, type ExportRow } from "./export";
import { domainUnicode } from "./lifecycle";
import type { LOOKALIKE_SORTS } from "./schema";
import { statement } from "../store";
import { collectionRecordOf, protectedFilters, type LookalikeRow } from "./store";
import { OPEN_STATES, type ExportFormat, type LookalikeSource, type LookalikeState, type LookalikeTimelineKind } from "./vocabulary";


/** The API object of a lookalike. */
export function lookalikeView(row: LookalikeRow) {
  return {
    id: row.id,
    domain: row.domain,
    domain_unicode: domainUnicode(row.domain),
    protected_domain: row.protectedDomain,
    filter_id: row.filterId,
    source: row.source,
    state: row.state,
    state_changed_at: row.stateChangedAt,
    confidence: row.confidence,
    evidence: row.evidence as Evidence[],
    edit_distance: row.editDistance,
    first_seen_at: row.firstSeenAt,
    certificate_seen_at: row.certificateSeenAt,
    dns: row.dns,
    serving: row.serving,
    serving_detail: row.servingDetail,
    registered_at: row.registeredAt,
    registrar: row.registrar,
    rdap_checked_at: row.rdapCheckedAt,
    rdap_error: row.rdapError,
    dismissed: row.state === "dismissed" ? { reason: row.dismissedReason ?? "", at: row.dismissedAt ?? row.stateChangedAt, by_user_id: row.dismissedBy } : null,
    // A dismissed lookalike is no longer checked: its collection is paused.
    collection: collectionView(collectionRecordOf(row), row.state !== "dismissed"),
  };
}

export interface LookalikeListQuery {
  page: number;
  page_size: number;
  state?: LookalikeState | "open";
  confidence?: "low" | "high";
  source?: LookalikeSource;
  sort_by: (typeof LOOKALIKE_SORTS)[number];
  sort_order: "asc" | "desc";
}

export async function listLookalikes(t: Tenant, q: LookalikeListQuery) {
  const conditions: SQL[] = [];
  if (q.state === "open") conditions.push(inArray(ctLookalikes.state, [...OPEN_STATES]));
  else if (q.state) conditions.push(eq(ctLookalikes.state, q.state));
  if (q.confidence) conditions.push(eq(ctLookalikes.confidence, q.confidence));
  if (q.source) conditions.push(eq(ctLookalikes.source, q.source));
  const where = t.where(ctLookalikes, ...conditions);
  const dir = direction(q.sort_order);
  const sortColumn: Record<(typeof LOOKALIKE_SORTS)[number], SQL | AnySQLiteColumn> = {
    first_seen_at: ctLookalikes.firstSeenAt,
    domain: ctLookalikes.domain,
    state: ctLookalikes.state,
    confidence: ctLookalikes.confidence,
    last_checked_at: sql`coalesce(${ctLookalikes.lastCheckedAt}, '')`,
  };
  const { rows, total } = await readPage(
    t.db.select().from(ctLookalikes).where(where).orderBy(dir(sortColumn[q.sort_by]), dir(ctLookalikes.id)).limit(q.page_size).offset(pageOffset(q)),
    t.db.select({ n: count() }).from(ctLookalikes).where(where),
  );
  return { lookalikes: rows.map(lookalikeView), total, page: q.page, page_size: q.page_size, sort_by: q.sort_by, sort_order: q.sort_order };
}

interface TimelineItem {
  at: string;
  kind: LookalikeTimelineKind;
  from_state: LookalikeState | null;
  to_state: LookalikeState | null;
  detail: string;
}

export async function lookalikeDetail(t: Tenant, id: number) {
  const row = await t.getOr404(ctLookalikes, id, "Lookalike");
  // Certificates of the 30-day CT window naming it, once each (a certificate may match several filters).
  const certificates = await t.db.all<{ sha256: string; certificate_name: string; issuer: string; not_before: string; not_after: string; detected_at: string; log_count: number }>(sql`
    SELECT m.sha256, m.certificate_name, json_extract(m.cert, '$.issuer') AS issuer, json_extract(m.cert, '$.not_before') AS not_before,
      json_extract(m.cert, '$.not_after') AS not_after, min(m.detected_at) AS detected_at,
      (SELECT count(DISTINCT o.log_id) FROM ct_typosquat_occurrences o WHERE o.match_id = min(m.id)) AS log_count
    FROM ct_typosquat_matches m
    WHERE m.organization_id = ${t.organizationId} AND m.candidate_domain = ${row.domain}
    GROUP BY m.dedup_key ORDER BY detected_at DESC LIMIT 100`);
  const stored = await t
    .select(ctLookalikeTimeline, eq(ctLookalikeTimeline.lookalikeId, row.id))
    .orderBy(asc(ctLookalikeTimeline.at), asc(ctLookalikeTimeline.id))
    .all();
  const timeline: TimelineItem[] = [
    { at: row.firstSeenAt, kind: "detected" as const, from_state: null, to_state: null, detail: row.source === "ct" ? "found in a certificate" : "found registered by the permutation discovery" },
    ...certificates.map((c) => ({ at: c.detected_at, kind: "certificate" as const, from_state: null, to_state: null, detail: `certificate for ${c.certificate_name} by ${c.issuer}` })),
    ...stored.map((e) => ({ at: e.at, kind: e.kind, from_state: e.fromState, to_state: e.toState, detail: e.detail })),
  ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return {
    ...lookalikeView(row),
    comparison: compareLabels(row.protectedDomain, row.domain),
    certificates: certificates.map((c) => ({ ...c, log_count: Number(c.log_count) })),
    timeline,
  };
}

/** Dismisses a lookalike for good: no check, no alert from now on (409 when already dismissed). */
export async function dismissLookalike(t: Tenant, id: number, reason: string, userId: number | null, now: Date) {
  const row = await t.getOr404(ctLookalikes, id, "Lookalike");
  if (row.state === "dismissed") throw conflict("This lookalike is already dismissed");
  const at = now.toISOString();
  // One transaction: the dismissal, and its timeline entry only when this request's update applied.
  const [updated] = await t.db.$client.batch([
    statement(
      t.db,
      sql`UPDATE ct_lookalikes SET state = 'dismissed', state_changed_at = ${at}, dismissed_reason = ${reason}, dismissed_at = ${at}, dismissed_by = ${userId},
            collection_next_attempt_at = NULL
          WHERE id = ${id} AND organization_id = ${t.organizationId} AND state <> 'dismissed'`,
    ),
    statement(
      t.db,
      sql`INSERT INTO ct_lookalike_timeline (organization_id, lookalike_id, at, kind, from_state, to_state, detail)
          SELECT organization_id, id, ${at}, 'dismissed', ${row.state}, 'dismissed', ${reason} FROM ct_lookalikes
          WHERE id = ${id} AND organization_id = ${t.organizationId} AND state = 'dismissed' AND dismissed_at = ${at} AND changes() > 0`,
    ),
  ]);
  if (!updated.meta.changes) throw conflict("This lookalike is already dismissed");
  return lookalikeView((await t.getOr404(ctLookalikes, id, "Lookalike")) as LookalikeRow);
}

/** The organization's open lookalikes in an export format. */
export async function exportLookalikes(t: Tenant, format: ExportFormat, now: Date) {
  const rows = await t
    .select(ctLookalikes, inArray(ctLookalikes.state, [...OPEN_STATES]))
    .orderBy(asc(ctLookalikes.domain))
    .all();
  const out: ExportRow[] = rows.map((r) => ({
    domain: r.domain,
    domain_unicode: domainUnicode(r.domain),
    protected_domain: r.protectedDomain,
    state: r.state,
    confidence: r.confidence,
    source: r.source,
    evidence: r.evidence,
    first_seen_at: r.firstSeenAt,
    registered_at: r.registeredAt,
    registrar: r.registrar,
    mx: r.dns?.mx ?? [],
    addresses: [...(r.dns?.a ?? []), ...(r.dns?.aaaa ?? [])],
  }));
  const file = renderExport(format, out, { organizationId: t.organizationId, now });
  return { ...file, filename: `lookalikes-${t.organizationId}-${now.toISOString().slice(0, 10)}.${file.extension}` };
}

/** On-demand discovery of the organization's protected filters (or one of them). */
export async function discoverLookalikes(t: Tenant, settings: DiscoverySettings, filterId: number | undefined, now: Date) {
  const filters = await protectedFilters(t.db, t.organizationId);
  if (filterId !== undefined) {
    const f = filters.find((x) => x.filterId === filterId);
    if (!f) {
      // Not the organization's, deleted or not protected: say which without telling another organization's filters apart.
      const own = await t.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM ct_filters WHERE id = ${filterId} AND organization_id = ${t.organizationId} AND deleted_at IS NULL`);
      if (!own?.n) throw notFound("CT filter");
      throw badRequest("This filter does not protect a domain", [{ path: "filter_id", message: "typosquatting detection is off or the filter is disabled" }]);
    }
    if (!typosquatEligibility(f.pattern).eligible) throw badRequest("This filter does not protect a domain", [{ path: "filter_id", message: typosquatEligibility(f.pattern).reason }]);
  } else if (!filters.some((f) => typosquatEligibility(f.pattern).eligible)) {
    throw badRequest("No protected domain to discover lookalikes of", [{ path: "filter_id", message: "no enabled filter has typosquatting detection on" }]);
  }
  const r = await runOnDemandDiscovery({ db: t.db, settings, now }, t.organizationId, filterId);
  return { permutations: r.permutations, queries: r.queries, registered: r.registered, new_lookalikes: r.new_lookalikes, failed: r.failed, error: r.error, budget: r.budget };
}


