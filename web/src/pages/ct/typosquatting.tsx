/** The typosquatting tab: lookalikes of protected domains seen in CT logs, and which filters are protected. */
import { get, type QueryOf } from "../../api";
import { pagePageSize, sortQuery, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { Badge, Chips, Section } from "../../ui/widgets";

const FILTER_SORTS: readonly NonNullable<QueryOf<"/api/ct-log/typosquatting/filters">["sort_by"]>[] = ["pattern", "match_type", "typosquat_enabled"];
const MATCH_SORTS: readonly NonNullable<QueryOf<"/api/ct-log/typosquatting/matches">["sort_by"]>[] = ["candidate_domain", "filter_pattern", "evidence", "log_count", "detected_at"];

export function TyposquatTab() {
  const [fState, setFState] = useTableState({ sortBy: "pattern", pageSize: 10 });
  const f = useResource(() => get("/api/ct-log/typosquatting/filters", { params: { query: { ...pagePageSize(fState), ...sortQuery(fState, FILTER_SORTS) } } }), [fState]);
  const [state, setState] = useTableState({ sortBy: "detected_at", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get("/api/ct-log/typosquatting/matches", { params: { query: { ...pagePageSize(state), ...sortQuery(state, MATCH_SORTS) } } }), [state]);
  return (
    <>
      <Section title="Lookalike domains (past 30 days)">
        <DataTable
          caption="Typosquatting matches"
          state={state}
          onState={setState}
          total={r.data?.total}
          rows={r.data?.matches}
          loading={r.loading}
          error={r.error}
          rowKey={(m) => m.id}
          empty={<p>No lookalike of a protected domain appeared in CT logs in the past 30 days.</p>}
          columns={[
            {
              label: "Candidate",
              sort: "candidate_domain",
              render: (m) => (
                <a class="mono" href={`/ct/typosquatting/${m.sha256}?filter_id=${m.filter_id}&candidate_domain=${encodeURIComponent(m.candidate_domain)}`}>
                  {m.candidate_domain}
                </a>
              ),
            },
            { label: "Protected", sort: "filter_pattern", render: (m) => <span class="mono">{m.filter_pattern}</span> },
            { label: "Evidence", sort: "evidence", render: (m) => <Chips items={m.evidence.map((e) => e.replace(/_/g, " "))} label="Evidence" /> },
            { label: "Edit distance", render: (m) => m.edit_distance ?? <span class="muted">—</span>, class: "num" },
            { label: "Certificate name", render: (m) => <span class="mono small">{m.certificate_name}</span> },
            { label: "Logs", sort: "log_count", render: (m) => m.log_count, class: "num" },
            { label: "Detected", sort: "detected_at", render: (m) => <Time iso={m.detected_at} /> },
          ]}
        />
      </Section>
      <Section title="Protected filters">
        <DataTable
          caption="Typosquatting eligibility of enabled filters"
          state={fState}
          onState={setFState}
          total={f.data?.total}
          rows={f.data?.filters}
          loading={f.loading}
          error={f.error}
          rowKey={(x) => x.id}
          empty={<p>No enabled filter. Typosquatting detection runs for enabled, eligible filters.</p>}
          columns={[
            { label: "Pattern", sort: "pattern", render: (x) => <span class="mono">{x.pattern}</span> },
            { label: "Match", sort: "match_type", render: (x) => x.match_type },
            { label: "Detection", sort: "typosquat_enabled", render: (x) => <Badge value={x.typosquat_enabled ? "active" : "disabled"} label={x.typosquat_enabled ? "on" : "off"} /> },
            { label: "Eligibility", render: (x) => (x.typosquat_eligible ? <Badge value="pass" label="eligible" /> : <span>{x.typosquat_ineligible_reason}</span>) },
          ]}
        />
      </Section>
    </>
  );
}
