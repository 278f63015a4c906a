/**
 * The certificate inventory (docs/modules/inventory.md): CT issuance joined to
 * deployments, per hostname.
 *
 *   inventory_certificates ─< inventory_certificate_names   which names a certificate covers
 *   inventory_certificates ─< inventory_deployments          where and when it was served
 *   inventory_targets                                        what each monitored target serves now
 *   inventory_hostnames                                      each name's evaluated state
 *
 * Certificates are kept beyond the CT module's 30-day match window (a 398-day
 * certificate's predecessor is a year old): a certificate goes once it expired more than
 * a year ago and no target serves it. The hostname rows are the list's materialized
 * view: re-evaluated when a certificate naming them is published, when a target of
 * theirs is scanned, when their monitors change, and when a time-driven transition is
 * due (`next_review_at`: 24 h after a newer certificate, the renewal thresholds, expiry).
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { Authorization } from "./ct-authorization";
import { id, organizationId } from "./columns";

/**
 * A hostname's state in the certificate inventory (docs/modules/inventory.md), the words
 * CT lifecycle events and the inventory share. Declared with the table that
 * stores it; ct-log's lifecycle-contract.ts and events derive from it.
 *
 * `not_scanned` (beside the seven states of the inventory's design) says a name is
 * monitored but no target has returned a certificate yet, rather than calling it current
 * without having looked.
 */
export const HOSTNAME_STATES = ["current", "deploying", "stale_deployment", "not_in_ct", "unmonitored", "expiring_without_successor", "expired", "not_scanned"] as const;
export type HostnameState = (typeof HOSTNAME_STATES)[number];

/**
 * Whether the certificate a target serves was seen in Certificate Transparency (the
 * inventory joins the two; docs/modules/inventory.md). Declared with the
 * table that stores it; cert-watcher's events.ts and the inventory derive from it.
 *
 *   logged               seen in the organization's CT matches
 *   not_logged           publicly trusted, issued after CT monitoring of the name started,
 *                        never seen in the logs read
 *   predates_monitoring  publicly trusted, issued before CT monitoring of the name started
 *                        (its entry may be older than what was read)
 *   not_watched          publicly trusted; no CT filter of the organization covers the name
 *   private_ca           not publicly trusted: it validates only against the monitor's own
 *                        root CA, or not at all (self-signed, unknown issuer)
 */
export const CT_STATUSES = ["logged", "not_logged", "predates_monitoring", "not_watched", "private_ca"] as const;
export type CtStatus = (typeof CT_STATUSES)[number];

