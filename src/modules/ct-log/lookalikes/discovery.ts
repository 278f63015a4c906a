/**
 * Registered-permutation discovery: which permutations of an organization's protected
 * domains (permutations.ts) are registered, asked through the DNS watcher's DoH client
 * (one NS query each: NOERROR registered, NXDOMAIN not; anything else says nothing and
 * is reported). A registered one the organization does not know yet becomes a lookalike
 * (`source: "permutation"`), checked by the next lifecycle run.
 *
 * Budget: LOOKALIKE_DISCOVERY_QUERIES_PER_DAY queries per organization per UTC day, for
 * the scheduled run and on-demand runs together.
 *
 *   Scheduled (job ct-log.lookalike_discovery, hourly): an organization's run comes once
 *   a day, at its own time (half past the hour given by its id modulo 24, which spreads
 *   organizations over the day): the hourly run takes the organizations whose time fell
 *   in the hour before it (a run the platform skips leaves that day out).
 *   It walks the organization's permutations (its protected domains' lists interleaved)
 *   from a position derived from the day, so successive days continue where the last one
 *   stopped and a whole cycle takes (permutations / budget) days. It spends what on-demand
 *   runs left of the day's budget before it. Nothing is written unless a registered
 *   permutation is new: an unchanged run writes no row.
 *   On demand (POST /api/ct-log/lookalikes/discover): the most likely permutations first
 *   (the families' order), of one protected filter or all, at most ON_DEMAND_MAX_QUERIES
 *   per request, from what is left of the day's budget; the next request of the day goes
 *   on where the last one stopped. The queries spent are recorded (one row per
 *   organization and day).
 */
import type { Db } from "../../../db/client";
import type { Config } from "../../../env";
import { classifyFailure, logSourceFailure, type CollectionError } from "../../../platform/collection";
import { createDohClient, MemoryDnsCache } from "../../../platform/dns/doh";
import { typosquatEligibility } from "../typosquat/eligibility";
import { detectLookalike, prepareProtected, protectedDomainOf } from "../typosquat/detect";
import { permutationsOf, type Permutation } from "./permutations";
import { addDiscoveryUsage, discoveryUsage, insertDiscovered, protectedFilters, type DiscoveredLookalike } from "./store";

/** Queries one on-demand request spends at most (it answers when they are done). */
export const ON_DEMAND_MAX_QUERIES = 200;

export interface DiscoverySettings {
  resolverUrls: string[];
  queriesPerDay: number;
  concurrency: number;
  timeoutMs: number;
  runDeadlineMs: number;
}

export function discoverySettings(config: Config): DiscoverySettings {
  return {
    resolverUrls: config.dohResolverUrls,
    queriesPerDay: config.lookalikes.discoveryQueriesPerDay,
    concurrency: config.dns.concurrency,
    timeoutMs: config.dns.timeoutMs,
    runDeadlineMs: 120_000,
  };
}

export interface DiscoveryContext {
  db: Db;
  settings: DiscoverySettings;
  now: Date;
  fetch?: typeof fetch;
}

/** A permutation of one protected filter of the organization. */
interface Candidate extends Permutation {
  filterId: number;
  protectedDomain: string;
}

export interface OrganizationDiscovery {
  organization_id: number;
  /** Permutations of the organization's protected domains (what a whole cycle checks). */
  permutations: number;
  queries: number;
  registered: number;
  /** Registered ones that were new lookalikes. */
  new_lookalikes: string[];
  /** Queries that got no answer to read (SERVFAIL, timeouts...), with the first failure in words. */
  failed: number;
  error: CollectionError | null;
  budget: { per_day: number; spent_today: number; remaining_today: number };
}

const permutationCache = new Map<string, Permutation[]>();
const MAX_CACHED_DOMAINS = 500;

/** The permutations of a protected domain, kept per isolate (they are deterministic and costly: ~0.1-0.3 s). */
function cachedPermutations(pattern: string): Permutation[] {
  let list = permutationCache.get(pattern);
  if (!list) {
    const p = protectedDomainOf(pattern);
    list = p ? permutationsOf(prepareProtected(p)) : [];
    if (permutationCache.size >= MAX_CACHED_DOMAINS) permutationCache.clear();
    permutationCache.set(pattern, list);
  }
  return list;
}

