/** A certificate monitor's page: its settings and indicators, its IP targets, days left over time, and its scan history with each scan in detail. */
import { useState } from "preact/hooks";
import { del, get, patch, post, type ApiError, type Schemas } from "../../api";
import { useSession } from "../../session";
import { LineChart } from "../../ui/charts";
import { Form, TextField, useForm } from "../../ui/form";
import { useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { ActionButton, Badge, Dialog, EnabledSwitch, ErrorBox, KeyValues, Notice, PageHeader, Section } from "../../ui/widgets";
import { CipherBadge, IndicatorBadges } from "./indicators";
import { MonitorForm } from "./monitor-form";
import { ScanDetail } from "./scan-detail";

export function CertMonitorPage({ id }: { id: string }) {
  const s = useSession();
  const m = useResource(() => get("/api/cert-watcher/monitors/{monitor_id}", { params: { path: { monitor_id: Number(id) } } }), [id]);
  const [hState, setHState] = useTableState({ sortBy: "scan_time", sortOrder: "desc", pageSize: 10 });
  const h = useResource(
    () => get("/api/cert-watcher/history/{monitor_id}", { params: { path: { monitor_id: Number(id) }, query: { page: hState.page, page_size: hState.pageSize } } }),
    [id, hState],
  );
  const [editing, setEditing] = useState(false);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
  const [open, setOpen] = useState<number | null>(null);
  const target = useForm({ ip_address: "" });
  const mon = m.data;
  const canUpdate = s.can("cert-watcher:update_monitoring");
  // Days left per target over its scans (oldest first): one line per address.
  const trends = new Map<string, { scan_time: string; validity_days: number }[]>();
  for (const x of [...(h.data?.scans ?? [])].reverse()) if (x.validity_days !== null) trends.set(x.ip_address, [...(trends.get(x.ip_address) ?? []), { scan_time: x.scan_time, validity_days: x.validity_days }]);
  const opened = open === null ? undefined : h.data?.scans.find((x) => x.id === open);
  const trendLines = [...trends.entries()].filter(([, xs]) => xs.length > 1).slice(0, 4);
  return (
    <div>
      <p class="crumbs">
        <a href="/certificates">Certificates</a> ›
      </p>
      <PageHeader title={mon ? `${mon.cn}:${mon.port}` : "Monitor"}>
        {mon && canUpdate && (
          <button type="button" onClick={() => setEditing(true)}>
            Edit monitor
          </button>
        )}
      </PageHeader>
      <ErrorBox error={m.error} />
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      {mon && (
        <>
          <Section title="Monitor">
            <KeyValues
              items={[
                ["Indicators", <IndicatorBadges i={mon.indicators} />],
                ["Days left (soonest target)", mon.indicators.min_days_left ?? "—"],
                ["Connection", mon.connection_method === "starttls" ? `STARTTLS (${mon.starttls})` : "direct TLS"],
                ["SNI", mon.target_dns ?? mon.cn],
                ["Enabled", mon.enabled ? "yes" : "no"],
                ["Private root CA", mon.root_ca ? "configured" : "system trust store"],
                ["Notes", mon.notes],
                ["Created", <Time iso={mon.created_at} />],
              ]}
            />
          </Section>
          <Section title="Targets">
            <DataTable
              caption="IP targets"
              rows={mon.targets}
              rowKey={(t) => t.id}
              empty={<p>No IP target: add the addresses that serve this hostname.</p>}
              columns={[
                { label: "Address", render: (t) => <span class="mono">{t.ip_address}</span> },
                {
                  label: "Enabled",
                  render: (t) => (
                    <EnabledSwitch
                      name={t.ip_address}
                      enabled={t.enabled}
                      canUpdate={canUpdate}
                      save={(enabled) => patch("/api/cert-watcher/monitors/{monitor_id}/targets/{target_id}", { params: { path: { monitor_id: Number(id), target_id: t.id } }, body: { enabled } })}
                      onError={setErr}
                      onDone={m.reload}
                    />
                  ),
                },
                { label: "Latest scan", render: (t) => (t.last_scan ? <><Badge value={t.last_scan.has_error ? "failed" : t.last_scan.validity_status} /> {t.last_scan.days_left ?? ""} d, <Time iso={t.last_scan.scan_time} /></> : <span class="muted">not scanned yet</span>) },
                ...(canUpdate
                  ? [
                      {
                        label: "Actions",
                        render: (t: Schemas["CertTarget"]) => (
                          <ActionButton class="danger" label={`Remove ${t.ip_address}`} confirm={`Remove the target ${t.ip_address}?`} onError={setErr} onClick={async () => (setNotice((await del("/api/cert-watcher/monitors/{monitor_id}/targets/{target_id}", { params: { path: { monitor_id: Number(id), target_id: t.id } } })).message), m.reload())}>
                            Remove
                          </ActionButton>
                        ),
                      },
                    ]
                  : []),
              ]}
            />
            {canUpdate && (
              <Form
                form={target}
                class="form inline-form"
                label="Add a target"
                submitLabel="Add target"
                onSubmit={async () => {
                  if (await target.submit((v) => post("/api/cert-watcher/monitors/{monitor_id}/targets", { params: { path: { monitor_id: Number(id) } }, body: v }))) {
                    target.reset();
                    m.reload();
                  }
                }}
              >
                <TextField form={target} name="ip_address" label="IP address" required />
              </Form>
            )}
          </Section>
          {trendLines.length > 0 && (
            <Section title="Days left over time">
              {trendLines.map(([ip, xs]) => (
                <LineChart
                  title={`Days left on the certificate served by ${ip}, per scan`}
                  valueLabel="Days left"
                  min={Math.min(0, ...xs.map((x) => x.validity_days))}
                  max={Math.max(30, ...xs.map((x) => x.validity_days))}
                  data={xs.map((x) => ({ label: new Date(x.scan_time).toLocaleDateString(), value: x.validity_days, title: `${new Date(x.scan_time).toLocaleString()}: ${x.validity_days} days` }))}
                />
              ))}
            </Section>
          )}
          <Section title="Scan history">
            <DataTable
              caption="Scan history"
              state={hState}
              onState={setHState}
              total={h.data?.total}
              rows={h.data?.scans}
              loading={h.loading}
              error={h.error}
              rowKey={(x) => x.id}
              empty={<p>No scan yet.</p>}
              columns={[
                { label: "Scanned", render: (x) => <Time iso={x.scan_time} /> },
                { label: "Address", render: (x) => <span class="mono">{x.ip_address}</span> },
                { label: "Result", render: (x) => (x.has_error ? <Badge value="failed" label="failed" /> : <><Badge value={x.protocol_status} /> <CipherBadge status={x.cipher_status} /> <Badge value={x.validation_status} /></>) },
                { label: "Frameworks", render: (x) => <span class="badges">{x.frameworks.map((f) => <Badge value={f.status} label={`${f.id}: ${f.status}`} />)}</span> },
                {
                  label: "Detail",
                  render: (x) => (
                    <button type="button" aria-expanded={open === x.id ? "true" : "false"} onClick={() => setOpen(open === x.id ? null : x.id)}>
                      {open === x.id ? "Hide" : "Show"}
                      {/* Every row has this button: its name says which scan it opens. */}
                      <span class="sr-only">
                        {" "}
                        scan {x.id} of {x.ip_address}, <Time iso={x.scan_time} />
                      </span>
                    </button>
                  ),
                },
              ]}
            />
            {opened && (
              <Section title={`Scan ${open} in detail`}>
                <ScanDetail scan={opened} />
              </Section>
            )}
          </Section>
          <Dialog title={`Edit ${mon.cn}`} open={editing} onClose={() => setEditing(false)} wide>
            {editing && (
              <MonitorForm
                id={mon.id}
                initial={{ cn: mon.cn, port: String(mon.port), target_dns: mon.target_dns ?? "", starttls: mon.starttls ?? "auto", notes: mon.notes, root_ca: mon.root_ca ?? "", enabled: mon.enabled, ip_addresses: "" }}
                onCancel={() => setEditing(false)}
                onDone={(msg) => {
                  setNotice(msg);
                  setEditing(false);
                  m.reload();
                }}
              />
            )}
          </Dialog>
        </>
      )}
    </div>
  );
}
