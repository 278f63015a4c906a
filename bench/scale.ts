/**
 * bench:scale: the simulation behind the scale model (docs/scale.md).
 *
 * One month of a realistic organization (the 1x profile below) and of one ten times its
 * size (10x: every asset count and every monthly volume times ten), written into a local
 * D1 database through the real schema (every migration of migrations/ applied) and
 * Drizzle, in the shapes and sizes the modules write: real scan results analysed by the
 * Worker's own code, real RDAP answers, CT occurrences and alert events of realistic
 * size. It measures, from D1's own counters:
 *
 *   - bytes per organization per month: D1's `size_after` (the database size D1 bills
 *     and limits) before and after each table's rows, so each table's share includes its
 *     indexes;
 *   - rows written per organization per month: D1's `rows_written` of the inserts, plus
 *     the updates a month of collection makes (DNS and RDAP runs, the scan job
 *     lifecycle), measured on a sample and multiplied;
 *   - D1 time of the writes (`meta.duration`, the database's own execution time), which
 *     is what one database, executing one query at a time, can give;
 *   - the latency of the heaviest reads, through the service's own functions: the
 *     security overview, the CT match listing, the scan history, the DNS, RDAP and alert
 *     histories and the audit log, for the 1x organization alone, then again once the
 *     10x organization shares the database, and for the 10x organization; each next to a
 *     bare `SELECT 1` in the same run (median and p90 of BENCH_RUNS runs).
 *
 * Why wrangler's local D1 (miniflare, the workerd SQLite that `npm start` runs) and not
 * better-sqlite3: it is D1 itself, with its limits (100 bound parameters, 100 KB
 * statements) and its counters (size, rows written, duration), and the service code
 * runs against it unchanged. No native module to build.
 *
 * TLS scans are the largest volume (one row per target per hour, each carrying the
 * agent's result); BENCH_SCAN_DAYS (default 2) days of them are written and their bytes,
 * rows and time multiplied to the month (30 days): the rows are uniform, so the table
 * grows linearly, and the history listing is read through its index whatever its depth.
 *
 * Run: npm run bench:scale   (BENCH_RUNS, BENCH_SCAN_DAYS)
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { getTableColumns, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { getPlatformProxy } from "wrangler";
import { ScanResult } from "@trust-plane/scan-contract";
import { createDb, schema, type Db } from "../src/db/client";
import * as t from "../src/db/schema";
import { loadConfig } from "../src/env";
import { tenantDb } from "../src/platform/tenant";
import { securityOverview } from "../src/modules/reports/overview-service";
import { listMatches } from "../src/modules/ct-log/match-service";
import { scanHistory } from "../src/modules/cert-watcher/scan-service";
import { history as dnsHistory } from "../src/modules/dns-watcher/history-service";
import { history as rdapHistory } from "../src/modules/rdap/service";
import { listHistory as alertHistory } from "../src/modules/alerting/service";
import { listAuditLogs } from "../src/modules/admin/service";
import { analyseScan } from "../src/modules/cert-watcher/scan-result";

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const SCAN_DAYS = Number(process.env.BENCH_SCAN_DAYS ?? 2);
const MONTH_DAYS = 30;
const root = new URL("..", import.meta.url).pathname;
const DAY = 86_400_000;
const now = new Date();
const iso = (ms: number) => new Date(ms).toISOString();
/** The i-th of n moments spread over the last `days` days. */
const spread = (i: number, n: number, days = MONTH_DAYS) => iso(now.getTime() - Math.floor(((i + 0.5) / n) * days * DAY));
const hex = (n: number, salt: string) => (salt + "-" + n.toString(16).padStart(12, "0")).padEnd(64, "0").slice(0, 64);

/** One organization-month at 1x. Counts of assets, then what a month adds. */
const PROFILE = {
  users: 8,
  sessions: 180, // logins a month (12 h sessions, pruned once expired)
  audit: 300, // changes a month
  ctFilters: 15,
  ctCertificates: 400, // certificates a month naming the organization's domains
  ctLogsPerCertificate: 3, // precertificate and certificate, seen in 2-3 logs
  typosquats: 20,
  proposals: 30,
  dnsDomains: 25,
  recordSetsPerDomain: 8,
  dnsChanges: 40,
  rdapMonitors: 25,
  rdapChanges: 5,
  certMonitors: 30,
  targetsPerMonitor: 2,
  scansPerTargetPerDay: 24, // SCAN_INTERVAL_SECONDS 3600
  alerts: 150,
  deliveriesPerAlert: 2,
  reports: 4,
  findingsPerReport: 8,
  mails: 40, // weekly reports to 8 users, invitations
};
type Profile = typeof PROFILE;
const scaled = (k: number): Profile => Object.fromEntries(Object.entries(PROFILE).map(([key, v]) => [key, ["ctLogsPerCertificate", "recordSetsPerDomain", "targetsPerMonitor", "scansPerTargetPerDay", "deliveriesPerAlert", "findingsPerReport"].includes(key) ? v : v * k])) as Profile;

