/**
 * Rule lists (docs/modules/lists.md, docs/decisions.md#rule-lists).
 *
 * Every bulk change is validated as a group before anything is written, then
 * written in one D1 batch (one transaction) that ends with the quota guard: an
 * invalid or duplicate value, or a quota overrun, changes nothing, and parallel
 * requests can never push an organization past its tier (lists) or a list past its
 * entry limit. Each change bumps the list's `updated_at`; the route tells the
 * organization's AlertState so rules see it at once (and within 60 s even if that
 * notice is lost: the alert state re-reads lists on a timer).
 */
import { asc, count, eq, inArray, sql } from "drizzle-orm";
import { alertRuleLists, alertRules, ruleListEntries, ruleLists } from "../../db/schema";
import { badRequest, conflict, notFound, quotaExceeded, type ErrorDetail } from "../../platform/errors";
import { TIER_LIMITS, type Tier, type UsageCounter } from "../../platform/quotas";
import { tenantDb, type Tenant } from "../../platform/tenant";
import type { ListType } from "../../db/schema";
import { normalizeEntries, validateListName } from "./normalize";

/** The `rule_lists` quota's usage (connected in src/app.ts). */
export const ruleListUsage: UsageCounter = (db, organizationId) => tenantDb(db, organizationId).count(ruleLists);

/** Normalizes a batch; invalid values are a 400, duplicates within it a 409. */
function normalizedOrThrow(listType: ListType, raws: string[]): string[] {
  const r = normalizeEntries(listType, raws);
  if (!r.errors) return r.values;
  const details: ErrorDetail[] = r.errors.map((e) => ({ path: `entries.${e.index}`, message: `${e.value}: ${e.message}` }));
  // The top-level message names the first problem (e.g. the network address of a CIDR
  // with host bits set); details list every one.
  const invalid = details.filter((_, i) => r.errors[i].kind === "invalid");
  if (invalid.length) throw badRequest(`Invalid list entries; nothing was saved (${invalid[0].message}${invalid.length > 1 ? `, and ${invalid.length - 1} more` : ""})`, invalid);
  throw conflict(`Duplicate list entries; nothing was saved (${details[0].message})`, details);
}

function listView(l: typeof ruleLists.$inferSelect, entryCount: number, tier: Tier) {
  return {
    id: l.id,
    name: l.name,
    list_type: l.listType,
    description: l.description,
    entry_count: entryCount,
    entry_limit: TIER_LIMITS[tier].entries_per_list,
    created_at: l.createdAt,
    updated_at: l.updatedAt,
  };
}

const listOf = (t: Tenant, listId: number) => t.getOr404(ruleLists, listId, "List");

/** The entries of a list as an SQL count: the usage the entries quota guards. */
const entriesOf = (t: Tenant, listId: number) => t.usage(ruleListEntries, eq(ruleListEntries.listId, listId));

/**
 * A whole new set of entries (create, replace) larger than the tier allows is refused
 * before anything is written; additions to a stored set are decided by the batch guard.
 */
async function assertEntryLimit(t: Tenant, count: number) {
  const limit = await t.limit("entries_per_list");
  if (count > limit) throw quotaExceeded(`The ${await t.tier()} tier allows ${limit} entries per list; ${count} were given`);
}

export async function listLists(t: Tenant) {
  const tier = await t.tier();
  const rows = await t.db
    .select({ list: ruleLists, n: count(ruleListEntries.id) })
    .from(ruleLists)
    .leftJoin(ruleListEntries, eq(ruleListEntries.listId, ruleLists.id))
    .where(t.where(ruleLists))
    .groupBy(ruleLists.id)
    .orderBy(asc(ruleLists.name))
    .all();
  return rows.map((r) => listView(r.list, r.n, tier));
}

