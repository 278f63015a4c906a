/**
 * Certificate monitors and their IP targets (spec "Certificate monitor", ADDENDUM 9
 * and 11): CRUD, listings with indicators, recent scans, scan history.
 *
 * Every query is scoped by organization; another organization's id is a 404.
 * Multi-row writes go through one D1 batch (one transaction): nothing half-saved.
 */
import { and, asc, count, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { certMonitors, certScanJobs, certScans, certTargets, organizations, type StartTlsProtocol } from "../../db/schema";
import { badRequest, conflict, notFound, quotaExceeded, type ErrorDetail } from "../../platform/errors";
import { assertQuota, registerUsageCounter, remaining, type Tier } from "../../platform/quotas";
import { securityStandards as frameworkStandards } from "./frameworks";
import { daysLeft, monitorIndicators, validityStatus, type Indicators } from "./indicators";
import { normalizeHostname, normalizeIp, resolveStartTls, type StartTlsSetting } from "./names";
import { RootCaError, validateRootCaPem } from "./root-ca";

/** Targets one monitor may have. */
export const MAX_TARGETS_PER_MONITOR = 100;

registerUsageCounter("cert_monitors", async (db, organizationId) => {
  const r = await db.select({ n: count() }).from(certMonitors).where(eq(certMonitors.organizationId, organizationId)).get();
  return r?.n ?? 0;
});

async function tierOf(db: Db, organizationId: number): Promise<Tier> {
  const org = await db.select({ tier: organizations.tier }).from(organizations).where(eq(organizations.id, organizationId)).get();
  return (org?.tier ?? "free") as Tier;
}

async function monitorCount(db: Db, organizationId: number): Promise<number> {
  return (await db.select({ n: count() }).from(certMonitors).where(eq(certMonitors.organizationId, organizationId)).get())?.n ?? 0;
}

// ---------------------------------------------------------------------------
// Input

export interface MonitorSettingsInput {
  cn: string;
  port: number;
  target_dns?: string | null;
  enabled: boolean;
  notes: string;
  root_ca?: string | null;
  starttls: StartTlsSetting;
}

interface MonitorSettings {
  cn: string;
  port: number;
  targetDns: string;
  enabled: boolean;
  notes: string;
  rootCa: string | null;
  starttls: StartTlsProtocol | null;
}

/** Validates and normalizes settings; every invalid field is listed in one 400. */
function settingsOf(input: MonitorSettingsInput): MonitorSettings {
  const details: ErrorDetail[] = [];
  const cn = normalizeHostname(input.cn);
  if (!cn) details.push({ path: "cn", message: `'${input.cn}' is not a valid hostname` });
  let targetDns = "";
  if (input.target_dns != null && input.target_dns.trim() !== "") {
    targetDns = normalizeHostname(input.target_dns) ?? "";
    if (!targetDns) details.push({ path: "target_dns", message: `'${input.target_dns}' is not a valid hostname` });
  }
  let rootCa: string | null = null;
  if (input.root_ca != null && input.root_ca.trim() !== "") {
    try {
      validateRootCaPem(input.root_ca);
      rootCa = input.root_ca.trim() + "\n";
    } catch (err) {
      if (!(err instanceof RootCaError)) throw err;
      details.push({ path: "root_ca", message: err.message });
    }
  }
  if (details.length) throw badRequest("Invalid certificate monitor settings", details);
  return {
    cn: cn!,
    port: input.port,
    targetDns,
    enabled: input.enabled,
    notes: input.notes,
    rootCa,
    starttls: resolveStartTls(input.starttls, input.port),
  };
}

/** Normalized IPs, or a 400 listing every invalid one (409 for duplicates in the list). */
function ipsOf(raws: readonly string[], path = "ip_addresses"): string[] {
  const details: ErrorDetail[] = [];
  const out: string[] = [];
  raws.forEach((raw, i) => {
    const ip = normalizeIp(raw);
    if (!ip) details.push({ path: `${path}.${i}`, message: `'${raw}' is not a valid IPv4 or IPv6 address` });
    else out.push(ip);
  });
  if (details.length) throw badRequest("Invalid IP address", details);
  const seen = new Set<string>();
  const dups = out.filter((ip) => (seen.has(ip) ? true : (seen.add(ip), false)));
  if (dups.length) throw conflict(`Duplicate IP address in the list: ${dups.join(", ")}`);
  return out;
}

function isUniqueViolation(err: unknown): boolean {
  return String(err instanceof Error ? `${err.message} ${String(err.cause ?? "")}` : err).includes("UNIQUE");
}

const duplicateMonitor = (s: MonitorSettings) =>
  conflict(`A certificate monitor for ${s.cn}:${s.port}${s.targetDns ? ` (target_dns ${s.targetDns})` : ""} already exists`);

async function assertUnique(db: Db, organizationId: number, s: MonitorSettings, exceptId?: number) {
  const hit = await db
    .select({ id: certMonitors.id })
    .from(certMonitors)
    .where(
      and(
        eq(certMonitors.organizationId, organizationId),
        eq(certMonitors.cn, s.cn),
        eq(certMonitors.port, s.port),
        eq(certMonitors.targetDns, s.targetDns),
      ),
    )
    .get();
  if (hit && hit.id !== exceptId) throw duplicateMonitor(s);
}

async function monitorOf(db: Db, organizationId: number, monitorId: number) {
  const m = await db
    .select()
    .from(certMonitors)
    .where(and(eq(certMonitors.id, monitorId), eq(certMonitors.organizationId, organizationId)))
    .get();
  if (!m) throw notFound("Certificate monitor");
  return m;
}

// ---------------------------------------------------------------------------
// Views

type MonitorRow = typeof certMonitors.$inferSelect;
type TargetRow = typeof certTargets.$inferSelect;
type ScanRow = typeof certScans.$inferSelect;

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
    protocol_status: scan.protocolStatus as "legacy" | "modern" | "unknown",
    cipher_status: scan.cipherStatus as "weak" | "strong" | "unknown",
    validation_status: scan.validationStatus as "self_signed" | "untrusted" | "hostname_mismatch" | "trusted" | "unknown",
  };
}