const statePath = mkdtempSync(join(tmpdir(), "trust-plane-scale-"));
const proxy = await getPlatformProxy<{ DB: D1Database }>({ configPath: `${root}wrangler.toml`, persist: { path: statePath } });
const d1 = proxy.env.DB;
const db: Db = createDb(d1);
const config = loadConfig({} as never);

/** D1's size of the database, in bytes (the figure its 10 GB limit applies to). */
async function dbSize(): Promise<number> {
  const r = await d1.prepare("DELETE FROM quota_guard").run();
  return Number((r.meta as { size_after?: number }).size_after ?? 0);
}

interface Written { rows: number; rowsWritten: number; d1Ms: number }
/** Inserts rows of one table in statements under D1's 100 bound parameters, 40 statements per batch. */
async function insert<T extends SQLiteTable>(table: T, rows: T["$inferInsert"][]): Promise<Written> {
  if (rows.length === 0) return { rows: 0, rowsWritten: 0, d1Ms: 0 };
  const columns = Object.keys(getTableColumns(table)).length;
  const perStatement = Math.max(1, Math.floor(100 / columns));
  const statements = [];
  for (let i = 0; i < rows.length; i += perStatement) statements.push(db.insert(table).values(rows.slice(i, i + perStatement) as never));
  const out: Written = { rows: rows.length, rowsWritten: 0, d1Ms: 0 };
  for (let i = 0; i < statements.length; i += 40) {
    const results = (await db.batch(statements.slice(i, i + 40) as never)) as { meta?: { rows_written?: number; duration?: number } }[];
    for (const r of results) {
      out.rowsWritten += r.meta?.rows_written ?? 0;
      out.d1Ms += r.meta?.duration ?? 0;
    }
  }
  return out;
}

/** Per table: bytes added, rows, D1 rows written and time, for one organization-month. */
type Ledger = Map<string, { bytes: number; rows: number; rowsWritten: number; d1Ms: number }>;
async function record(ledger: Ledger, name: string, write: () => Promise<Written>, factor = 1) {
  const before = await dbSize();
  const w = await write();
  const bytes = (await dbSize()) - before;
  const e = ledger.get(name) ?? { bytes: 0, rows: 0, rowsWritten: 0, d1Ms: 0 };
  e.bytes += bytes * factor;
  e.rows += w.rows * factor;
  e.rowsWritten += w.rowsWritten * factor;
  e.d1Ms += w.d1Ms * factor;
  ledger.set(name, e);
}

// Realistic payloads -------------------------------------------------------------------
const scanFixtures = ["ecdsa-trusted", "legacy-weak", "refused"].map((f) => ScanResult.parse(JSON.parse(readFileSync(`${root}test/cert-watcher/fixtures/${f}.json`, "utf8"))));
const rdapAnswer = JSON.parse(readFileSync(`${root}../shared/data/rdap/domain/registry-thin/verisign-hhgames.com.json`, "utf8"));
const ctCert = (name: string, i: number, at: string) => ({
  subject: name, issuer: "C=US, O=Let's Encrypt, CN=R11", dns_names: [name, `www.${name}`, `api.${name}`], sha256: hex(i, "c"), serial: hex(i, "5").slice(0, 36),
  not_before: at, not_after: iso(Date.parse(at) + 90 * DAY), signature_algorithm: "sha256WithRSAEncryption", key_algorithm: "EC", key_size: 256,
  is_precert: i % 2 === 0, log_name: "Google 'Argon2026h1' log", log_index: 900_000_000 + i, aia_issuing: ["http://r11.i.lencr.org/"], ocsp_servers: [],
  scts: [0, 1].map((k) => ({ log_id: Buffer.from(hex(i + k, "l"), "hex").toString("base64"), timestamp: Date.parse(at), version: 0, hash_algorithm: "sha256", signature_algorithm: "ecdsa" })),
});
const caa = (name: string, at: string) => ({ has_records: true, authorized: true, records: ["letsencrypt.org"], error: "", checked_names: [name], issuer_candidates: ["letsencrypt.org"], evaluated_at: at });

