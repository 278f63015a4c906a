/**
 * What the certificate watcher declares for the DNS watcher's mail checks
 * (docs/modules/dns-watcher.md#dane-what-the-mail-servers-serve): the certificate
 * monitors of MX hosts on port 25 with STARTTLS and what their targets served last (the
 * chain, kept for these scans only), so the DNS watcher can match it against the hosts'
 * DANE TLSA records; and the creation of such a monitor (the mail-server offers).
 * Declared here so the certificate watcher never imports the DNS watcher.
 */
import { and, asc, desc, eq, inArray, lt } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonArray } from "../../db/in-json";
import { certMonitors, certScans, certTargets } from "../../db/schema";
import type { Tenant } from "../../platform/tenant";
import { createMonitor } from "./monitor-service";

/** SMTP between mail servers (RFC 5321): where DANE for mail applies (RFC 7672). */
export const MAIL_SERVER_PORT = 25;

/** Whether a monitor's scans keep the chain served: mail servers on port 25 with STARTTLS. */
export const keepsChain = (m: { port: number; starttls: string | null }) => m.port === MAIL_SERVER_PORT && m.starttls === "smtp";

export interface MailServerTarget {
  targetId: number;
  ipAddress: string;
  /** Target and monitor enabled. */
  enabled: boolean;
  /** The scan read (null: never scanned). */
  scanId: number | null;
  scannedAt: string | null;
  /** Why the scan obtained no chain; "" when it did. */
  error: string;
  /** The chain served, DER, the server's certificate first; null when the scan kept none. */
  chain: Uint8Array[] | null;
}

export interface MailServerMonitor {
  monitorId: number;
  hostname: string;
  enabled: boolean;
  targets: MailServerTarget[];
}

const fromBase64 = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

/**
 * The organization's port-25 STARTTLS monitors of these hostnames (one per hostname, the
 * oldest) with each target's latest scan. `asBefore`: read that target as it stood before
 * that scan (its previous scan), to compare what one scan changed.
 */
export async function mailServerMonitors(
  db: Db,
  organizationId: number,
  hostnames: readonly string[],
  asBefore?: { targetId: number; scanId: number },
): Promise<Map<string, MailServerMonitor>> {
  const out = new Map<string, MailServerMonitor>();
  if (!hostnames.length) return out;
  const rows = await db
    .select({ monitor: certMonitors, target: certTargets })
    .from(certMonitors)
    .leftJoin(certTargets, eq(certTargets.monitorId, certMonitors.id))
    .where(and(eq(certMonitors.organizationId, organizationId), eq(certMonitors.port, MAIL_SERVER_PORT), eq(certMonitors.starttls, "smtp"), inJsonArray(certMonitors.cn, hostnames)))
    .orderBy(asc(certMonitors.id), asc(certTargets.id))
    .all();
  const scanIds = rows.map((r) => r.target?.lastScanId).filter((id): id is number => typeof id === "number" && id !== asBefore?.scanId);
  if (asBefore) {
    const previous = await db
      .select({ id: certScans.id })
      .from(certScans)
      .where(and(eq(certScans.organizationId, organizationId), eq(certScans.targetId, asBefore.targetId), lt(certScans.id, asBefore.scanId)))
      .orderBy(desc(certScans.id))
      .limit(1)
      .get();
    if (previous) scanIds.push(previous.id);
  }
  const scans = scanIds.length
    ? await db
        .select({ id: certScans.id, targetId: certScans.targetId, scannedAt: certScans.scannedAt, hasError: certScans.hasError, error: certScans.error, result: certScans.result })
        .from(certScans)
        .where(and(eq(certScans.organizationId, organizationId), inArray(certScans.id, scanIds)))
        .all()
    : [];
  const scanOf = new Map(scans.map((s) => [s.targetId, s]));
  for (const { monitor, target } of rows) {
    let m = out.get(monitor.cn);
    if (m && m.monitorId !== monitor.id) continue;
    if (!m) out.set(monitor.cn, (m = { monitorId: monitor.id, hostname: monitor.cn, enabled: monitor.enabled, targets: [] }));
    if (!target) continue;
    const scan = scanOf.get(target.id) ?? null;
    const der = scan?.result?.certificate?.der;
    const chain = scan && !scan.hasError && der ? [der, ...(scan.result.intermediates_der ?? [])].map(fromBase64) : null;
    m.targets.push({
      targetId: target.id,
      ipAddress: target.ipAddress,
      enabled: monitor.enabled && target.enabled,
      scanId: scan?.id ?? null,
      scannedAt: scan?.scannedAt ?? null,
      error: scan?.hasError ? scan.error || "the scan failed" : "",
      chain,
    });
  }
  return out;
}

/** Creates the certificate monitor of an MX host: port 25, STARTTLS (quota and duplicates as for any monitor). */
export function createMailServerMonitor(t: Tenant, hostname: string, ipAddresses: string[], notes: string, now: Date) {
  return createMonitor(t, { cn: hostname, port: MAIL_SERVER_PORT, enabled: true, notes, starttls: "smtp", ip_addresses: ipAddresses }, now);
}
