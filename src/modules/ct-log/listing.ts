/** The page a CT listing was asked for, echoed back beside its rows (filters, matches, typosquatting matches). */
export interface PageQuery<S extends string> {
  page: number;
  page_size: number;
  sort_by: S;
  sort_order: "asc" | "desc";
}

export const pageOf = <S extends string>(q: PageQuery<S>) => ({ page: q.page, page_size: q.page_size, sort_by: q.sort_by, sort_order: q.sort_order });
