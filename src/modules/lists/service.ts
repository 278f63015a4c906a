/**
 * Rule lists (spec "Rule list", "Rule lists" endpoints, ADDENDUM 11).
 *
 * Every bulk change is validated as a group before anything is written, then
 * written in one D1 batch (one transaction): an invalid or duplicate value, or a
 * quota overrun, changes nothing. Each change bumps the list's `updated_at` and
 * tells the organization's AlertState so rules see it at once (and within 60 s
 * even if that notice is lost: the alert state re-reads lists on a timer).
 */
import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { alertRuleLists, organizations, ruleListEntries, ruleLists } from "../../db/schema";
import { badRequest, conflict, notFound, type ErrorDetail } from "../../platform/errors";
import { assertQuota, registerUsageCounter, TIER_LIMITS, type Tier } from "../../platform/quotas";
import { normalizeEntries, validateListName, type ListType } from "./normalize";

registerUsageCounter("rule_lists", async (db, organizationId) => {
  const r = await db.select({ n: count() }).from(ruleLists).where(eq(ruleLists.organizationId, organizationId)).get();
  return r?.n ?? 0;
});

async function tierOf(db: Db, organizationId: number): Promise<Tier> {
  const org = await db.select({ tier: organizations.tier }).from(organizations).where(eq(organizations.id, organizationId)).get();
  return (org?.tier ?? "free") as Tier;
}

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

async function listOf(db: Db, organizationId: number, listId: number) {
  const l = await db.select().from(ruleLists).where(and(eq(ruleLists.id, listId), eq(ruleLists.organizationId, organizationId))).get();
  if (!l) throw notFound("List");
  return l;
}

async function entryCount(db: Db, listId: number): Promise<number> {
  return (await db.select({ n: count() }).from(ruleListEntries).where(eq(ruleListEntries.listId, listId)).get())?.n ?? 0;
}

export async function listLists(db: Db, organizationId: number) {
  const tier = await tierOf(db, organizationId);
  const rows = await db
    .select({ list: ruleLists, n: count(ruleListEntries.id) })
    .from(ruleLists)
    .leftJoin(ruleListEntries, eq(ruleListEntries.listId, ruleLists.id))
    .where(eq(ruleLists.organizationId, organizationId))
    .groupBy(ruleLists.id)
    .orderBy(asc(ruleLists.name))
    .all();
  return rows.map((r) => listView(r.list, r.n, tier));
}

export async function getList(db: Db, organizationId: number, listId: number) {
  const l = await listOf(db, organizationId, listId);
  const entries = await db
    .select({ id: ruleListEntries.id, value: ruleListEntries.value, created_at: ruleListEntries.createdAt })
    .from(ruleListEntries)
    .where(eq(ruleListEntries.listId, l.id))
    .orderBy(asc(ruleListEntries.id))
    .all();
  return { ...listView(l, entries.length, await tierOf(db, organizationId)), entries };
}

export async function createList(
  db: Db,
  organizationId: number,
  input: { name: string; list_type: ListType; description?: string; entries?: string[] },
  now: Date,
) {
  const nameError = validateListName(input.name);
  if (nameError) throw badRequest("Invalid list name", [{ path: "name", message: nameError }]);
  const values = normalizedOrThrow(input.list_type, input.entries ?? []);
  const tier = await tierOf(db, organizationId);
  const lists = (await db.select({ n: count() }).from(ruleLists).where(eq(ruleLists.organizationId, organizationId)).get())?.n ?? 0;
  assertQuota(tier, "rule_lists", lists);
  assertQuota(tier, "entries_per_list", 0, values.length);
  if (await db.select({ id: ruleLists.id }).from(ruleLists).where(and(eq(ruleLists.organizationId, organizationId), eq(ruleLists.name, input.name))).get()) {
    throw conflict(`A list named '${input.name}' already exists`);
  }
  const nowIso = now.toISOString();
  // One batch: the list and its entries exist together or not at all. The entries
  // find their new list by (organization, name), which is unique.
  const newListId = sql`(SELECT id FROM rule_lists WHERE organization_id = ${organizationId} AND name = ${input.name})`;
  const insertList = db
    .insert(ruleLists)
    .values({ organizationId, name: input.name, listType: input.list_type, description: input.description ?? "", createdAt: nowIso, updatedAt: nowIso })
    .returning();
  const insertEntries = values.map((value) =>
    db.insert(ruleListEntries).values({ organizationId, listId: newListId, value, createdAt: nowIso }),
  );
  try {
    const [created] = await db.batch([insertList, ...insertEntries]);
    return { ...listView(created[0], values.length, tier), message: "List created" };
  } catch (err) {
    if (String(err).includes("UNIQUE")) throw conflict(`A list named '${input.name}' already exists`);
    throw err;
  }
}

export async function updateList(
  db: Db,
  organizationId: number,
  listId: number,
  input: { description: string; name?: string; list_type?: string },
  now: Date,
) {
  const l = await listOf(db, organizationId, listId);
  const details: ErrorDetail[] = [];
  if (input.name !== undefined && input.name !== l.name) details.push({ path: "name", message: "A list's name cannot be changed" });
  if (input.list_type !== undefined && input.list_type !== l.listType) details.push({ path: "list_type", message: "A list's type cannot be changed" });
  if (details.length) throw badRequest("Name and type of a list are immutable", details);
  await db.update(ruleLists).set({ description: input.description, updatedAt: now.toISOString() }).where(eq(ruleLists.id, l.id)).run();
  return { message: "List updated" };
}

