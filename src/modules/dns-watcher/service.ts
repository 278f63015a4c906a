/**
 * DNS watcher domains, watched record sets and history (ADDENDUM 8): the rules of the
 * domain. Every query goes through the organization's Tenant handle; another
 * organization's domain or record set is 404.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import { dnsDomains, dnsHistory, dnsRecordSets } from "../../db/schema/dns-watcher";
import { invalidField, notFound } from "../../platform/errors";
import { direction, limitOffsetBody, readPage } from "../../platform/paging";
import { registerUsageCounter } from "../../platform/quotas";
import { tenantDb, type Tenant } from "../../platform/tenant";
import type { WatchedRecordType } from "../../platform/dns/presentation";
import { normalizeDomain } from "../lists/domain";
import { NO_DMARC, type DmarcRecord } from "./dmarc";
import { EMPTY_SPF, type SpfAnalysis } from "./spf";
import type { DOMAIN_SORT } from "./schema";
import { parseStoredJson } from "./stored-json";

registerUsageCounter("dns_domains", (db, organizationId) => tenantDb(db, organizationId).count(dnsDomains));

/** Watched for every new domain: apex A, AAAA, MX, NS, TXT, CAA and the _dmarc TXT (ADDENDUM 8). */
export const DEFAULT_RECORD_SETS = (domain: string): { name: string; type: WatchedRecordType }[] => [
  ...(["A", "AAAA", "MX", "NS", "TXT", "CAA"] as const).map((type) => ({ name: domain, type })),
  { name: `_dmarc.${domain}`, type: "TXT" },
];

/** A wildcard is a zone-file construct, not a name a resolver can be asked about. */
function refuseWildcard(raw: string, field: string): void {
  if (raw.includes("*")) throw invalidField(field, `'${raw}' contains a wildcard: DNS is asked about one name at a time; watch the names in use instead`, "Invalid domain name");
}

/** The stored form of a watched domain (lowercase A-label, no trailing dot), or a 400 naming `field`. */
export function watchedDomainName(raw: string, field = "domain_name"): string {
  refuseWildcard(raw, field);
  const r = normalizeDomain(raw);
  if (!r.ok) throw invalidField(field, r.message, "Invalid domain name");
  return r.value;
}

/**
 * A record set's owner name, read like a zone file written for the domain: `@` (or
 * empty) is the domain; a single label without a dot (`www`, `_mta-sts`) is relative to
 * the domain; anything else is a full name that must be the domain or below it (a
 * trailing dot is allowed). Leading underscore labels (`_dmarc`, `_mta-sts`) are kept as
 * written, lowercased; the rest is normalized like a domain. Outside the domain: 400.
 */
export function recordSetName(raw: string, domain: string, field = "name"): string {
  refuseWildcard(raw, field);
  const trimmed = raw.trim();
  let text = trimmed.replace(/\.$/, "");
  if (text === "@" || text === "") return domain;
  if (!text.includes(".") && !trimmed.endsWith(".")) text = `${text}.${domain}`;
  const labels = text.split(".");
  const service: string[] = [];
  while (labels.length && labels[0].startsWith("_")) {
    const l = labels.shift()!.toLowerCase();
    if (!/^_[a-z0-9-]{1,62}$/.test(l)) throw invalidField(field, `'${raw}': '${l}' is not a valid label`, "Invalid record name");
    service.push(l);
  }
  let rest = domain;
  if (labels.length) {
    const r = normalizeDomain(labels.join("."));
    if (!r.ok) throw invalidField(field, r.message, "Invalid record name");
    rest = r.value;
  }
  const name = [...service, rest].join(".");
  if (rest !== domain && !rest.endsWith(`.${domain}`)) throw invalidField(field, `'${raw}' is outside the watched domain ${domain} (a single label such as 'www' is read as www.${domain})`, "Record set outside the domain");
  if (name.length > 253) throw invalidField(field, `'${raw}' is longer than 253 characters`, "Invalid record name");
  return name;
}