function targetView(t: TargetRow, scan: ScanRow | null, now: Date) {
  return {
    id: t.id,
    monitor_id: t.monitorId,
    ip_address: t.ipAddress,
    enabled: t.enabled,
    created_at: t.createdAt,
    last_scan_time: t.lastScanAt,
    last_scan: scan ? scanSummary(scan, now) : null,
  };
}

function monitorView(m: MonitorRow, targets: { target: TargetRow; scan: ScanRow | null }[], now: Date) {
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
  };
}

/** Targets (with their latest scan) of the given monitors. */
async function targetsWithScans(db: Db, monitorIds: number[]) {
  if (!monitorIds.length) return new Map<number, { target: TargetRow; scan: ScanRow | null }[]>();
  const rows = await db
    .select({ target: certTargets, scan: certScans })
    .from(certTargets)
    .leftJoin(certScans, eq(certScans.id, certTargets.lastScanId))
    .where(inArray(certTargets.monitorId, monitorIds))
    .orderBy(asc(certTargets.id))
    .all();
  const by = new Map<number, { target: TargetRow; scan: ScanRow | null }[]>();
  for (const r of rows) {
    const list = by.get(r.target.monitorId) ?? [];
    list.push(r);
    by.set(r.target.monitorId, list);
  }
  return by;
}

// ---------------------------------------------------------------------------
// Monitors

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

