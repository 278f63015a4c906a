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
import { isWatchedRecordType, type WatchedRecordType } from "../../platform/dns/presentation";
import type { DmarcRecord } from "./dmarc";
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
  sets: DueRecordSet[];
}

export async function selectDueDomains(db: Db, now: Date, intervalSeconds: number, maxDomains: number): Promise<DueDomain[]> {
  const cutoff = new Date(now.getTime() - intervalSeconds * 1000).toISOString();
  const domains = await db.all<{ id: number; organization_id: number; domain_name: string; dnssec_status: DnssecStatus; dnssec_error: string; spf_json: string | null; dmarc_json: string | null }>(sql`
    SELECT id, organization_id, domain_name, dnssec_status, dnssec_error, spf_json, dmarc_json FROM dns_domains
    WHERE enabled = 1 AND (last_checked_at IS NULL OR last_checked_at <= ${cutoff})
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
      sets: [],
    });
  }
  const sets = await db.all<{ id: number; domain_id: number; name: string; type: string; values_json: string | null; last_error: string | null }>(sql`
    SELECT id, domain_id, name, type, values_json, last_error FROM dns_record_sets
    WHERE domain_id IN (SELECT value FROM json_each(${JSON.stringify([...byId.keys()])})) ORDER BY id`);
  for (const r of sets) {
    if (!isWatchedRecordType(r.type)) continue;
    byId.get(r.domain_id)?.sets.push({ id: r.id, name: r.name, type: r.type, values: parseStoredJson<string[]>(r.values_json), lastError: r.last_error });
  }
  return [...byId.values()];
}
