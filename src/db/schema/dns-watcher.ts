/**
 * DNS watcher (docs/modules/dns-watcher.md).
 *
 *  dns_domains        one row per (organization, domain): what the tenant watches, the
 *                     outcome of the latest scheduled resolution, the DNSSEC status and the
 *                     parsed SPF / DMARC policy currently in force (JSON).
 *  dns_record_sets    the (name, type) sets watched per domain, with the current canonical
 *                     values (src/platform/dns/presentation.ts) as a JSON string[]; null
 *                     before the first successful resolution. A lookup error never touches
 *                     `values`: it is recorded in `last_error`.
 *  dns_history        one row per confirmed change of a record set (and per DNSSEC status
 *                     change), with old and new values and the verdict in words. An
 *                     unchanged resolution adds nothing.
 *  dns_change_facts   what the weekly audit reads: one row per confirmed change per kind
 *                     (the FACTS CONTRACT), written in the same D1 batch as the history row.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { collectionColumns, createdAt, id, organizationId, timestamps } from "./columns";

/** The collection columns a watched record set keeps: its failure run (its last attempt is its domain's). */
const { collectionFailingSince, collectionFailures, collectionErrorClass } = collectionColumns();

/** ok: every record set resolved; partial: some lookups failed; error: none resolved. */
export const DNS_CHECK_STATUSES = ["ok", "partial", "error"] as const;
export type DnsCheckStatus = (typeof DNS_CHECK_STATUSES)[number];
export const DNSSEC_STATUS_VALUES = ["validated", "insecure", "bogus", "unknown"] as const;
/** record, dnssec, spf (see dns_history.kind) and email: a mail transport security regression (MTA-STS, TLS-RPT, DANE, DKIM, BIMI). */
export const DNS_HISTORY_KINDS = ["record", "dnssec", "spf", "email"] as const;
/**
 * email_weakened: a mail transport security mechanism regressed (MTA-STS, TLS reporting,
 * DANE records, DKIM keys); dane_mismatch: an MX host serves a chain its TLSA records do not
 * match (dns-watcher/email/view.ts EMAIL_REGRESSION_FACTS says which regression is which).
 */
export const DNS_FACT_KINDS = ["dmarc_weakened", "dmarc_removed", "spf_allows_all", "apex_changed", "mx_changed", "ns_changed", "dnssec_failed", "email_weakened", "dane_mismatch"] as const;
export type DnsFactKind = (typeof DNS_FACT_KINDS)[number];

export const dnsDomains = sqliteTable(
  "dns_domains",
  {
    id: id(),
    organizationId: organizationId(),
    /** Lowercase A-label, no trailing dot. */
    domainName: text("domain_name").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    notes: text("notes").notNull().default(""),
    /** ISO 8601; null before the first scheduled resolution. */
    lastCheckedAt: text("last_checked_at"),
    lastCheckStatus: text("last_check_status", { enum: DNS_CHECK_STATUSES }),
    /** Lookup errors of the last run in words, or a note ("... does not exist (NXDOMAIN)"); null when all is well. */
    lastCheckDetail: text("last_check_detail"),
    /**
     * ISO 8601: the latest scheduled resolution in which the domain's data was collected
     * (status ok or partial, not error); null while none has. What the weekly report reads
     * to tell a domain watched but unreachable from one whose posture is current.
     */
    lastSuccessAt: text("last_success_at"),
    dnssecStatus: text("dnssec_status", { enum: DNSSEC_STATUS_VALUES }).notNull().default("unknown"),
    /** Why validation failed (SERVFAIL with its Extended DNS Errors), "" otherwise. */
    dnssecError: text("dnssec_error").notNull().default(""),
    /** Parsed SPF policy in force (modules/dns-watcher/spf.ts SpfAnalysis), null before the apex TXT resolved. */
    spfJson: text("spf_json"),
    /** Parsed DMARC policy in force (modules/dns-watcher/dmarc.ts DmarcRecord), null before _dmarc resolved. */
    dmarcJson: text("dmarc_json"),
    /**
     * Whether the mail transport security checks run for the domain (MTA-STS, TLS-RPT,
     * DANE, DKIM, BIMI; docs/modules/dns-watcher.md). Off unless the domain's create or
     * update request turns them on: they cost DNS queries and a daily HTTPS fetch that a
     * domain sending no mail does not need.
     */
    emailChecks: integer("email_checks", { mode: "boolean" }).notNull().default(false),
    /**
     * What the email checks keep beside the record sets (modules/dns-watcher/email/view.ts
     * EmailState): the MTA-STS policy as last fetched and the TLSA answers of the MX hosts.
     * Null before the first run with email checks.
     */
    emailJson: text("email_json"),
    /**
     * Collection state (platform/collection) beside last_checked_at (the last attempt) and
     * last_success_at (the last success): a run is a failed attempt when no record set
     * resolved (status error). Written by the statement each run already makes for the
     * domain, so an unchanged run costs no extra row.
     */
    ...collectionColumns(),
    ...timestamps(),
  },
  // No index on last_checked_at: every check moves it, and D1 bills an index entry as a
  // row written, which would double what an unchanged domain costs. Picking the due
  // domains reads the table instead (rows read cost a thousandth of rows written).
  (t) => [uniqueIndex("dns_domains_org_domain_unique").on(t.organizationId, t.domainName)],
);