/** The organization's permutations, its protected domains' lists interleaved (each domain gets its share of any window). */
function organizationCandidates(filters: readonly { filterId: number; pattern: string }[]): Candidate[] {
  const lists = filters
    .filter((f) => typosquatEligibility(f.pattern).eligible)
    .map((f) => cachedPermutations(f.pattern).map((p) => ({ ...p, filterId: f.filterId, protectedDomain: f.pattern })));
  const out: Candidate[] = [];
  const seen = new Set<string>();
  for (let i = 0; lists.some((l) => i < l.length); i++) {
    for (const l of lists) {
      if (i < l.length && !seen.has(l[i].domain)) {
        seen.add(l[i].domain);
        out.push(l[i]);
      }
    }
  }
  return out;
}

export const utcDay = (d: Date) => d.toISOString().slice(0, 10);
const DAY_MS = 86_400_000;
const dayIndex = (d: Date) => Math.floor(d.getTime() / DAY_MS);
/** When in the UTC day an organization's scheduled discovery comes (ms after midnight). */
export const scheduledOffsetMs = (organizationId: number) => (organizationId % 24) * 3_600_000 + 1_800_000;
/** Whether the organization's scheduled run of that day has come by `now`. */
const scheduledRunPassed = (organizationId: number, now: Date) => now.getTime() - dayIndex(now) * DAY_MS >= scheduledOffsetMs(organizationId);
/** Whether the organization's scheduled time falls in the hour before `now` (the hourly job's window). */
const scheduledInHourBefore = (organizationId: number, now: Date) => {
  const slot = dayIndex(now) * DAY_MS + scheduledOffsetMs(organizationId);
  const t = now.getTime();
  return (slot <= t && slot > t - 3_600_000) || (slot - DAY_MS <= t && slot - DAY_MS > t - 3_600_000);
};

/** Asks DNS whether each candidate is registered; inserts the new ones. */
async function probe(ctx: DiscoveryContext, organizationId: number, candidates: readonly Candidate[]): Promise<Omit<OrganizationDiscovery, "organization_id" | "permutations" | "budget">> {
  const resolver = createDohClient({
    resolverUrls: ctx.settings.resolverUrls,
    timeoutMs: ctx.settings.timeoutMs,
    cache: new MemoryDnsCache({ now: () => ctx.now.getTime() }),
    fetch: ctx.fetch,
    deadline: Date.now() + ctx.settings.runDeadlineMs,
    breakAfterFailures: 8,
  });
  const registered: Candidate[] = [];
  let failed = 0;
  let error: CollectionError | null = null;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(ctx.settings.concurrency, candidates.length) }, async () => {
      while (next < candidates.length) {
        const c = candidates[next++];
        try {
          const r = await resolver.query(c.domain, "NS");
          if (r.rcode === "NOERROR") registered.push(c);
          else if (r.rcode !== "NXDOMAIN") {
            failed++;
            error ??= { class: "dns_resolution", message: `DNS lookup of NS ${c.domain} failed: the resolver answered ${r.rcode}` };
          }
        } catch (err) {
          failed++;
          error ??= classifyFailure(err, { host: c.domain, what: `DNS lookup of NS ${c.domain}` });
        }
      }
    }),
  );
  if (error) logSourceFailure(`lookalike discovery (${ctx.settings.resolverUrls.join(", ")})`, error, ctx.now.getTime());
  const found: DiscoveredLookalike[] = [];
  for (const c of registered) {
    const m = detectLookalike(protectedDomainOf(c.protectedDomain)!, c.domain);
    if (!m) continue;
    found.push({ organizationId, domain: c.domain, protectedDomain: c.protectedDomain, filterId: c.filterId, evidence: m.evidence, editDistance: m.edit_distance ?? null, confidence: m.confidence });
  }
  const inserted = await insertDiscovered(ctx.db, found, ctx.now.toISOString());
  return { queries: candidates.length, registered: registered.length, new_lookalikes: inserted, failed, error };
}

