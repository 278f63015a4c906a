/** A DNS domain's history: the confirmed changes of its record sets and what they meant. */
import { desc, eq } from "drizzle-orm";
import { dnsDomains, dnsHistory } from "../../db/schema/dns-watcher";
import { limitOffsetBody, readPage } from "../../platform/paging";
import type { Tenant } from "../../platform/tenant";
import { parseStoredJson } from "./stored-json";

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