/** Writes one organization-month; returns the organization's id and the ledger. */
async function organizationMonth(label: string, p: Profile): Promise<{ org: number; ledger: Ledger }> {
  const ledger: Ledger = new Map();
  const created = iso(now.getTime() - 40 * DAY);
  const [{ id: org }] = await db.insert(t.organizations).values({ name: label, tier: "enterprise", createdAt: created }).returning({ id: t.organizations.id });
  const ids = <T>(rows: { id: T }[]) => rows.map((r) => r.id);

  await record(ledger, "users, sessions", async () => {
    const a = await insert(t.users, Array.from({ length: p.users }, (_, i) => ({ organizationId: org, email: `user${i}@${label}.example`, passwordHash: hex(i, "p"), passwordSalt: hex(i, "s").slice(0, 32), passwordIterations: 100_000, createdAt: created })));
    const users = ids(await db.select({ id: t.users.id }).from(t.users).where(sql`organization_id = ${org}`).all());
    const b = await insert(t.sessions, Array.from({ length: p.sessions }, (_, i) => ({ organizationId: org, userId: users[i % users.length]!, tokenHash: hex(i, `s${org}`), expiresAt: spread(i, p.sessions), createdAt: spread(i, p.sessions) })));
    return { rows: a.rows + b.rows, rowsWritten: a.rowsWritten + b.rowsWritten, d1Ms: a.d1Ms + b.d1Ms };
  });
  await record(ledger, "audit_logs", () => insert(t.auditLogs, Array.from({ length: p.audit }, (_, i) => ({ organizationId: org, userId: null, action: "rdap_monitor.update", targetType: "rdap_monitor", targetId: String(i), clientIp: "203.0.113.7", createdAt: spread(i, p.audit) }))));

  // CT: a month of matches is what the 30-day window keeps.
  await insert(t.ctFilters, Array.from({ length: p.ctFilters }, (_, i) => ({ organizationId: org, pattern: `brand${i}.${label}.example`, matchType: "wide" as const, createdAt: created })));
  const filters = ids(await db.select({ id: t.ctFilters.id }).from(t.ctFilters).where(sql`organization_id = ${org}`).orderBy(t.ctFilters.id).all());
  await record(ledger, "ct matches (30-day window)", async () => {
    const names = Array.from({ length: p.ctCertificates }, (_, i) => `host${i}.brand${i % p.ctFilters}.${label}.example`);
    const matches = await insert(t.ctMatches, names.map((name, i) => ({ organizationId: org, dedupKey: hex(i, `d${org}`), sha256: hex(i, `a${org}`), certificateDomain: name, matchedNames: [name], firstMatchedAt: spread(i, names.length), lastMatchedAt: spread(i, names.length) })));
    const matchIds = ids(await db.select({ id: t.ctMatches.id }).from(t.ctMatches).where(sql`organization_id = ${org}`).orderBy(t.ctMatches.id).all());
    const occ = await insert(t.ctMatchOccurrences, matchIds.flatMap((m, i) => Array.from({ length: p.ctLogsPerCertificate }, (_, k) => ({ organizationId: org, matchId: m, logId: `log-${k}`, logName: `Log ${k}`, logIndex: 900_000_000 + i, sha256: hex(i + k, `a${org}`), isPrecert: k === 0, observedAt: spread(i, matchIds.length), cert: ctCert(names[i]!, i, spread(i, matchIds.length)), caa: caa(names[i]!, spread(i, matchIds.length)) }))) as never);
    const occIds = ids(await db.select({ id: t.ctMatchOccurrences.id }).from(t.ctMatchOccurrences).where(sql`organization_id = ${org}`).orderBy(t.ctMatchOccurrences.id).all());
    const mf = await insert(t.ctMatchFilters, matchIds.map((m, i) => ({ matchId: m, filterId: filters[i % filters.length]!, organizationId: org, matchedNames: [names[i]!], occurrenceId: occIds[i * p.ctLogsPerCertificate]!, createdAt: spread(i, matchIds.length), eventEmittedAt: spread(i, matchIds.length) })));
    return { rows: matches.rows + occ.rows + mf.rows, rowsWritten: matches.rowsWritten + occ.rowsWritten + mf.rowsWritten, d1Ms: matches.d1Ms + occ.d1Ms + mf.d1Ms };
  });
  await record(ledger, "ct lookalikes, proposals", async () => {
    const a = await insert(t.ctTyposquatMatches, Array.from({ length: p.typosquats }, (_, i) => ({ organizationId: org, filterId: filters[i % filters.length]!, candidateDomain: `brand${i}-${label}.example`, dedupKey: hex(i, `t${org}`), sha256: hex(i, `u${org}`), certificateName: `login.brand${i}-${label}.example`, evidence: ["hyphenation", "affix"], evidenceKey: "affix,hyphenation", editDistance: 1, cert: ctCert(`login.brand${i}-${label}.example`, i, spread(i, p.typosquats)), detectedAt: spread(i, p.typosquats), lastSeenAt: spread(i, p.typosquats) })) as never);
    const b = await insert(t.ctProposals, Array.from({ length: p.proposals }, (_, i) => ({ organizationId: org, kind: i % 2 ? ("dns" as const) : ("certs" as const), hostname: `new${i}.brand${i % p.ctFilters}.${label}.example`, filterId: filters[i % filters.length]!, sourceSha256: hex(i, `a${org}`), createdAt: spread(i, p.proposals) })));
    return { rows: a.rows + b.rows, rowsWritten: a.rowsWritten + b.rowsWritten, d1Ms: a.d1Ms + b.d1Ms };
  });

  // DNS: the domains, their record sets, a month of confirmed changes.
  await insert(t.dnsDomains, Array.from({ length: p.dnsDomains }, (_, i) => ({ organizationId: org, domainName: `d${i}.${label}.example`, lastCheckedAt: iso(now.getTime() - 60_000), lastSuccessAt: iso(now.getTime() - 60_000), lastCheckStatus: "ok" as const, dnssecStatus: "validated" as const, createdAt: created })));
  const domains = ids(await db.select({ id: t.dnsDomains.id }).from(t.dnsDomains).where(sql`organization_id = ${org}`).orderBy(t.dnsDomains.id).all());
  await record(ledger, "dns record sets, history, facts", async () => {
    const types = ["A", "AAAA", "MX", "NS", "TXT", "CAA", "TXT", "CNAME"];
    const a = await insert(t.dnsRecordSets, domains.flatMap((d, i) => Array.from({ length: p.recordSetsPerDomain }, (_, k) => ({ organizationId: org, domainId: d, name: k === 6 ? `_dmarc.d${i}.${label}.example` : `d${i}.${label}.example`, type: types[k % types.length]!, valuesJson: JSON.stringify(k === 4 ? ["v=spf1 include:_spf.provider.example -all", "google-site-verification=abcdefghijklmnopqrstuvwxyz0123456789"] : ["192.0.2.10", "192.0.2.11"]), rcode: "NOERROR", createdAt: created }))));
    const b = await insert(t.dnsHistory, Array.from({ length: p.dnsChanges }, (_, i) => ({ organizationId: org, domainId: domains[i % domains.length]!, observedAt: spread(i, p.dnsChanges), kind: "record" as const, recordName: `d${i % domains.length}.${label}.example`, recordType: "MX", oldValues: JSON.stringify(["10 mx1.provider-one.example."]), newValues: JSON.stringify(["10 mx1.provider-two.example."]), detail: "MX changed" })) as never);
    const c = await insert(t.dnsChangeFacts, Array.from({ length: p.dnsChanges }, (_, i) => ({ organizationId: org, domainId: domains[i % domains.length]!, domainName: `d${i % domains.length}.${label}.example`, observedAt: spread(i, p.dnsChanges), kind: "mx_changed" as const, recordName: `d${i % domains.length}.${label}.example`, recordType: "MX", oldValues: JSON.stringify(["10 mx1.provider-one.example."]), newValues: JSON.stringify(["10 mx1.provider-two.example."]), detail: "MX changed" })) as never);
    return { rows: a.rows + b.rows + c.rows, rowsWritten: a.rowsWritten + b.rowsWritten + c.rowsWritten, d1Ms: a.d1Ms + b.d1Ms + c.d1Ms };
  });

  // RDAP: monitors with a baseline snapshot each, and the month's changes.
  await insert(t.rdapMonitors, Array.from({ length: p.rdapMonitors }, (_, i) => ({ organizationId: org, domainName: `r${i}.${label}.example`, tld: "example", lastCheckedAt: iso(now.getTime() - 3_600_000), lastSuccessAt: iso(now.getTime() - 3_600_000), lastCheckStatus: "success" as const, createdAt: created })));
  const rdapMonitors = ids(await db.select({ id: t.rdapMonitors.id }).from(t.rdapMonitors).where(sql`organization_id = ${org}`).orderBy(t.rdapMonitors.id).all());
  await record(ledger, "rdap snapshots, history, facts", async () => {
    const versions = rdapMonitors.map((m, i) => ({ m, i, v: 0 })).concat(Array.from({ length: p.rdapChanges }, (_, j) => ({ m: rdapMonitors[j % rdapMonitors.length]!, i: j % rdapMonitors.length, v: 1 + Math.floor(j / rdapMonitors.length) })));
    const bodies = versions.map(({ i, v }) => {
      const doc = structuredClone(rdapAnswer);
      doc.ldhName = `R${i}.${label}.EXAMPLE`.toUpperCase();
      if (v) doc.nameservers = doc.nameservers.slice(0, 1);
      return JSON.stringify(doc);
    });
    const snapshots = await insert(t.rdapSnapshots, bodies.map((body, k) => ({ hash: hex(k, `h${org}x`), body, sizeBytes: body.length, domainName: `r${versions[k]!.i}.${label}.example` })) as never);
    const snapIds = ids(await db.select({ id: t.rdapSnapshots.id }).from(t.rdapSnapshots).where(sql`domain_name LIKE ${"%." + label + ".example"}`).orderBy(t.rdapSnapshots.id).all());
    const hist = await insert(t.rdapHistory, versions.map(({ m, v }, k) => ({ organizationId: org, monitorId: m, snapshotId: snapIds[k]!, previousSnapshotId: v ? snapIds[versions.findIndex((x) => x.m === m)]! : null, observedAt: v ? spread(k, versions.length) : created, changed: v > 0, rdapServer: "https://rdap.verisign.com/com/v1/", httpStatus: 200 })) as never);
    const histIds = ids(await db.select({ id: t.rdapHistory.id }).from(t.rdapHistory).where(sql`organization_id = ${org}`).orderBy(t.rdapHistory.id).all());
    const facts = await insert(t.rdapChangeFacts, versions.map(({ m, i, v }, k) => ({ historyId: histIds[k]!, organizationId: org, monitorId: m, domainName: `r${i}.${label}.example`, observedAt: spread(k, versions.length), registrarChanged: false, registrantChanged: false, nameserversChanged: v > 0, statusChanged: false, expirationDate: iso(now.getTime() + 300 * DAY), previousExpirationDate: null })) as never);
    return { rows: snapshots.rows + hist.rows + facts.rows, rowsWritten: snapshots.rowsWritten + hist.rowsWritten + facts.rowsWritten, d1Ms: snapshots.d1Ms + hist.d1Ms + facts.d1Ms };
  });

  // TLS: monitors, targets, SCAN_DAYS of hourly scans (multiplied to the month).
  await insert(t.certMonitors, Array.from({ length: p.certMonitors }, (_, i) => ({ organizationId: org, cn: `www${i}.${label}.example`, port: 443, createdAt: created })));
  const monitors = await db.select({ id: t.certMonitors.id, cn: t.certMonitors.cn }).from(t.certMonitors).where(sql`organization_id = ${org}`).orderBy(t.certMonitors.id).all();
  await insert(t.certTargets, monitors.flatMap((m, i) => Array.from({ length: p.targetsPerMonitor }, (_, k) => ({ organizationId: org, monitorId: m.id, ipAddress: `198.51.${k}.${i % 250}`, createdAt: created }))));
  const targets = await db.select({ id: t.certTargets.id, monitorId: t.certTargets.monitorId, ipAddress: t.certTargets.ipAddress }).from(t.certTargets).where(sql`organization_id = ${org}`).orderBy(t.certTargets.id).all();
  const cnOf = new Map(monitors.map((m) => [m.id, m.cn]));
  await record(ledger, "cert scans", async () => {
    const perTarget = p.scansPerTargetPerDay * SCAN_DAYS;
    const rows = targets.flatMap((target, ti) => Array.from({ length: perTarget }, (_, j) => {
      const at = new Date(now.getTime() - j * (DAY / p.scansPerTargetPerDay) - ti * 1000);
      const result = scanFixtures[(ti + j) % 17 === 0 ? 2 : ti % 9 === 0 ? 1 : 0]!;
      const a = analyseScan(result, { monitorId: target.monitorId, monitorCn: cnOf.get(target.monitorId)!, port: 443, sni: cnOf.get(target.monitorId)!, ipAddress: target.ipAddress, starttls: null, now: at });
      const cert = a.event.certificate;
      return {
        organizationId: org, monitorId: target.monitorId, targetId: target.id, jobId: null, agentId: 1, scannedAt: at.toISOString(), ipAddress: target.ipAddress,
        connectionMethod: a.event.connection_method, hasError: a.event.has_error, error: a.event.error, protocols: a.event.protocol, ciphers: a.event.ciphers, namedGroups: a.event.named_groups,
        certSha256: cert?.sha256 || null, certSubject: cert?.subject ?? null, certIssuer: cert?.issuer ?? null, certNotBefore: cert?.not_before || null, certNotAfter: cert?.not_after || null,
        validityDays: a.event.validity_days, chainLength: result.chain_length ?? null, protocolStatus: a.protocolStatus, cipherStatus: a.cipherStatus, validationStatus: a.validationStatus,
        expired: a.findings.expired, legacyProtocol: a.findings.legacyProtocol, weakCipher: a.findings.weakCipher, selfSigned: a.findings.selfSigned, weakSuites: a.weakSuites, frameworks: a.frameworks,
        result: { ...result, ip_address: target.ipAddress, monitor_cn: cnOf.get(target.monitorId)! },
      };
    }));
    return insert(t.certScans, rows as never);
  }, MONTH_DAYS / SCAN_DAYS);
  await db.run(sql`UPDATE cert_targets SET last_scan_id = (SELECT max(s.id) FROM cert_scans s WHERE s.target_id = cert_targets.id), last_scan_at = (SELECT max(s.scanned_at) FROM cert_scans s WHERE s.target_id = cert_targets.id) WHERE organization_id = ${org}`);

  // Alerting: rules, a channel, a month of fired alerts with their deliveries.
  const [{ id: channel }] = await db.insert(t.notificationChannels).values({ organizationId: org, name: "soc", kind: "webhook", settings: { url: "https://soc.example/***" }, secretCiphertext: "x".repeat(200), createdAt: created, updatedAt: created } as never).returning({ id: t.notificationChannels.id });
  await record(ledger, "alert history, deliveries", async () => {
    const a = await insert(t.alertHistory, Array.from({ length: p.alerts }, (_, i) => {
      const at = spread(i, p.alerts);
      const name = `host${i}.brand0.${label}.example`;
      const event = { kind: "match", cert: ctCert(name, i, at), caa: caa(name, at), rate: { count: 1, window: "1h", precert_count: 1, final_count: 0, total_count: 1 }, filter_id: filters[0], matched_at: at, typosquat: { candidate_domain: "", protected_domain: "", certificate_name: "", evidence: [] } };
      return { organizationId: org, module: "ct-log", ruleId: null, ruleName: "New certificate", severity: "medium", subject: hex(i, "c"), eventId: hex(i, `e${org}`), eventSummary: `${name}: certificate by Let's Encrypt`, message: { subject: `[medium] New certificate: ${name}`, body: `${name}: certificate by Let's Encrypt\n\nRule: New certificate (medium)\nModule: ct-log\nEvent:\n${JSON.stringify(event, null, 2)}` }, event, firedAt: at };
    }) as never);
    const hist = ids(await db.select({ id: t.alertHistory.id }).from(t.alertHistory).where(sql`organization_id = ${org}`).orderBy(t.alertHistory.id).all());
    const b = await insert(t.alertDeliveries, hist.flatMap((h, i) => Array.from({ length: p.deliveriesPerAlert }, () => ({ organizationId: org, historyId: h, channelId: channel, status: "delivered" as const, attempts: 1, responseStatus: 200, deliveredAt: spread(i, hist.length), updatedAt: spread(i, hist.length) }))) as never);
    return { rows: a.rows + b.rows, rowsWritten: a.rowsWritten + b.rowsWritten, d1Ms: a.d1Ms + b.d1Ms };
  });

  // Reports: four weekly reports with their findings and appendix; the month's mail.
  await record(ledger, "reports, findings, mail", async () => {
    const appendix = gzipSync(JSON.stringify({ assets: [...domains, ...rdapMonitors, ...targets.map((x) => x.id)].map((id, i) => ({ module: "dns-watcher", asset: `asset${i}.${label}.example`, id, state: "collected 4 min ago", enabled: true })) })).toString("base64");
    const a = await insert(t.reports, Array.from({ length: p.reports }, (_, i) => ({ organizationId: org, reportType: "weekly", periodStart: iso(now.getTime() - (i + 1) * 7 * DAY), periodEnd: iso(now.getTime() - i * 7 * DAY), overallScore: 82, grade: "B", categoryScores: { dns: 70, ct: 100, certificates: 64, rdap: 100, coverage: 100 }, organizationName: label, generatedAt: iso(now.getTime() - i * 7 * DAY), pdfFilename: `trust-plane-weekly-${i}.pdf`, appendix })) as never);
    const reports = ids(await db.select({ id: t.reports.id }).from(t.reports).where(sql`organization_id = ${org}`).all());
    const evidence = Array.from({ length: 10 }, (_, k) => ({ asset: `d${k}.${label}.example`, detail: "MX changed from 10 mx1.provider-one.example. to 10 mx1.provider-two.example.", observed_at: spread(k, 10), fingerprint: null, old_value: "10 mx1.provider-one.example.", new_value: "10 mx1.provider-two.example." }));
    const b = await insert(t.reportFindings, reports.flatMap((r) => Array.from({ length: p.findingsPerReport }, (_, k) => ({ organizationId: org, reportId: r, position: k, ruleId: "dns.mail_or_nameserver_changed", title: "Mail or nameserver records changed", severity: "high", scoreImpact: 12, category: "dns", affectedAssets: 10, evidence, evidenceTotal: 10 }))) as never);
    const c = await insert(t.mailOutbox, Array.from({ length: p.mails }, (_, i) => ({ organizationId: org, toAddress: `user${i % 8}@${label}.example`, subject: "Trust-Plane weekly security audit", body: "Your weekly report is attached.\n".repeat(20), kind: "weekly_report", status: "sent" as const, attempts: 1, createdAt: spread(i, p.mails), sentAt: spread(i, p.mails) })));
    return { rows: a.rows + b.rows + c.rows, rowsWritten: a.rowsWritten + b.rowsWritten + c.rowsWritten, d1Ms: a.d1Ms + b.d1Ms + c.d1Ms };
  });
  return { org, ledger };
}

