/**
 * RDAP monitors (spec "RDAP" endpoints, ADDENDUM 5 and 11): the rules of the domain.
 * Every query is scoped by organization; another organization's monitor (or a domain
 * it monitors) is 404. Snapshot ids in the API are history row ids as strings.
 */
import { and, asc, count, desc, eq, lte, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { organizations } from "../../db/schema";
import { rdapHistory, rdapMonitors, rdapSnapshots } from "../../db/schema/rdap";
import { badRequest, conflict, notFound } from "../../platform/errors";
import { assertQuota, registerUsageCounter, remaining, type Tier } from "../../platform/quotas";
import { normalizeDomain } from "../lists/domain";
import { diffSnapshots } from "./diff";
import type { CHANGE_SORT, MONITOR_SORT } from "./schema";

async function monitorCount(db: Db, organizationId: number): Promise<number> {
  const r = await db.select({ n: count() }).from(rdapMonitors).where(eq(rdapMonitors.organizationId, organizationId)).get();
  return r?.n ?? 0;
}
registerUsageCounter("rdap_monitors", monitorCount);

async function tierOf(db: Db, organizationId: number): Promise<Tier> {
  const org = await db.select({ tier: organizations.tier }).from(organizations).where(eq(organizations.id, organizationId)).get();
  return (org?.tier ?? "free") as Tier;
}

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
    created_at: m.createdAt,
  };
}

export async function createMonitor(db: Db, organizationId: number, input: { domain_name: string; enabled?: boolean; notes?: string }, now: Date) {
  const domainName = monitoredName(input.domain_name);
  const tier = await tierOf(db, organizationId);
  const used = await monitorCount(db, organizationId);
  const duplicate = await db
    .select({ id: rdapMonitors.id })
    .from(rdapMonitors)
    .where(and(eq(rdapMonitors.organizationId, organizationId), eq(rdapMonitors.domainName, domainName)))
    .get();
  if (duplicate) throw conflict(`${domainName} is already monitored (monitor ${duplicate.id})`);
  assertQuota(tier, "rdap_monitors", used);
  const at = now.toISOString();
  try {
    const row = await db
      .insert(rdapMonitors)
      .values({ organizationId, domainName, tld: tldOf(domainName), enabled: input.enabled ?? true, notes: input.notes ?? "", createdAt: at, updatedAt: at })
      .returning({ id: rdapMonitors.id })
      .get();
    return { id: row.id, message: `Monitoring ${domainName}`, quota_remaining: remaining(tier, "rdap_monitors", used + 1) };
  } catch (err) {
    // Two concurrent creations: the unique index decides.
    if (String(err).includes("UNIQUE")) throw conflict(`${domainName} is already monitored`);
    throw err;
  }
}

export interface MonitorListInput {
  limit: number;
  offset: number;
  sort_by: (typeof MONITOR_SORT)[number];
  sort_order: "asc" | "desc";
  enabled?: "true" | "false";
}

const MONITOR_COLUMNS = {
  domain_name: rdapMonitors.domainName,
  tld: rdapMonitors.tld,
  enabled: rdapMonitors.enabled,
  last_checked_at: rdapMonitors.lastCheckedAt,
  created_at: rdapMonitors.createdAt,
} as const;

export async function listMonitors(db: Db, organizationId: number, q: MonitorListInput) {
  const where: SQL[] = [eq(rdapMonitors.organizationId, organizationId)];
  if (q.enabled !== undefined) where.push(eq(rdapMonitors.enabled, q.enabled === "true"));
  const dir = q.sort_order === "desc" ? desc : asc;
  const cond = and(...where);
  const [rows, total] = await Promise.all([
    db
      .select()
      .from(rdapMonitors)
      .where(cond)
      // The id breaks ties so pages never overlap or skip.
      .orderBy(dir(MONITOR_COLUMNS[q.sort_by]), dir(rdapMonitors.id))
      .limit(q.limit)
      .offset(q.offset)
      .all(),
    db.select({ n: count() }).from(rdapMonitors).where(cond).get(),
  ]);
  return { domains: rows.map(monitorView), total: total?.n ?? 0, limit: q.limit, offset: q.offset, sort_by: q.sort_by, sort_order: q.sort_order };
}

