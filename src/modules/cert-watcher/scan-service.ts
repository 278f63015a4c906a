/**
 * Scans of certificate monitors (docs/modules/cert-watcher.md): the latest scan of every
 * target, a monitor's scan history with each stored result in detail, and the security
 * standards the verdicts are judged against.
 */
import { asc, desc, eq, sql, type SQL } from "drizzle-orm";
import { ScanResult } from "@trust-plane/scan-contract";
import { legacySuitesOf, securityStandards as frameworkStandards } from "@trust-plane/tls-frameworks";
import { certMonitors, certScans, certTargets } from "../../db/schema";
import { direction, limitOffsetBody, pageOffset, readPage } from "../../platform/paging";
import type { Tenant } from "../../platform/tenant";
import { monitorOf, scanSummary, type ScanRow } from "./views";

export type RecentScanSort = "cn" | "validity" | "protocol" | "cipher" | "validation" | "last_scan_time";

/** Status sorts rank worst first in ascending order; validity sorts by expiry (soonest first, no certificate last). */
const RECENT_SORT_COLUMNS: Record<RecentScanSort, SQL> = {
  cn: sql`${certMonitors.cn}`,
  validity: sql`COALESCE(${certScans.certNotAfter}, '9999')`,
  protocol: sql`CASE ${certScans.protocolStatus} WHEN 'legacy' THEN 0 WHEN 'modern' THEN 1 ELSE 2 END`,
  cipher: sql`CASE ${certScans.cipherStatus} WHEN 'weak' THEN 0 WHEN 'legacy' THEN 1 WHEN 'strong' THEN 2 ELSE 3 END`,
  validation: sql`CASE ${certScans.validationStatus} WHEN 'self_signed' THEN 0 WHEN 'untrusted' THEN 1 WHEN 'hostname_mismatch' THEN 2 WHEN 'trusted' THEN 3 ELSE 4 END`,
  last_scan_time: sql`${certScans.scannedAt}`,
};

/** The latest scan of every target of the organization (one row per scanned target). */
export async function recentScans(t: Tenant, q: { limit: number; offset: number; sort_by: RecentScanSort; sort_order: "asc" | "desc" }, now: Date) {
  const scanned = t.where(certTargets);
  const { rows, total } = await readPage(
    t.db
      .select({ scan: certScans, monitor: certMonitors })
      .from(certTargets)
      .innerJoin(certScans, eq(certScans.id, certTargets.lastScanId))
      .innerJoin(certMonitors, eq(certMonitors.id, certTargets.monitorId))
      .where(scanned)
      .orderBy(direction(q.sort_order)(RECENT_SORT_COLUMNS[q.sort_by]), desc(certScans.scannedAt), asc(certScans.id))
      .limit(q.limit)
      .offset(q.offset),
    t.db.select({ n: sql<number>`count(*)` }).from(certTargets).innerJoin(certScans, eq(certScans.id, certTargets.lastScanId)).where(scanned),
  );
  const scans = rows.map(({ scan, monitor }) => ({
    ...scanSummary(scan, now),
    monitor_id: monitor.id,
    cn: monitor.cn,
    port: monitor.port,
    target_dns: monitor.targetDns || null,
  }));
  return limitOffsetBody("scans", scans, total, q);
}

/** One stored scan with its details (the accepted result) and the verdicts evaluated at acceptance. */
function scanDetail(s: ScanRow) {
  // In the contract's current form: a field added since the result was accepted reads as it does for an agent that omits it.
  const r: Partial<ScanRow["result"]> = (s.result && (ScanResult.safeParse(s.result).data ?? s.result)) ?? {};
  return {
    id: s.id,
    monitor_id: s.monitorId,
    target_id: s.targetId,
    job_id: s.jobId,
    agent_id: s.agentId,
    scan_time: s.scannedAt,
    ip_address: s.ipAddress,
    dns_name: r.dns_name ?? "",
    connection_method: s.connectionMethod,
    has_error: s.hasError,
    error: s.error,
    protocol: s.protocols,
    ciphers: s.ciphers,
    named_groups: s.namedGroups,
    certificate: r.certificate ?? null,
    validity_days: s.validityDays,
    chain_length: s.chainLength,
    intermediates: r.intermediates ?? [],
    validation_path: r.validation_path ?? [],
    validation: r.validation ?? null,
    protocols_detail: r.protocols_detail ?? [],
    cipher_preference: r.cipher_preference ?? null,
    dh_bits: r.dh_bits ?? null,
    duration_ms: r.duration_ms ?? null,
    protocol_status: s.protocolStatus,
    cipher_status: s.cipherStatus,
    validation_status: s.validationStatus,
    weak_suites: s.weakSuites,
    legacy_suites: legacySuitesOf(s.frameworks),
    findings: { expired: s.expired, scan_failed: s.hasError, legacy_protocol: s.legacyProtocol, weak_cipher: s.weakCipher, self_signed: s.selfSigned },
    compliance: Object.fromEntries(s.frameworks.map((v) => [v.id, v.status])),
    frameworks: s.frameworks,
  };
}

export async function scanHistory(t: Tenant, monitorId: number, q: { page: number; page_size: number }) {
  const m = await monitorOf(t, monitorId);
  const ofMonitor = eq(certScans.monitorId, m.id);
  const { rows, total } = await readPage(
    t.select(certScans, ofMonitor).orderBy(desc(certScans.scannedAt), desc(certScans.id)).limit(q.page_size).offset(pageOffset(q)),
    t.countQuery(certScans, ofMonitor),
  );
  return { monitor_id: m.id, scans: rows.map(scanDetail), total, page: q.page, page_size: q.page_size };
}

export function securityStandards() {
  return { standards: frameworkStandards() as unknown as Record<string, unknown>[] };
}
