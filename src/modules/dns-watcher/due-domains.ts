/**
 * Which watched domains a scheduled run resolves, with what was last seen of them.
 *
 * Due: enabled, and never checked or checked at least DNS_CHECK_INTERVAL_SECONDS ago
 * (0 = every run); least recently checked first, at most `maxDomainsPerRun`, so a backlog
 * drains over the next runs instead of making one run too long. Two queries whatever the
 * number of domains: the domains, then their record sets (the ids go in as one JSON
 * parameter, clear of D1's 100-parameter limit).
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { CollectionErrorClass, CollectionRecord } from "../../platform/collection";
import { isWatchedRecordType, type WatchedRecordType } from "../../platform/dns/presentation";
import type { DmarcRecord } from "./dmarc";
import { NO_EMAIL_STATE, type EmailState } from "./email/view";
import type { DnssecStatus } from "./observation";
import type { SpfAnalysis } from "./spf";
import { parseStoredJson } from "./stored-json";

export interface DueRecordSet {
  id: number;
  name: string;
  type: WatchedRecordType;
  /** Canonical values last stored; null before the first successful resolution (the baseline). */
  values: string[] | null;
  lastError: string | null;
  /** Its failure run (schema dns_record_sets): length, start, class, the last success before it. */
  failures: number;
  failingSince: string | null;
  errorClass: CollectionErrorClass | null;
  lastSuccessAt: string | null;
}

export interface DueDomain {
  id: number;
  organizationId: number;
  name: string;
  dnssecStatus: DnssecStatus;
  /** Why validation failed, as last recorded ("" unless bogus). */
  dnssecError: string;
  /** Parsed SPF / DMARC policy in force; null until the apex TXT / `_dmarc` TXT first resolved. */
  spf: SpfAnalysis | null;
  /** spf_json as stored: the guard of an SPF verdict change (run-writes.ts) compares it. */
  spfJson: string | null;
  dmarc: DmarcRecord | null;
  /** The domain's collection state before this run. */
  collection: CollectionRecord;
  sets: DueRecordSet[];
  /** The email checks (MTA-STS, TLS-RPT, DANE, DKIM, BIMI) run for the domain. */
  emailChecks: boolean;
  /** What they kept (the MTA-STS policy, the MX hosts' TLSA answers), and email_json as stored (the guard of an email regression). */
  email: EmailState;
  emailJson: string | null;
}

interface DomainRow {
  id: number;
  organization_id: number;
  domain_name: string;
  dnssec_status: DnssecStatus;
  dnssec_error: string;
  spf_json: string | null;
  dmarc_json: string | null;
  email_checks: number;
  email_json: string | null;
  last_checked_at: string | null;
  last_success_at: string | null;
  collection_failing_since: string | null;
  collection_failures: number;
  collection_next_attempt_at: string | null;
  collection_error_class: CollectionErrorClass | null;
  collection_error: string | null;
}

export async function selectDueDomains(db: Db, now: Date, intervalSeconds: number, maxDomains: number): Promise<DueDomain[]> {
  const cutoff = new Date(now.getTime() - intervalSeconds * 1000).toISOString();
  const domains = await db.all<DomainRow>(sql`
    SELECT id, organization_id, domain_name, dnssec_status, dnssec_error, spf_json, dmarc_json, email_checks, email_json, last_checked_at, last_success_at,
      collection_failing_since, collection_failures, collection_next_attempt_at, collection_error_class, collection_error FROM dns_domains
    WHERE enabled = 1 AND (last_checked_at IS NULL OR last_checked_at <= ${cutoff}
      OR (collection_failures > 0 AND collection_next_attempt_at <= ${now.toISOString()}))
    ORDER BY COALESCE(last_checked_at, ''), id LIMIT ${maxDomains}`);
  if (domains.length === 0) return [];
  const byId = new Map<number, DueDomain>();
  for (const d of domains) {
    byId.set(d.id, {
      id: d.id,
      organizationId: d.organization_id,
      name: d.domain_name,
      dnssecStatus: d.dnssec_status,
      dnssecError: d.dnssec_error,
      spf: parseStoredJson<SpfAnalysis>(d.spf_json),
      spfJson: d.spf_json,
      dmarc: parseStoredJson<DmarcRecord>(d.dmarc_json),
      collection: {
        lastAttemptAt: d.last_checked_at,
        lastSuccessAt: d.last_success_at,
        failingSince: d.collection_failing_since,
        consecutiveFailures: d.collection_failures,
        nextAttemptAt: d.collection_next_attempt_at,
        errorClass: d.collection_error_class,
        errorMessage: d.collection_error,
      },
      sets: [],
      emailChecks: d.email_checks === 1,
      email: parseStoredJson<EmailState>(d.email_json) ?? NO_EMAIL_STATE,
      emailJson: d.email_json,
    });
  }
  const sets = await db.all<{
    id: number; domain_id: number; name: string; type: string; values_json: string | null; last_error: string | null;
    collection_failures: number; collection_failing_since: string | null; collection_error_class: CollectionErrorClass | null; last_success_at: string | null;
  }>(sql`
    SELECT id, domain_id, name, type, values_json, last_error, collection_failures, collection_failing_since, collection_error_class, last_success_at FROM dns_record_sets
    WHERE domain_id IN (SELECT value FROM json_each(${JSON.stringify([...byId.keys()])})) ORDER BY id`);
  for (const r of sets) {
    if (!isWatchedRecordType(r.type)) continue;
    byId.get(r.domain_id)?.sets.push({
      id: r.id, name: r.name, type: r.type, values: parseStoredJson<string[]>(r.values_json), lastError: r.last_error,
      failures: r.collection_failures, failingSince: r.collection_failing_since, errorClass: r.collection_error_class, lastSuccessAt: r.last_success_at,
    });
  }
  return [...byId.values()];
}
