/**
 * How certificate monitors, their targets and scans read in the API
 * (docs/modules/cert-watcher.md): the views with their indicators and collection state,
 * and the reads behind them. Shared by the monitor, target and scan endpoints.
 */
import { asc, eq, inArray } from "drizzle-orm";
import { certMonitors, certScans, certTargets } from "../../db/schema";
import type { Tenant } from "../../platform/tenant";
import { daysLeft, monitorIndicators, validityStatus, type Indicators } from "./indicators";
import { agentsNote, agentsState, monitorCollection, scanTargetName, sniOf, targetCollection, targetRecord, type AgentsState } from "./collection";

/** The organization's monitor, or a 404 (another organization's id included). */
export const monitorOf = (t: Tenant, monitorId: number) => t.getOr404(certMonitors, monitorId, "Certificate monitor");

export type MonitorRow = typeof certMonitors.$inferSelect;
export type TargetRow = typeof certTargets.$inferSelect;
export type ScanRow = typeof certScans.$inferSelect;

export function scanSummary(scan: ScanRow, now: Date) {
  return {
    scan_id: scan.id,
    target_id: scan.targetId,
    ip_address: scan.ipAddress,
    scan_time: scan.scannedAt,
    has_error: scan.hasError,
    error: scan.error,
    subject: scan.certSubject,
    issuer: scan.certIssuer,
    not_before: scan.certNotBefore,
    not_after: scan.certNotAfter,
    days_left: scan.certNotAfter ? daysLeft(scan.certNotAfter, now) : null,
    protocol: scan.protocols,
    cipher_count: scan.ciphers.length,
    validity_status: validityStatus(scan.certNotBefore, scan.certNotAfter, now),
    protocol_status: scan.protocolStatus,
    cipher_status: scan.cipherStatus,
    validation_status: scan.validationStatus,
  };
}

/** What a view of targets needs besides the rows: the clock and the organization's agents. */
export interface ViewContext {
  now: Date;
  agents: AgentsState;
}

export function targetView(m: MonitorRow, t: TargetRow, scan: ScanRow | null, ctx: ViewContext) {
  const record = targetRecord(t, scan, scanTargetName(t.ipAddress, m.port, sniOf(m)));
  return {
    id: t.id,
    monitor_id: t.monitorId,
    ip_address: t.ipAddress,
    enabled: t.enabled,
    created_at: t.createdAt,
    last_scan_time: t.lastScanAt,
    last_scan: scan ? scanSummary(scan, ctx.now) : null,
    collection: targetCollection(record, m.enabled && t.enabled, ctx.agents, ctx.now),
  };
}

/** How the organization's targets get scanned: its agents, and what is wrong when none is at work. */
export function scanningView(agents: AgentsState) {
  return { agents_registered: agents.registered, agents_seen_recently: agents.seenRecently, last_agent_seen_at: agents.lastSeenAt, note: agentsNote(agents) };
}

export async function viewContext(t: Tenant, now: Date): Promise<ViewContext> {
  return { now, agents: (await agentsState(t.db, [t.organizationId], now)).get(t.organizationId)! };
}

export function monitorView(m: MonitorRow, targets: { target: TargetRow; scan: ScanRow | null }[], ctx: ViewContext) {
  const now = ctx.now;
  const indicators: Indicators = monitorIndicators(
    targets.map(({ target, scan }) => ({
      enabled: target.enabled,
      scan: scan && {
        hasError: scan.hasError,
        certNotBefore: scan.certNotBefore,
        certNotAfter: scan.certNotAfter,
        protocolStatus: scan.protocolStatus,
        cipherStatus: scan.cipherStatus,
        validationStatus: scan.validationStatus,
      },
    })),
    now,
  );
  return {
    id: m.id,
    cn: m.cn,
    port: m.port,
    target_dns: m.targetDns || null,
    starttls: m.starttls ?? null,
    connection_method: (m.starttls ? "starttls" : "direct_tls") as "starttls" | "direct_tls",
    enabled: m.enabled,
    notes: m.notes,
    root_ca: m.rootCa,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    last_scan_time: m.lastScanTime,
    last_scan: {
      scan_time: m.lastScanTime,
      targets: targets.filter((t) => t.scan).map((t) => scanSummary(t.scan!, now)),
    },
    indicators,
    collection: monitorCollection(
      m.enabled,
      targets.map(({ target, scan }) => ({ enabled: target.enabled, collection: targetView(m, target, scan, ctx).collection })),
    ),
  };
}

/** Targets (with their latest scan) of the given monitors of the organization. */
export async function targetsWithScans(t: Tenant, monitorIds: number[]) {
  const by = new Map<number, { target: TargetRow; scan: ScanRow | null }[]>();
  if (!monitorIds.length) return by;
  const rows = await t.db
    .select({ target: certTargets, scan: certScans })
    .from(certTargets)
    .leftJoin(certScans, eq(certScans.id, certTargets.lastScanId))
    .where(t.where(certTargets, inArray(certTargets.monitorId, monitorIds)))
    .orderBy(asc(certTargets.id))
    .all();
  for (const r of rows) {
    const list = by.get(r.target.monitorId) ?? [];
    list.push(r);
    by.set(r.target.monitorId, list);
  }
  return by;
}