function domainView(d: typeof dnsDomains.$inferSelect) {
  return {
    id: d.id,
    domain_name: d.domainName,
    enabled: d.enabled,
    notes: d.notes,
    last_checked_at: d.lastCheckedAt,
    last_success_at: d.lastSuccessAt,
    last_check_status: d.lastCheckStatus,
    last_check_detail: d.lastCheckDetail,
    dnssec_status: d.dnssecStatus,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

function recordSetView(r: typeof dnsRecordSets.$inferSelect) {
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    values: parseStoredJson<string[]>(r.valuesJson),
    rcode: r.rcode,
    last_error: r.lastError,
    last_changed_at: r.lastChangedAt,
    created_at: r.createdAt,
  };
}

/**
 * One domain per name per organization (409); quota `dns_domains` holds under parallel
 * creates (403). The domain and its default record sets are one D1 batch: never a domain
 * without them.
 */
export async function createDomain(t: Tenant, input: { domain_name: string; enabled?: boolean; notes?: string }, now: Date) {
  const domainName = watchedDomainName(input.domain_name);
  const at = now.toISOString();
  // The record sets find the new domain by its unique name (drizzle takes an SQL expression as a value).
  const newDomainId = sql`(SELECT id FROM ${dnsDomains} WHERE ${t.where(dnsDomains, eq(dnsDomains.domainName, domainName))})` as unknown as number;
  const { row, quotaRemaining } = await t.create(
    dnsDomains,
    { domainName, enabled: input.enabled ?? true, notes: input.notes ?? "", createdAt: at, updatedAt: at },
    {
      quota: "dns_domains",
      duplicate: `${domainName} is already watched`,
      alongside: [t.insert(dnsRecordSets, DEFAULT_RECORD_SETS(domainName).map((s) => ({ domainId: newDomainId, name: s.name, type: s.type, createdAt: at })))],
    },
  );
  return { id: row.id, message: `Watching ${domainName}`, quota_remaining: quotaRemaining ?? 0 };
}

export interface DomainListInput {
  limit: number;
  offset: number;
  sort_by: (typeof DOMAIN_SORT)[number];
  sort_order: "asc" | "desc";
  enabled?: "true" | "false";
}

const DOMAIN_COLUMNS = {
  domain_name: dnsDomains.domainName,
  enabled: dnsDomains.enabled,
  last_checked_at: dnsDomains.lastCheckedAt,
  dnssec_status: dnsDomains.dnssecStatus,
  created_at: dnsDomains.createdAt,
} as const;

export async function listDomains(t: Tenant, q: DomainListInput) {
  const enabled = q.enabled !== undefined ? eq(dnsDomains.enabled, q.enabled === "true") : undefined;
  const dir = direction(q.sort_order);
  const { rows, total } = await readPage(
    t.select(dnsDomains, enabled).orderBy(dir(DOMAIN_COLUMNS[q.sort_by]), dir(dnsDomains.id)).limit(q.limit).offset(q.offset),
    t.countQuery(dnsDomains, enabled),
  );
  return limitOffsetBody("domains", rows.map(domainView), total, q);
}

/** The domain with its current state: record sets and values, parsed SPF and DMARC, DNSSEC. */
export async function getDomain(t: Tenant, id: number) {
  const d = await t.getOr404(dnsDomains, id, "DNS domain");
  const sets = await t.select(dnsRecordSets, eq(dnsRecordSets.domainId, id)).orderBy(dnsRecordSets.name, dnsRecordSets.type).all();
  return {
    ...domainView(d),
    records: sets.map(recordSetView),
    spf: parseStoredJson<SpfAnalysis>(d.spfJson) ?? { ...EMPTY_SPF },
    dmarc: parseStoredJson<DmarcRecord>(d.dmarcJson) ?? { ...NO_DMARC },
    dnssec: { status: d.dnssecStatus, validated: d.dnssecStatus === "validated", error: d.dnssecError },
  };
}

export async function updateDomain(t: Tenant, id: number, input: { notes?: string; enabled?: boolean }, now: Date) {
  await t.getOr404(dnsDomains, id, "DNS domain");
  await t
    .update(
      dnsDomains,
      { ...(input.notes !== undefined ? { notes: input.notes } : {}), ...(input.enabled !== undefined ? { enabled: input.enabled } : {}), updatedAt: now.toISOString() },
      eq(dnsDomains.id, id),
    )
    .run();
  return { message: "DNS domain updated" };
}

/** Deletes the domain with its record sets, history and facts (cascade). */
export async function deleteDomain(t: Tenant, id: number) {
  const d = await t.getOr404(dnsDomains, id, "DNS domain");
  await t.delete(dnsDomains, eq(dnsDomains.id, id)).run();
  return { message: `Stopped watching ${d.domainName}` };
}

export async function listRecordSets(t: Tenant, domainId: number) {
  const d = await t.getOr404(dnsDomains, domainId, "DNS domain");
  const sets = await t.select(dnsRecordSets, eq(dnsRecordSets.domainId, domainId)).orderBy(dnsRecordSets.name, dnsRecordSets.type).all();
  return { domain: d.domainName, records: sets.map(recordSetView) };
}

export async function addRecordSet(t: Tenant, domainId: number, input: { name: string; type: WatchedRecordType }, now: Date) {
  const d = await t.getOr404(dnsDomains, domainId, "DNS domain");
  const name = recordSetName(input.name, d.domainName);
  const { row } = await t.create(
    dnsRecordSets,
    { domainId, name, type: input.type, createdAt: now.toISOString() },
    { duplicate: `${name} ${input.type} is already watched` },
  );
  return { id: row.id, message: `Watching ${name} ${input.type}` };
}

export async function deleteRecordSet(t: Tenant, domainId: number, recordId: number) {
  await t.getOr404(dnsDomains, domainId, "DNS domain");
  const r = await t.first(dnsRecordSets, eq(dnsRecordSets.id, recordId), eq(dnsRecordSets.domainId, domainId));
  if (!r) throw notFound("Record set");
  await t.delete(dnsRecordSets, eq(dnsRecordSets.id, recordId)).run();
  return { message: `Stopped watching ${r.name} ${r.type}` };
}

/** Confirmed changes, newest first. */
export async function history(t: Tenant, domainId: number, q: { limit: number; offset: number }) {
  const d = await t.getOr404(dnsDomains, domainId, "DNS domain");
  const cond = t.where(dnsHistory, eq(dnsHistory.domainId, domainId));
  const { rows, total } = await readPage(
    t.db.select().from(dnsHistory).where(cond).orderBy(desc(dnsHistory.observedAt), desc(dnsHistory.id)).limit(q.limit).offset(q.offset),
    t.db.select({ n: sql<number>`count(*)` }).from(dnsHistory).where(and(cond)),
  );
  return {
    domain: d.domainName,
    ...limitOffsetBody(
      "changes",
      rows.map((h) => ({
        id: h.id,
        observed_at: h.observedAt,
        kind: h.kind,
        name: h.recordName,
        type: h.recordType,
        old_values: parseStoredJson<string[]>(h.oldValues) ?? [],
        new_values: parseStoredJson<string[]>(h.newValues) ?? [],
        detail: h.detail,
        analysis: parseStoredJson<Record<string, unknown>>(h.analysisJson),
      })),
      total,
      q,
    ),
  };
}

/**
 * A CT filter-feed proposal the user accepted (`feed_dns_enabled`): a name seen in a new
 * certificate. If it lies in a domain already watched, its A and AAAA record sets are
 * added there; otherwise the name becomes a watched domain of its own (default set,
 * quota `dns_domains`).
 */
export async function watchProposedName(t: Tenant, hostname: string, now: Date): Promise<{ domain_id: number; message: string }> {
  const name = watchedDomainName(hostname.replace(/^\*\./, ""), "hostname");
  // The watched domain that contains the name: the longest of its suffixes that is watched.
  const labels = name.split(".");
  const suffixes = labels.map((_, i) => labels.slice(i).join("."));
  const [parent] = await t
    .select(dnsDomains, sql`${dnsDomains.domainName} IN (SELECT value FROM json_each(${JSON.stringify(suffixes)}))`)
    .orderBy(desc(sql`length(${dnsDomains.domainName})`))
    .limit(1)
    .all();
  if (!parent) {
    const created = await createDomain(t, { domain_name: name, notes: "proposed by a CT filter feed" }, now);
    return { domain_id: created.id, message: created.message };
  }
  await t
    .insert(dnsRecordSets, (["A", "AAAA"] as const).map((type) => ({ domainId: parent.id, name, type, createdAt: now.toISOString() })))
    .onConflictDoNothing()
    .run();
  return { domain_id: parent.id, message: `Watching ${name} A and AAAA in ${parent.domainName}` };
}
