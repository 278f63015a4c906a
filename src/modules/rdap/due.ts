/**
 * Which RDAP monitors a scheduled poll looks at: the enabled monitors of the DUE
 * domains. A domain is due when one of its enabled monitors was never checked, was
 * checked longer than the interval ago, or has reached its retry time after a
 * transient failure (politeness.ts). At most `maxDomains` distinct domains per run,
 * least recently checked first; all monitors of a due domain share its lookup.
 */
import { and, asc, eq, inArray, isNotNull, isNull, lte, min, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rdapMonitors, rdapSnapshots } from "../../db/schema/rdap";
import type { CollectionRecord } from "../../platform/collection";
import { monitorCollection } from "./collection";

export interface DueMonitor {
  id: number;
  organizationId: number;
  domainName: string;
  tld: string;
  /** The comparison base: the monitor's newest snapshot (null before its first success). */
  lastSnapshotId: number | null;
  /** Canonical hash of that snapshot. */
  lastHash: string | null;
  failureCount: number;
  /** Its collection state before this poll. */
  collection: CollectionRecord;
}

const neverChecked = sql`coalesce(${rdapMonitors.lastCheckedAt}, '')`;

export async function selectDue(db: Db, now: Date, intervalSeconds: number, maxDomains: number): Promise<Map<string, DueMonitor[]>> {
  const cutoff = new Date(now.getTime() - intervalSeconds * 1000).toISOString();
  const dueDomains = db
    .select({ domainName: rdapMonitors.domainName })
    .from(rdapMonitors)
    .where(
      and(
        eq(rdapMonitors.enabled, true),
        or(
          isNull(rdapMonitors.lastCheckedAt),
          lte(rdapMonitors.lastCheckedAt, cutoff),
          and(isNotNull(rdapMonitors.retryAt), lte(rdapMonitors.retryAt, now.toISOString())),
        ),
      ),
    )
    .groupBy(rdapMonitors.domainName)
    .orderBy(min(neverChecked), asc(rdapMonitors.domainName))
    .limit(maxDomains);
  const rows = await db
    .select({
      id: rdapMonitors.id,
      organizationId: rdapMonitors.organizationId,
      domainName: rdapMonitors.domainName,
      tld: rdapMonitors.tld,
      lastSnapshotId: rdapMonitors.lastSnapshotId,
      lastHash: rdapSnapshots.hash,
      failureCount: rdapMonitors.failureCount,
      lastCheckedAt: rdapMonitors.lastCheckedAt,
      lastSuccessAt: rdapMonitors.lastSuccessAt,
      collectionFailingSince: rdapMonitors.collectionFailingSince,
      collectionFailures: rdapMonitors.collectionFailures,
      collectionNextAttemptAt: rdapMonitors.collectionNextAttemptAt,
      collectionErrorClass: rdapMonitors.collectionErrorClass,
      collectionError: rdapMonitors.collectionError,
    })
    .from(rdapMonitors)
    .leftJoin(rdapSnapshots, eq(rdapSnapshots.id, rdapMonitors.lastSnapshotId))
    .where(and(eq(rdapMonitors.enabled, true), inArray(rdapMonitors.domainName, dueDomains)))
    .orderBy(neverChecked, asc(rdapMonitors.domainName), asc(rdapMonitors.id))
    .all();
  const byDomain = new Map<string, DueMonitor[]>();
  for (const r of rows) {
    const list = byDomain.get(r.domainName) ?? [];
    list.push({ id: r.id, organizationId: r.organizationId, domainName: r.domainName, tld: r.tld, lastSnapshotId: r.lastSnapshotId, lastHash: r.lastHash, failureCount: r.failureCount, collection: monitorCollection(r) });
    byDomain.set(r.domainName, list);
  }
  return byDomain;
}