export async function listMonitors(
  db: Db,
  organizationId: number,
  q: { limit: number; offset: number; sort_by: MonitorSort; sort_order: "asc" | "desc" },
  now: Date,
) {
  const dir = q.sort_order === "asc" ? asc : desc;
  const [rows, total] = await Promise.all([
    db
      .select()
      .from(certMonitors)
      .where(eq(certMonitors.organizationId, organizationId))
      .orderBy(dir(MONITOR_SORT_COLUMNS[q.sort_by]), dir(certMonitors.cn), asc(certMonitors.id))
      .limit(q.limit)
      .offset(q.offset)
      .all(),
    monitorCount(db, organizationId),
  ]);
  const targets = await targetsWithScans(db, rows.map((m) => m.id));
  return {
    monitors: rows.map((m) => monitorView(m, targets.get(m.id) ?? [], now)),
    total,
    limit: q.limit,
    offset: q.offset,
    sort_by: q.sort_by,
    sort_order: q.sort_order,
  };
}

export async function getMonitor(db: Db, organizationId: number, monitorId: number, now: Date) {
  const m = await monitorOf(db, organizationId, monitorId);
  const targets = (await targetsWithScans(db, [m.id])).get(m.id) ?? [];
  return { ...monitorView(m, targets, now), targets: targets.map(({ target, scan }) => targetView(target, scan, now)) };
}

export async function createMonitor(
  db: Db,
  organizationId: number,
  input: MonitorSettingsInput & { ip_addresses: string[] },
  now: Date,
) {
  const s = settingsOf(input);
  const ips = ipsOf(input.ip_addresses);
  if (ips.length > MAX_TARGETS_PER_MONITOR) throw badRequest(`At most ${MAX_TARGETS_PER_MONITOR} IP targets per monitor`);
  const tier = await tierOf(db, organizationId);
  const used = await monitorCount(db, organizationId);
  assertQuota(tier, "cert_monitors", used);
  await assertUnique(db, organizationId, s);
  const nowIso = now.toISOString();
  // The targets find their new monitor by its unique key, inside the same batch.
  const newMonitorId = sql`(SELECT id FROM cert_monitors WHERE organization_id = ${organizationId} AND cn = ${s.cn} AND port = ${s.port} AND target_dns = ${s.targetDns})`;
  const insertMonitor = db
    .insert(certMonitors)
    .values({ organizationId, ...s, createdAt: nowIso, updatedAt: nowIso })
    .returning({ id: certMonitors.id });
  const insertTargets = ips.map((ip) =>
    db.insert(certTargets).values({ organizationId, monitorId: newMonitorId, ipAddress: ip, createdAt: nowIso }),
  );
  try {
    const [created] = await db.batch([insertMonitor, ...insertTargets]);
    return { id: created[0].id, message: "Certificate monitor created", quota_remaining: remaining(tier, "cert_monitors", used + 1) };
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateMonitor(s);
    throw err;
  }
}

export async function replaceMonitor(db: Db, organizationId: number, monitorId: number, input: MonitorSettingsInput, now: Date) {
  const m = await monitorOf(db, organizationId, monitorId);
  const s = settingsOf(input);
  await assertUnique(db, organizationId, s, m.id);
  try {
    await db.update(certMonitors).set({ ...s, updatedAt: now.toISOString() }).where(eq(certMonitors.id, m.id)).run();
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateMonitor(s);
    throw err;
  }
  return { message: "Certificate monitor updated" };
}

export async function setMonitorEnabled(db: Db, organizationId: number, monitorId: number, enabled: boolean, now: Date) {
  const m = await monitorOf(db, organizationId, monitorId);
  await db.update(certMonitors).set({ enabled, updatedAt: now.toISOString() }).where(eq(certMonitors.id, m.id)).run();
  return { message: enabled ? "Certificate monitor enabled" : "Certificate monitor disabled" };
}

/** Deletes the monitor with its targets, open jobs and scan history, in one transaction. */
export async function deleteMonitor(db: Db, organizationId: number, monitorId: number) {
  const m = await monitorOf(db, organizationId, monitorId);
  await db.batch([
    db.delete(certScans).where(eq(certScans.monitorId, m.id)),
    db.delete(certScanJobs).where(eq(certScanJobs.monitorId, m.id)),
    db.delete(certTargets).where(eq(certTargets.monitorId, m.id)),
    db.delete(certMonitors).where(eq(certMonitors.id, m.id)),
  ]);
  return { message: "Certificate monitor deleted with its targets and scan history" };
}