async function monitorById(db: Db, organizationId: number, id: number) {
  const m = await db.select().from(rdapMonitors).where(and(eq(rdapMonitors.id, id), eq(rdapMonitors.organizationId, organizationId))).get();
  if (!m) throw notFound("RDAP monitor");
  return m;
}

export async function updateMonitor(db: Db, organizationId: number, id: number, input: { notes?: string; enabled?: boolean }, now: Date) {
  await monitorById(db, organizationId, id);
  await db
    .update(rdapMonitors)
    .set({ ...(input.notes !== undefined ? { notes: input.notes } : {}), ...(input.enabled !== undefined ? { enabled: input.enabled } : {}), updatedAt: now.toISOString() })
    .where(and(eq(rdapMonitors.id, id), eq(rdapMonitors.organizationId, organizationId)))
    .run();
  return { message: "RDAP monitor updated" };
}

/** Deletes the monitor with its history and facts (cascade); shared snapshot bodies stay for other monitors. */
export async function deleteMonitor(db: Db, organizationId: number, id: number) {
  const m = await monitorById(db, organizationId, id);
  await db.delete(rdapMonitors).where(and(eq(rdapMonitors.id, m.id), eq(rdapMonitors.organizationId, organizationId))).run();
  return { message: `Stopped monitoring ${m.domainName}` };
}

export interface ChangeListInput {
  limit: number;
  offset: number;
  sort_by: (typeof CHANGE_SORT)[number];
  sort_order: "asc" | "desc";
}

/** Changes (not baselines) of the organization's ENABLED monitors. */
export async function listChanges(db: Db, organizationId: number, q: ChangeListInput) {
  const prev = alias(rdapSnapshots, "prev");
  const cond = and(eq(rdapHistory.organizationId, organizationId), eq(rdapHistory.changed, true), eq(rdapMonitors.enabled, true));
  const dir = q.sort_order === "desc" ? desc : asc;
  const column = { domain_name: rdapMonitors.domainName, tld: rdapMonitors.tld, changed_at: rdapHistory.observedAt }[q.sort_by];
  const [rows, total] = await Promise.all([
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
      .offset(q.offset)
      .all(),
    db
      .select({ n: count() })
      .from(rdapHistory)
      .innerJoin(rdapMonitors, eq(rdapMonitors.id, rdapHistory.monitorId))
      .where(cond)
      .get(),
  ]);
  return {
    changes: rows.map((r) => ({
      domain_name: r.domain_name,
      tld: r.tld,
      changed_at: r.changed_at,
      previous_hash: r.previous_hash,
      current_hash: r.current_hash,
      snapshot_id: String(r.id),
      previous_snapshot_id: r.previous_snapshot_id === null ? null : String(r.previous_snapshot_id),
    })),
    total: total?.n ?? 0,
    limit: q.limit,
    offset: q.offset,
    sort_by: q.sort_by,
    sort_order: q.sort_order,
  };
}

