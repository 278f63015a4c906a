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

const counters = new Map<QuotaResource, UsageCounter>();

/** Modules call this once at import time for the resources they own. */
export function registerUsageCounter(resource: QuotaResource, counter: UsageCounter): void {
  counters.set(resource, counter);
}

/**
 * Usage per organization-wide resource. A resource whose module is not part of
 * this build has no rows, hence 0. (`entries_per_list` is per list, not summed.)
 */
export async function usageOf(db: Db, organizationId: number): Promise<Partial<Record<QuotaResource, number>>> {
  const out: Partial<Record<QuotaResource, number>> = {};
  for (const r of QUOTA_RESOURCES) {
    if (r === "entries_per_list") continue;
    const counter = counters.get(r);
    out[r] = counter ? await counter(db, organizationId) : 0;
  }
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
