/**
 * D1 side of the lookalike jobs (system reads and writes across organizations; the API's
 * tenant-scoped reads are in service.ts). Writes of a run go as D1 batches of prepared
 * statements, a bounded number per batch.
 */
import { and, asc, eq, isNull, lte, ne, or, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { ctFilters, ctLookalikeDiscoveryUsage, ctLookalikes, ctLookalikeTimeline } from "../../../db/schema";
import type { CollectionRecord } from "../../../platform/collection";
import type { LookalikeState } from "./vocabulary";

export type LookalikeRow = typeof ctLookalikes.$inferSelect;
export type LookalikeUpdate = Partial<typeof ctLookalikes.$inferInsert>;
export type TimelineInsert = typeof ctLookalikeTimeline.$inferInsert;

/** The collection record of a lookalike's checks (platform/collection), from its row. */
export function collectionRecordOf(row: LookalikeRow): CollectionRecord {
  return {
    lastAttemptAt: row.lastCheckedAt,
    lastSuccessAt: row.lastSuccessAt,
    failingSince: row.collectionFailingSince,
    consecutiveFailures: row.collectionFailures,
    nextAttemptAt: row.collectionNextAttemptAt,
    errorClass: (row.collectionErrorClass as CollectionRecord["errorClass"]) ?? null,
    errorMessage: row.collectionError,
  };
}

/** Of these (organization, domain) pairs, those that are lookalikes already (only dismissed ones if asked), as "<org> <domain>". */
async function knownLookalikes(db: Db, pairs: readonly { organizationId: number; domain: string }[], onlyDismissed: boolean): Promise<Set<string>> {
  if (!pairs.length) return new Set();
  const rows = await db.all<{ organization_id: number; domain: string }>(sql`
    SELECT l.organization_id, l.domain FROM ct_lookalikes l
    JOIN json_each(${JSON.stringify(pairs.map((p) => [p.organizationId, p.domain]))}) j
      ON l.organization_id = json_extract(j.value, '$[0]') AND l.domain = json_extract(j.value, '$[1]')
    ${onlyDismissed ? sql`WHERE l.state = 'dismissed'` : sql``}`);
  return new Set(rows.map((r) => `${r.organization_id} ${r.domain}`));
}

/** Of these (organization, domain) pairs, those the organization dismissed ("<org> <domain>"). */
export const dismissedLookalikes = (db: Db, pairs: readonly { organizationId: number; domain: string }[]) => knownLookalikes(db, pairs, true);

/** Lookalikes due for a check (never checked, or their next attempt has come), oldest due first; never dismissed ones. */
export async function dueLookalikes(db: Db, now: Date, limit: number): Promise<LookalikeRow[]> {
  const at = now.toISOString();
  return db
    .select()
    .from(ctLookalikes)
    .where(and(ne(ctLookalikes.state, "dismissed"), or(isNull(ctLookalikes.collectionNextAttemptAt), lte(ctLookalikes.collectionNextAttemptAt, at))))
    .orderBy(asc(sql`coalesce(${ctLookalikes.collectionNextAttemptAt}, '')`), asc(ctLookalikes.id))
    .limit(limit)
    .all();
}

const BATCH_STATEMENTS = 50;

/**
 * Writes a run's results: each lookalike's update (guarded: a lookalike dismissed while it
 * was being checked keeps its state) and its timeline entries. Returns D1's rows written.
 */
export async function writeCheckResults(db: Db, results: readonly { id: number; update: LookalikeUpdate; timeline: TimelineInsert[] }[]): Promise<number> {
  const statements = results.flatMap((r) => [
    db
      .update(ctLookalikes)
      .set(r.update)
      .where(and(eq(ctLookalikes.id, r.id), ne(ctLookalikes.state, "dismissed"))),
    ...(r.timeline.length ? [db.insert(ctLookalikeTimeline).values(r.timeline)] : []),
  ]);
  let rowsWritten = 0;
  for (let i = 0; i < statements.length; i += BATCH_STATEMENTS) {
    const chunk = statements.slice(i, i + BATCH_STATEMENTS);
    const out = (await db.batch(chunk as [(typeof chunk)[number], ...(typeof chunk)[number][]])) as { meta?: { rows_written?: number } }[];
    for (const o of out) rowsWritten += Number(o?.meta?.rows_written ?? 0);
  }
  return rowsWritten;
}

/** Marks the lookalike_detected event of these lookalikes as emitted. */
export async function markDetectedEmitted(db: Db, ids: readonly number[], at: string): Promise<void> {
  if (!ids.length) return;
  await db.run(sql`UPDATE ct_lookalikes SET detected_event_at = ${at} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`);
}

/** A lookalike the discovery found registered. */
export interface DiscoveredLookalike {
  organizationId: number;
  domain: string;
  protectedDomain: string;
  filterId: number;
  evidence: string[];
  editDistance: number | null;
  confidence: "low" | "high";
}

/**
 * Inserts the registered permutations an organization does not know yet (a domain already a
 * lookalike, found in CT or dismissed, is left as it is). Returns the domains inserted.
 */
export async function insertDiscovered(db: Db, found: readonly DiscoveredLookalike[], at: string): Promise<string[]> {
  // Known ones are left out before the INSERT: D1 counts a row written for an INSERT that
  // ON CONFLICT DO NOTHING skips, and an unchanged run must write nothing.
  const known = await knownLookalikes(db, found, false);
  const fresh = found.filter((f) => !known.has(`${f.organizationId} ${f.domain}`));
  if (!fresh.length) return [];
  const rows = fresh.map((f) => ({
    organizationId: f.organizationId,
    domain: f.domain,
    protectedDomain: f.protectedDomain,
    filterId: f.filterId,
    source: "permutation" as const,
    evidence: f.evidence,
    editDistance: f.editDistance,
    confidence: f.confidence,
    state: "new" as LookalikeState,
    stateChangedAt: at,
    firstSeenAt: at,
    collectionNextAttemptAt: at,
  }));
  const inserted: string[] = [];
  for (let i = 0; i < rows.length; i += 20) {
    const r = await db.insert(ctLookalikes).values(rows.slice(i, i + 20)).onConflictDoNothing().returning({ domain: ctLookalikes.domain }).all();
    inserted.push(...r.map((x) => x.domain));
  }
  return inserted.sort();
}

/** Every organization's typosquat-enabled filters (eligibility is judged by the caller). */
export async function protectedFilters(db: Db, organizationId?: number): Promise<{ filterId: number; organizationId: number; pattern: string }[]> {
  const conditions = [eq(ctFilters.enabled, true), eq(ctFilters.typosquatEnabled, true), isNull(ctFilters.deletedAt)];
  if (organizationId !== undefined) conditions.push(eq(ctFilters.organizationId, organizationId));
  return db
    .select({ filterId: ctFilters.id, organizationId: ctFilters.organizationId, pattern: ctFilters.pattern })
    .from(ctFilters)
    .where(and(...conditions))
    .orderBy(asc(ctFilters.organizationId), asc(ctFilters.id))
    .all();
}

/** The organization's on-demand discovery usage of a UTC day. */
export async function discoveryUsage(db: Db, organizationId: number, day: string): Promise<{ queries: number; queriesBeforeScheduled: number }> {
  const row = await db
    .select({ queries: ctLookalikeDiscoveryUsage.queries, queriesBeforeScheduled: ctLookalikeDiscoveryUsage.queriesBeforeScheduled })
    .from(ctLookalikeDiscoveryUsage)
    .where(and(eq(ctLookalikeDiscoveryUsage.organizationId, organizationId), eq(ctLookalikeDiscoveryUsage.day, day)))
    .get();
  return row ?? { queries: 0, queriesBeforeScheduled: 0 };
}

/** Adds queries spent on demand (before the day's scheduled run, they also count as such). */
export async function addDiscoveryUsage(db: Db, organizationId: number, day: string, queries: number, beforeScheduled: boolean): Promise<void> {
  if (queries <= 0) return;
  const before = beforeScheduled ? queries : 0;
  await db
    .insert(ctLookalikeDiscoveryUsage)
    .values({ organizationId, day, queries, queriesBeforeScheduled: before })
    .onConflictDoUpdate({
      target: [ctLookalikeDiscoveryUsage.organizationId, ctLookalikeDiscoveryUsage.day],
      set: {
        queries: sql`${ctLookalikeDiscoveryUsage.queries} + ${queries}`,
        queriesBeforeScheduled: sql`${ctLookalikeDiscoveryUsage.queriesBeforeScheduled} + ${before}`,
      },
    })
    .run();
}
