/** The recent scans tab: days left per served certificate, soonest first, and the latest scan of every target. */
import { get, type QueryOf } from "../../api";
import { Timeline } from "../../ui/charts";
import { limitOffset, sortQuery, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { Badge, ErrorBox, Section } from "../../ui/widgets";
import { CipherBadge } from "./indicators";

const SORTS: readonly NonNullable<QueryOf<"/api/cert-watcher/recent-scans">["sort_by"]>[] = ["cn", "validity", "protocol", "cipher", "validation", "last_scan_time"];

const daysTone = (d: number | null) => (d === null ? "neutral" : d < 0 ? "bad" : d <= 30 ? "warn" : "good");

export function ScansTab() {
  const [state, setState] = useTableState({ sortBy: "last_scan_time", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get("/api/cert-watcher/recent-scans", { params: { query: { ...limitOffset(state), ...sortQuery(state, SORTS) } } }), [state]);
  const soon = useResource(() => get("/api/cert-watcher/recent-scans", { params: { query: { limit: 25, sort_by: "validity", sort_order: "asc" } } }), []);
  const timeline = (soon.data?.scans ?? []).filter((x) => x.days_left !== null);
  return (
    <>
      <Section title="Days left, soonest first">
        <ErrorBox error={soon.error} />
        {soon.data && timeline.length === 0 ? (
          <p class="empty">No scanned certificate yet.</p>
        ) : (
          <Timeline
            title="Days until each served certificate expires"
            valueLabel="Days left"
            unit="days"
            data={timeline.map((x) => ({ label: `${x.cn}:${x.port} ${x.ip_address}`, value: x.days_left ?? 0, tone: daysTone(x.days_left) }))}
          />
        )}
      </Section>
      <Section title="Latest scan per target">
        <DataTable
          caption="Recent scans"
          state={state}
          onState={setState}
          total={r.data?.total}
          rows={r.data?.scans}
          loading={r.loading}
          error={r.error}
          rowKey={(x) => x.scan_id}
          empty={<p>No scan yet. Scans run on a scanner agent: register one on the Scanner agents tab.</p>}
          columns={[
            { label: "Hostname", sort: "cn", render: (x) => <a class="mono" href={`/certificates/${x.monitor_id}`}>{x.cn}:{x.port}</a> },
            { label: "Address", render: (x) => <span class="mono">{x.ip_address}</span> },
            { label: "Validity", sort: "validity", render: (x) => (x.has_error ? <Badge value="failed" label="scan failed" /> : <><Badge value={x.validity_status} /> {x.days_left ?? ""} d</>) },
            { label: "Protocols", sort: "protocol", render: (x) => <><Badge value={x.protocol_status} /> <span class="small">{x.protocol.join(", ")}</span></> },
            { label: "Ciphers", sort: "cipher", render: (x) => <><CipherBadge status={x.cipher_status} /> <span class="small">{x.cipher_count}</span></> },
            { label: "Chain", sort: "validation", render: (x) => <Badge value={x.validation_status} /> },
            { label: "Scanned", sort: "last_scan_time", render: (x) => <Time iso={x.scan_time} /> },
          ]}
        />
      </Section>
    </>
  );
}