/** The queries the scheduled run of `day` spends (derived, never stored): what on-demand runs left before it. */
function scheduledSpend(perDay: number, beforeScheduled: number, permutations: number): number {
  return Math.max(0, Math.min(perDay - beforeScheduled, permutations));
}

/**
 * The scheduled discovery of every organization whose hour it is (called hourly): a
 * window of its permutations continuing day after day.
 */
export async function runScheduledDiscovery(ctx: DiscoveryContext): Promise<OrganizationDiscovery[]> {
  const filters = (await protectedFilters(ctx.db)).filter((f) => scheduledInHourBefore(f.organizationId, ctx.now));
  const byOrg = new Map<number, { filterId: number; pattern: string }[]>();
  for (const f of filters) byOrg.set(f.organizationId, [...(byOrg.get(f.organizationId) ?? []), f]);
  const out: OrganizationDiscovery[] = [];
  for (const [org, fs] of byOrg) {
    const candidates = organizationCandidates(fs);
    if (!candidates.length) continue;
    // The day whose scheduled time this is (just after midnight it may be yesterday's).
    const day = new Date(ctx.now.getTime() - ((ctx.now.getTime() - scheduledOffsetMs(org)) % DAY_MS + DAY_MS) % DAY_MS);
    const usage = await discoveryUsage(ctx.db, org, utcDay(day));
    const spend = scheduledSpend(ctx.settings.queriesPerDay, usage.queriesBeforeScheduled, candidates.length);
    // A window of `queriesPerDay` per day, so the walk advances whatever on-demand runs took.
    const start = (dayIndex(day) * Math.max(1, ctx.settings.queriesPerDay)) % candidates.length;
    const window = Array.from({ length: spend }, (_, i) => candidates[(start + i) % candidates.length]);
    const result = await probe(ctx, org, window);
    out.push({
      organization_id: org,
      permutations: candidates.length,
      ...result,
      budget: budgetOf(ctx.settings.queriesPerDay, usage.queries + spend),
    });
  }
  return out;
}

function budgetOf(perDay: number, spent: number) {
  return { per_day: perDay, spent_today: Math.min(spent, perDay), remaining_today: Math.max(0, perDay - spent) };
}

/** What the organization has spent today: on demand (recorded) and its scheduled run once its hour has come (derived). */
export async function spentToday(db: Db, settings: DiscoverySettings, organizationId: number, now: Date, permutations: number): Promise<number> {
  const usage = await discoveryUsage(db, organizationId, utcDay(now));
  const scheduled = scheduledRunPassed(organizationId, now) ? scheduledSpend(settings.queriesPerDay, usage.queriesBeforeScheduled, permutations) : 0;
  return usage.queries + scheduled;
}

/** An on-demand discovery for one organization (one filter, or all its protected filters). */
export async function runOnDemandDiscovery(ctx: DiscoveryContext, organizationId: number, filterId?: number): Promise<OrganizationDiscovery> {
  const all = await protectedFilters(ctx.db, organizationId);
  const everything = organizationCandidates(all);
  const chosen = filterId === undefined ? everything : organizationCandidates(all.filter((f) => f.filterId === filterId));
  const usage = await discoveryUsage(ctx.db, organizationId, utcDay(ctx.now));
  const spent = await spentToday(ctx.db, ctx.settings, organizationId, ctx.now, everything.length);
  const allowed = Math.min(ON_DEMAND_MAX_QUERIES, Math.max(0, ctx.settings.queriesPerDay - spent), chosen.length);
  // Today's earlier on-demand requests checked the first ones: go on from there.
  const start = chosen.length ? usage.queries % chosen.length : 0;
  const result = await probe(ctx, organizationId, Array.from({ length: allowed }, (_, i) => chosen[(start + i) % chosen.length]));
  await addDiscoveryUsage(ctx.db, organizationId, utcDay(ctx.now), result.queries, !scheduledRunPassed(organizationId, ctx.now));
  return { organization_id: organizationId, permutations: chosen.length, ...result, budget: budgetOf(ctx.settings.queriesPerDay, spent + result.queries) };
}
