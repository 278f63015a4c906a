/**
 * Certificate deployments, read from what the cert-watcher records: the audit
 * columns of `cert_scans` (expired, has_error, legacy_protocol, weak_cipher,
 * self_signed, set when the agent's result was accepted) and each target's pointer
 * to its latest scan.
 *
 * Assets are the IP targets of the monitors (`cn:port (ip)`): enabled when both the
 * target and its monitor are. Live, an endpoint counts by its latest scan, and a
 * certificate that expired since that scan counts as expired (as the monitor
 * indicators do); in a report, every scan inside the period counts. Freshness is the
 * target's collection state as the cert-watcher keeps it (a scan that obtained a TLS
 * answer is a success; a failed scan, or a job no agent answered, a failed attempt):
 * live its last success, in a report its newest scan without error by the period's end
 * (every scan is stored, so a week generated late is judged exactly).
 */
import { desc, eq, gte, lt, or, sql } from "drizzle-orm";
import { certMonitors, certScans, certTargets } from "../../../db/schema/cert-watcher";
import { LEGACY_PROTOCOLS, validityStatus } from "../../cert-watcher/contract";
import type { MonitoredAsset } from "../document";
import { sanitizeFailureMessage } from "../../../platform/collection";
import type { CollectionRecord } from "../../../platform/collection";
import { scanTargetName, targetRecord } from "../../cert-watcher/contract";
import { coverageOf, enabledAt, iso, type AuditScope, type ReaderPlan } from "./scope";
import type { EndpointScan } from "./types";

const scanColumns = {
  scannedAt: certScans.scannedAt,
  hasError: certScans.hasError,
  error: certScans.error,
  sha256: certScans.certSha256,
  subject: certScans.certSubject,
  issuer: certScans.certIssuer,
  notAfter: certScans.certNotAfter,
  expired: certScans.expired,
  selfSigned: certScans.selfSigned,
  protocols: certScans.protocols,
  weakSuites: certScans.weakSuites,
  cipherStatus: certScans.cipherStatus,
  validationStatus: certScans.validationStatus,
};

/** A scan's audit columns (all null for a target never scanned: a left join). */
interface ScanRow {
  scannedAt: string | null;
  hasError: boolean | null;
  error: string | null;
  sha256: string | null;
  subject: string | null;
  issuer: string | null;
  notAfter: string | null;
  expired: boolean | null;
  selfSigned: boolean | null;
  protocols: string[] | null;
  weakSuites: unknown[] | null;
  cipherStatus: string | null;
  validationStatus: string | null;
}

const endpointName = (cn: string, port: number, ip: string) => `${cn}:${port} (${ip})`;

function endpointScan(cn: string, port: number, ip: string, s: ScanRow, expiredNow: boolean): EndpointScan {
  return {
    hostname: cn,
    port,
    ip_address: ip,
    scanned_at: s.scannedAt!,
    has_error: s.hasError === true,
    error: sanitizeFailureMessage(s.error ?? ""),
    sha256: s.sha256,
    subject: s.subject,
    issuer: s.issuer,
    not_after: s.notAfter,
    expired: s.expired === true || expiredNow,
    self_signed: s.selfSigned === true,
    legacy_protocols: (s.protocols ?? []).filter((p) => LEGACY_PROTOCOLS.includes(p)),
    weak_suites: ((s.weakSuites ?? []) as { name?: string }[]).map((w) => w.name ?? "").filter(Boolean),
  };
}

