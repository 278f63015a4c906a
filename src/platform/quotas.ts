/**
 * Subscription tiers and their quotas (docs/decisions.md#subscription-tiers-and-quotas). Modules
 * register how to count their usage; `assertQuota` refuses a creation that would
 * exceed the tier (403 quota_exceeded). A downgrade keeps what exists but blocks
 * anything new until usage is back under the limit.
 */
import type { Db } from "../db/client";
import { quotaExceeded } from "./errors";

export const TIERS = ["free", "pro", "enterprise"] as const;
export type Tier = (typeof TIERS)[number];

export const QUOTA_RESOURCES = [
  "ct_filters",
  "rdap_monitors",
  "cert_monitors",
  "dns_domains",
  "rule_lists",
  "entries_per_list",
] as const;
export type QuotaResource = (typeof QUOTA_RESOURCES)[number];

export const TIER_LIMITS: Record<Tier, Record<QuotaResource, number>> = {
  free: { ct_filters: 10, rdap_monitors: 10, cert_monitors: 10, dns_domains: 10, rule_lists: 2, entries_per_list: 10 },
  pro: { ct_filters: 100, rdap_monitors: 100, cert_monitors: 200, dns_domains: 100, rule_lists: 10, entries_per_list: 500 },
  enterprise: {
    ct_filters: 1000,
    rdap_monitors: 1000,
    cert_monitors: 2000,
    dns_domains: 1000,
    rule_lists: 100,
    entries_per_list: 1000,
  },
};

/** Counts an organization's current usage of one resource. */
export type UsageCounter = (db: Db, organizationId: number) => Promise<number>;

/** The organization-wide resources (a list's entries are counted per list). */
export type CountedResource = Exclude<QuotaResource, "entries_per_list">;

let counters: Record<CountedResource, UsageCounter> | null = null;

/**
 * Connected once when the app is built (src/app.ts `connectModules`), each counter from
 * the module that owns its table; the record's type makes a resource without a counter
 * a compile error.
 */
export function connectUsageCounters(all: Record<CountedResource, UsageCounter>): void {
  counters = all;
}

/** Usage per organization-wide resource (`entries_per_list` is per list, not summed). */
export async function usageOf(db: Db, organizationId: number): Promise<Partial<Record<QuotaResource, number>>> {
  if (!counters) throw new Error("usage counters are not connected (src/app.ts connectModules)");
  const out: Partial<Record<QuotaResource, number>> = {};
  for (const [r, counter] of Object.entries(counters) as [CountedResource, UsageCounter][]) out[r] = await counter(db, organizationId);
  return out;
}

/** Remaining allowance after `used`; never negative (a downgraded org reports 0). */
export function remaining(tier: Tier, resource: QuotaResource, used: number): number {
  return Math.max(0, TIER_LIMITS[tier][resource] - used);
}

export function assertQuota(tier: Tier, resource: QuotaResource, used: number, adding = 1): void {
  const limit = TIER_LIMITS[tier][resource];
  if (used + adding > limit) {
    throw quotaExceeded(`The ${tier} tier allows ${limit} ${resource.replace(/_/g, " ")}; ${used} in use`);
  }
}