export const dnsRecordSets = sqliteTable(
  "dns_record_sets",
  {
    id: id(),
    organizationId: organizationId(),
    domainId: integer("domain_id")
      .notNull()
      .references(() => dnsDomains.id, { onDelete: "cascade" }),
    /** Owner name: the domain or a name below it, lowercase A-label, no trailing dot. */
    name: text("name").notNull(),
    type: text("type").notNull(),
    /** Current canonical values, JSON string[] ([] = NXDOMAIN/NODATA); null before the first resolution. */
    valuesJson: text("values_json"),
    /** NOERROR or NXDOMAIN of the answer the values came from. */
    rcode: text("rcode"),
    /** The last lookup's failure in words (platform/collection classify), null when the last lookup resolved. */
    lastError: text("last_error"),
    lastChangedAt: text("last_changed_at"),
    /**
     * The record set's collection state. Every run asks every record set of its domain, so
     * its last attempt is the domain's last_checked_at; while it resolves, that is also its
     * last success. These columns are written only when a lookup fails or the set recovers:
     * the failure run's start and length, its class (last_error says it in words), and
     * the last success before the failures (null: never resolved).
     */
    collectionFailingSince,
    collectionFailures,
    collectionErrorClass,
    lastSuccessAt: text("last_success_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("dns_record_sets_domain_name_type_unique").on(t.domainId, t.name, t.type)],
);

export const dnsHistory = sqliteTable(
  "dns_history",
  {
    id: id(),
    organizationId: organizationId(),
    domainId: integer("domain_id")
      .notNull()
      .references(() => dnsDomains.id, { onDelete: "cascade" }),
    observedAt: text("observed_at").notNull(),
    /**
     * record: a record set's values changed; dnssec: the domain's DNSSEC status changed;
     * spf: the SPF verdict changed without the domain's own TXT changing (an include or
     * redirect target changed, or the policy was first seen allowing every sender);
     * email: a mail transport security regression (analysis_json says which).
     */
    kind: text("kind", { enum: DNS_HISTORY_KINDS }).notNull(),
    recordName: text("record_name").notNull(),
    /** Null for a DNSSEC status change. */
    recordType: text("record_type"),
    /** JSON string[] (for dnssec: [status]). */
    oldValues: text("old_values").notNull(),
    newValues: text("new_values").notNull(),
    /** The verdict in words ("DMARC weakened: policy lowered from reject to none", "MX changed", ...). */
    detail: text("detail").notNull(),
    /** JSON: parsed policies before/after and regressions, when the change concerns SPF or DMARC. */
    analysisJson: text("analysis_json"),
  },
  (t) => [index("dns_history_domain_idx").on(t.domainId, t.observedAt)],
);

/** FACTS CONTRACT (weekly report): keep these names. */
export const dnsChangeFacts = sqliteTable(
  "dns_change_facts",
  {
    id: id(),
    organizationId: organizationId(),
    domainId: integer("domain_id")
      .notNull()
      .references(() => dnsDomains.id, { onDelete: "cascade" }),
    domainName: text("domain_name").notNull(),
    /** ISO 8601. */
    observedAt: text("observed_at").notNull(),
    kind: text("kind", { enum: DNS_FACT_KINDS }).notNull(),
    recordName: text("record_name").notNull(),
    recordType: text("record_type"),
    /** JSON string[]. */
    oldValues: text("old_values").notNull(),
    newValues: text("new_values").notNull(),
    /** The verdict in words. */
    detail: text("detail").notNull(),
  },
  (t) => [index("dns_change_facts_org_idx").on(t.organizationId, t.observedAt)],
);