/**
 * The updates a month of collection makes without adding rows, measured on one day of
 * each statement shape the modules run, then multiplied: the DNS run's one statement for
 * every unchanged domain (every 15 min), the RDAP poll's monitor update (every 6 h), and
 * the scan job lifecycle (job created, leased, done; target's last scan) per scan.
 */
async function collectionUpdates(org: number, p: Profile): Promise<{ rowsWritten: number; d1Ms: number }> {
  let rowsWritten = 0;
  let d1Ms = 0;
  const add = (r: { meta: { rows_written?: number; duration?: number } }, times: number) => {
    rowsWritten += (r.meta.rows_written ?? 0) * times;
    d1Ms += (r.meta.duration ?? 0) * times;
  };
  const at = now.toISOString();
  // DNS: 96 runs a day, each one UPDATE of the unchanged domains' last_checked_at and last_success_at.
  add(await d1.prepare("UPDATE dns_domains SET last_checked_at = ?, last_success_at = ? WHERE organization_id = ?").bind(at, at, org).run(), 96 * MONTH_DAYS);
  // RDAP: 4 polls a day of each monitor: one row per monitor.
  add(await d1.prepare("UPDATE rdap_monitors SET last_checked_at = ?, last_check_status = 'success' WHERE organization_id = ?").bind(at, org).run(), 4 * MONTH_DAYS);
  // Scans: the lifecycle of one job per target, measured once for every target, times the scans of a month per target.
  const perMonth = p.scansPerTargetPerDay * MONTH_DAYS;
  add(await d1.prepare("INSERT INTO cert_scan_jobs (organization_id, monitor_id, target_id, status, created_at, attempts) SELECT organization_id, monitor_id, id, 'pending', ?, 0 FROM cert_targets WHERE organization_id = ?").bind(at, org).run(), perMonth);
  add(await d1.prepare("UPDATE cert_scan_jobs SET status = 'leased', leased_at = ?, lease_expires_at = ?, attempts = attempts + 1 WHERE organization_id = ? AND status = 'pending'").bind(at, at, org).run(), perMonth);
  add(await d1.prepare("UPDATE cert_scan_jobs SET status = 'done', completed_at = ? WHERE organization_id = ? AND status = 'leased'").bind(at, org).run(), perMonth);
  add(await d1.prepare("UPDATE cert_targets SET last_scan_at = ? WHERE organization_id = ?").bind(at, org).run(), perMonth);
  return { rowsWritten, d1Ms };
}

