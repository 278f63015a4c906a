/**
 * Data loading for pages: `useResource(loader, deps)` runs the loader when deps
 * change, keeps the last data while reloading (no flicker when paging), and ignores
 * an answer that arrives after a newer request started.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { asApiError, type ApiError } from "../api";

export interface Resource<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload(): void;
}

export function useResource<T>(loader: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    setLoading(true);
    loader().then(
      (d) => {
        if (mine !== seq.current) return;
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (e) => {
        if (mine !== seq.current) return;
        setError(asApiError(e));
        setLoading(false);
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** Sorting and paging state of one table, in the API's own terms. */
export interface TableState {
  page: number;
  pageSize: number;
  sortBy: string;
  sortOrder: "asc" | "desc";
}

export function useTableState(initial: Partial<TableState> & { sortBy: string }): [TableState, (s: Partial<TableState>) => void] {
  const [state, setState] = useState<TableState>({ page: 1, pageSize: 20, sortOrder: "asc", ...initial });
  const update = useCallback((s: Partial<TableState>) => setState((old) => ({ ...old, ...s })), []);
  return [state, update];
}

/** limit/offset query of a table state (RDAP, cert-watcher, alert history, audit log). */
export const limitOffset = (t: TableState) => ({ limit: t.pageSize, offset: (t.page - 1) * t.pageSize });
/** page/page_size query (CT). */
export const pagePageSize = (t: TableState) => ({ page: t.page, page_size: t.pageSize });
/** sort_by/sort_order of a table state, `sort_by` only when it is one the endpoint sorts by (`sortable`: the API's values). */
export const sortQuery = <S extends string = string>(t: TableState, sortable?: readonly S[]) => ({
  sort_by: sortable ? sortable.find((s) => s === t.sortBy) : (t.sortBy as S),
  sort_order: t.sortOrder,
});