/** The caller's monitor of `domain` (any spelling: Unicode, upper case, trailing dot), else 404. */
async function monitorOfDomain(db: Db, organizationId: number, domain: string) {
  const name = monitoredName(domain, "domain");
  const m = await db
    .select()
    .from(rdapMonitors)
    .where(and(eq(rdapMonitors.organizationId, organizationId), eq(rdapMonitors.domainName, name)))
    .get();
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
export async function history(db: Db, organizationId: number, domain: string, q: { limit: number; offset: number }) {
  const m = await monitorOfDomain(db, organizationId, domain);
  const [rows, total] = await Promise.all([
    db
      .select(summaryColumns)
      .from(rdapHistory)
      .innerJoin(rdapSnapshots, eq(rdapSnapshots.id, rdapHistory.snapshotId))
      .where(eq(rdapHistory.monitorId, m.id))
      .orderBy(desc(rdapHistory.observedAt), desc(rdapHistory.id))
      .limit(q.limit)
      .offset(q.offset)
      .all(),
    db.select({ n: count() }).from(rdapHistory).where(eq(rdapHistory.monitorId, m.id)).get(),
  ]);
  return { domain: m.domainName, snapshots: rows.map(summaryView), total: total?.n ?? 0, limit: q.limit, offset: q.offset };
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

async function resolveRef(db: Db, monitorId: number, ref: SnapshotRef | null): Promise<SummaryRow> {
  const base = db.select(summaryColumns).from(rdapHistory).innerJoin(rdapSnapshots, eq(rdapSnapshots.id, rdapHistory.snapshotId));
  let row: SummaryRow | undefined;
  if (ref === null) {
    row = await base.where(eq(rdapHistory.monitorId, monitorId)).orderBy(desc(rdapHistory.observedAt), desc(rdapHistory.id)).limit(1).get();
    if (!row) throw notFound("Snapshot (the domain has not been looked up successfully yet)");
  } else if (ref.kind === "id") {
    row = await base.where(and(eq(rdapHistory.monitorId, monitorId), eq(rdapHistory.id, ref.id))).get();
    if (!row) throw notFound("Snapshot");
  } else {
    row = await base
      .where(and(eq(rdapHistory.monitorId, monitorId), lte(rdapHistory.observedAt, ref.at)))
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
export async function snapshot(db: Db, organizationId: number, domain: string, q: { snapshot_id?: string; at?: string }) {
  if (q.snapshot_id !== undefined && q.at !== undefined) {
    throw badRequest("Give snapshot_id or at, not both", [{ path: "query.at", message: "not allowed together with snapshot_id" }]);
  }
  const m = await monitorOfDomain(db, organizationId, domain);
  let ref: SnapshotRef | null = null;
  if (q.snapshot_id !== undefined) {
    if (!/^\d{1,15}$/.test(q.snapshot_id.trim())) throw notFound("Snapshot");
    ref = { kind: "id", id: Number(q.snapshot_id.trim()) };
  } else if (q.at !== undefined) {
    const at = instant(q.at);
    if (at === null) throw badRequest("Invalid timestamp", [{ path: "query.at", message: `'${q.at}' is not an ISO 8601 timestamp` }]);
    ref = { kind: "at", at };
  }
  const row = await resolveRef(db, m.id, ref);
  return (await bodyOf(db, row.snapshotId)) as Record<string, unknown>;
}

/**
 * What changed between two snapshots of the domain (diff.ts). `to` defaults to the
 * latest snapshot, `from` to the one before `to` (so a bare call explains the latest change).
 */
export async function diff(db: Db, organizationId: number, domain: string, q: { from?: string; to?: string }) {
  const fromRef = q.from !== undefined ? parseRef(q.from, "query.from") : null;
  const toRef = q.to !== undefined ? parseRef(q.to, "query.to") : null;
  const m = await monitorOfDomain(db, organizationId, domain);
  const to = await resolveRef(db, m.id, toRef);
  let from: SummaryRow;
  if (fromRef !== null) {
    from = await resolveRef(db, m.id, fromRef);
  } else {
    const before = await db
      .select(summaryColumns)
      .from(rdapHistory)
      .innerJoin(rdapSnapshots, eq(rdapSnapshots.id, rdapHistory.snapshotId))
      .where(and(eq(rdapHistory.monitorId, m.id), sql`(${rdapHistory.observedAt}, ${rdapHistory.id}) < (${to.timestamp}, ${to.id})`))
      .orderBy(desc(rdapHistory.observedAt), desc(rdapHistory.id))
      .limit(1)
      .get();
    from = before ?? to;
  }
  const [a, b] = await Promise.all([bodyOf(db, from.snapshotId), bodyOf(db, to.snapshotId)]);
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