export async function getList(t: Tenant, listId: number) {
  const l = await listOf(t, listId);
  const entries = await t.db
    .select({ id: ruleListEntries.id, value: ruleListEntries.value, created_at: ruleListEntries.createdAt })
    .from(ruleListEntries)
    .where(t.where(ruleListEntries, eq(ruleListEntries.listId, l.id)))
    .orderBy(asc(ruleListEntries.id))
    .all();
  return { ...listView(l, entries.length, await t.tier()), entries };
}

export async function createList(t: Tenant, input: { name: string; list_type: ListType; description?: string; entries?: string[] }, now: Date) {
  const nameError = validateListName(input.name);
  if (nameError) throw badRequest("Invalid list name", [{ path: "name", message: nameError }]);
  const values = normalizedOrThrow(input.list_type, input.entries ?? []);
  await assertEntryLimit(t, values.length);
  const duplicate = `A list named '${input.name}' already exists`;
  if (await t.first(ruleLists, eq(ruleLists.name, input.name))) throw conflict(duplicate);
  const nowIso = now.toISOString();
  // One batch: the list and its entries exist together or not at all, and only while
  // the organization stays within its list quota. The entries find their new list by
  // (organization, name), which is unique.
  const newListId = sql`(SELECT id FROM rule_lists WHERE organization_id = ${t.organizationId} AND name = ${input.name})`;
  const limit = await t.limit("rule_lists");
  const [created] = await t.run(
    () =>
      t.db.batch([
        t.insert(ruleLists, { name: input.name, listType: input.list_type, description: input.description ?? "", createdAt: nowIso, updatedAt: nowIso }).returning(),
        ...values.map((value) => t.insert(ruleListEntries, { listId: newListId as unknown as number, value, createdAt: nowIso })),
        t.guard("rule_lists", t.usage(ruleLists), limit),
      ]),
    { quota: "rule_lists", duplicate },
  );
  return { ...listView((created as (typeof ruleLists.$inferSelect)[])[0], values.length, await t.tier()), message: "List created" };
}

export async function updateList(t: Tenant, listId: number, input: { description: string; name?: string; list_type?: string }, now: Date) {
  const l = await listOf(t, listId);
  const details: ErrorDetail[] = [];
  if (input.name !== undefined && input.name !== l.name) details.push({ path: "name", message: "A list's name cannot be changed" });
  if (input.list_type !== undefined && input.list_type !== l.listType) details.push({ path: "list_type", message: "A list's type cannot be changed" });
  if (details.length) throw badRequest("Name and type of a list are immutable", details);
  await t.update(ruleLists, { description: input.description, updatedAt: now.toISOString() }, eq(ruleLists.id, l.id)).run();
  return { message: "List updated" };
}

/** Adds all entries or none: invalid 400, duplicate (in batch or stored, also by a parallel request) 409, over the tier 403. */
export async function addEntries(t: Tenant, listId: number, raws: string[], now: Date) {
  const l = await listOf(t, listId);
  const values = normalizedOrThrow(l.listType, raws);
  const existing = values.length
    ? await t.db
        .select({ value: ruleListEntries.value })
        .from(ruleListEntries)
        .where(t.where(ruleListEntries, eq(ruleListEntries.listId, l.id), inArray(ruleListEntries.value, values)))
        .all()
    : [];
  if (existing.length) {
    const dup = new Set(existing.map((e) => e.value));
    throw conflict(
      "Entries already in the list; nothing was saved",
      raws.map((raw, i) => ({ raw, i, v: values[i] })).filter((x) => dup.has(x.v)).map((x) => ({ path: `entries.${x.i}`, message: `${x.raw}: already in the list as ${x.v}` })),
    );
  }
  if (!values.length) return { message: "0 entries added", entries: [] };
  const nowIso = now.toISOString();
  const limit = await t.limit("entries_per_list");
  const inserted = await t.run(
    () =>
      t.db.batch([
        t.update(ruleLists, { updatedAt: nowIso }, eq(ruleLists.id, l.id)),
        t.insert(ruleListEntries, values.map((value) => ({ listId: l.id, value, createdAt: nowIso }))).returning(),
        t.guard("entries_per_list", entriesOf(t, l.id), limit),
      ]),
    { quota: "entries_per_list", duplicate: "Entries already in the list; nothing was saved" },
  );
  const rows = inserted[1] as (typeof ruleListEntries.$inferSelect)[];
  const entries = rows.map((r) => ({ id: r.id, value: r.value, created_at: r.createdAt }));
  return { message: `${entries.length} entries added`, entries };
}

