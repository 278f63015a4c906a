/**
 * `INSERT INTO t (...) SELECT <values> WHERE <condition>`: an insert that happens only
 * while a condition holds, evaluated inside the statement (so inside the D1 batch's
 * transaction). It is how a scheduled job records an observation only if nobody
 * recorded it first — e.g. "the monitor still has the comparison base I read" —
 * without a read-then-write race between overlapping Cron runs.
 *
 * Drizzle's `insert().select()` lists every insertable column of the table; this
 * builds the matching SELECT from a values object the way `.values()` would (the
 * column's encoder for each value, its default where a value is absent), so callers
 * stay on the schema's names and types.
 */
import { getTableColumns, is, sql, SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

type ColumnLike = {
  default?: unknown;
  defaultFn?: () => unknown;
  shouldDisableInsert(): boolean;
  mapToDriverValue(value: unknown): unknown;
};

export function insertWhere<T extends SQLiteTable>(db: Db, table: T, values: Partial<{ [K in keyof T["$inferInsert"]]: T["$inferInsert"][K] | SQL }>, condition: SQL) {
  const columns = Object.entries(getTableColumns(table) as unknown as Record<string, ColumnLike>).filter(([, col]) => !col.shouldDisableInsert());
  const selected = columns.map(([key, col]) => {
    const v = (values as Record<string, unknown>)[key];
    if (v !== undefined) return is(v, SQL) ? v : sql.param(v, col as never);
    if (col.default !== undefined && col.default !== null) return is(col.default, SQL) ? col.default : sql.param(col.default, col as never);
    if (col.defaultFn) {
      const d = col.defaultFn();
      return is(d, SQL) ? d : sql.param(d, col as never);
    }
    return sql`NULL`;
  });
  return db.insert(table).select(sql`SELECT ${sql.join(selected, sql`, `)} WHERE ${condition}`);
}
