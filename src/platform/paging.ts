/**
 * Query-string schemas for paged listings. Out-of-range values are a 400
 * validation_error, never silently clamped (docs/decisions.md#errors-and-validation).
 */
import { z } from "@hono/zod-openapi";
import { asc, desc } from "drizzle-orm";

export const sortOrder = (fallback: "asc" | "desc") =>
  z.enum(["asc", "desc"]).default(fallback).openapi({ description: "Sort direction" });

const intParam = (min: number, max: number, fallback: number, description: string) =>
  z.coerce.number().int().min(min).max(max).default(fallback).openapi({ description, example: fallback });

/** `limit` + `offset` paging (RDAP, certificate monitors, audit log...). */
export function limitOffsetQuery<S extends readonly [string, ...string[]]>(opts: {
  defaultLimit: number;
  maxLimit: number;
  sortBy?: S;
  defaultSort?: S[number];
  defaultOrder?: "asc" | "desc";
}) {
  return z.object({
    limit: intParam(1, opts.maxLimit, opts.defaultLimit, `Page size (1-${opts.maxLimit})`),
    offset: intParam(0, Number.MAX_SAFE_INTEGER, 0, "Rows to skip"),
    ...(opts.sortBy
      ? {
          sort_by: z.enum(opts.sortBy).default(opts.defaultSort ?? opts.sortBy[0]),
          sort_order: sortOrder(opts.defaultOrder ?? "asc"),
        }
      : {}),
  });
}

/** `page` + `page_size` paging (CT filters and matches, certificate history). */
export function pageQuery(opts: { defaultPageSize: number; maxPageSize?: number }) {
  const max = opts.maxPageSize ?? 100;
  return z.object({
    page: intParam(1, 1_000_000, 1, "1-based page number"),
    page_size: intParam(1, max, opts.defaultPageSize, `Items per page (1-${max})`),
  });
}

/** Rows to skip for a `page` + `page_size` query (pages are 1-based). */
export const pageOffset = (q: { page: number; page_size: number }) => (q.page - 1) * q.page_size;

/** A positive integer id path parameter, e.g. `z.object({ list_id: pathId("list_id") })`. */
export const pathId = (name: string) =>
  z.coerce.number().int().positive().openapi({ param: { name, in: "path" }, example: 1 });

/** A query a page is read with: a drizzle select, still unexecuted (batchable). */
interface PageQuery<R> {
  all(): Promise<R[]>;
}
interface CountQuery {
  get(): Promise<{ n: number } | undefined>;
}

/**
 * Reads one page and the total count, in parallel. (Not a D1 batch: drizzle maps
 * batch results by column name, so a join selecting two columns of the same name
 * — `snapshots.hash` and `prev.hash` — would read the same value twice.)
 */
export async function readPage<R>(rows: PageQuery<R>, total: CountQuery): Promise<{ rows: R[]; total: number }> {
  const [page, counted] = await Promise.all([rows.all(), total.get()]);
  return { rows: page, total: counted?.n ?? 0 };
}

/** The body of a `limit`/`offset` listing: `{<key>: items, total, limit, offset}` plus `sort_by`/`sort_order` when sorted. */
type PageEcho<Q> = Pick<Q, Extract<keyof Q, "limit" | "offset" | "sort_by" | "sort_order">>;
export function limitOffsetBody<K extends string, T, Q extends { limit: number; offset: number; sort_by?: string; sort_order?: "asc" | "desc" }>(
  key: K,
  items: T[],
  total: number,
  q: Q,
) {
  const echo = { limit: q.limit, offset: q.offset, ...(q.sort_by !== undefined ? { sort_by: q.sort_by, sort_order: q.sort_order } : {}) };
  return { [key]: items, total, ...echo } as { [P in K]: T[] } & { total: number } & PageEcho<Q>;
}

/** `asc` or `desc` of drizzle, from a `sort_order` value. */
export const direction = (order: "asc" | "desc") => (order === "desc" ? desc : asc);