/** The appendix line of one endpoint. */
function assetOf(name: string, enabled: boolean, s: ScanRow | null, collection: CollectionRecord, now: Date): MonitoredAsset {
  const base = { module: "cert-watcher" as const, asset: name, last_collected_at: collection.lastSuccessAt };
  if (!enabled) return { ...base, status: "paused", state: "Paused", detail: "target or monitor disabled" };
  // Never scanned, with the reason when attempts failed (no agent took the job, it gave up).
  if (!s?.scannedAt) return { ...base, status: collection.errorMessage ? "problem" : "pending", state: "Not yet scanned", detail: collection.errorMessage ?? "" };
  if (s.hasError) return { ...base, status: "problem", state: "Scan failed", detail: collection.errorMessage ?? sanitizeFailureMessage(s.error ?? "") };
  const validity = validityStatus(null, s.notAfter, now);
  const legacy = (s.protocols ?? []).filter((p) => LEGACY_PROTOCOLS.includes(p));
  const problems = [
    validity === "expired" && "Expired",
    legacy.length > 0 && "Legacy TLS",
    s.cipherStatus === "weak" && "Weak ciphers",
    s.selfSigned && "Self-signed",
  ].filter(Boolean) as string[];
  const detail = [
    s.notAfter ? `${validity === "expired" ? "expired" : "expires"} ${s.notAfter.slice(0, 10)}` : "",
    (s.protocols ?? []).join(", "),
    s.validationStatus && s.validationStatus !== "trusted" ? `chain ${s.validationStatus.replace(/_/g, " ")}` : "",
  ]
    .filter(Boolean)
    .join("; ");
  if (problems.length) return { ...base, status: "problem", state: problems.join(", "), detail };
  if (validity === "expiring_soon") return { ...base, status: "attention", state: "Expiring soon", detail };
  return { ...base, status: "ok", state: "Valid", detail };
}

type TargetRow = ScanRow & {
  ip: string;
  targetEnabled: boolean;
  createdAt: string;
  lastScanAt: string | null;
  cn: string;
  port: number;
  monitorEnabled: boolean;
  monitorUpdatedAt: string;
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  collectionFailingSince: string | null;
  collectionFailures: number;
  collectionNextAttemptAt: string | null;
  collectionErrorClass: string | null;
  collectionError: string | null;
  targetDns: string | null;
  /** Newest scan without error, and newest scan, at or before the period's end (a report only). */
  collectedByEnd?: string | null;
  scannedByEnd?: string | null;
};
type FlaggedRow = ScanRow & { cn: string; port: number; ip: string };

/**
 * A target's collection record: as the cert-watcher keeps it (its latest scan standing
 * for an attempt made before that was recorded); in a report, collected as of the
 * period's end.
 */
function collectionOf(r: TargetRow): CollectionRecord {
  const latest = r.scannedAt ? { scannedAt: r.scannedAt, hasError: r.hasError === true, error: r.error ?? "" } : null;
  const record = targetRecord(r as Parameters<typeof targetRecord>[0], latest, scanTargetName(r.ip, r.port, r.targetDns || r.cn));
  return r.scannedByEnd === undefined ? record : { ...record, lastSuccessAt: r.collectedByEnd ?? null };
}