/** Replaces the whole set atomically; an empty array empties the list. */
export async function replaceEntries(t: Tenant, listId: number, raws: string[], now: Date) {
  const l = await listOf(t, listId);
  const values = normalizedOrThrow(l.listType, raws);
  await assertEntryLimit(t, values.length);
  const nowIso = now.toISOString();
  const limit = await t.limit("entries_per_list");
  await t.run(
    () =>
      t.db.batch([
        t.delete(ruleListEntries, eq(ruleListEntries.listId, l.id)),
        t.update(ruleLists, { updatedAt: nowIso }, eq(ruleLists.id, l.id)),
        ...(values.length ? [t.insert(ruleListEntries, values.map((value) => ({ listId: l.id, value, createdAt: nowIso })))] : []),
        t.guard("entries_per_list", entriesOf(t, l.id), limit),
      ]),
    { quota: "entries_per_list", duplicate: "Duplicate list entries; nothing was saved" },
  );
  return { message: `List now has ${values.length} entries`, entry_count: values.length };
}

export async function deleteEntry(t: Tenant, listId: number, entryId: number, now: Date) {
  const l = await listOf(t, listId);
  const [removed] = await t.db.batch([
    t.delete(ruleListEntries, eq(ruleListEntries.id, entryId), eq(ruleListEntries.listId, l.id)).returning({ id: ruleListEntries.id }),
    t.update(ruleLists, { updatedAt: now.toISOString() }, eq(ruleLists.id, l.id)),
  ]);
  if (!removed.length) throw notFound("Entry");
  return { message: "Entry removed" };
}

export async function deleteList(t: Tenant, listId: number) {
  const l = await listOf(t, listId);
  // Scoped through the rules (alert_rule_lists has no id of its own for the tenant handle).
  const refs = await t.db
    .select({ ruleId: alertRuleLists.ruleId })
    .from(alertRuleLists)
    .innerJoin(alertRules, eq(alertRules.id, alertRuleLists.ruleId))
    .where(t.where(alertRules, eq(alertRuleLists.listName, l.name)))
    .all();
  if (refs.length) throw conflict(`List '${l.name}' is referenced by alert rule(s) ${refs.map((r) => r.ruleId).join(", ")}`);
  await t.db.batch([t.delete(ruleListEntries, eq(ruleListEntries.listId, l.id)), t.delete(ruleLists, eq(ruleLists.id, l.id))]);
  return { message: "List deleted" };
}

/** Every list of an organization with its values: what the alert state compiles. */
export async function loadListsForRules(t: Tenant) {
  const rows = await t.db
    .select({ name: ruleLists.name, listType: ruleLists.listType, value: ruleListEntries.value })
    .from(ruleLists)
    .leftJoin(ruleListEntries, eq(ruleListEntries.listId, ruleLists.id))
    .where(t.where(ruleLists))
    .all();
  const byName = new Map<string, { name: string; list_type: ListType; values: string[] }>();
  for (const r of rows) {
    let l = byName.get(r.name);
    if (!l) byName.set(r.name, (l = { name: r.name, list_type: r.listType, values: [] }));
    if (r.value !== null) l.values.push(r.value);
  }
  return [...byName.values()];
}

export async function listNames(t: Tenant): Promise<string[]> {
  return (await t.db.select({ name: ruleLists.name }).from(ruleLists).where(t.where(ruleLists)).all()).map((r) => r.name);
}
