/**
 * Tables of API listings: sortable headers (the API's sort_by/sort_order),
 * a pager (total from the API), an empty state, loading and error states.
 */
import type { ComponentChildren, VNode } from "preact";
import type { ApiError } from "../api";
import type { TableState } from "./resource";
import { ErrorBox } from "./widgets";

export interface Column<R> {
  label: string;
  /** The API's sort_by value; sortable when given. */
  sort?: string;
  render: (row: R) => ComponentChildren;
  class?: string;
}

export interface DataTableProps<R> {
  caption: string;
  columns: Column<R>[];
  rows: R[] | undefined;
  rowKey: (row: R) => string | number;
  loading?: boolean;
  error?: ApiError;
  empty: ComponentChildren;
  state?: TableState;
  onState?: (s: Partial<TableState>) => void;
  total?: number;
  pageSizes?: number[];
}

export function DataTable<R>(props: DataTableProps<R>): VNode {
  const { columns, rows, state, onState } = props;
  const sortButton = (c: Column<R>) => {
    if (!c.sort || !state || !onState) return c.label;
    const active = state.sortBy === c.sort;
    const next = active && state.sortOrder === "asc" ? "desc" : "asc";
    return (
      <button
        type="button"
        class="sort"
        onClick={() => onState({ sortBy: c.sort!, sortOrder: active ? next : "asc", page: 1 })}
        aria-label={`Sort by ${c.label}${active ? (state.sortOrder === "asc" ? ", now ascending" : ", now descending") : ""}`}
      >
        {c.label}
        <span aria-hidden="true" class="sort-mark">
          {active ? (state.sortOrder === "asc" ? " ▲" : " ▼") : " ↕"}
        </span>
      </button>
    );
  };
  return (
    <div class="table-block" aria-busy={props.loading ? "true" : "false"}>
      {props.error && <ErrorBox error={props.error} />}
      {props.loading && <div class="loading-bar" role="progressbar" aria-label={`Loading ${props.caption}`} />}
      {rows && rows.length === 0 && !props.loading ? (
        <div class="empty">{props.empty}</div>
      ) : rows ? (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={props.caption}>
          <table>
            <caption class="sr-only">{props.caption}</caption>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th
                    scope="col"
                    class={c.class}
                    aria-sort={state && c.sort && state.sortBy === c.sort ? (state.sortOrder === "asc" ? "ascending" : "descending") : undefined}
                  >
                    {sortButton(c)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={props.rowKey(r)}>
                  {columns.map((c) => (
                    <td class={c.class} data-label={c.label}>
                      {c.render(r)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {state && onState && props.total !== undefined && props.total > 0 && (
        <Pager state={state} onState={onState} total={props.total} pageSizes={props.pageSizes} label={props.caption} />
      )}
    </div>
  );
}

export function Pager(props: { state: TableState; onState: (s: Partial<TableState>) => void; total: number; pageSizes?: number[]; label: string }) {
  const { state, onState, total } = props;
  const pages = Math.max(1, Math.ceil(total / state.pageSize));
  const first = (state.page - 1) * state.pageSize + 1;
  const last = Math.min(total, state.page * state.pageSize);
  return (
    <nav class="pager" aria-label={`Pages of ${props.label}`}>
      <span aria-live="polite">
        {first}–{last} of {total}
      </span>
      <button type="button" disabled={state.page <= 1} onClick={() => onState({ page: state.page - 1 })}>
        Previous
      </button>
      <span>
        Page {state.page} of {pages}
      </span>
      <button type="button" disabled={state.page >= pages} onClick={() => onState({ page: state.page + 1 })}>
        Next
      </button>
      <label class="inline">
        Rows
        <select value={String(state.pageSize)} onChange={(e) => onState({ pageSize: Number((e.target as HTMLSelectElement).value), page: 1 })}>
          {(props.pageSizes ?? [10, 20, 50, 100]).map((n) => (
            <option value={String(n)}>{n}</option>
          ))}
        </select>
      </label>
    </nav>
  );
}

/** One page of a list the API returns whole, sorted in the browser by `state.sortBy` (a field of the row unless `value` says otherwise). */
export function localPage<R extends object>(rows: R[], state: TableState, value: (row: R, key: string) => unknown = (row, key) => row[key as keyof R]): R[] {
  const sorted = [...rows].sort((a, b) => {
    const va = value(a, state.sortBy);
    const vb = value(b, state.sortBy);
    const cmp = typeof va === "number" && typeof vb === "number" ? va - vb : String(va ?? "").localeCompare(String(vb ?? ""));
    return state.sortOrder === "asc" ? cmp : -cmp;
  });
  return sorted.slice((state.page - 1) * state.pageSize, state.page * state.pageSize);
}
