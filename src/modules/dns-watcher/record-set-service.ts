/**
 * The record sets a DNS domain watches: the default and email sets, the declared DKIM
 * selectors' records, the per-domain cap, adding and removing one. Every query goes
 * through the organization's Tenant handle; another organization's domain or record set is 404.
 */
import { eq } from "drizzle-orm";
import { dnsDomains, dnsRecordSets } from "../../db/schema/dns-watcher";
import { isForeignKeyViolation, isQuotaGuard, isUniqueViolation } from "../../platform/db-errors";
import { conflict, notFound, quotaExceeded } from "../../platform/errors";
import type { Tenant } from "../../platform/tenant";
import { collectionView } from "../../platform/collection";
import type { WatchedRecordType } from "../../platform/dns/presentation";
import { parseStoredJson } from "./stored-json";
import { recordSetCollection } from "./collection";
import { emailNames } from "./email/view";
import { dkimSelector, recordSetName } from "./names";

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

/** The `<selector>._domainkey` TXT record sets of the declared selectors (each checked, duplicates once). */
export const dkimRecordSets = (domain: string, selectors: readonly string[]) =>
  [...new Set(selectors.map((s) => dkimSelector(s, domain)))].map((s) => ({ name: emailNames(domain).dkim(s), type: "TXT" as const }));

/**
 * Record sets written per INSERT statement: each row binds up to 7 parameters (the
 * organization, the domain or the two of the subquery that finds a new one, name, type,
 * the failure count's default, time) and D1 binds at most 100 per statement. A domain with its email checks and 20
 * DKIM selectors has 30 record sets: one VALUES list of them was a 500 ("too many SQL
 * variables").
 */
const RECORD_SETS_PER_STATEMENT = 12;

/** The INSERTs of these record sets (of one domain), in statements D1 accepts, for one batch. */
export function insertRecordSets(t: Tenant, domainId: number, sets: readonly { name: string; type: WatchedRecordType }[], at: string, opts: { ignoreDuplicates?: boolean } = {}) {
  const statements = [];
  for (let i = 0; i < sets.length; i += RECORD_SETS_PER_STATEMENT) {
    const insert = t.insert(dnsRecordSets, sets.slice(i, i + RECORD_SETS_PER_STATEMENT).map((s) => ({ domainId, name: s.name, type: s.type, createdAt: at })));
    statements.push(opts.ignoreDuplicates ? insert.onConflictDoNothing() : insert);
  }
  return statements;
}

export type DomainRow = typeof dnsDomains.$inferSelect;
export type RecordSetRow = typeof dnsRecordSets.$inferSelect;

export function recordSetView(r: RecordSetRow, d: DomainRow) {
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

/** The record sets the parsed policies come from: the apex TXT (SPF) and `_dmarc` TXT (DMARC). */
export const isSpfSource = (domain: string, s: { name: string; type: string }) => s.type === "TXT" && s.name === domain;
export const isDmarcSource = (domain: string, s: { name: string; type: string }) => s.type === "TXT" && s.name === `_dmarc.${domain}`;

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
export function recordSetCap(t: Tenant, domainId: number) {
  return t.guard("record_sets_per_domain", t.usage(dnsRecordSets, eq(dnsRecordSets.domainId, domainId)), MAX_RECORD_SETS_PER_DOMAIN);
}

export function recordSetWriteError(err: unknown, duplicate: string): unknown {
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
