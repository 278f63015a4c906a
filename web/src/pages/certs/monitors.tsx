/** The monitors tab: every certificate monitor with its indicators; created, switched on and off and deleted in place. */
import { useState } from "preact/hooks";
import { del, get, patch, type ApiError, type QueryOf, type Schemas } from "../../api";
import { useSession } from "../../session";
import { limitOffset, sortQuery, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { ActionButton, Dialog, EnabledSwitch, ErrorBox, Notice, Section } from "../../ui/widgets";
import { IndicatorBadges } from "./indicators";
import { MonitorForm, NEW_MONITOR } from "./monitor-form";

const SORTS: readonly NonNullable<QueryOf<"/api/cert-watcher/monitors">["sort_by"]>[] = ["cn", "enabled", "target", "port", "last_scan_time", "created_at"];

export function MonitorsTab() {
  const s = useSession();
  const [state, setState] = useTableState({ sortBy: "cn", pageSize: 20 });
  const r = useResource(() => get("/api/cert-watcher/monitors", { params: { query: { ...limitOffset(state), ...sortQuery(state, SORTS) } } }), [state]);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
  const canCreate = s.can("cert-watcher:create_monitoring");
  const canUpdate = s.can("cert-watcher:update_monitoring");
  const canDelete = s.can("cert-watcher:delete_monitoring");
  return (
    <Section
      title="Monitors"
      actions={
        canCreate && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New monitor
          </button>
        )
      }
    >
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      <DataTable
        caption="Certificate monitors"
        state={state}
        onState={setState}
        total={r.data?.total}
        rows={r.data?.monitors}
        loading={r.loading}
        error={r.error}
        rowKey={(m) => m.id}
        empty={<p>No endpoint is monitored. A monitor names the hostname on the certificate and the IP addresses serving it.</p>}
        columns={[
          { label: "Hostname", sort: "cn", render: (m) => <a class="mono" href={`/certificates/${m.id}`}>{m.cn}</a> },
          { label: "Port", sort: "port", render: (m) => `${m.port}${m.starttls ? ` (${m.starttls})` : ""}`, class: "num" },
          {
            label: "Enabled",
            sort: "enabled",
            render: (m) => (
              <EnabledSwitch
                name={m.cn}
                enabled={m.enabled}
                canUpdate={canUpdate}
                save={(enabled) => patch("/api/cert-watcher/monitors/{monitor_id}", { params: { path: { monitor_id: m.id } }, body: { enabled } })}
                onError={setErr}
                onDone={r.reload}
              />
            ),
          },
          { label: "Indicators", render: (m) => <IndicatorBadges i={m.indicators} /> },
          // The API's sort_by=target orders by target_dns (the SNI override), not by the number of targets:
          // that sort belongs to the column showing target_dns; the count has no API sort.
          { label: "SNI override", sort: "target", render: (m) => (m.target_dns ? <span class="mono">{m.target_dns}</span> : <span class="muted">none</span>) },
          { label: "Targets", render: (m) => m.indicators.target_count, class: "num" },
          { label: "Days left", render: (m) => m.indicators.min_days_left ?? <span class="muted">—</span>, class: "num" },
          { label: "Last scan", sort: "last_scan_time", render: (m) => <Time iso={m.last_scan_time} /> },
          ...(canDelete
            ? [
                {
                  label: "Actions",
                  render: (m: Schemas["CertMonitor"]) => (
                    <ActionButton
                      class="danger"
                      label={`Delete ${m.cn}`}
                      confirm={`Delete the monitor ${m.cn}:${m.port} and its targets?`}
                      onError={setErr}
                      onClick={async () => {
                        setNotice((await del("/api/cert-watcher/monitors/{monitor_id}", { params: { path: { monitor_id: m.id } } })).message);
                        r.reload();
                      }}
                    >
                      Delete
                    </ActionButton>
                  ),
                },
              ]
            : []),
        ]}
      />
      <Dialog title="New certificate monitor" open={creating} onClose={() => setCreating(false)}>
        {creating && (
          <MonitorForm
            initial={NEW_MONITOR}
            onCancel={() => setCreating(false)}
            onDone={(m) => {
              setNotice(m);
              setCreating(false);
              r.reload();
            }}
          />
        )}
      </Dialog>
    </Section>
  );
}