/** Adds all entries or none: invalid 400, duplicate (in batch or stored) 409, over the tier 403. */
export async function addEntries(db: Db, organizationId: number, listId: number, raws: string[], now: Date) {
  const l = await listOf(db, organizationId, listId);
  const values = normalizedOrThrow(l.listType, raws);
  const existing = values.length
    ? await db
        .select({ value: ruleListEntries.value })
        .from(ruleListEntries)
        .where(and(eq(ruleListEntries.listId, l.id), inArray(ruleListEntries.value, values)))
        .all()
    : [];
  if (existing.length) {
    const dup = new Set(existing.map((e) => e.value));
    throw conflict(
      "Entries already in the list; nothing was saved",
      raws.map((raw, i) => ({ raw, i, v: values[i] })).filter((x) => dup.has(x.v)).map((x) => ({ path: `entries.${x.i}`, message: `${x.raw}: already in the list as ${x.v}` })),
    );
  }
  const tier = await tierOf(db, organizationId);
  assertQuota(tier, "entries_per_list", await entryCount(db, l.id), values.length);
  const nowIso = now.toISOString();
  const inserted = values.length
    ? await db.batch([
        db.update(ruleLists).set({ updatedAt: nowIso }).where(eq(ruleLists.id, l.id)),
        ...values.map((value) => db.insert(ruleListEntries).values({ organizationId, listId: l.id, value, createdAt: nowIso }).returning()),
      ] as const)
    : [];
  const entries = (inserted.slice(1) as (typeof ruleListEntries.$inferSelect)[][]).map((r) => ({ id: r[0].id, value: r[0].value, created_at: r[0].createdAt }));
  return { message: `${entries.length} entries added`, entries };
}

/** Replaces the whole set atomically; an empty array empties the list. */
export async function replaceEntries(db: Db, organizationId: number, listId: number, raws: string[], now: Date) {
  const l = await listOf(db, organizationId, listId);
  const values = normalizedOrThrow(l.listType, raws);
  assertQuota(await tierOf(db, organizationId), "entries_per_list", 0, values.length);
  const nowIso = now.toISOString();
  await db.batch([
    db.delete(ruleListEntries).where(eq(ruleListEntries.listId, l.id)),
    db.update(ruleLists).set({ updatedAt: nowIso }).where(eq(ruleLists.id, l.id)),
    ...values.map((value) => db.insert(ruleListEntries).values({ organizationId, listId: l.id, value, createdAt: nowIso })),
  ]);
  return { message: `List now has ${values.length} entries`, entry_count: values.length };
}

export async function deleteEntry(db: Db, organizationId: number, listId: number, entryId: number, now: Date) {
  const l = await listOf(db, organizationId, listId);
  const res = await db
    .delete(ruleListEntries)
    .where(and(eq(ruleListEntries.id, entryId), eq(ruleListEntries.listId, l.id)))
    .returning({ id: ruleListEntries.id });
  if (!res.length) throw notFound("Entry");
  await db.update(ruleLists).set({ updatedAt: now.toISOString() }).where(eq(ruleLists.id, l.id)).run();
  return { message: "Entry removed" };
}

export async function deleteList(db: Db, organizationId: number, listId: number) {
  const l = await listOf(db, organizationId, listId);
  const refs = await db
    .select({ ruleId: alertRuleLists.ruleId })
    .from(alertRuleLists)
    .where(and(eq(alertRuleLists.organizationId, organizationId), eq(alertRuleLists.listName, l.name)))
    .all();
  if (refs.length) throw conflict(`List '${l.name}' is referenced by alert rule(s) ${refs.map((r) => r.ruleId).join(", ")}`);
  await db.batch([db.delete(ruleListEntries).where(eq(ruleListEntries.listId, l.id)), db.delete(ruleLists).where(eq(ruleLists.id, l.id))]);
  return { message: "List deleted" };
}

/** Every list of an organization with its values: what the alert state compiles. */
export async function loadListsForRules(db: Db, organizationId: number) {
  const rows = await db
    .select({ name: ruleLists.name, listType: ruleLists.listType, value: ruleListEntries.value })
    .from(ruleLists)
    .leftJoin(ruleListEntries, eq(ruleListEntries.listId, ruleLists.id))
    .where(eq(ruleLists.organizationId, organizationId))
    .all();
  const byName = new Map<string, { name: string; list_type: ListType; values: string[] }>();
  for (const r of rows) {
    let l = byName.get(r.name);
    if (!l) byName.set(r.name, (l = { name: r.name, list_type: r.listType, values: [] }));
    if (r.value !== null) l.values.push(r.value);
  }
  return [...byName.values()];
}

export async function listNames(db: Db, organizationId: number): Promise<string[]> {
  return (await db.select({ name: ruleLists.name }).from(ruleLists).where(eq(ruleLists.organizationId, organizationId)).all()).map((r) => r.name);
}
