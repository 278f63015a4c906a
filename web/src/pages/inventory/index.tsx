/**
 * The certificate inventory: every name with its state (issued in CT, deployed on the
 * monitored targets, expiring), filterable by state and name; one name's targets and
 * the timeline of its certificates as a picture (issued → deployed → expiring).
 * The API: GET /api/inventory/hostnames[/{hostname}] (docs/modules/inventory.md). One file
 * per part: this list, a name's page, its timeline, the states' words, a certificate's deployments.
 */
import { useState } from "preact/hooks";
import { get, type QueryOf, type Schemas } from "../../api";
import { queryChoice, setQuery, useLocation } from "../../router";
import { pagePageSize, sortQuery, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { Badge, PageHeader } from "../../ui/widgets";
import { HOSTNAME_STATES, issuerName, StateBadge, type HostnameState } from "./states";

export { InventoryHostnamePage } from "./hostname";
export { MatchDeployments } from "./match-deployments";

const SORTS: readonly NonNullable<QueryOf<"/api/inventory/hostnames">["sort_by"]>[] = ["hostname", "state", "not_after", "renewal_due_at"];
const RENEWAL_TONES: Record<Schemas["InventoryRenewal"]["status"], string | undefined> = { ok: "good", renewed: "good", due: "warn", overdue: "bad", expired: "bad", none: undefined };
const enc = encodeURIComponent;

export function InventoryPage() {
  const loc = useLocation();
  const state = queryChoice<HostnameState>(loc.query, "state", HOSTNAME_STATES.map((s) => s.id)) ?? "";
  const q = loc.query.get("q") ?? "";
  const [search, setSearch] = useState(q);
  const [table, setTable] = useTableState({ sortBy: "hostname", pageSize: 20 });
  const r = useResource(
    () => get("/api/inventory/hostnames", { params: { query: { ...pagePageSize(table), ...sortQuery(table, SORTS), state: state || undefined, q: q || undefined } } }),
    [table, state, q],
  );
  const counts = r.data?.state_counts ?? {};
  return (
    <div>
      <PageHeader title="Certificate inventory" />
      <p class="muted">
        Every name of your CT matches and certificate monitors: the certificate last issued for it, what each monitored endpoint serves, and whether they agree.
      </p>
      <form
        class="filters"
        role="search"
        aria-label="Filter the inventory"
        onSubmit={(e) => {
          e.preventDefault();
          setTable({ page: 1 });
          setQuery({ q: search.trim() || null });
        }}
      >
        <label>
          State{" "}
          <select
            value={state}
            onChange={(e) => {
              setTable({ page: 1 });
              setQuery({ state: (e.target as HTMLSelectElement).value || null });
            }}
          >
            <option value="">All states</option>
            {HOSTNAME_STATES.map((s) => (
              <option value={s.id}>
                {s.label}
                {counts[s.id] !== undefined ? ` (${counts[s.id]})` : ""}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name contains <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ul class="state-counts" aria-label="Names per state">
        {HOSTNAME_STATES.filter((s) => counts[s.id]).map((s) => (
          <li>
            <a href={`/inventory?state=${s.id}`} aria-current={state === s.id ? "true" : undefined}>
              <StateBadge state={s.id} /> {counts[s.id]}
            </a>
          </li>
        ))}
      </ul>
      <DataTable
        caption="Hostnames"
        state={table}
        onState={setTable}
        total={r.data?.total}
        rows={r.data?.hostnames}
        loading={r.loading}
        error={r.error}
        rowKey={(h) => h.hostname}
        empty={<p>{state || q ? "No name matches these filters." : "No name yet: add a CT filter or a certificate monitor, and the names they find appear here."}</p>}
        columns={[
          { label: "Hostname", sort: "hostname", render: (h) => <a href={`/inventory/${enc(h.hostname)}`} class="mono">{h.hostname}</a> },
          {
            label: "State",
            sort: "state",
            render: (h) => (
              <span class="state-cell">
                <StateBadge state={h.state} /> <span class="muted small">{h.state_reason}</span>
              </span>
            ),
          },
          {
            label: "Latest issued",
            sort: "not_after",
            render: (h) =>
              h.latest_issued ? (
                <span>
                  {issuerName(h.latest_issued.issuer)}, {h.latest_issued.lifetime_days} days, expires <Time iso={h.latest_issued.not_after} date />
                </span>
              ) : (
                <span class="muted">never seen in CT</span>
              ),
          },
          {
            label: "Renewal",
            sort: "renewal_due_at",
            render: (h) =>
              h.renewal.status === "none" ? (
                <span class="muted">—</span>
              ) : (
                <span>
                  <Badge value={h.renewal.status} tone={RENEWAL_TONES[h.renewal.status]} />
                  {h.renewal.due_at && h.renewal.status === "ok" && (
                    <span class="muted small">
                      {" "}
                      due <Time iso={h.renewal.due_at} date />
                    </span>
                  )}
                </span>
              ),
          },
          {
            label: "Next maximum",
            render: (h) =>
              h.readiness.status === "not_ready" ? (
                <span>
                  <Badge value="not_ready" tone="warn" label="not ready" />
                  {h.readiness.matters_from && (
                    <span class="muted small">
                      {" "}
                      from <Time iso={h.readiness.matters_from} date />
                    </span>
                  )}
                </span>
              ) : (
                <span class="muted">{h.readiness.status}</span>
              ),
          },
          { label: "Targets", render: (h) => h.target_count },
        ]}
      />
    </div>
  );
}
