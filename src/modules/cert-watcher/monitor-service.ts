/**
 * Certificate monitors (docs/modules/cert-watcher.md): list, detail, create, replace,
 * pause and delete. Every query goes through the organization's `Tenant` handle, so it is
 * scoped by organization; another organization's id is a 404. Multi-row writes go through
 * one D1 batch (one transaction): nothing half-saved; quotas and unique keys are checked
 * by the database inside that batch, so parallel requests cannot get past them.
 */
import { asc, eq, sql, type SQL } from "drizzle-orm";
import { certMonitors, certScanJobs, certScans, certTargets } from "../../db/schema";
import { badRequest } from "../../platform/errors";
import { direction, limitOffsetBody, readPage } from "../../platform/paging";
import type { UsageCounter } from "../../platform/quotas";
import { tenantDb, type Tenant } from "../../platform/tenant";
import { tellMonitorsChanged } from "./deployment-contract";
import { duplicateMonitor, ipsOf, MAX_TARGETS_PER_MONITOR, settingsOf, type MonitorSettingsInput } from "./monitor-input";
import { monitorOf, monitorView, scanningView, targetsWithScans, targetView, viewContext } from "./views";

/** The `cert_monitors` quota's usage (connected in src/app.ts). */
export const certMonitorUsage: UsageCounter = (db, organizationId) => tenantDb(db, organizationId).count(certMonitors);

export type MonitorSort = "cn" | "enabled" | "target" | "port" | "last_scan_time" | "created_at";

const MONITOR_SORT_COLUMNS: Record<MonitorSort, SQL | typeof certMonitors.cn> = {
  cn: sql`${certMonitors.cn}`,
  enabled: sql`${certMonitors.enabled}`,
  // "target" = the SNI override target_dns; monitors without one sort first in ascending order.
  target: sql`${certMonitors.targetDns}`,
  port: sql`${certMonitors.port}`,
  last_scan_time: sql`${certMonitors.lastScanTime}`,
  created_at: sql`${certMonitors.createdAt}`,
};

export async function listMonitors(t: Tenant, q: { limit: number; offset: number; sort_by: MonitorSort; sort_order: "asc" | "desc" }, now: Date) {
  const dir = direction(q.sort_order);
  const { rows, total } = await readPage(
    t.select(certMonitors).orderBy(dir(MONITOR_SORT_COLUMNS[q.sort_by]), dir(certMonitors.cn), asc(certMonitors.id)).limit(q.limit).offset(q.offset),
    t.countQuery(certMonitors),
  );
  const [targets, ctx] = await Promise.all([targetsWithScans(t, rows.map((m) => m.id)), viewContext(t, now)]);
  return { ...limitOffsetBody("monitors", rows.map((m) => monitorView(m, targets.get(m.id) ?? [], ctx)), total, q), scanning: scanningView(ctx.agents) };
}

export async function getMonitor(t: Tenant, monitorId: number, now: Date) {
  const m = await monitorOf(t, monitorId);
  const [targets, ctx] = await Promise.all([targetsWithScans(t, [m.id]).then((by) => by.get(m.id) ?? []), viewContext(t, now)]);
  return { ...monitorView(m, targets, ctx), targets: targets.map(({ target, scan }) => targetView(m, target, scan, ctx)), scanning: scanningView(ctx.agents) };
}

/**
 * Creates the monitor with its targets in one D1 batch (one transaction), within the
 * tier's quota ATOMICALLY: the batch ends with the quota guard, so parallel creates
 * can never exceed it (403), and a second (cn, port, target_dns) fails on the unique
 * index (409). Nothing is half-saved either way.
 */
export async function createMonitor(t: Tenant, input: MonitorSettingsInput & { ip_addresses: string[] }, now: Date) {
  const s = settingsOf(input);
  const ips = ipsOf(input.ip_addresses);
  if (ips.length > MAX_TARGETS_PER_MONITOR) throw badRequest(`At most ${MAX_TARGETS_PER_MONITOR} IP targets per monitor`);
  const nowIso = now.toISOString();
  const limit = await t.limit("cert_monitors");
  // The targets find their new monitor by its unique key, inside the same batch.
  const newMonitorId = sql`(SELECT id FROM cert_monitors WHERE ${t.where(certMonitors, eq(certMonitors.cn, s.cn), eq(certMonitors.port, s.port), eq(certMonitors.targetDns, s.targetDns))})`;
  const [created, , used] = await t.run(
    () =>
      t.db.batch([
        t.insert(certMonitors, { ...s, createdAt: nowIso, updatedAt: nowIso }).returning({ id: certMonitors.id }),
        t.guard("cert_monitors", t.usage(certMonitors), limit),
        t.countQuery(certMonitors),
        // (drizzle writes an SQL value into any column; the row type does not say so)
        ...ips.map((ip) => t.insert(certTargets, { monitorId: newMonitorId as unknown as number, ipAddress: ip, createdAt: nowIso })),
      ]),
    { quota: "cert_monitors", duplicate: duplicateMonitor(s) },
  );
  await tellMonitorsChanged(t.db, t.organizationId, [s.cn]);
  return { id: created[0].id, message: "Certificate monitor created", quota_remaining: Math.max(0, limit - (used[0]?.n ?? limit)) };
}

export async function replaceMonitor(t: Tenant, monitorId: number, input: MonitorSettingsInput, now: Date) {
  const m = await monitorOf(t, monitorId);
  const s = settingsOf(input);
  await t.run(() => t.update(certMonitors, { ...s, updatedAt: now.toISOString() }, eq(certMonitors.id, m.id)).run(), { duplicate: duplicateMonitor(s) });
  await tellMonitorsChanged(t.db, t.organizationId, [m.cn, s.cn]);
  return { message: "Certificate monitor updated" };
}

export async function setMonitorEnabled(t: Tenant, monitorId: number, enabled: boolean, now: Date) {
  const m = await monitorOf(t, monitorId);
  await t.update(certMonitors, { enabled, updatedAt: now.toISOString() }, eq(certMonitors.id, m.id)).run();
  await tellMonitorsChanged(t.db, t.organizationId, [m.cn]);
  return { message: enabled ? "Certificate monitor enabled" : "Certificate monitor disabled" };
}

/** Deletes the monitor with its targets, open jobs and scan history, in one transaction. */
export async function deleteMonitor(t: Tenant, monitorId: number) {
  const m = await monitorOf(t, monitorId);
  await t.db.batch([
    t.delete(certScans, eq(certScans.monitorId, m.id)),
    t.delete(certScanJobs, eq(certScanJobs.monitorId, m.id)),
    t.delete(certTargets, eq(certTargets.monitorId, m.id)),
    t.delete(certMonitors, eq(certMonitors.id, m.id)),
  ]);
  await tellMonitorsChanged(t.db, t.organizationId, [m.cn]);
  return { message: "Certificate monitor deleted with its targets and scan history" };
}
