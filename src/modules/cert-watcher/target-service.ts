/**
 * A certificate monitor's IP targets (docs/modules/cert-watcher.md): their own endpoints,
 * so one address can be paused without touching the monitor. Scoped by the organization's
 * `Tenant` handle; deletes take the target's jobs and scan history in one D1 batch.
 */
import { eq } from "drizzle-orm";
import { certScanJobs, certScans, certTargets } from "../../db/schema";
import { isQuotaGuard, isUniqueViolation } from "../../platform/db-errors";
import { conflict, notFound, quotaExceeded } from "../../platform/errors";
import type { Tenant } from "../../platform/tenant";
import { hostnamesOfMonitors, tellMonitorsChanged } from "./deployment-contract";
import { ipsOf, MAX_TARGETS_PER_MONITOR } from "./monitor-input";
import { monitorOf, targetsWithScans, targetView, viewContext, type TargetRow } from "./views";

async function targetOf(t: Tenant, monitorId: number, targetId: number) {
  const target = await t.first(certTargets, eq(certTargets.id, targetId), eq(certTargets.monitorId, monitorId));
  if (!target) throw notFound("Target");
  return target;
}

export async function listTargets(t: Tenant, monitorId: number, now: Date) {
  const m = await monitorOf(t, monitorId);
  const [targets, ctx] = await Promise.all([targetsWithScans(t, [m.id]).then((by) => by.get(m.id) ?? []), viewContext(t, now)]);
  return { targets: targets.map(({ target, scan }) => targetView(m, target, scan, ctx)) };
}

/**
 * Adds one IP target. The per-monitor cap holds under parallel adds: the insert and a
 * guard on the monitor's target count after it are one batch (the same `quota_guard`
 * mechanism as the tier quotas); an address already there is a 409.
 */
export async function addTarget(t: Tenant, monitorId: number, rawIp: string, now: Date) {
  const m = await monitorOf(t, monitorId);
  const [ip] = ipsOf([rawIp], "ip_address");
  try {
    const [inserted] = await t.db.batch([
      t.insert(certTargets, { monitorId: m.id, ipAddress: ip, createdAt: now.toISOString() }).returning(),
      t.guard("targets_per_monitor", t.usage(certTargets, eq(certTargets.monitorId, m.id)), MAX_TARGETS_PER_MONITOR),
    ]);
    await tellMonitorsChanged(t.db, t.organizationId, [m.cn]);
    return { ...targetView(m, (inserted as TargetRow[])[0], null, await viewContext(t, now)), message: "Target added" };
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`${ip} is already a target of this monitor`);
    if (isQuotaGuard(err)) throw quotaExceeded(`A monitor has at most ${MAX_TARGETS_PER_MONITOR} IP targets`);
    throw err;
  }
}

export async function setTargetEnabled(t: Tenant, monitorId: number, targetId: number, enabled: boolean) {
  const target = await targetOf(t, monitorId, targetId);
  await t.update(certTargets, { enabled }, eq(certTargets.id, target.id)).run();
  await tellMonitorsChanged(t.db, t.organizationId, await hostnamesOfMonitors(t.db, t.organizationId, [monitorId]));
  return { message: enabled ? "Target enabled" : "Target disabled" };
}

export async function deleteTarget(t: Tenant, monitorId: number, targetId: number) {
  const target = await targetOf(t, monitorId, targetId);
  await t.db.batch([
    t.delete(certScans, eq(certScans.targetId, target.id)),
    t.delete(certScanJobs, eq(certScanJobs.targetId, target.id)),
    t.delete(certTargets, eq(certTargets.id, target.id)),
  ]);
  await tellMonitorsChanged(t.db, t.organizationId, await hostnamesOfMonitors(t.db, t.organizationId, [monitorId]));
  return { message: "Target deleted with its scan history" };
}