// Reads -------------------------------------------------------------------------------
function quantile(xs: number[], q: number) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}
/**
 * A read's cost two ways: wall-clock through the local D1 (what a caller waits for here),
 * and D1's own execution time of the statements it sends (`meta.duration`, summed), which
 * a busy machine disturbs far less. The statements are captured from Drizzle's logger on
 * a first call, then replayed as they are.
 */
const captured: { query: string; params: unknown[] }[] = [];
const loggedDb = drizzle(d1, { schema, logger: { logQuery: (query, params) => void captured.push({ query, params }) } }) as unknown as Db;
async function measure(fn: (db: Db) => Promise<unknown>): Promise<{ median: number; p90: number; d1Median: number }> {
  captured.length = 0;
  await fn(loggedDb);
  const statements = [...captured];
  const wall: number[] = [];
  const server: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn(db);
    wall.push(performance.now() - t0);
    let ms = 0;
    for (const s of statements) ms += ((await d1.prepare(s.query).bind(...s.params).all()).meta as { duration?: number }).duration ?? 0;
    server.push(ms);
  }
  return { median: quantile(wall, 0.5), p90: quantile(wall, 0.9), d1Median: quantile(server, 0.5) };
}
async function reads(org: number) {
  const monitor = (await db.select({ id: t.certMonitors.id }).from(t.certMonitors).where(sql`organization_id = ${org}`).limit(1).get())!.id;
  const domain = (await db.select({ id: t.dnsDomains.id }).from(t.dnsDomains).where(sql`organization_id = ${org}`).limit(1).get())!.id;
  const rdapDomain = (await db.select({ d: t.rdapMonitors.domainName }).from(t.rdapMonitors).where(sql`organization_id = ${org}`).limit(1).get())!.d;
  const tn = (h: Db) => tenantDb(h, org);
  const measures: [string, (h: Db) => Promise<unknown>][] = [
    ["baseline: SELECT 1", (h) => h.run(sql`SELECT 1`)],
    ["security overview", (h) => securityOverview(tn(h), config, now)],
    ["CT matches, first page", (h) => listMatches(tn(h), { page: 1, page_size: 20, sort_by: "matched_at", sort_order: "desc" } as never, now)],
    ["CT matches, page 10", (h) => listMatches(tn(h), { page: 10, page_size: 20, sort_by: "matched_at", sort_order: "desc" } as never, now)],
    ["scan history of a monitor", (h) => scanHistory(tn(h), monitor, { page: 1, page_size: 20 })],
    ["DNS history of a domain", (h) => dnsHistory(tn(h), domain, { limit: 20, offset: 0 })],
    ["RDAP history of a domain", (h) => rdapHistory(tn(h), rdapDomain, { limit: 30, offset: 0 })],
    ["alert history (ct-log)", (h) => alertHistory(tn(h), "ct-log", { limit: 20, offset: 0 })],
    ["audit log", (h) => listAuditLogs(tn(h), 20, 0)],
  ];
  const out: Record<string, { median: number; p90: number; d1Median: number }> = {};
  for (const [name, fn] of measures) out[name] = await measure(fn);
  return out;
}

