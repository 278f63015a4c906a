/**
 * RDAP monitor (docs/modules/rdap.md).
 *
 *  rdap_monitors        one row per (organization, domain): what the tenant asked to
 *                       watch, and the outcome of the latest check.
 *  rdap_snapshots       CONTENT-ADDRESSED, shared by every organization (registry data
 *                       is public): one row per distinct canonical RDAP answer, keyed by
 *                       snapshotHash (snapshot.ts). An unchanged registration never adds
 *                       a row here, however often it is polled or by how many tenants.
 *  rdap_history         per monitor: the first snapshot seen (changed = false, the
 *                       baseline) and every later one that differed (changed = true).
 *                       Unchanged polls add nothing (the monitor's last_checked_at says
 *                       when the content was last confirmed), so "the snapshot at time T"
 *                       is the newest row observed at or before T.
 *  rdap_change_facts    per history row: the derived facts the weekly audit reads
 *                       (registrar/registrant/nameserver/status changes, expiry).
 *  rdap_bootstrap       the fetched IANA bootstrap file (RFC 9224) and when, so every
 *                       isolate shares one 24 h cache.
 *  rdap_server_backoff  per RDAP server (base URL origin): not before when it may be
 *                       asked again (429 Retry-After, or backoff after 5xx/timeouts).
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

import { collectionColumns, id, organizationId, createdAt, updatedAt, isoNow } from "./columns";


export const RDAP_CHECK_STATUSES = [
  "success",
  "not_found",
  "rate_limited",
  "server_error",
  "timeout",
  "invalid_response",
  "no_rdap_server",
] as const;
export type RdapCheckStatus = (typeof RDAP_CHECK_STATUSES)[number];

export const rdapSnapshots = sqliteTable("rdap_snapshots", {
  id: id(),
  /** SHA-256 hex of the canonical form (snapshotHash): the identity of the content. */
  hash: text("hash").notNull().unique(),
  /** The RDAP JSON text exactly as the registry sent it the first time this content was seen. */
  body: text("body").notNull(),
  sizeBytes: integer("size_bytes").notNull(),
  /** Lowercase A-label the answer was for (diagnostics; the same content is never shared across names). */
  domainName: text("domain_name").notNull(),
  firstSeenAt: text("first_seen_at").notNull().default(isoNow),
});

export const rdapMonitors = sqliteTable(
  "rdap_monitors",
  {
    id: id(),
    organizationId: organizationId(),
    /** Lowercase A-label, no trailing dot. */
    domainName: text("domain_name").notNull(),
    /** Last label of domain_name (A-label). */
    tld: text("tld").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    notes: text("notes").notNull().default(""),
    lastCheckedAt: text("last_checked_at"),
    lastCheckStatus: text("last_check_status", { enum: RDAP_CHECK_STATUSES }),
    /**
     * The latest check that collected registration data (status `success`); null while
     * none has. Unlike last_checked_at it stays put while checks fail, so the weekly
     * audit's "Monitoring data stale" sees a monitor failing for days.
     */
    lastSuccessAt: text("last_success_at"),
    /** Human-readable detail of the last check (error message, HTTP status). */
    lastCheckDetail: text("last_check_detail"),
    /** The comparison base: the newest snapshot of this monitor (null before the first success). */
    lastSnapshotId: integer("last_snapshot_id").references(() => rdapSnapshots.id),
    /**
     * After a transient failure (rate_limited, server_error, timeout) the monitor is due
     * again at this time rather than a whole check interval later; null otherwise.
     */
    retryAt: text("retry_at"),
    /** Consecutive transient failures, for the retry backoff. */
    failureCount: integer("failure_count").notNull().default(0),
    /**
     * Collection state (platform/collection) beside last_checked_at (the last attempt) and
     * last_success_at: every check that took no snapshot (an error, a 404, a server backing
     * off, no RDAP server for the TLD) is a failed attempt, classified. Written by the
     * statement each check already makes for the monitor.
     */
    ...collectionColumns(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("rdap_monitors_org_domain_unique").on(t.organizationId, t.domainName),
    index("rdap_monitors_domain_idx").on(t.domainName),
    index("rdap_monitors_due_idx").on(t.enabled, t.lastCheckedAt),
  ],
);

export const rdapHistory = sqliteTable(
  "rdap_history",
  {
    id: id(),
    organizationId: organizationId(),
    monitorId: integer("monitor_id")
      .notNull()
      .references(() => rdapMonitors.id, { onDelete: "cascade" }),
    snapshotId: integer("snapshot_id")
      .notNull()
      .references(() => rdapSnapshots.id),
    /** The snapshot this one replaced (null for the baseline). */
    previousSnapshotId: integer("previous_snapshot_id").references(() => rdapSnapshots.id),
    /** When the lookup that produced this content ran (ISO 8601). */
    observedAt: text("observed_at").notNull(),
    /** False for the monitor's first snapshot, true for every later (differing) one. */
    changed: integer("changed", { mode: "boolean" }).notNull(),
    /** metadata.rdap_server and metadata.http_status of that lookup. */
    rdapServer: text("rdap_server").notNull(),
    httpStatus: integer("http_status").notNull(),
  },
  (t) => [index("rdap_history_monitor_idx").on(t.monitorId, t.observedAt), index("rdap_history_org_changed_idx").on(t.organizationId, t.changed)],
);

export const rdapChangeFacts = sqliteTable(
  "rdap_change_facts",
  {
    historyId: integer("history_id")
      .primaryKey()
      .references(() => rdapHistory.id, { onDelete: "cascade" }),
    organizationId: organizationId(),
    monitorId: integer("monitor_id")
      .notNull()
      .references(() => rdapMonitors.id, { onDelete: "cascade" }),
    domainName: text("domain_name").notNull(),
    observedAt: text("observed_at").notNull(),
    registrarChanged: integer("registrar_changed", { mode: "boolean" }).notNull(),
    registrantChanged: integer("registrant_changed", { mode: "boolean" }).notNull(),
    nameserversChanged: integer("nameservers_changed", { mode: "boolean" }).notNull(),
    statusChanged: integer("status_changed", { mode: "boolean" }).notNull(),
    /** Expiry published in this snapshot (ISO 8601 UTC) or null (e.g. .no publishes none). */
    expirationDate: text("expiration_date"),
    previousExpirationDate: text("previous_expiration_date"),
  },
  (t) => [
    index("rdap_change_facts_org_idx").on(t.organizationId, t.observedAt),
    // A monitor's facts newest first: its published expiry as of a time (the audit reads
    // it per monitor), and its changes in a window, without reading other monitors' rows.
    index("rdap_change_facts_monitor_idx").on(t.monitorId, t.observedAt),
  ],
);

export const rdapBootstrap = sqliteTable("rdap_bootstrap", {
  /** RDAP_BOOTSTRAP_URL the file came from (a changed configuration starts afresh). */
  url: text("url").primaryKey(),
  body: text("body").notNull(),
  /** Epoch milliseconds. */
  fetchedAt: integer("fetched_at").notNull(),
});

export const rdapServerBackoff = sqliteTable("rdap_server_backoff", {
  /** Origin of the RDAP base URL (scheme://host:port): politeness is per server. */
  server: text("server").primaryKey(),
  /** ISO 8601: no request to this server before then. */
  notBefore: text("not_before").notNull(),
  /** rate_limited (429) or server_error / timeout (backoff). */
  reason: text("reason").notNull(),
  consecutiveFailures: integer("consecutive_failures").notNull().default(0),
  updatedAt: text("updated_at").notNull(),
});