// ---------------------------------------------------------------------------
// Targets (ADDENDUM 9)

async function targetOf(db: Db, organizationId: number, monitorId: number, targetId: number) {
  const t = await db
    .select()
    .from(certTargets)
    .where(and(eq(certTargets.id, targetId), eq(certTargets.monitorId, monitorId), eq(certTargets.organizationId, organizationId)))
    .get();
  if (!t) throw notFound("Target");
  return t;
}

export async function listTargets(db: Db, organizationId: number, monitorId: number, now: Date) {
  const m = await monitorOf(db, organizationId, monitorId);
  const targets = (await targetsWithScans(db, [m.id])).get(m.id) ?? [];
  return { targets: targets.map(({ target, scan }) => targetView(target, scan, now)) };
}

export async function addTarget(db: Db, organizationId: number, monitorId: number, rawIp: string, now: Date) {
  const m = await monitorOf(db, organizationId, monitorId);
  const [ip] = ipsOf([rawIp], "ip_address").map((x) => x);
  const n = (await db.select({ n: count() }).from(certTargets).where(eq(certTargets.monitorId, m.id)).get())?.n ?? 0;
  if (n >= MAX_TARGETS_PER_MONITOR) throw quotaExceeded(`A monitor has at most ${MAX_TARGETS_PER_MONITOR} IP targets`);
  const dup = () => conflict(`${ip} is already a target of this monitor`);
  if (await db.select({ id: certTargets.id }).from(certTargets).where(and(eq(certTargets.monitorId, m.id), eq(certTargets.ipAddress, ip))).get()) throw dup();
  try {
    const [t] = await db
      .insert(certTargets)
      .values({ organizationId, monitorId: m.id, ipAddress: ip, createdAt: now.toISOString() })
      .returning()
      .all();
    return { ...targetView(t, null, now), message: "Target added" };
  } catch (err) {
    if (isUniqueViolation(err)) throw dup();
    throw err;
  }
}

export async function setTargetEnabled(db: Db, organizationId: number, monitorId: number, targetId: number, enabled: boolean) {
  const t = await targetOf(db, organizationId, monitorId, targetId);
  await db.update(certTargets).set({ enabled }).where(eq(certTargets.id, t.id)).run();
  return { message: enabled ? "Target enabled" : "Target disabled" };
}

export async function deleteTarget(db: Db, organizationId: number, monitorId: number, targetId: number) {
  const t = await targetOf(db, organizationId, monitorId, targetId);
  await db.batch([
    db.delete(certScans).where(eq(certScans.targetId, t.id)),
    db.delete(certScanJobs).where(eq(certScanJobs.targetId, t.id)),
    db.delete(certTargets).where(eq(certTargets.id, t.id)),
  ]);
  return { message: "Target deleted with its scan history" };
}

// ---------------------------------------------------------------------------
// Recent scans, history, standards

export type RecentScanSort = "cn" | "validity" | "protocol" | "cipher" | "validation" | "last_scan_time";

/** Status sorts rank worst first in ascending order; validity sorts by expiry (soonest first, no certificate last). */
const RECENT_SORT_COLUMNS: Record<RecentScanSort, SQL> = {
  cn: sql`${certMonitors.cn}`,
  validity: sql`COALESCE(${certScans.certNotAfter}, '9999')`,
  protocol: sql`CASE ${certScans.protocolStatus} WHEN 'legacy' THEN 0 WHEN 'modern' THEN 1 ELSE 2 END`,
  cipher: sql`CASE ${certScans.cipherStatus} WHEN 'weak' THEN 0 WHEN 'strong' THEN 1 ELSE 2 END`,
  validation: sql`CASE ${certScans.validationStatus} WHEN 'self_signed' THEN 0 WHEN 'untrusted' THEN 1 WHEN 'hostname_mismatch' THEN 2 WHEN 'trusted' THEN 3 ELSE 4 END`,
  last_scan_time: sql`${certScans.scannedAt}`,
};

