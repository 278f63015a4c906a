import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

const dialect = new SQLiteAsyncDialect();

/**
 * A raw statement for D1's own batch (one transaction): drizzle's batch cannot bind the
 * parameters of a raw `sql` statement (it looks for a prepared statement the raw query
 * does not have).
 */
export function rawStatement(db: Db, query: SQL): D1PreparedStatement {
  const { sql: text, params } = dialect.sqlToQuery(query);
  return db.$client.prepare(text).bind(...params);
}
