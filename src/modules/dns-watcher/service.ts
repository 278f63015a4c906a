/**
 * DNS watcher domains, watched record sets and history (docs/decisions.md#dns-watcher): the rules of the
 * domain. Every query goes through the organization's Tenant handle; another
 * organization's domain or record set is 404.
 */
import { desc, eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { parse } from "tldts";
import { dnsDomains, dnsHistory, dnsRecordSets } from "../../db/schema/dns-watcher";
import { isForeignKeyViolation, isQuotaGuard, isUniqueViolation } from "../../platform/db-errors";
import { badRequest, conflict, invalidField, notFound, quotaExceeded } from "../../platform/errors";
import { direction, limitOffsetBody, readPage } from "../../platform/paging";
import type { UsageCounter } from "../../platform/quotas";
import { tenantDb, type Tenant } from "../../platform/tenant";
import type { Db } from "../../db/client";
import { collectionView, nextAttemptWhenEnabled, nextScheduledRun } from "../../platform/collection";
import type { WatchedRecordType } from "../../platform/dns/presentation";
import { normalizeDomain } from "../../platform/net/domain";
import { NO_DMARC, type DmarcRecord } from "./dmarc";
import { EMPTY_SPF, type SpfAnalysis } from "./spf";
import { unread } from "./unread";
import type { DOMAIN_SORT } from "./schema";
import { parseStoredJson } from "./stored-json";
import { domainCollection, recordSetCollection } from "./collection";
import { selectorsOf, viewOf } from "./email/assess";
import { storedEmailView } from "./email/summary";
import { createMailServerMonitor } from "../cert-watcher/mail-server-contract";
import { emailNames, mxHostsOf, NO_EMAIL_STATE } from "./email/view";

/** The `dns_domains` quota's usage (connected in src/app.ts). */
export const dnsDomainUsage: UsageCounter = (db, organizationId) => tenantDb(db, organizationId).count(dnsDomains);

/**
 * Record sets one domain may watch (the default 7 included): enough for the mail and
 * service names of a zone (DKIM selectors, _mta-sts, _smtp._tls, TLS names), while a
 * run's cost per domain stays bounded. Enforced atomically with the insert.
 */
export const MAX_RECORD_SETS_PER_DOMAIN = 50;

/** Watched for every new domain: apex A, AAAA, MX, NS, TXT, CAA and the _dmarc TXT: what mail and web delivery depend on. */
export const DEFAULT_RECORD_SETS = (domain: string): { name: string; type: WatchedRecordType }[] => [
  ...(["A", "AAAA", "MX", "NS", "TXT", "CAA"] as const).map((type) => ({ name: domain, type })),
  { name: `_dmarc.${domain}`, type: "TXT" },
];

/** Watched while the domain's email checks are on: the MTA-STS, TLS reporting and BIMI records. */
export const EMAIL_RECORD_SETS = (domain: string): { name: string; type: "TXT" }[] => {
  const n = emailNames(domain);
  return [n.mtaSts, n.tlsRpt, n.bimi].map((name) => ({ name, type: "TXT" }));
};

/** A DKIM selector as RFC 6376 §3.1 writes it (labels of letters, digits, hyphens; underscores as found in practice), lowercased; 400 naming the field otherwise. */
export function dkimSelector(raw: string, domain: string, field = "dkim_selectors"): string {
  const s = raw.trim().toLowerCase();
  const label = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
  if (s === "" || !s.split(".").every((l) => label.test(l))) throw invalidField(field, `'${raw.slice(0, 80)}' is not a DKIM selector (labels of letters, digits, hyphens and underscores, separated by dots)`, "Invalid DKIM selector");
  if (`${s}._domainkey.${domain}`.length > 253) throw invalidField(field, `'${raw.slice(0, 80)}' makes a name longer than 253 characters`, "Invalid DKIM selector");
  return s;
}
const dkimRecordSets = (domain: string, selectors: readonly string[]) =>
  [...new Set(selectors.map((s) => dkimSelector(s, domain)))].map((s) => ({ name: emailNames(domain).dkim(s), type: "TXT" as const }));

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

/** A label holding an underscore: a service or selector label (`_dmarc`, `_tcp`, `s1_2024`), not a host name. */
const SERVICE_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const isServiceLabel = (label: string) => label.includes("_");

/**
 * A record set's owner name, read like a zone file written for the domain: `@` (or
 * empty) is the domain; a name with a trailing dot, or ending in the domain, is a full
 * name; otherwise a single label (`www`) or a name with underscore labels anywhere
 * (`_mta-sts`, `s1._domainkey`, `default._bimi`, `_25._tcp.mail`) is relative to the
 * domain, unless it ends in a public top-level domain (`_dmarc.example.com`: a full
 * name, outside); several ordinary labels (`mail.elsewhere.test`) are a full name.
 * Labels with an underscore are kept as written, lowercased (letters, digits, hyphens
 * and underscores, 1-63 characters); the others are normalized like a domain (IDN to
 * A-labels). A wildcard, or a name outside the domain: 400 naming `field`.
 */
export function recordSetName(raw: string, domain: string, field = "name"): string {
  refuseWildcard(raw, field);
  // The full stops UTS #46 maps to "." are dots here too, so labels are split once.
  const trimmed = raw.trim().replace(/[\u3002\uff0e\uff61]/g, ".");
  const absolute = trimmed.endsWith(".");
  const text = trimmed.replace(/\.$/, "");
  if (text === "@" || (text === "" && !absolute)) return domain;
  const labels = text.split(".");
  if (labels.some((l) => l === "")) throw invalidField(field, `'${raw}' has an empty label`, "Invalid record name");
  const lower = text.toLowerCase();
  const endsInDomain = lower === domain || lower.endsWith(`.${domain}`);
  const last = labels[labels.length - 1].toLowerCase();
  const relative = !absolute && !endsInDomain && (labels.length === 1 || (labels.some(isServiceLabel) && !parse(`x.${last}`).isIcann));
  const full = relative ? [...labels, ...domain.split(".")] : labels;

  // Underscore labels as written; the rest through UTS #46, a placeholder standing in for each underscore label.
  for (const l of full.filter(isServiceLabel)) {
    if (!SERVICE_LABEL.test(l.toLowerCase())) throw invalidField(field, `'${raw}': '${l}' is not a valid label`, "Invalid record name");
  }
  const r = normalizeDomain(full.map((l) => (isServiceLabel(l) ? "x" : l)).join("."));
  if (!r.ok) throw invalidField(field, r.message.replace(/'[^']*'/, `'${raw}'`), "Invalid record name");
  const normalized = r.value.split(".");
  if (normalized.length !== full.length) throw invalidField(field, `'${raw}' is not a valid record name`, "Invalid record name");
  const name = normalized.map((l, i) => (isServiceLabel(full[i]) ? full[i].toLowerCase() : l)).join(".");
  if (name !== domain && !name.endsWith(`.${domain}`)) {
    throw invalidField(field, `'${raw}' is outside the watched domain ${domain} (a single label such as 'www', or a name with underscore labels such as 's1._domainkey', is read below ${domain}; write other names in full)`, "Record set outside the domain");
  }
  if (name.length > 253) throw invalidField(field, `'${raw}' is longer than 253 characters`, "Invalid record name");
  return name;
}

type DomainRow = typeof dnsDomains.$inferSelect;
type RecordSetRow = typeof dnsRecordSets.$inferSelect;

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

function recordSetView(r: RecordSetRow, d: DomainRow) {
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    values: parseStoredJson<string[]>(r.valuesJson),
    rcode: r.rcode,
    last_error: r.lastError,
    last_changed_at: r.lastChangedAt,
    collection: collectionView(recordSetCollection(r, d), d.enabled),
    created_at: r.createdAt,
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
      alongside: [t.insert(dnsRecordSets, sets.map((s) => ({ domainId: newDomainId, name: s.name, type: s.type, createdAt: at })))],
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

/** The record sets the parsed policies come from: the apex TXT (SPF) and `_dmarc` TXT (DMARC). */
const isSpfSource = (domain: string, s: { name: string; type: string }) => s.type === "TXT" && s.name === domain;
const isDmarcSource = (domain: string, s: { name: string; type: string }) => s.type === "TXT" && s.name === `_dmarc.${domain}`;

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
    statements.push(t.insert(dnsRecordSets, add.map((s) => ({ domainId: id, name: s.name, type: s.type, createdAt: at }))).onConflictDoNothing(), recordSetCap(t, id));
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

export async function listRecordSets(t: Tenant, domainId: number) {
  const d = await t.getOr404(dnsDomains, domainId, "DNS domain");
  const sets = await t.select(dnsRecordSets, eq(dnsRecordSets.domainId, domainId)).orderBy(dnsRecordSets.name, dnsRecordSets.type).all();
  return { domain: d.domainName, records: sets.map((r) => recordSetView(r, d)) };
}

/**
 * The statement that fails a batch (403) when the domain watches more than
 * MAX_RECORD_SETS_PER_DOMAIN record sets after its inserts: the per-monitor target cap
 * of cert-watcher, on the same `quota_guard` mechanism, so parallel adds never exceed it.
 */
function recordSetCap(t: Tenant, domainId: number) {
  return t.guard("record_sets_per_domain", t.usage(dnsRecordSets, eq(dnsRecordSets.domainId, domainId)), MAX_RECORD_SETS_PER_DOMAIN);
}

function recordSetWriteError(err: unknown, duplicate: string): unknown {
  if (isUniqueViolation(err)) return conflict(duplicate);
  if (isQuotaGuard(err)) return quotaExceeded(`A domain watches at most ${MAX_RECORD_SETS_PER_DOMAIN} record sets`);
  if (isForeignKeyViolation(err)) return notFound("DNS domain"); // deleted meanwhile
  return err;
}

export async function addRecordSet(t: Tenant, domainId: number, input: { name: string; type: WatchedRecordType }, now: Date) {
  const d = await t.getOr404(dnsDomains, domainId, "DNS domain");
  const name = recordSetName(input.name, d.domainName);
  try {
    const [rows] = await t.db.batch([t.insert(dnsRecordSets, { domainId, name, type: input.type, createdAt: now.toISOString() }).returning(), recordSetCap(t, domainId)]);
    return { id: (rows as { id: number }[])[0].id, message: `Watching ${name} ${input.type}` };
  } catch (err) {
    throw recordSetWriteError(err, `${name} ${input.type} is already watched`);
  }
}

/**
 * Stops watching a record set. The apex TXT and `_dmarc` TXT carry the domain's SPF and
 * DMARC policy: deleting one clears the parsed policy in the same batch, so the domain
 * view never shows a policy nothing watches any more.
 */
export async function deleteRecordSet(t: Tenant, domainId: number, recordId: number) {
  const d = await t.getOr404(dnsDomains, domainId, "DNS domain");
  const r = await t.first(dnsRecordSets, eq(dnsRecordSets.id, recordId), eq(dnsRecordSets.domainId, domainId));
  if (!r) throw notFound("Record set");
  const clear = isSpfSource(d.domainName, r) ? { spfJson: null } : isDmarcSource(d.domainName, r) ? { dmarcJson: null } : null;
  const remove = t.delete(dnsRecordSets, eq(dnsRecordSets.id, recordId));
  if (clear) await t.db.batch([remove, t.update(dnsDomains, clear, eq(dnsDomains.id, domainId))]);
  else await remove.run();
  return { message: `Stopped watching ${r.name} ${r.type}` };
}

/** Confirmed changes, newest first. */
export async function history(t: Tenant, domainId: number, q: { limit: number; offset: number }) {
  const d = await t.getOr404(dnsDomains, domainId, "DNS domain");
  const ofDomain = eq(dnsHistory.domainId, domainId);
  const { rows, total } = await readPage(
    t.select(dnsHistory, ofDomain).orderBy(desc(dnsHistory.observedAt), desc(dnsHistory.id)).limit(q.limit).offset(q.offset),
    t.countQuery(dnsHistory, ofDomain),
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
export async function watchProposedName(t: Tenant, hostname: string, now: Date): Promise<{ domain_id: number; created: boolean; message: string }> {
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
    return { domain_id: created.id, created: true, message: created.message };
  }
  try {
    await t.db.batch([
      t.insert(dnsRecordSets, (["A", "AAAA"] as const).map((type) => ({ domainId: parent.id, name, type, createdAt: now.toISOString() }))).onConflictDoNothing(),
      recordSetCap(t, parent.id),
    ]);
  } catch (err) {
    throw recordSetWriteError(err, `${name} is already watched`);
  }
  return { domain_id: parent.id, created: false, message: `Watching ${name} A and AAAA in ${parent.domainName}` };
}
