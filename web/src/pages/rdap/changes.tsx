/** The RDAP page's Changes tab: every registration change across the monitored domains, each linked to its before/after comparison. */
import { get, type QueryOf } from "../../api";
import { limitOffset, sortQuery, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { Section } from "../../ui/widgets";

const SORTS: readonly NonNullable<QueryOf<"/api/rdap/changes">["sort_by"]>[] = ["domain_name", "tld", "changed_at"];
const enc = encodeURIComponent;

export function ChangesTab() {
  const [state, setState] = useTableState({ sortBy: "changed_at", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get("/api/rdap/changes", { params: { query: { ...limitOffset(state), ...sortQuery(state, SORTS) } } }), [state]);
  return (
    <Section title="Registration changes">
      <DataTable
        caption="RDAP changes"
        state={state}
        onState={setState}
        total={r.data?.total}
        rows={r.data?.changes}
        loading={r.loading}
        error={r.error}
        rowKey={(c) => `${c.domain_name}:${c.snapshot_id}`}
        empty={<p>No registration changed since monitoring began.</p>}
        columns={[
          { label: "Domain", sort: "domain_name", render: (c) => <span class="mono">{c.domain_name}</span> },
          { label: "TLD", sort: "tld", render: (c) => c.tld },
          { label: "Changed", sort: "changed_at", render: (c) => <Time iso={c.changed_at} /> },
          {
            label: "Difference",
            render: (c) =>
              c.previous_snapshot_id ? (
                <a href={`/rdap/${enc(c.domain_name)}?from=${enc(c.previous_snapshot_id)}&to=${enc(c.snapshot_id)}`}>Compare before and after</a>
              ) : (
                <span class="muted">first snapshot</span>
              ),
          },
        ]}
      />
    </Section>
  );
}