// Run ---------------------------------------------------------------------------------
const mb = (b: number) => (b / 1_048_576).toFixed(2);
try {
  for (const f of readdirSync(`${root}migrations`).filter((x) => x.endsWith(".sql")).sort()) {
    for (const stmt of readFileSync(`${root}migrations/${f}`, "utf8").split("--> statement-breakpoint")) if (stmt.trim()) await d1.prepare(stmt).run();
  }
  const empty = await dbSize();
  console.log(`trust-plane bench:scale (local D1 of wrangler ${"4.86.0"}; scans: ${SCAN_DAYS} of ${MONTH_DAYS} days written, multiplied)`);
  console.log(`empty schema: ${mb(empty)} MiB\n`);

  const report = async (label: string, k: number) => {
    const p = scaled(k);
    const t0 = performance.now();
    const { org, ledger } = await organizationMonth(label, p);
    const updates = await collectionUpdates(org, p);
    const seconds = ((performance.now() - t0) / 1000).toFixed(0);
    let bytes = 0, rows = 0, rowsWritten = updates.rowsWritten, d1Ms = updates.d1Ms;
    console.log(`${label} (${k}x), one month, written in ${seconds} s:`);
    console.log("  table group                          MiB/month   rows/month   D1 rows written   D1 ms");
    for (const [name, e] of ledger) {
      bytes += e.bytes; rows += e.rows; rowsWritten += e.rowsWritten; d1Ms += e.d1Ms;
      console.log(`  ${name.padEnd(36)} ${mb(e.bytes).padStart(9)} ${String(Math.round(e.rows)).padStart(12)} ${String(Math.round(e.rowsWritten)).padStart(17)} ${e.d1Ms.toFixed(0).padStart(7)}`);
    }
    console.log(`  ${"collection updates (no new rows)".padEnd(36)} ${"-".padStart(9)} ${"-".padStart(12)} ${String(Math.round(updates.rowsWritten)).padStart(17)} ${updates.d1Ms.toFixed(0).padStart(7)}`);
    console.log(`  ${"total".padEnd(36)} ${mb(bytes).padStart(9)} ${String(Math.round(rows)).padStart(12)} ${String(Math.round(rowsWritten)).padStart(17)} ${d1Ms.toFixed(0).padStart(7)}\n`);
    return { org, bytes, rows, rowsWritten, d1Ms };
  };
  const printReads = (title: string, r: Record<string, { median: number; p90: number; d1Median: number }>) => {
    const base = r["baseline: SELECT 1"]!.median;
    console.log(`${title} (ms, ${RUNS} runs; D1 size now ${mb(lastSize)} MiB)`);
    for (const [name, v] of Object.entries(r)) console.log(`  ${name.padEnd(28)} wall median ${v.median.toFixed(1).padStart(7)}  p90 ${v.p90.toFixed(1).padStart(7)}  x baseline ${(v.median / base).toFixed(1).padStart(6)}   D1 time median ${v.d1Median.toFixed(2).padStart(7)}`);
    console.log("");
  };
  let lastSize = empty;
  const one = await report("acme", 1);
  lastSize = await dbSize();
  printReads("reads of the 1x organization, alone in the database", await reads(one.org));
  const ten = await report("globex", 10);
  lastSize = await dbSize();
  printReads("reads of the 1x organization, beside the 10x one", await reads(one.org));
  printReads("reads of the 10x organization", await reads(ten.org));
  console.log(`ratio 10x/1x: bytes ${(ten.bytes / one.bytes).toFixed(2)}, rows ${(ten.rows / one.rows).toFixed(2)}, rows written ${(ten.rowsWritten / one.rowsWritten).toFixed(2)}`);
} finally {
  await proxy.dispose();
  rmSync(statePath, { recursive: true, force: true });
}
