/** What the CT module's filter-feed proposals ask of the DNS watcher (through contract.ts). */
import { desc, sql } from "drizzle-orm";
import { dnsDomains, dnsRecordSets } from "../../db/schema/dns-watcher";
import type { Tenant } from "../../platform/tenant";
import { createDomain } from "./domain-service";
import { watchedDomainName } from "./names";
import { recordSetCap, recordSetWriteError } from "./record-set-service";

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