export function readCertificates(scope: AuditScope): ReaderPlan<{ endpoint_scans: EndpointScan[] }> {
  const { t, now, asOf } = scope;
  const period = scope.mode === "period";
  const statements = [
    // Every target with its monitor and its latest scan: coverage, live facts and the appendix in one query.
    t.db
      .select({
        ip: certTargets.ipAddress,
        targetEnabled: certTargets.enabled,
        createdAt: certTargets.createdAt,
        lastScanAt: certTargets.lastScanAt,
        cn: certMonitors.cn,
        port: certMonitors.port,
        // Aliased: a D1 batch returns rows as objects, where two columns both named
        // `enabled` would collapse into one (and shift every column after them).
        monitorEnabled: sql`${certMonitors.enabled}`.mapWith(Boolean).as("monitor_enabled"),
        monitorUpdatedAt: certMonitors.updatedAt,
        targetDns: certMonitors.targetDns,
        ...scanColumns,
        // The target's collection state (cert-watcher/collection.ts): a success is a scan
        // that obtained a TLS answer; jobs no agent answered are failed attempts too.
        lastAttemptAt: certTargets.lastAttemptAt,
        lastSuccessAt: certTargets.lastSuccessAt,
        collectionFailingSince: certTargets.collectionFailingSince,
        collectionFailures: certTargets.collectionFailures,
        collectionNextAttemptAt: certTargets.collectionNextAttemptAt,
        collectionErrorClass: certTargets.collectionErrorClass,
        collectionError: certTargets.collectionError,
        // A report judges freshness at the period's end: scans are all stored, so its newest
        // successful and newest scan by then are known exactly (a walk back from the end in
        // cert_scans_monitor_time_idx; qualified by hand, as drizzle writes bare column names
        // inside `sql`).
        ...(period
          ? {
              collectedByEnd: sql<string | null>`(SELECT s.scanned_at FROM cert_scans s
                WHERE s.monitor_id = cert_targets.monitor_id AND s.target_id = cert_targets.id AND s.scanned_at <= ${iso(asOf)} AND s.has_error = 0
                ORDER BY s.scanned_at DESC LIMIT 1)`.as("collected_by_end"),
              scannedByEnd: sql<string | null>`(SELECT s.scanned_at FROM cert_scans s
                WHERE s.monitor_id = cert_targets.monitor_id AND s.target_id = cert_targets.id AND s.scanned_at <= ${iso(asOf)}
                ORDER BY s.scanned_at DESC LIMIT 1)`,
            }
          : {}),
      })
      .from(certTargets)
      .innerJoin(certMonitors, eq(certMonitors.id, certTargets.monitorId))
      .leftJoin(certScans, eq(certScans.id, certTargets.lastScanId))
      .where(t.where(certTargets))
      .orderBy(certMonitors.cn, certMonitors.port, certTargets.ipAddress),
    // A report: every scan of the period that showed a condition of a rule.
    ...(period
      ? [
          t.db
            .select({ cn: certMonitors.cn, port: certMonitors.port, ip: certScans.ipAddress, ...scanColumns })
            .from(certScans)
            .innerJoin(certMonitors, eq(certMonitors.id, certScans.monitorId))
            .where(
              t.where(
                certScans,
                gte(certScans.scannedAt, iso(scope.window.start)),
                lt(certScans.scannedAt, iso(scope.window.end)),
                or(eq(certScans.expired, true), eq(certScans.hasError, true), eq(certScans.legacyProtocol, true), eq(certScans.weakCipher, true), eq(certScans.selfSigned, true)),
              ),
            )
            .orderBy(desc(certScans.scannedAt))
            .limit(5000),
        ]
      : []),
  ];

  return {
    statements,
    read(results) {
      const [targets, flagged] = results as [TargetRow[], FlaggedRow[] | undefined];
      // Live: each endpoint by its latest scan, a certificate expired since counting as expired.
      const endpoint_scans: EndpointScan[] = flagged
        ? flagged.map((r) => endpointScan(r.cn, r.port, r.ip, r, false))
        : targets
            .filter((r) => r.targetEnabled && r.monitorEnabled && r.scannedAt)
            .map((r) => endpointScan(r.cn, r.port, r.ip, r, r.notAfter !== null && Date.parse(r.notAfter) <= now.getTime()));

      const coverage = coverageOf(
        "cert-watcher",
        scope,
        targets.map((r) => ({
          asset: endpointName(r.cn, r.port, r.ip),
          // A target has no change time of its own: its monitor's says whether the pair changed since asOf.
          enabled: r.targetEnabled && enabledAt(scope, { enabled: r.monitorEnabled, createdAt: r.createdAt, updatedAt: r.monitorUpdatedAt }),
          createdAt: r.createdAt,
          collection: collectionOf(r),
        })),
      );
      const assets = scope.withAssets
        ? targets.map((r) => assetOf(endpointName(r.cn, r.port, r.ip), r.targetEnabled && r.monitorEnabled, r.scannedAt ? r : null, collectionOf(r), now))
        : [];
      return { facts: { endpoint_scans }, coverage, assets };
    },
  };
}