/** The latest scan of every target of the organization (one row per scanned target). */
export async function recentScans(
  db: Db,
  organizationId: number,
  q: { limit: number; offset: number; sort_by: RecentScanSort; sort_order: "asc" | "desc" },
  now: Date,
) {
  const dir = q.sort_order === "asc" ? asc : desc;
  const where = eq(certTargets.organizationId, organizationId);
  const [rows, total] = await Promise.all([
    db
      .select({ scan: certScans, monitor: certMonitors })
      .from(certTargets)
      .innerJoin(certScans, eq(certScans.id, certTargets.lastScanId))
      .innerJoin(certMonitors, eq(certMonitors.id, certTargets.monitorId))
      .where(where)
      .orderBy(dir(RECENT_SORT_COLUMNS[q.sort_by]), desc(certScans.scannedAt), asc(certScans.id))
      .limit(q.limit)
      .offset(q.offset)
      .all(),
    db
      .select({ n: count() })
      .from(certTargets)
      .innerJoin(certScans, eq(certScans.id, certTargets.lastScanId))
      .where(where)
      .get(),
  ]);
  return {
    scans: rows.map(({ scan, monitor }) => ({
      ...scanSummary(scan, now),
      monitor_id: monitor.id,
      cn: monitor.cn,
      port: monitor.port,
      target_dns: monitor.targetDns || null,
    })),
    total: total?.n ?? 0,
    limit: q.limit,
    offset: q.offset,
    sort_by: q.sort_by,
    sort_order: q.sort_order,
  };
}

function scanDetail(s: ScanRow) {
  const r = s.result as Record<string, any>;
  const verdicts = s.frameworks as { id: string; status: "pass" | "fail" | "unknown" }[];
  return {
    id: s.id,
    monitor_id: s.monitorId,
    target_id: s.targetId,
    job_id: s.jobId,
    agent_id: s.agentId,
    scan_time: s.scannedAt,
    ip_address: s.ipAddress,
    dns_name: typeof r.dns_name === "string" ? r.dns_name : "",
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
    protocol_status: s.protocolStatus as "legacy" | "modern" | "unknown",
    cipher_status: s.cipherStatus as "weak" | "strong" | "unknown",
    validation_status: s.validationStatus as "self_signed" | "untrusted" | "hostname_mismatch" | "trusted" | "unknown",
    weak_suites: s.weakSuites as { code: number; name: string; weaknesses: string[] }[],
    findings: { expired: s.expired, scan_failed: s.hasError, legacy_protocol: s.legacyProtocol, weak_cipher: s.weakCipher, self_signed: s.selfSigned },
    compliance: Object.fromEntries(verdicts.map((v) => [v.id, v.status])),
    frameworks: s.frameworks as any[],
  };
}

export async function scanHistory(db: Db, organizationId: number, monitorId: number, q: { page: number; page_size: number }) {
  const m = await monitorOf(db, organizationId, monitorId);
  const where = and(eq(certScans.monitorId, m.id), eq(certScans.organizationId, organizationId));
  const [rows, total] = await Promise.all([
    db
      .select()
      .from(certScans)
      .where(where)
      .orderBy(desc(certScans.scannedAt), desc(certScans.id))
      .limit(q.page_size)
      .offset((q.page - 1) * q.page_size)
      .all(),
    db.select({ n: count() }).from(certScans).where(where).get(),
  ]);
  return { monitor_id: m.id, scans: rows.map(scanDetail), total: total?.n ?? 0, page: q.page, page_size: q.page_size };
}

export function securityStandards() {
  return { standards: frameworkStandards() as unknown as Record<string, unknown>[] };
}
