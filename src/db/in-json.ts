import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * `column IN (values)` with ONE bound parameter (a JSON array read by json_each):
 * D1 binds at most 100 parameters per statement, which a page of ids can exceed.
 */
export function inJsonArray(column: SQLiteColumn | SQL, values: readonly (number | string)[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
}
