/**
 * The organization's issuance policy (GET/PUT /api/ct-log/issuance-policy): which CAs
 * may issue for its names and which declared keys count as its own (rule lists of type
 * spki, beside the keys seen deployed). Read by the CT fan-out for every batch
 * (policiesOf: one query per batch for all organizations in it); judged in
 * authorization.ts.
 */
import { and, count, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonArray } from "../../db/in-json";
import { ctIssuancePolicies, ruleListEntries, ruleLists } from "../../db/schema";
import { badRequest, type ErrorDetail } from "../../platform/errors";
import type { Tenant } from "../../platform/tenant";
import type { AuthorizedIssuer } from "./authorization";

export const DEFAULT_ISSUERS_IN_WORDS =
  "Where no authorized issuers are declared (here or on a filter), the CAs each name's CAA records permit are authorized; names without CAA records accept any CA, and the key decides.";

export async function getIssuancePolicy(t: Tenant) {
  const policy = await t.db.select().from(ctIssuancePolicies).where(eq(ctIssuancePolicies.organizationId, t.organizationId)).get();
  const ids = policy?.knownKeyListIds ?? [];
  const lists = ids.length
    ? await t.db
        .select({ id: ruleLists.id, name: ruleLists.name, n: count(ruleListEntries.id) })
        .from(ruleLists)
        .leftJoin(ruleListEntries, eq(ruleListEntries.listId, ruleLists.id))
        .where(t.where(ruleLists, inArray(ruleLists.id, ids)))
        .groupBy(ruleLists.id)
        .all()
    : [];
  const byId = new Map(lists.map((l) => [l.id, l]));
  return {
    authorized_issuers: policy?.authorizedIssuers ?? [],
    known_key_list_ids: ids,
    known_key_lists: ids.map((id) => ({ id, name: byId.get(id)?.name ?? null, entry_count: byId.get(id)?.n ?? 0 })),
    default: DEFAULT_ISSUERS_IN_WORDS,
    updated_at: policy?.updatedAt ?? null,
  };
}

/** Replaces the policy; every list must be one of the organization's spki lists (400 naming each that is not). */
export async function putIssuancePolicy(t: Tenant, input: { authorized_issuers: AuthorizedIssuer[]; known_key_list_ids: number[] }, now: Date) {
  const ids = [...new Set(input.known_key_list_ids)];
  const found = ids.length ? await t.db.select({ id: ruleLists.id, type: ruleLists.listType, name: ruleLists.name }).from(ruleLists).where(t.where(ruleLists, inArray(ruleLists.id, ids))).all() : [];
  const byId = new Map(found.map((l) => [l.id, l]));
  const details: ErrorDetail[] = [];
  input.known_key_list_ids.forEach((id, i) => {
    const l = byId.get(id);
    if (!l) details.push({ path: `known_key_list_ids.${i}`, message: `No rule list ${id} in this organization` });
    else if (l.type !== "spki") details.push({ path: `known_key_list_ids.${i}`, message: `Rule list '${l.name}' holds ${l.type} entries, not keys (type spki)` });
  });
  if (details.length) throw badRequest("Known key lists must be rule lists of type spki", details);
  const values = { authorizedIssuers: input.authorized_issuers, knownKeyListIds: ids, updatedAt: now.toISOString() };
  await t.db
    .insert(ctIssuancePolicies)
    .values({ organizationId: t.organizationId, ...values })
    .onConflictDoUpdate({ target: ctIssuancePolicies.organizationId, set: values })
    .run();
  return getIssuancePolicy(t);
}

/** What the fan-out needs of an organization's policy: its issuers, and its declared keys (SHA-256 -> the list that names it). */
export interface OrganizationIssuance {
  issuers: AuthorizedIssuer[];
  declaredKeys: Map<string, string>;
}

const NOTHING_DECLARED: OrganizationIssuance = { issuers: [], declaredKeys: new Map() };

/** The policies of these organizations (a system read of the fan-out: two queries for all of them). */
export async function issuanceOf(db: Db, organizationIds: readonly number[]): Promise<Map<number, OrganizationIssuance>> {
  const out = new Map<number, OrganizationIssuance>(organizationIds.map((o) => [o, NOTHING_DECLARED]));
  if (!organizationIds.length) return out;
  const policies = await db.select().from(ctIssuancePolicies).where(inJsonArray(ctIssuancePolicies.organizationId, organizationIds)).all();
  const listIds = policies.flatMap((p) => p.knownKeyListIds);
  const keys = listIds.length
    ? await db
        .select({ organizationId: ruleLists.organizationId, name: ruleLists.name, value: ruleListEntries.value })
        .from(ruleListEntries)
        .innerJoin(ruleLists, and(eq(ruleLists.id, ruleListEntries.listId), eq(ruleLists.listType, "spki")))
        .where(inJsonArray(ruleListEntries.listId, listIds))
        .all()
    : [];
  for (const p of policies) out.set(p.organizationId, { issuers: p.authorizedIssuers, declaredKeys: new Map() });
  // A list id of one organization cannot name another's list: the join keeps each entry with its own organization.
  for (const k of keys) {
    const own = out.get(k.organizationId);
    if (own && own !== NOTHING_DECLARED) own.declaredKeys.set(k.value, k.name);
  }
  return out;
}
