/**
 * RDAP monitors (docs/decisions.md#rdap-monitors): the rules of the domain.
 * Every query is scoped by organization; another organization's monitor (or a domain
 * it monitors) is 404. Snapshot ids in the API are history row ids as strings.
 */
import { and, count, desc, eq, lte, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { rdapHistory, rdapMonitors, rdapSnapshots } from "../../db/schema/rdap";
import { badRequest, notFound } from "../../platform/errors";
import { direction, limitOffsetBody, readPage } from "../../platform/paging";
import type { UsageCounter } from "../../platform/quotas";
import { tenantDb, type Tenant } from "../../platform/tenant";
import { collectionView, nextAttemptWhenEnabled, nextScheduledRun } from "../../platform/collection";
import { normalizeDomain } from "../../platform/net/domain";
import { diffSnapshots } from "./diff";
import { monitorCollection } from "./collection";
import type { CHANGE_SORT, MONITOR_SORT } from "./schema";

/** The `rdap_monitors` quota's usage (connected in src/app.ts). */
export const rdapMonitorUsage: UsageCounter = (db, organizationId) => tenantDb(db, organizationId).count(rdapMonitors);

/** The stored form of a monitored name (lowercase A-label, no trailing dot), or a 400 naming `field`. */
export function monitoredName(raw: string, field = "domain_name"): string {
  const r = normalizeDomain(raw);
  if (!r.ok) throw badRequest("Invalid domain name", [{ path: field, message: r.message }]);
  return r.value;
}

const tldOf = (name: string) => name.slice(name.lastIndexOf(".") + 1);

function monitorView(m: typeof rdapMonitors.$inferSelect) {
  return {
    id: m.id,
    domain_name: m.domainName,
    tld: m.tld,
    enabled: m.enabled,
    notes: m.notes,
    last_checked_at: m.lastCheckedAt,
    last_check_status: m.lastCheckStatus,
    last_success_at: m.lastSuccessAt,
    collection: collectionView(monitorCollection(m), m.enabled),
    created_at: m.createdAt,
  };
}

/** One monitor per domain per organization (409); the tier's quota holds under parallel creates (403). */
export async function createMonitor(t: Tenant, input: { domain_name: string; enabled?: boolean; notes?: string }, now: Date) {
  const domainName = monitoredName(input.domain_name);
  const at = now.toISOString();
  const { row, quotaRemaining } = await t.create(
    rdapMonitors,
    // A new monitor is due at once: its collection says when it is first asked, not "unknown".
    { domainName, tld: tldOf(domainName), enabled: input.enabled ?? true, notes: input.notes ?? "", collectionNextAttemptAt: input.enabled === false ? null : nextScheduledRun(now), createdAt: at, updatedAt: at },
    { quota: "rdap_monitors", duplicate: `${domainName} is already monitored` },
  );
  return { id: row.id, message: `Monitoring ${domainName}`, quota_remaining: quotaRemaining ?? 0 };
}

export interface MonitorListInput {
  limit: number;
  offset: number;
  sort_by: (typeof MONITOR_SORT)[number];
  sort_order: "asc" | "desc";
  enabled?: "true" | "false";
  domain_name?: string;
}

const MONITOR_COLUMNS = {
  domain_name: rdapMonitors.domainName,
  tld: rdapMonitors.tld,
  enabled: rdapMonitors.enabled,
  last_checked_at: rdapMonitors.lastCheckedAt,
  created_at: rdapMonitors.createdAt,
} as const;

export async function listMonitors(t: Tenant, q: MonitorListInput) {
  const byName = q.domain_name !== undefined ? eq(rdapMonitors.domainName, monitoredName(q.domain_name)) : undefined;
  const enabled = and(q.enabled !== undefined ? eq(rdapMonitors.enabled, q.enabled === "true") : undefined, byName);
  const dir = direction(q.sort_order);
  const { rows, total } = await readPage(
    // The id breaks ties so pages never overlap or skip.
    t.select(rdapMonitors, enabled).orderBy(dir(MONITOR_COLUMNS[q.sort_by]), dir(rdapMonitors.id)).limit(q.limit).offset(q.offset),
    t.countQuery(rdapMonitors, enabled),
  );
  return limitOffsetBody("domains", rows.map(monitorView), total, q);
}

export async function updateMonitor(t: Tenant, id: number, input: { notes?: string; enabled?: boolean }, now: Date) {
  await t.getOr404(rdapMonitors, id, "RDAP monitor");
  await t
    .update(
      rdapMonitors,
      {
        ...(input.notes !== undefined ? { notes: input.notes } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        // Enabled again: asked at the next run if due, and the collection view says so.
        ...(input.enabled === true ? { collectionNextAttemptAt: nextAttemptWhenEnabled(rdapMonitors, now) } : {}),
        updatedAt: now.toISOString(),
      },
      eq(rdapMonitors.id, id),
    )
    .run();
  return { message: "RDAP monitor updated" };
}

/** Deletes the monitor with its history and facts (cascade); shared snapshot bodies stay for other monitors. */
export async function deleteMonitor(t: Tenant, id: number) {
  const m = await t.getOr404(rdapMonitors, id, "RDAP monitor");
  await t.delete(rdapMonitors, eq(rdapMonitors.id, m.id)).run();
  return { message: `Stopped monitoring ${m.domainName}` };
}

export interface ChangeListInput {
  limit: number;
  offset: number;
  sort_by: (typeof CHANGE_SORT)[number];
  sort_order: "asc" | "desc";
}

/** Changes (not baselines) of the organization's ENABLED monitors. */
export async function listChanges(t: Tenant, q: ChangeListInput) {
  const prev = alias(rdapSnapshots, "prev");
  const cond = and(t.where(rdapHistory, eq(rdapHistory.changed, true)), eq(rdapMonitors.enabled, true));
  const dir = direction(q.sort_order);
  const column = { domain_name: rdapMonitors.domainName, tld: rdapMonitors.tld, changed_at: rdapHistory.observedAt }[q.sort_by];
  const db = t.db;
  const { rows, total } = await readPage(
    db
      .select({
        domain_name: rdapMonitors.domainName,
        tld: rdapMonitors.tld,
        changed_at: rdapHistory.observedAt,
        current_hash: rdapSnapshots.hash,
        previous_hash: prev.hash,
        id: rdapHistory.id,
        previous_snapshot_id: sql<number | null>`(SELECT MAX(h2.id) FROM rdap_history h2 WHERE h2.monitor_id = ${rdapHistory.monitorId} AND h2.id < ${rdapHistory.id})`,
      })
      .from(rdapHistory)
      .innerJoin(rdapMonitors, eq(rdapMonitors.id, rdapHistory.monitorId))
      .innerJoin(rdapSnapshots, eq(rdapSnapshots.id, rdapHistory.snapshotId))
      .innerJoin(prev, eq(prev.id, rdapHistory.previousSnapshotId))
      .where(cond)
      .orderBy(dir(column), dir(rdapHistory.id))
      .limit(q.limit)
      .offset(q.offset),
    db.select({ n: count() }).from(rdapHistory).innerJoin(rdapMonitors, eq(rdapMonitors.id, rdapHistory.monitorId)).where(cond),
  );
  return limitOffsetBody(
    "changes",
    rows.map((r) => ({
      domain_name: r.domain_name,
      tld: r.tld,
      changed_at: r.changed_at,
      previous_hash: r.previous_hash,
      current_hash: r.current_hash,
      snapshot_id: String(r.id),
      previous_snapshot_id: r.previous_snapshot_id === null ? null : String(r.previous_snapshot_id),
    })),
    total,
    q,
  );
}

/** The caller's monitor of `domain` (any spelling: Unicode, upper case, trailing dot), else 404. */
async function monitorOfDomain(t: Tenant, domain: string) {
  const name = monitoredName(domain, "domain");
  const m = await t.first(rdapMonitors, eq(rdapMonitors.domainName, name));
  if (!m) throw notFound(`RDAP monitor for ${name}`);
  return m;
}

const summaryColumns = {
  id: rdapHistory.id,
  timestamp: rdapHistory.observedAt,
  changed: rdapHistory.changed,
  hash: rdapSnapshots.hash,
  snapshotId: rdapHistory.snapshotId,
};
type SummaryRow = { id: number; timestamp: string; changed: boolean; hash: string; snapshotId: number };
const summaryView = (r: SummaryRow) => ({ id: String(r.id), timestamp: r.timestamp, changed: r.changed, hash: r.hash });

/** Newest first: the baseline and every change. */
export async function history(t: Tenant, domain: string, q: { limit: number; offset: number }) {
  const m = await monitorOfDomain(t, domain);
  const ofMonitor = t.where(rdapHistory, eq(rdapHistory.monitorId, m.id));
  const { rows, total } = await readPage(
    t.db
      .select(summaryColumns)
      .from(rdapHistory)
      .innerJoin(rdapSnapshots, eq(rdapSnapshots.id, rdapHistory.snapshotId))
      .where(ofMonitor)
      .orderBy(desc(rdapHistory.observedAt), desc(rdapHistory.id))
      .limit(q.limit)
      .offset(q.offset),
    t.countQuery(rdapHistory, eq(rdapHistory.monitorId, m.id)),
  );
  return { domain: m.domainName, snapshots: rows.map(summaryView), total, limit: q.limit, offset: q.offset };
}

/** An ISO 8601 timestamp as the stored spelling (toISOString), or null. */
function instant(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.test(value.trim())) return null;
  const t = Date.parse(value.trim());
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

type SnapshotRef = { kind: "id"; id: number } | { kind: "at"; at: string };

/** "42" is an id; anything else must be an ISO 8601 timestamp (400 otherwise). */
function parseRef(value: string, field: string): SnapshotRef {
  const v = value.trim();
  if (/^\d{1,15}$/.test(v)) return { kind: "id", id: Number(v) };
  const at = instant(v);
  if (at === null) throw badRequest("Invalid snapshot reference", [{ path: field, message: `'${value}' is neither a snapshot id nor an ISO 8601 timestamp` }]);
  return { kind: "at", at };
}

async function resolveRef(t: Tenant, monitorId: number, ref: SnapshotRef | null): Promise<SummaryRow> {
  const base = t.db.select(summaryColumns).from(rdapHistory).innerJoin(rdapSnapshots, eq(rdapSnapshots.id, rdapHistory.snapshotId));
  const ofMonitor = (...more: SQL[]) => t.where(rdapHistory, eq(rdapHistory.monitorId, monitorId), ...more);
  let row: SummaryRow | undefined;
  if (ref === null) {
    row = await base.where(ofMonitor()).orderBy(desc(rdapHistory.observedAt), desc(rdapHistory.id)).limit(1).get();
    if (!row) throw notFound("Snapshot (the domain has not been looked up successfully yet)");
  } else if (ref.kind === "id") {
    row = await base.where(ofMonitor(eq(rdapHistory.id, ref.id))).get();
    if (!row) throw notFound("Snapshot");
  } else {
    row = await base
      .where(ofMonitor(lte(rdapHistory.observedAt, ref.at)))
      .orderBy(desc(rdapHistory.observedAt), desc(rdapHistory.id))
      .limit(1)
      .get();
    if (!row) throw notFound(`Snapshot at or before ${ref.at}`);
  }
  return row;
}

async function bodyOf(db: Db, snapshotId: number): Promise<unknown> {
  const row = await db.select({ body: rdapSnapshots.body }).from(rdapSnapshots).where(eq(rdapSnapshots.id, snapshotId)).get();
  if (!row) throw notFound("Snapshot");
  return JSON.parse(row.body) as unknown;
}

/** The full RDAP JSON: by id, by time (`at`: the latest at or before), or the latest. */
export async function snapshot(t: Tenant, domain: string, q: { snapshot_id?: string; at?: string }) {
  if (q.snapshot_id !== undefined && q.at !== undefined) {
    throw badRequest("Give snapshot_id or at, not both", [{ path: "query.at", message: "not allowed together with snapshot_id" }]);
  }
  const m = await monitorOfDomain(t, domain);
  let ref: SnapshotRef | null = null;
  if (q.snapshot_id !== undefined) {
    if (!/^\d{1,15}$/.test(q.snapshot_id.trim())) throw notFound("Snapshot");
    ref = { kind: "id", id: Number(q.snapshot_id.trim()) };
  } else if (q.at !== undefined) {
    const at = instant(q.at);
    if (at === null) throw badRequest("Invalid timestamp", [{ path: "query.at", message: `'${q.at}' is not an ISO 8601 timestamp` }]);
    ref = { kind: "at", at };
  }
  const row = await resolveRef(t, m.id, ref);
  return (await bodyOf(t.db, row.snapshotId)) as Record<string, unknown>;
}

/**
 * What changed between two snapshots of the domain (diff.ts). `to` defaults to the
 * latest snapshot, `from` to the one before `to` (so a bare call explains the latest change).
 */
export async function diff(t: Tenant, domain: string, q: { from?: string; to?: string }) {
  const fromRef = q.from !== undefined ? parseRef(q.from, "query.from") : null;
  const toRef = q.to !== undefined ? parseRef(q.to, "query.to") : null;
  const m = await monitorOfDomain(t, domain);
  const to = await resolveRef(t, m.id, toRef);
  let from: SummaryRow;
  if (fromRef !== null) {
    from = await resolveRef(t, m.id, fromRef);
  } else {
    const before = await t.db
      .select(summaryColumns)
      .from(rdapHistory)
      .innerJoin(rdapSnapshots, eq(rdapSnapshots.id, rdapHistory.snapshotId))
      .where(t.where(rdapHistory, eq(rdapHistory.monitorId, m.id), sql`(${rdapHistory.observedAt}, ${rdapHistory.id}) < (${to.timestamp}, ${to.id})`))
      .orderBy(desc(rdapHistory.observedAt), desc(rdapHistory.id))
      .limit(1)
      .get();
    from = before ?? to;
  }
  const [a, b] = await Promise.all([bodyOf(t.db, from.snapshotId), bodyOf(t.db, to.snapshotId)]);
  const d = diffSnapshots(a, b);
  return {
    domain: m.domainName,
    from: summaryView(from),
    to: summaryView(to),
    changed: from.hash !== to.hash,
    added: d.added,
    removed: d.removed,
    modified: d.modified,
    summary: d.summary,
  };
}