/** One certificate of an organization (a precertificate and its certificate are one: the CT dedup key). */
export const inventoryCertificates = sqliteTable(
  "inventory_certificates",
  {
    id: id(),
    organizationId: organizationId(),
    /** SHA-256 of the TBS without SCT list and poison (ct-log/cert/dedup.ts). */
    dedupKey: text("dedup_key").notNull(),
    /** Fingerprint of the first CT entry seen (precertificate or certificate); the served one when never seen in CT. */
    sha256: text("sha256").notNull(),
    /** Fingerprint of the certificate as served, once a target served it. */
    servedSha256: text("served_sha256"),
    /** Every dNSName of the certificate. */
    names: text("names", { mode: "json" }).$type<string[]>().notNull(),
    subject: text("subject").notNull(),
    issuer: text("issuer").notNull(),
    serial: text("serial").notNull(),
    spkiSha256: text("spki_sha256").notNull(),
    issuerSpkiSha256: text("issuer_spki_sha256").notNull().default(""),
    notBefore: text("not_before").notNull(),
    notAfter: text("not_after").notNull(),
    /** When the organization's CT matches first showed it (null: never seen in CT). */
    firstSeenCtAt: text("first_seen_ct_at"),
    /** The CT match's fingerprint to open it in the CT module (30-day window). */
    ctMatchSha256: text("ct_match_sha256"),
    /** The filters that matched it [{id, pattern}]. */
    filters: text("filters", { mode: "json" }).$type<{ id: number; pattern: string }[]>().notNull(),
    /** The worst authorization verdict over its filters (ct-log/authorization.ts); null when never seen in CT. */
    authorization: text("authorization", { mode: "json" }).$type<Authorization>(),
    firstDeployedAt: text("first_deployed_at"),
    lastDeployedAt: text("last_deployed_at"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("inventory_certificates_org_dedup_unique").on(t.organizationId, t.dedupKey),
    index("inventory_certificates_org_sha_idx").on(t.organizationId, t.sha256),
    index("inventory_certificates_org_served_idx").on(t.organizationId, t.servedSha256),
    index("inventory_certificates_org_spki_idx").on(t.organizationId, t.spkiSha256),
  ],
);

/** A name a certificate covers, as the organization's filters matched it (a wildcard as `*.example.com`). */
export const inventoryCertificateNames = sqliteTable(
  "inventory_certificate_names",
  {
    certificateId: integer("certificate_id")
      .notNull()
      .references(() => inventoryCertificates.id, { onDelete: "cascade" }),
    organizationId: integer("organization_id").notNull(),
    hostname: text("hostname").notNull(),
    notBefore: text("not_before").notNull(),
  },
  (t) => [primaryKey({ columns: [t.certificateId, t.hostname] }), index("inventory_names_org_host_idx").on(t.organizationId, t.hostname, t.notBefore)],
);

/** A certificate served by a monitored target: first and last seen. */
export const inventoryDeployments = sqliteTable(
  "inventory_deployments",
  {
    id: id(),
    organizationId: organizationId(),
    targetId: integer("target_id").notNull(),
    monitorId: integer("monitor_id").notNull(),
    certificateId: integer("certificate_id")
      .notNull()
      .references(() => inventoryCertificates.id, { onDelete: "cascade" }),
    /** The monitor's name and the target's address and port, as they were (the target may be gone). */
    hostname: text("hostname").notNull(),
    ipAddress: text("ip_address").notNull(),
    port: integer("port").notNull(),
    firstSeenAt: text("first_seen_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
  },
  (t) => [uniqueIndex("inventory_deployments_target_cert_unique").on(t.targetId, t.certificateId), index("inventory_deployments_org_cert_idx").on(t.organizationId, t.certificateId)],
);

/** What a monitored target served at its latest scan that returned a certificate, and how that certificate stands with CT. */
export const inventoryTargets = sqliteTable(
  "inventory_targets",
  {
    targetId: integer("target_id").primaryKey(),
    organizationId: organizationId(),
    certificateId: integer("certificate_id").references(() => inventoryCertificates.id, { onDelete: "set null" }),
    scannedAt: text("scanned_at").notNull(),
    /** public: validates against the public trust store; private_ca: against the monitor's own root only; untrusted: not at all. */
    trust: text("trust", { enum: ["public", "private_ca", "untrusted"] }).notNull(),
    /** Why not trusted, as the agent said (self-signed, unknown issuer...). */
    trustDetail: text("trust_detail").notNull().default(""),
    /** CT standing of the served certificate when last evaluated (the not_in_ct event is raised when this changes). */
    ctStatus: text("ct_status", { enum: CT_STATUSES }),
  },
  (t) => [index("inventory_targets_org_idx").on(t.organizationId)],
);

/** One name of the organization with its evaluated state: the inventory list. */
export const inventoryHostnames = sqliteTable(
  "inventory_hostnames",
  {
    id: id(),
    organizationId: organizationId(),
    hostname: text("hostname").notNull(),
    state: text("state", { enum: HOSTNAME_STATES }).notNull(),
    stateReason: text("state_reason").notNull(),
    /** When it entered the current state. */
    stateSince: text("state_since").notNull(),
    previousState: text("previous_state", { enum: HOSTNAME_STATES }),
    renewalStatus: text("renewal_status").notNull(),
    renewalDueAt: text("renewal_due_at"),
    renewalOverdueAt: text("renewal_overdue_at"),
    /** The newest logged certificate covering the name. */
    latestCertificateId: integer("latest_certificate_id"),
    latestNotAfter: text("latest_not_after"),
    renewalIntervalDays: integer("renewal_interval_days"),
    readiness: text("readiness", { enum: ["ready", "not_ready", "unknown"] }).notNull(),
    readinessFrom: text("readiness_from"),
    targetCount: integer("target_count").notNull().default(0),
    evaluatedAt: text("evaluated_at").notNull(),
    /** When the state may change by time alone (the refresh job re-evaluates it then); null: only on new data. */
    nextReviewAt: text("next_review_at"),
  },
  (t) => [
    uniqueIndex("inventory_hostnames_org_host_unique").on(t.organizationId, t.hostname),
    index("inventory_hostnames_org_state_idx").on(t.organizationId, t.state, t.hostname),
    index("inventory_hostnames_org_readiness_idx").on(t.organizationId, t.readiness, t.hostname),
    // The refresh job's read across organizations (next_review_at), and a list's "names
    // due first" of one organization, which otherwise reads all of its names.
    index("inventory_hostnames_review_idx").on(t.nextReviewAt),
    index("inventory_hostnames_org_review_idx").on(t.organizationId, t.nextReviewAt),
  ],
);
