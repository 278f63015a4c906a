/**
 * What the audit knows about one organization for one window: the input of the pure
 * scoring engine (scoring.ts). The readers beside this file build it from what each
 * module records; tests and the benchmark may build it directly.
 *
 * Change facts (DNS changes, RDAP changes, CAA violations) are those observed inside
 * the window. State facts (endpoint scans, expiry, coverage) are described where
 * they are read (facts/scope.ts): the state now for the live overview; for a weekly
 * report every scan inside the window, and the rest at the period's end.
 */
import type { CollectionError, CollectionState } from "../../../platform/collection";
import type { MonitoringModule } from "../../../platform/permissions";

import type { DnsFactKind } from "../../../db/schema/dns-watcher";
import type { RuleId } from "../rules";

/** The DNS watcher's `dns_change_facts.kind` (its facts contract). */
export type DnsChangeKind = DnsFactKind;

export interface DnsChangeFact {
  domain: string;
  kind: DnsChangeKind;
  record_name: string;
  record_type: string | null;
  old_values: string[];
  new_values: string[];
  detail: string;
  observed_at: string;
}

export interface DnsFacts {
  changes: DnsChangeFact[];
  /** Enabled domains whose latest resolution found DNSSEC validation failing (`bogus`); the live overview only. */
  dnssec_failing: { domain: string; checked_at: string | null }[];
}

/** A certificate observed in a CT log whose issuer the domain's CAA records do not authorize. */
export interface CaaViolationFact {
  /** Names of the certificate that matched the organization's filters. */
  names: string[];
  sha256: string;
  issuer: string;
  log_name: string;
  observed_at: string;
  /** CAA issuance values found (e.g. `letsencrypt.org`, `;`). */
  caa_records: string[];
}

/** One scan of one TLS endpoint (monitor CN:port at one IP). */
export interface EndpointScan {
  hostname: string;
  port: number;
  ip_address: string;
  scanned_at: string;
  has_error: boolean;
  error: string;
  sha256: string | null;
  subject: string | null;
  issuer: string | null;
  not_after: string | null;
  expired: boolean;
  self_signed: boolean;
  /** Accepted versions among SSLv3, TLSv1.0, TLSv1.1. */
  legacy_protocols: string[];
  /** IANA names of the weak suites offered. */
  weak_suites: string[];
}

export interface RdapChangeFact {
  domain: string;
  observed_at: string;
  registrar_changed: boolean;
  registrant_changed: boolean;
  nameservers_changed: boolean;
  status_changed: boolean;
  /** Readable before/after of what changed (registrar name, registrant, nameservers, status). */
  registrar: { old: string | null; new: string | null };
  registrant: { old: string | null; new: string | null };
  nameservers: { old: string[]; new: string[] };
  status: { old: string[]; new: string[] };
}

export interface DomainExpiry {
  domain: string;
  /** ISO 8601 expiry published by the registry. */
  expires_at: string;
}

/**
 * An enabled asset (or, for CT, a monitored log) that was NOT collected within its
 * module's expected window before `as_of`, with its collection state in the shared
 * vocabulary (platform/collection): what the category status and "Monitoring data
 * stale" say about it.
 */
export interface UncollectedAsset {
  asset: string;
  /** ok (collected before, no failure run: nothing was attempted in time), failing, pending (never collected). */
  state: CollectionState;
  /** Newest collection (null: never collected). */
  last_collected_at: string | null;
  /** First failed attempt of the current run of failures; null when not failing or not known. */
  failing_since: string | null;
  /** The latest attempt's failure (classified, in words), null when none is known. */
  error: CollectionError | null;
  /**
   * It has existed for a whole window, so "Monitoring data stale" counts it; a newer one
   * never collected is only pending (it still keeps its category from being assessed).
   */
  stale: boolean;
}

/**
 * Whose collections a module's category is assessed on: the organization's own enabled
 * assets (domains, endpoints), or, for CT, the logs every organization's filters rely on
 * (read once for all by one cursor per log).
 */
export type CollectionSources = "own" | "shared";

export interface ModuleCoverage {
  module: MonitoringModule;
  /** Assets configured (filters, domains, monitors' targets), paused ones included. */
  configured_assets: number;
  /**
   * Of them, those enabled. "Modules without assets" fires at 0: a module whose assets
   * are all paused watches nothing, like one with none configured.
   */
  enabled_assets: number;
  /** Seconds: data older than this is stale (freshness.ts). */
  expected_window_seconds: number;
  sources: CollectionSources;
  /**
   * What must be collected within the window for the category to be assessed: the
   * enabled assets (own), or the monitored CT logs when a filter is enabled (shared);
   * 0 when the module has no enabled asset.
   */
  expected: number;
  /** Of them, collected within the window before `as_of`. */
  collected: number;
  /** The others, with their collection state, in the order to show them. */
  uncollected: UncollectedAsset[];
}

export interface AuditFacts {
  /** When state is judged (expiry horizon, staleness): now live, the period's end in a report. */
  as_of: string;
  window: { start: string; end: string };
  dns: DnsFacts;
  caa_violations: CaaViolationFact[];
  endpoint_scans: EndpointScan[];
  rdap_changes: RdapChangeFact[];
  /** Enabled monitored domains with a published expiry within the warning horizon (or past). */
  expiring_domains: DomainExpiry[];
  /** One entry per monitoring module. */
  coverage: ModuleCoverage[];
  /**
   * Where a reader returned only the newest items of a rule's evidence (the overview
   * needs ten), the true number of items and of distinct assets.
   */
  counts?: Partial<Record<RuleId, { evidence: number; assets: number }>>;
}

export const emptyFacts = (asOf: string, window: { start: string; end: string }): AuditFacts => ({
  as_of: asOf,
  window,
  dns: { changes: [], dnssec_failing: [] },
  caa_violations: [],
  endpoint_scans: [],
  rdap_changes: [],
  expiring_domains: [],
  coverage: [],
});
