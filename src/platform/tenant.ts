/**
 * The data-access handle for tenant tables: bound to one organization, every query
 * it builds carries `organization_id = ?`, so a service cannot forget the tenant.
 *
 *   const t = tenantOf(c);                                // in a route: the caller's organization
 *   const m = await t.getOr404(rdapMonitors, id, "RDAP monitor");
 *   await t.update(rdapMonitors, { notes }, eq(rdapMonitors.id, id)).run();
 *   const { row, quotaRemaining } = await t.create(rdapMonitors, values, { quota: "rdap_monitors", duplicate: "already monitored" });
 *
 * Another organization's row is simply not found (404, docs/decisions.md#errors-and-validation). Queries the
 * handle cannot express (joins, aggregates) start from `t.where(table, ...)`, which
 * is the organization filter AND the caller's conditions. System jobs that work
 * across organizations use the raw `Db` and say so.
 */
import { and, count, eq, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "../db/client";
import { organizations, quotaGuard as quotaGuardTable } from "../db/schema";
import { conflict, notFound, quotaExceeded } from "./errors";
import { isQuotaGuard, isUniqueViolation } from "./db-errors";
import { TIER_LIMITS, type QuotaResource, type Tier } from "./quotas";

/** A table whose rows belong to an organization (link tables without an `id` included). */
export type OrganizationTable = SQLiteTable & { organizationId: SQLiteColumn };
/** A table whose rows belong to an organization and have an integer `id`. */
export type TenantTable = OrganizationTable & { id: SQLiteColumn };
export type Row<T extends TenantTable> = T["$inferSelect"];
export type NewRow<T extends TenantTable> = Omit<T["$inferInsert"], "organizationId">;
/**
 * The columns an update sets: each a value, or an SQL expression typed with the column's
 * value (e.g. platform/collection `nextAttemptWhenEnabled`, a `SQL<string>`), which the
 * statement computes from the row it updates.
 */
export type UpdateSet<T extends TenantTable> = { [K in keyof NewRow<T>]?: NewRow<T>[K] | SQL<NonNullable<NewRow<T>[K]>> };

type Condition = SQL | undefined;

export async function tierOf(db: Db, organizationId: number): Promise<Tier> {
  const org = await db.select({ tier: organizations.tier }).from(organizations).where(eq(organizations.id, organizationId)).get();
  return (org?.tier ?? "free") as Tier;
}

/** What a guard holds: a tier quota, or a fixed cap per parent row (`targets_per_monitor`); it only names the refused insert. */
export type GuardName = QuotaResource | `${string}_per_${string}`;

/**
 * The statement that makes a batch respect a quota or cap: it inserts into `quota_guard`
 * (whose CHECK always fails) only when `usage` (evaluated after the batch's own
 * inserts, inside the same transaction) exceeds `limit`.
 */
export function quotaGuard(db: Db, name: GuardName, usage: SQL, limit: number) {
  return db.insert(quotaGuardTable).select(sql`SELECT ${name} WHERE (${usage}) > ${limit}` as never);
}

export class Tenant {
  private tierCache: Tier | undefined;

  constructor(
    readonly db: Db,
    readonly organizationId: number,
  ) {}

  /** `organization_id = ?` AND every given condition (any table with an organization column). */
  where(table: OrganizationTable, ...conditions: Condition[]): SQL {
    return and(eq(table.organizationId, this.organizationId), ...conditions) as SQL;
  }

  /** The row with this id, if it belongs to the organization. */
  get<T extends TenantTable>(table: T, id: number): Promise<Row<T> | undefined> {
    return this.first(table, eq(table.id, id));
  }

  /** The row with this id, or 404 `not_found` naming `what` (also for another organization's id). */
  async getOr404<T extends TenantTable>(table: T, id: number, what: string): Promise<Row<T>> {
    const row = await this.get(table, id);
    if (!row) throw notFound(what);
    return row;
  }

  /** The first row matching the conditions, or undefined. */
  first<T extends TenantTable>(table: T, ...conditions: Condition[]): Promise<Row<T> | undefined> {
    return (this.db.select().from(table as SQLiteTable).where(this.where(table, ...conditions)) as any).get();
  }

  /** Every row matching the conditions. */
  all<T extends TenantTable>(table: T, ...conditions: Condition[]): Promise<Row<T>[]> {
    return (this.db.select().from(table as SQLiteTable).where(this.where(table, ...conditions)) as any).all();
  }

  /** A scoped select of every column, to add ordering and paging to. */
  select<T extends TenantTable>(table: T, ...conditions: Condition[]) {
    return this.db
      .select()
      .from(table as SQLiteTable)
      .where(this.where(table, ...conditions)) as unknown as TenantSelect<Row<T>>;
  }

  async count(table: OrganizationTable, ...conditions: Condition[]): Promise<number> {
    return (await this.countQuery(table, ...conditions).get())?.n ?? 0;
  }

  /** `SELECT count(*)` of the organization's matching rows, as a query (batchable). */
  countQuery(table: OrganizationTable, ...conditions: Condition[]) {
    return this.db.select({ n: count() }).from(table as SQLiteTable).where(this.where(table, ...conditions));
  }

  /** The same count as an SQL expression, for quota guards. */
  usage(table: OrganizationTable, ...conditions: Condition[]): SQL {
    return sql`SELECT count(*) FROM ${table} WHERE ${this.where(table, ...conditions)}`;
  }

  /** An insert with `organization_id` filled in (batchable; add `.returning()` as needed). */
  insert<T extends TenantTable>(table: T, values: NewRow<T> | NewRow<T>[]) {
    const rows = (Array.isArray(values) ? values : [values]).map((v) => ({ ...v, organizationId: this.organizationId }));
    return this.db.insert(table as SQLiteTable).values(rows as never);
  }

  /** An update of the organization's matching rows (batchable). */
  update<T extends TenantTable>(table: T, set: UpdateSet<T>, ...conditions: Condition[]) {
    return this.db
      .update(table as SQLiteTable)
      .set(set as never)
      .where(this.where(table, ...conditions));
  }

  /** A delete of the organization's matching rows (batchable). */
  delete<T extends OrganizationTable>(table: T, ...conditions: Condition[]) {
    return this.db.delete(table as SQLiteTable).where(this.where(table, ...conditions));
  }

  /** The organization's subscription tier (read once per handle). */
  async tier(): Promise<Tier> {
    this.tierCache ??= await tierOf(this.db, this.organizationId);
    return this.tierCache;
  }

  /** This tier's limit of `resource`. */
  async limit(resource: QuotaResource): Promise<number> {
    return TIER_LIMITS[await this.tier()][resource];
  }

  /**
   * The guard statement for a batch: fails it when `usage` exceeds `limit` (from
   * `await t.limit(resource)` for a tier quota, or a module's fixed cap). Synchronous on
   * purpose: a drizzle query is a thenable, so returning one from an async function would run it.
   */
  guard(name: GuardName, usage: SQL, limit: number) {
    return quotaGuard(this.db, name, usage, limit);
  }

  /**
   * Inserts one row, atomically within its quota and its unique constraints:
   * over the tier's limit 403 `quota_exceeded`, a UNIQUE violation 409 `conflict`
   * with `duplicate` as the message. Parallel creates can never exceed the quota.
   * `usage` defaults to every row of the organization in `table`. `alongside`: writes
   * that belong to the new row (its children), committed in the same D1 batch, so the
   * row never exists without them; they can find it by its unique columns.
   */
  async create<T extends TenantTable>(
    table: T,
    values: NewRow<T>,
    opts: { quota?: QuotaResource; usage?: SQL; duplicate: string; alongside?: BatchItem<"sqlite">[] },
  ): Promise<{ row: Row<T>; quotaRemaining: number | null }> {
    const insert = this.insert(table, values).returning();
    const alongside = opts.alongside ?? [];
    if (!opts.quota) {
      const [rows] = await this.run(() => this.db.batch([insert, ...alongside] as [typeof insert, ...BatchItem<"sqlite">[]]), opts);
      return { row: (rows as Row<T>[])[0], quotaRemaining: null };
    }
    const usage = opts.usage ?? this.usage(table);
    const limit = await this.limit(opts.quota);
    const guard = this.guard(opts.quota, usage, limit);
    const used = this.db.select({ n: sql<number>`(${usage})` }).from(sql`(SELECT 1)`);
    const results = await this.run(() => this.db.batch([insert, ...alongside, guard, used] as [typeof insert, ...BatchItem<"sqlite">[]]), opts);
    const after = results[results.length - 1] as { n: number }[];
    return { row: (results[0] as Row<T>[])[0], quotaRemaining: Math.max(0, limit - (after[0]?.n ?? limit)) };
  }

  /** Runs a write, turning a quota guard into 403 and a UNIQUE violation into 409. */
  async run<R>(write: () => Promise<R>, opts: { quota?: QuotaResource; duplicate?: string } = {}): Promise<R> {
    try {
      return await write();
    } catch (err) {
      if (isQuotaGuard(err)) throw await this.quotaError(opts.quota);
      if (opts.duplicate !== undefined && isUniqueViolation(err)) throw conflict(opts.duplicate);
      throw err;
    }
  }

  private async quotaError(resource?: QuotaResource) {
    const tier = await this.tier();
    if (!resource) return quotaExceeded(`The ${tier} tier's quota is exhausted`);
    return quotaExceeded(`The ${tier} tier allows ${TIER_LIMITS[tier][resource]} ${resource.replace(/_/g, " ")}`);
  }
}

/** What `Tenant.select` returns: a drizzle select of whole rows, still open to orderBy/limit/offset. */
export interface TenantSelect<R> {
  orderBy(...columns: (SQLiteColumn | SQL | SQL.Aliased)[]): TenantSelect<R>;
  limit(n: number): TenantSelect<R>;
  offset(n: number): TenantSelect<R>;
  all(): Promise<R[]>;
  get(): Promise<R | undefined>;
}

export function tenantDb(db: Db, organizationId: number): Tenant {
  return new Tenant(db, organizationId);
}
