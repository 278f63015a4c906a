/**
 * DNS watcher domains (docs/decisions.md#dns-watcher): creating one with its record sets,
 * listing, the domain's current state (record sets, parsed SPF and DMARC, DNSSEC, the
 * email view), its settings, deleting it, and accepting a mail-server offer. Every query
 * goes through the organization's Tenant handle; another organization's domain is 404.
 */
import { eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { dnsDomains, dnsRecordSets } from "../../db/schema/dns-watcher";
import { badRequest } from "../../platform/errors";
import { direction, limitOffsetBody, readPage } from "../../platform/paging";
import type { UsageCounter } from "../../platform/quotas";
import { tenantDb, type Tenant } from "../../platform/tenant";
import type { Db } from "../../db/client";
import { collectionView, nextAttemptWhenEnabled, nextScheduledRun } from "../../platform/collection";
import type { WatchedRecordType } from "../../platform/dns/presentation";
import { NO_DMARC, type DmarcRecord } from "./dmarc";
import { EMPTY_SPF, type SpfAnalysis } from "./spf";
import { unread } from "./unread";
import type { DOMAIN_SORT } from "./schema";
import { parseStoredJson } from "./stored-json";
import { domainCollection } from "./collection";
import { selectorsOf, viewOf } from "./email/assess";
import { storedEmailView } from "./email/summary";
import { createMailServerMonitor } from "../cert-watcher/mail-server-contract";
import { mxHostsOf, NO_EMAIL_STATE } from "./email/view";
import { watchedDomainName } from "./names";
import { DEFAULT_RECORD_SETS, dkimRecordSets, EMAIL_RECORD_SETS, insertRecordSets, isDmarcSource, isSpfSource, recordSetCap, recordSetView, recordSetWriteError, type DomainRow, type RecordSetRow } from "./record-set-service";

/** The `dns_domains` quota's usage (connected in src/app.ts). */
export const dnsDomainUsage: UsageCounter = (db, organizationId) => tenantDb(db, organizationId).count(dnsDomains);

function domainView(d: DomainRow) {
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
    collection: collectionView(domainCollection(d), d.enabled),
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

/**
 * One domain per name per organization (409); quota `dns_domains` holds under parallel
 * creates (403). The domain and its default record sets are one D1 batch: never a domain
 * without them.
 */
export async function createDomain(t: Tenant, input: { domain_name: string; enabled?: boolean; notes?: string; email_checks?: boolean; dkim_selectors?: string[] }, now: Date) {
  const domainName = watchedDomainName(input.domain_name);
  const emailChecks = input.email_checks ?? false;
  const sets = [...DEFAULT_RECORD_SETS(domainName), ...(emailChecks ? EMAIL_RECORD_SETS(domainName) : []), ...dkimRecordSets(domainName, input.dkim_selectors ?? [])];
  const at = now.toISOString();
  // The record sets find the new domain by its unique name (drizzle takes an SQL expression as a value).
  const newDomainId = sql`(SELECT id FROM ${dnsDomains} WHERE ${t.where(dnsDomains, eq(dnsDomains.domainName, domainName))})` as unknown as number;
  const { row, quotaRemaining } = await t.create(
    dnsDomains,
    // A new domain is due at once: its collection says when it is first asked, not "unknown".
    { domainName, enabled: input.enabled ?? true, notes: input.notes ?? "", emailChecks, collectionNextAttemptAt: input.enabled === false ? null : nextScheduledRun(now), createdAt: at, updatedAt: at },
    {
      quota: "dns_domains",
      duplicate: `${domainName} is already watched`,
      alongside: insertRecordSets(t, newDomainId, sets, at),
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

/** none: looked up, no DMARC record; ok / invalid: the record's verdict (never observed is unknown). */
function dmarcStatus(d: DmarcRecord): "none" | "ok" | "invalid" {
  if (!d.record) return "none";
  return d.valid ? "ok" : "invalid";
}

/**
 * The domain with its current state: record sets and values, parsed SPF and DMARC,
 * DNSSEC. A policy whose record set is not watched says so (`watched` false) and shows
 * nothing parsed.
 */
export async function getDomain(t: Tenant, id: number) {
  const d = await t.getOr404(dnsDomains, id, "DNS domain");
  const sets = await t.select(dnsRecordSets, eq(dnsRecordSets.domainId, id)).orderBy(dnsRecordSets.name, dnsRecordSets.type).all();
  const spfWatched = sets.some((s) => isSpfSource(d.domainName, s));
  const dmarcWatched = sets.some((s) => isDmarcSource(d.domainName, s));
  const spf = spfWatched ? parseStoredJson<SpfAnalysis>(d.spfJson) : null;
  const dmarc = dmarcWatched ? parseStoredJson<DmarcRecord>(d.dmarcJson) : null;
  return {
    ...domainView(d),
    records: sets.map((r) => recordSetView(r, d)),
    // Never observed (not watched, or its TXT never resolved): unknown, not "none", and nothing else stated.
    spf: spf ? { ...spf, watched: spfWatched } : { ...unread(EMPTY_SPF), status: "unknown" as const, watched: spfWatched },
    dmarc: dmarc ? { ...dmarc, status: dmarcStatus(dmarc), watched: dmarcWatched } : { ...unread(NO_DMARC), status: "unknown" as const, watched: dmarcWatched },
    dnssec: { status: d.dnssecStatus, validated: d.dnssecStatus === "validated", error: d.dnssecError },
    email_checks: d.emailChecks,
    dkim_selectors: selectorsOf(d.domainName, sets),
    email_security: await emailSecurityOf(t.db, d, sets, dmarc),
  };
}

/**
 * The email view from what the watcher stored. With the checks off every mechanism is
 * unknown, and says why; with them on, a record set not watched (deleted) reads as never observed.
 */
async function emailSecurityOf(db: Db, d: DomainRow, sets: RecordSetRow[], dmarc: DmarcRecord | null) {
  if (!d.emailChecks) {
    const view = await viewOf({ name: d.domainName, emailChecks: false }, () => null, NO_EMAIL_STATE, null, []);
    const off = "The email checks are off for this domain (email_checks): nothing is looked up.";
    return {
      enabled: false,
      ...view,
      mta_sts: { ...view.mta_sts, findings: [off] },
      dane: { ...view.dane, findings: [off] },
      dkim: { ...view.dkim, findings: [off] },
      bimi: { ...view.bimi, findings: [off] },
    };
  }
  const view = await storedEmailView(db, d, sets, dmarc);
  return { enabled: true, ...view, mail_server_offers: view.dane.hosts.filter((h) => h.served.monitor_id === null).map((h) => ({ host: h.host })) };
}

/**
 * Accepts a mail-server offer: a certificate monitor of one of the domain's MX hosts on
 * port 25 with STARTTLS (the cert_monitors quota and duplicates as for any monitor: 403, 409).
 */
export async function createMailServerMonitorOf(t: Tenant, domainId: number, input: { host: string; ip_addresses: string[] }, now: Date) {
  const d = await t.getOr404(dnsDomains, domainId, "DNS domain");
  if (!d.emailChecks) throw badRequest(`The email checks are off for ${d.domainName}: its MX hosts are not followed`);
  const mx = await t.first(dnsRecordSets, eq(dnsRecordSets.domainId, d.id), eq(dnsRecordSets.name, d.domainName), eq(dnsRecordSets.type, "MX"));
  const hosts = mxHostsOf(parseStoredJson<string[]>(mx?.valuesJson ?? null) ?? []);
  const host = input.host.trim().toLowerCase().replace(/\.$/, "");
  if (!hosts.includes(host)) {
    throw badRequest("Not an MX host of the domain", [{ path: "host", message: `'${input.host}' is not an MX host of ${d.domainName} as last resolved (${hosts.join(", ") || "none"})` }]);
  }
  const created = await createMailServerMonitor(t, host, input.ip_addresses, `Mail server of ${d.domainName} (offered by the DNS watcher's email checks)`, now);
  return { ...created, message: `Certificate monitor ${created.id} scans ${host} on port 25 with STARTTLS${input.ip_addresses.length ? "" : ": add its IP addresses to have it scanned"}` };
}

/**
 * Notes, enabled, email checks and DKIM selectors, in one D1 batch. Turning the email
 * checks on watches the _mta-sts, _smtp._tls and default._bimi TXT record sets; off stops
 * watching them and clears what the checks kept. `dkim_selectors` replaces the declared
 * selectors (their `<selector>._domainkey` TXT record sets). The record set cap holds (403).
 */
export async function updateDomain(t: Tenant, id: number, input: { notes?: string; enabled?: boolean; email_checks?: boolean; dkim_selectors?: string[] }, now: Date) {
  const d = await t.getOr404(dnsDomains, id, "DNS domain");
  const at = now.toISOString();
  const ofDomain = eq(dnsRecordSets.domainId, id);
  const statements: BatchItem<"sqlite">[] = [
    t.update(
      dnsDomains,
      {
        ...(input.notes !== undefined ? { notes: input.notes } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        // Enabled again: asked at the next run if due, and the collection view says so.
        ...(input.enabled === true ? { collectionNextAttemptAt: nextAttemptWhenEnabled(dnsDomains, now) } : {}),
        ...(input.email_checks !== undefined ? { emailChecks: input.email_checks } : {}),
        ...(input.email_checks === false ? { emailJson: null } : {}),
        updatedAt: at,
      },
      eq(dnsDomains.id, id),
    ),
  ];
  const add: { name: string; type: WatchedRecordType }[] = [];
  if (input.email_checks === true) add.push(...EMAIL_RECORD_SETS(d.domainName));
  if (input.email_checks === false) {
    statements.push(t.delete(dnsRecordSets, ofDomain, eq(dnsRecordSets.type, "TXT"), inArray(dnsRecordSets.name, EMAIL_RECORD_SETS(d.domainName).map((s) => s.name))));
  }
  if (input.dkim_selectors !== undefined) {
    const wanted = dkimRecordSets(d.domainName, input.dkim_selectors);
    const declared = (await t.select(dnsRecordSets, ofDomain).all()).filter((s) => selectorsOf(d.domainName, [s]).length === 1);
    const gone = declared.filter((s) => !wanted.some((w) => w.name === s.name)).map((s) => s.id);
    if (gone.length) statements.push(t.delete(dnsRecordSets, ofDomain, inArray(dnsRecordSets.id, gone)));
    add.push(...wanted);
  }
  if (add.length) {
    statements.push(...insertRecordSets(t, id, add, at, { ignoreDuplicates: true }), recordSetCap(t, id));
  }
  try {
    await t.db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  } catch (err) {
    throw recordSetWriteError(err, "record set already watched");
  }
  return { message: "DNS domain updated" };
}

/** Deletes the domain with its record sets, history and facts (cascade). */
export async function deleteDomain(t: Tenant, id: number) {
  const d = await t.getOr404(dnsDomains, id, "DNS domain");
  await t.delete(dnsDomains, eq(dnsDomains.id, id)).run();
  return { message: `Stopped watching ${d.domainName}` };
}
