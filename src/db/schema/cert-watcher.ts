/**
 * Certificate deployment monitoring: monitors, IP targets, agents, scan jobs, scans (docs/modules/cert-watcher.md).
 *
 *   cert_monitors ─< cert_targets ─< cert_scan_jobs ──1 cert_scans
 *   cert_agents (scanner agents of an organization, token hash only)
 *
 * A scheduled job turns due targets into `cert_scan_jobs` rows (at most one open job
 * per target: a partial unique index); agents lease them, scan, and post a result that
 * becomes one `cert_scans` row (unique per job: the idempotency guard). A target keeps
 * a pointer to its latest scan, from which the monitor indicators are computed, and its
 * collection state (did the last attempts obtain a TLS answer?).
 *
 * Scans carry the weekly audit's findings as flat columns (expired certificate, scan
 * failure, legacy protocol, weak suites, self-signed), so a report is one simple query.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { ScanResult } from "@trust-plane/scan-contract";
import { STARTTLS_PROTOCOLS } from "@trust-plane/scan-contract/vocabulary";
import { CIPHER_STATUSES, PROTOCOL_STATUSES, VALIDATION_STATUSES, type FrameworkVerdict, type WeakSuiteFinding } from "@trust-plane/tls-frameworks";
import { users } from "./platform";
import { collectionColumns, id, organizationId, createdAt, updatedAt } from "./columns";

export const certMonitors = sqliteTable(
  "cert_monitors",
  {
    id: id(),
    organizationId: organizationId(),
    cn: text("cn").notNull(),
    port: integer("port").notNull().default(443),
    /** '' when absent (the API shows null): SQLite unique indexes treat NULLs as distinct. */
    targetDns: text("target_dns").notNull().default(""),
    /** null = direct TLS; otherwise the STARTTLS protocol spoken before the handshake. */
    starttls: text("starttls", { enum: STARTTLS_PROTOCOLS }),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    notes: text("notes").notNull().default(""),
    /** PEM trust anchor(s) for chain validation; null = the scanner's system store. */
    rootCa: text("root_ca"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /** Time of the newest scan of any of its targets. */
    lastScanTime: text("last_scan_time"),
  },
  (t) => [uniqueIndex("cert_monitors_org_cn_port_dns_unique").on(t.organizationId, t.cn, t.port, t.targetDns)],
);

export const certTargets = sqliteTable(
  "cert_targets",
  {
    id: id(),
    organizationId: organizationId(),
    monitorId: integer("monitor_id")
      .notNull()
      .references(() => certMonitors.id, { onDelete: "cascade" }),
    /** Normalized (RFC 5952 for IPv6). */
    ipAddress: text("ip_address").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    createdAt: createdAt(),
    lastScanAt: text("last_scan_at"),
    /** The newest scan of this target (indicators are computed from it). */
    lastScanId: integer("last_scan_id"),
    /**
     * Collection state (platform/collection): an attempt is a scan job answered (a result,
     * failed or not) or one that went unanswered (its lease expired, or no agent took it
     * within a scan interval: modules/cert-watcher/collection.ts).
     */
    lastAttemptAt: text("last_attempt_at"),
    /** The newest scan that obtained a TLS answer (has_error false). */
    lastSuccessAt: text("last_success_at"),
    ...collectionColumns(),
  },
  (t) => [uniqueIndex("cert_targets_monitor_ip_unique").on(t.monitorId, t.ipAddress), index("cert_targets_org_idx").on(t.organizationId)],
);

