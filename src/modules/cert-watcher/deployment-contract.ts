/**
 * What the certificate watcher declares for the certificate inventory
 * (src/modules/inventory/, docs/modules/inventory.md): the monitored targets of a name,
 * and a seam the inventory plugs into to hear of accepted scans and monitor changes.
 * Declared here so the certificate watcher never imports the inventory (nor the CT
 * module): the inventory depends on it, not the other way round.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { LeafCertificate, Validation } from "@trust-plane/scan-contract";
import type { Bindings } from "../../env";
import type { Db } from "../../db/client";
import { inJsonArray } from "../../db/in-json";
import { certMonitors, certTargets } from "../../db/schema";
import { logUnexpected } from "../../platform/collection/log";
import type { CertScanEvent } from "./events";

/** A scan the service accepted, as the inventory needs it. */
export interface AcceptedScan {
  organizationId: number;
  monitorId: number;
  targetId: number;
  /** The monitor's name: the hostname the target serves. */
  hostname: string;
  ipAddress: string;
  port: number;
  scanId: number;
  scannedAt: string;
  hasError: boolean;
  /** The leaf served, with `der` and `spki_sha256` when the agent sent them. */
  certificate: LeafCertificate | null;
  validation: Validation | null;
  selfSigned: boolean;
  /** The scan's event (the not_in_ct event is built from it). */
  event: CertScanEvent;
}

export interface DeploymentObserver {
  /** Who listens, for the log ("inventory"). */
  name: string;
  /** After a scan result is stored (its failure never fails the agent's post: it is logged). */
  scanAccepted(env: Bindings, db: Db, scan: AcceptedScan, now: Date): Promise<void>;
  /** After monitors or targets of these names were created, changed or removed (the names are re-evaluated soon). */
  monitorsChanged(db: Db, organizationId: number, hostnames: readonly string[]): Promise<void>;
}

/** The inventory, and the DNS watcher's DANE check of mail servers (each connects once). */
const connected: DeploymentObserver[] = [];

/** Called once per observer when the app is built (src/app.ts `connectModules`). */
export function connectDeploymentObserver(observer: DeploymentObserver): void {
  if (!connected.includes(observer)) connected.push(observer);
}

export async function tellScanAccepted(env: Bindings, db: Db, scan: AcceptedScan, now: Date): Promise<void> {
  for (const observer of connected) {
    try {
      await observer.scanAccepted(env, db, scan, now);
    } catch (err) {
      // The scan is stored; the observer catches up at the target's next scan.
      logUnexpected(`cert-watcher: ${observer.name} update after scan ${scan.scanId}`, err);
    }
  }
}

export async function tellMonitorsChanged(db: Db, organizationId: number, hostnames: readonly string[]): Promise<void> {
  if (!hostnames.length) return;
  for (const observer of connected) {
    try {
      await observer.monitorsChanged(db, organizationId, [...new Set(hostnames)]);
    } catch (err) {
      logUnexpected(`cert-watcher: ${observer.name} update after a monitor change of ${hostnames.join(", ")}`, err);
    }
  }
}

/** A monitored endpoint of a name: the monitor and one of its IP targets. */
export interface MonitoredTarget {
  organizationId: number;
  monitorId: number;
  targetId: number;
  hostname: string;
  port: number;
  ipAddress: string;
  /** Monitor and target both enabled. */
  enabled: boolean;
  lastScanAt: string | null;
  /** The latest attempt failed (its classified error), or null. */
  error: string | null;
}

/**
 * The monitored targets of these names (a system read over organizations: the pairs
 * carry theirs). A wildcard `*.example.com` is served by the monitors of the names one
 * label below example.com.
 */
export async function monitoredTargets(db: Db, names: readonly { organizationId: number; hostname: string }[]): Promise<MonitoredTarget[]> {
  if (!names.length) return [];
  const exact = names.filter((n) => !n.hostname.startsWith("*."));
  const wild = names.filter((n) => n.hostname.startsWith("*."));
  const pairs = JSON.stringify(exact.map((n) => [n.organizationId, n.hostname]));
  const bases = JSON.stringify(wild.map((n) => [n.organizationId, n.hostname.slice(2)]));
  const select = {
    organizationId: certMonitors.organizationId,
    monitorId: certMonitors.id,
    targetId: certTargets.id,
    hostname: certMonitors.cn,
    port: certMonitors.port,
    ipAddress: certTargets.ipAddress,
    enabled: sql<number>`${certMonitors.enabled} AND ${certTargets.enabled}`,
    lastScanAt: certTargets.lastScanAt,
    error: certTargets.collectionError,
  };
  const rows = [];
  if (exact.length) {
    rows.push(
      ...(await db
        .select(select)
        .from(certMonitors)
        .innerJoin(certTargets, eq(certTargets.monitorId, certMonitors.id))
        .where(sql`(${certMonitors.organizationId}, ${certMonitors.cn}) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(${pairs}))`)
        .all()),
    );
  }
  if (wild.length) {
    // One label below the base: "<label>.<base>" with no dot in <label>.
    const base = sql`json_extract(b.value, '$[1]')`;
    rows.push(
      ...(await db
        .select(select)
        .from(certMonitors)
        .innerJoin(certTargets, eq(certTargets.monitorId, certMonitors.id))
        .where(
          sql`EXISTS (SELECT 1 FROM json_each(${bases}) AS b WHERE ${certMonitors.organizationId} = json_extract(b.value, '$[0]')
            AND ${certMonitors.cn} LIKE '%.' || ${base} AND instr(substr(${certMonitors.cn}, 1, length(${certMonitors.cn}) - length(${base}) - 1), '.') = 0)`,
        )
        .all()),
    );
  }
  // A target asked for by its name and by the wildcard above it comes back once.
  return [...new Map(rows.map((r) => [r.targetId, r])).values()].map((r) => ({ ...r, enabled: Boolean(r.enabled) }));
}

/** The names an organization's certificate monitors watch (each once). */
export async function monitoredHostnames(db: Db, organizationId: number): Promise<string[]> {
  const rows = await db.selectDistinct({ cn: certMonitors.cn }).from(certMonitors).where(eq(certMonitors.organizationId, organizationId)).all();
  return rows.map((r) => r.cn);
}

/** The names of these monitors (before they change or go), for tellMonitorsChanged. */
export async function hostnamesOfMonitors(db: Db, organizationId: number, monitorIds: readonly number[]): Promise<string[]> {
  if (!monitorIds.length) return [];
  const rows = await db
    .select({ cn: certMonitors.cn })
    .from(certMonitors)
    .where(and(eq(certMonitors.organizationId, organizationId), inJsonArray(certMonitors.id, monitorIds)))
    .all();
  return rows.map((r) => r.cn);
}

/** Whether these targets still exist (the inventory forgets what it kept of the others). */
export async function existingTargets(db: Db, targetIds: readonly number[]): Promise<Set<number>> {
  if (!targetIds.length) return new Set();
  const rows = await db.select({ id: certTargets.id }).from(certTargets).where(inArray(certTargets.id, [...targetIds])).all();
  return new Set(rows.map((r) => r.id));
}
