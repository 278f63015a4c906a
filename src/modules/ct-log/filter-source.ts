/**
 * Where the CtLogCursor's FilterIndex comes from: every organization's enabled,
 * not deleted filters, and the generation counter that tells a cursor its index
 * is stale. Every filter mutation bumps the counter in the same D1 batch
 * (bumpFilterGeneration), so a change is effective for the next batch of every log.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { ctFilterGeneration, ctFilters } from "../../db/schema";
import type { FilterRow } from "./filters/label-index";
import type { TyposquatFilterRow } from "./typosquat/index";

export async function filterGeneration(db: Db): Promise<number> {
  const row = await db.select({ g: ctFilterGeneration.generation }).from(ctFilterGeneration).where(eq(ctFilterGeneration.id, 1)).get();
  return row?.g ?? 0;
}

/** The statement to put in the same batch as any filter change. */
export function bumpFilterGeneration(db: Db) {
  return db
    .insert(ctFilterGeneration)
    .values({ id: 1, generation: 1 })
    .onConflictDoUpdate({ target: ctFilterGeneration.id, set: { generation: sql`${ctFilterGeneration.generation} + 1` } });
}

export async function loadFilterRows(db: Db): Promise<FilterRow[]> {
  const rows = await db
    .select({ filterId: ctFilters.id, organizationId: ctFilters.organizationId, pattern: ctFilters.pattern, matchType: ctFilters.matchType })
    .from(ctFilters)
    .where(and(eq(ctFilters.enabled, true), isNull(ctFilters.deletedAt)))
    .all();
  return rows;
}

/**
 * Filters whose typosquatting detection is on: enabled, not deleted, typosquat_enabled.
 * Eligibility is judged again when the TyposquatIndex is built (ineligible patterns are left out).
 */
export async function loadTyposquatRows(db: Db): Promise<TyposquatFilterRow[]> {
  return db
    .select({ filterId: ctFilters.id, organizationId: ctFilters.organizationId, pattern: ctFilters.pattern })
    .from(ctFilters)
    .where(and(eq(ctFilters.enabled, true), eq(ctFilters.typosquatEnabled, true), isNull(ctFilters.deletedAt)))
    .all();
}