export const certAgents = sqliteTable(
  "cert_agents",
  {
    id: id(),
    organizationId: organizationId(),
    name: text("name").notNull(),
    /** SHA-256 of the `tpa_` token; the token itself is shown once. */
    tokenHash: text("token_hash").notNull(),
    tokenPrefix: text("token_prefix").notNull(),
    createdBy: integer("created_by").references(() => users.id),
    createdAt: createdAt(),
    lastSeenAt: text("last_seen_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("cert_agents_token_hash_unique").on(t.tokenHash), index("cert_agents_org_idx").on(t.organizationId)],
);

export const CERT_SCAN_JOB_STATUSES = ["pending", "leased", "done"] as const;

export const certScanJobs = sqliteTable(
  "cert_scan_jobs",
  {
    id: id(),
    organizationId: organizationId(),
    monitorId: integer("monitor_id")
      .notNull()
      .references(() => certMonitors.id, { onDelete: "cascade" }),
    targetId: integer("target_id")
      .notNull()
      .references(() => certTargets.id, { onDelete: "cascade" }),
    /** pending (never leased), leased (lease may have expired: leasable again), done. */
    status: text("status", { enum: CERT_SCAN_JOB_STATUSES }).notNull().default("pending"),
    createdAt: text("created_at").notNull(),
    leasedAt: text("leased_at"),
    leaseExpiresAt: text("lease_expires_at"),
    agentId: integer("agent_id").references(() => certAgents.id),
    /** How many times it was handed to an agent (a crashed agent's job is re-leased). */
    attempts: integer("attempts").notNull().default(0),
    completedAt: text("completed_at"),
    /**
     * When the job's wait for an agent was last counted as a failed attempt of its target
     * (no agent took it within a scan interval); null while it was not.
     */
    unleasedRecordedAt: text("unleased_recorded_at"),
  },
  (t) => [
    // Never two open jobs for one target.
    uniqueIndex("cert_scan_jobs_open_target_unique").on(t.targetId).where(sql`status <> 'done'`),
    index("cert_scan_jobs_org_status_idx").on(t.organizationId, t.status),
  ],
);

export const certScans = sqliteTable(
  "cert_scans",
  {
    id: id(),
    organizationId: organizationId(),
    monitorId: integer("monitor_id")
      .notNull()
      .references(() => certMonitors.id, { onDelete: "cascade" }),
    targetId: integer("target_id")
      .notNull()
      .references(() => certTargets.id, { onDelete: "cascade" }),
    /** The job this result answered; unique, so a result is accepted once per job. */
    jobId: integer("job_id"),
    agentId: integer("agent_id"),
    /** Server time the result was accepted. */
    scannedAt: text("scanned_at").notNull(),
    ipAddress: text("ip_address").notNull(),
    connectionMethod: text("connection_method").notNull(),
    hasError: integer("has_error", { mode: "boolean" }).notNull(),
    error: text("error").notNull().default(""),
    protocols: text("protocols", { mode: "json" }).$type<string[]>().notNull(),
    ciphers: text("ciphers", { mode: "json" }).$type<string[]>().notNull(),
    namedGroups: text("named_groups", { mode: "json" }).$type<string[]>().notNull(),
    // Leaf certificate (null when none was obtained).
    certSha256: text("cert_sha256"),
    certSubject: text("cert_subject"),
    certIssuer: text("cert_issuer"),
    certNotBefore: text("cert_not_before"),
    certNotAfter: text("cert_not_after"),
    /** Days until expiry at scan time, negative if expired. */
    validityDays: integer("validity_days"),
    chainLength: integer("chain_length"),
    // Per-scan statuses (indicators.ts) and audit findings.
    protocolStatus: text("protocol_status", { enum: PROTOCOL_STATUSES }).notNull(),
    cipherStatus: text("cipher_status", { enum: CIPHER_STATUSES }).notNull(),
    validationStatus: text("validation_status", { enum: VALIDATION_STATUSES }).notNull(),
    expired: integer("expired", { mode: "boolean" }).notNull().default(false),
    legacyProtocol: integer("legacy_protocol", { mode: "boolean" }).notNull().default(false),
    weakCipher: integer("weak_cipher", { mode: "boolean" }).notNull().default(false),
    selfSigned: integer("self_signed", { mode: "boolean" }).notNull().default(false),
    /** Weak suites offered: [{code, name, weaknesses}]. */
    weakSuites: text("weak_suites", { mode: "json" }).$type<WeakSuiteFinding[]>().notNull(),
    /** The five framework verdicts, computed by the Worker from the observed data. */
    frameworks: text("frameworks", { mode: "json" }).$type<FrameworkVerdict[]>().notNull(),
    /**
     * The result as accepted (the contract's normalized form; identity fields replaced by
     * the job's monitor and target): the details beyond the columns.
     */
    result: text("result", { mode: "json" }).$type<ScanResult>().notNull(),
  },
  (t) => [
    uniqueIndex("cert_scans_job_unique").on(t.jobId),
    index("cert_scans_monitor_time_idx").on(t.monitorId, t.scannedAt),
    index("cert_scans_org_time_idx").on(t.organizationId, t.scannedAt),
  ],
);
