/**
 * DNS, read from what the DNS watcher records: `dns_change_facts` (the facts
 * contract: one row per confirmed change per kind, written with the history row) and
 * the domains' last resolution, last successful one and DNSSEC status.
 *
 * Kinds map to rules in scoring.ts: dmarc_weakened / dmarc_removed -> DMARC policy
 * weakened; spf_allows_all -> SPF overly permissive; apex_changed -> critical apex
 * records changed; mx_changed / ns_changed -> mail or nameserver records changed;
 * dnssec_failed -> DNSSEC validation regression, and live also a domain `bogus` now
 * (a weekly report counts only the failures observed in its week: "now" is not the
 * week's end).
 *
 * Freshness is `last_success_at` (a resolution that collected the domain's data), not
 * `last_checked_at`, which moves when every lookup fails.
 */
import { sql } from "drizzle-orm";
import { dnsChangeFacts, dnsDomains, type DnsFactKind } from "../../../db/schema/dns-watcher";
import type { MonitoredAsset } from "../document";
import type { RuleId } from "../rules";
import { DNS_KIND_RULES } from "../scoring";
import { sanitizeFailureMessage } from "../../../platform/collection";
import { coverageOf, enabledAt, iso, jsonArray, rawSelect, type AuditScope, type ModuleReading, type ReaderPlan } from "./scope";
import type { AuditFacts, DnsChangeFact, DnsFacts } from "./types";
import { domainCollection, type DomainCollectionColumns } from "../../dns-watcher/contract";

interface ChangeRow {
  domain_name: string;
  kind: DnsFactKind;
  record_name: string;
  record_type: string | null;
  old_values: string;
  new_values: string;
  detail: string;
  observed_at: string;
}

export function readDns(scope: AuditScope): ReaderPlan<{ dns: DnsFacts }> {
  const { t } = scope;
  // A week of changes can be thousands of rows: read only the newest `evidenceLimit` of
  // each rule (a window function over the kinds' rule), and each rule's true counts. The
  // DNSSEC rule is not cut: it also lists the domains failing now (scoring.ts).
  const rule = sql.raw(`CASE kind ${Object.entries(DNS_KIND_RULES).map(([k, r]) => `WHEN '${k}' THEN '${r}'`).join(" ")} END`);
  const inWindow = t.where(dnsChangeFacts, sql`${dnsChangeFacts.observedAt} >= ${iso(scope.window.start)}`, sql`${dnsChangeFacts.observedAt} < ${iso(scope.window.end)}`);
  const statements = [
    t.db
      .select({
        domain: dnsDomains.domainName,
        enabled: dnsDomains.enabled,
        createdAt: dnsDomains.createdAt,
        updatedAt: dnsDomains.updatedAt,
        lastCheckedAt: dnsDomains.lastCheckedAt,
        lastSuccessAt: dnsDomains.lastSuccessAt,
        lastCheckStatus: dnsDomains.lastCheckStatus,
        lastCheckDetail: dnsDomains.lastCheckDetail,
        dnssecStatus: dnsDomains.dnssecStatus,
        collectionFailingSince: dnsDomains.collectionFailingSince,
        collectionFailures: dnsDomains.collectionFailures,
        collectionNextAttemptAt: dnsDomains.collectionNextAttemptAt,
        collectionErrorClass: dnsDomains.collectionErrorClass,
        collectionError: dnsDomains.collectionError,
      })
      .from(dnsDomains)
      .where(t.where(dnsDomains))
      .orderBy(dnsDomains.domainName),
    rawSelect<ChangeRow>(t.db, ["domain_name", "kind", "record_name", "record_type", "old_values", "new_values", "detail", "observed_at"], sql`SELECT domain_name, kind, record_name, record_type, old_values, new_values, detail, observed_at FROM (
        SELECT *, ${rule} AS rule, row_number() OVER (PARTITION BY ${rule} ORDER BY observed_at DESC, id DESC) AS n
        FROM ${dnsChangeFacts} WHERE ${inWindow})
      WHERE n <= CASE rule WHEN 'dns.dnssec_regression' THEN 1000000 ELSE ${scope.evidenceLimit} END
      ORDER BY observed_at DESC`),
    rawSelect<TotalRow>(
      t.db,
      ["rule", "evidence", "assets"],
      sql`SELECT ${rule} AS rule, count(*) AS evidence, count(DISTINCT domain_name) AS assets FROM ${dnsChangeFacts} WHERE ${inWindow} GROUP BY 1`,
    ),
  ];
  return { statements, read: (results) => dnsReading(scope, ...(results as [DomainRow[], ChangeRow[], TotalRow[]])) };
}

interface DomainRow extends DomainCollectionColumns {
  domain: string;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  lastCheckedAt: string | null;
  lastSuccessAt: string | null;
  lastCheckStatus: string | null;
  lastCheckDetail: string | null;
  dnssecStatus: string;
}

interface TotalRow {
  rule: RuleId;
  evidence: number;
  assets: number;
}

function dnsReading(scope: AuditScope, domains: DomainRow[], changes: ChangeRow[], totals: TotalRow[]): ModuleReading<{ dns: DnsFacts }> {
  const counts: AuditFacts["counts"] = Object.fromEntries(totals.filter((c) => c.rule !== "dns.dnssec_regression").map((c) => [c.rule, { evidence: c.evidence, assets: c.assets }]));

  const dnsChanges: DnsChangeFact[] = changes.map((c) => ({
    domain: c.domain_name,
    kind: c.kind,
    record_name: c.record_name,
    record_type: c.record_type,
    old_values: jsonArray(c.old_values),
    new_values: jsonArray(c.new_values),
    detail: c.detail,
    observed_at: c.observed_at,
  }));
  const dnssec_failing =
    scope.mode === "live" ? domains.filter((d) => d.enabled && d.dnssecStatus === "bogus").map((d) => ({ domain: d.domain, checked_at: d.lastCheckedAt })) : [];

  // The domain's own collection record (the run classifies each failed lookup).
  const collection = (d: DomainRow) => domainCollection(d);
  const coverage = coverageOf(
    "dns-watcher",
    scope,
    domains.map((d) => ({ asset: d.domain, enabled: enabledAt(scope, d), createdAt: d.createdAt, collection: collection(d) })),
  );
  const changed = new Set(dnsChanges.map((c) => c.domain));
  const assets: MonitoredAsset[] = scope.withAssets
    ? domains.map((d): MonitoredAsset => {
        const base = { module: "dns-watcher" as const, asset: d.domain, last_collected_at: d.lastSuccessAt };
        const detail = `DNSSEC ${d.dnssecStatus}`;
        if (!d.enabled) return { ...base, status: "paused", state: "Paused", detail };
        if (!d.lastCheckedAt) return { ...base, status: "pending", state: "Not yet resolved", detail: "" };
        if (d.lastCheckStatus === "error") return { ...base, status: "problem", state: "Lookups failing", detail: collection(d).errorMessage ?? detail };
        if (d.dnssecStatus === "bogus") return { ...base, status: "problem", state: "DNSSEC failing", detail };
        if (changed.has(d.domain)) return { ...base, status: "attention", state: "Changed", detail };
        if (d.lastCheckStatus === "partial") return { ...base, status: "attention", state: "Some lookups failing", detail: sanitizeFailureMessage(d.lastCheckDetail ?? detail) };
        return { ...base, status: "ok", state: "Resolved", detail };
      })
    : [];
  return { facts: { dns: { changes: dnsChanges, dnssec_failing } }, counts, coverage, assets };
}
