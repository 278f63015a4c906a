/**
 * CT filters (docs/decisions.md#ct-filters-and-matches): canonical patterns, uniqueness
 * among live filters, the tier's quota, soft delete, typosquatting eligibility.
 *
 * Every query of an organization's data goes through its Tenant handle. Every filter
 * change bumps ct_filter_generation, so every CtLogCursor rebuilds its index before
 * its next batch: a disabled or deleted filter stops matching at once.
 */
import { eq, isNull } from "drizzle-orm";
import { ctFilters } from "../../db/schema";
import { ApiError, badRequest, notFound } from "../../platform/errors";
import { direction, pageOffset, readPage } from "../../platform/paging";
import type { UsageCounter } from "../../platform/quotas";
import { tenantDb, type Tenant } from "../../platform/tenant";
import { bumpFilterGeneration } from "./filter-source";
import { parseFilterPattern } from "./filters/pattern";
import type { AuthorizedIssuer } from "./authorization";
import { typosquatEligibility } from "./typosquat/eligibility";
import type { FILTER_SORTS, TYPOSQUAT_FILTER_SORTS } from "./schema";
import { pageOf, type PageQuery } from "./listing";

/** Filters that are not deleted: they are listed, unique and counted toward the quota (docs/decisions.md#uniqueness). */
const notDeleted = isNull(ctFilters.deletedAt);
const liveUsage = (t: Tenant) => t.usage(ctFilters, notDeleted);
/** The `ct_filters` quota's usage: live filters (connected in src/app.ts). */
export const ctFilterUsage: UsageCounter = (db, organizationId) => tenantDb(db, organizationId).count(ctFilters, notDeleted);

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
