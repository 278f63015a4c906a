/**
 * Certificate deployments: monitors with their indicators, recent scans with a
 * days-left timeline, scanner agents (token shown once, revoke), and per monitor
 * its targets and scan history with the chain, protocols, suites, groups and the
 * five framework verdicts with reasons.
 */
import { useState } from "preact/hooks";
import { del, get, patch, post, put } from "../api/legacy";
import { setQuery, useLocation } from "../router";
import { useSession } from "../session";
import { LineChart, Timeline } from "../ui/charts";
import { CheckField, Form, SelectField, TextArea, TextField, useForm } from "../ui/form";
import { limitOffset, sortQuery, useResource, useTableState } from "../ui/resource";
import { DataTable } from "../ui/table";
import { Time } from "../ui/time";
import { ActionButton, Badge, Chips, Dialog, ErrorBox, KeyValues, Notice, PageHeader, SecretOnce, Section, TabPanel, Tabs } from "../ui/widgets";

interface Indicators {
  validity_status: string;
  protocol_status: string;
  cipher_status: string;
  validation_status: string;
  error_count: number;
  target_count: number;
  min_days_left: number | null;
}

interface ScanSummary {
  scan_id: number;
  target_id: number;
  ip_address: string;
  scan_time: string;
  has_error: boolean;
  error: string;
  subject: string | null;
  issuer: string | null;
  not_after: string | null;
  days_left: number | null;
  protocol: string[];
  cipher_count: number;
  validity_status: string;
  protocol_status: string;
  cipher_status: string;
  validation_status: string;
  monitor_id?: number;
  cn?: string;
  port?: number;
}

interface Monitor {
  id: number;
  cn: string;
  port: number;
  target_dns: string | null;
  starttls: string | null;
  connection_method: string;
  enabled: boolean;
  notes: string;
  root_ca: string | null;
  created_at: string;
  last_scan_time: string | null;
  indicators: Indicators;
  targets?: { id: number; ip_address: string; enabled: boolean; created_at: string; last_scan_time: string | null; last_scan: ScanSummary | null }[];
}

const TABS = [
  { id: "monitors", label: "Monitors" },
  { id: "scans", label: "Recent scans" },
  { id: "agents", label: "Scanner agents" },
];

export function CertsPage() {
  const loc = useLocation();
  const tab = TABS.some((t) => t.id === loc.query.get("tab")) ? loc.query.get("tab")! : "monitors";
  return (
    <div>
      <PageHeader title="Certificate deployments" />
      <Tabs label="Certificate sections" tabs={TABS} active={tab} onSelect={(id) => setQuery({ tab: id })} />
      <TabPanel id={tab}>
        {tab === "monitors" && <MonitorsTab />}
        {tab === "scans" && <ScansTab />}
        {tab === "agents" && <AgentsTab />}
      </TabPanel>
    </div>
  );
}

export function IndicatorBadges({ i }: { i: Indicators }) {
  return (
    <span class="badges">
      <Badge value={i.validity_status} label={`validity: ${i.validity_status.replace(/_/g, " ")}`} />
      <Badge value={i.protocol_status} label={`protocols: ${i.protocol_status}`} />
      <CipherBadge status={i.cipher_status} label={`ciphers: ${i.cipher_status}`} />
      <Badge value={i.validation_status} label={`chain: ${i.validation_status.replace(/_/g, " ")}`} />
      {i.error_count > 0 && <Badge value="failed" label={`${i.error_count} failed`} />}
    </span>
  );
}

/** Cipher status: "legacy" suites are not recommended (warn); "weak" ones are broken (bad). */
function CipherBadge({ status, label }: { status: string; label?: string }) {
  return <Badge value={status} tone={status === "legacy" ? "warn" : undefined} label={label} />;
}

const STARTTLS = ["auto", "none", "smtp", "imap", "pop3", "ftp", "ldap", "xmpp", "postgres"];

interface MonitorValues {
  cn: string;
  port: string;
  target_dns: string;
  starttls: string;
  notes: string;
  root_ca: string;
  enabled: boolean;
  ip_addresses: string;
}

function monitorBody(v: MonitorValues, withTargets: boolean) {
  return {
    cn: v.cn,
    port: v.port === "" ? undefined : Number(v.port),
    target_dns: v.target_dns || null,
    starttls: v.starttls,
    notes: v.notes,
    root_ca: v.root_ca || null,
    enabled: v.enabled,
    ...(withTargets ? { ip_addresses: v.ip_addresses.split(/[\s,]+/).filter(Boolean) } : {}),
  };
}

function MonitorForm({ id, initial, onDone, onCancel }: { id?: number; initial: MonitorValues; onDone: (m: string, id: number) => void; onCancel: () => void }) {
  const form = useForm<MonitorValues>(initial);
  return (
    <Form
      form={form}
      label={id ? "Edit monitor" : "New monitor"}
      submitLabel={id ? "Save monitor" : "Create monitor"}
      onCancel={onCancel}
      onSubmit={async () => {
        let m = "";
        let newId = id ?? 0;
        const ok = await form.submit(async (v) => {
          if (id) m = (await put(`/api/cert-watcher/monitors/${id}`, monitorBody(v, false))).message;
          else {
            const r = await post("/api/cert-watcher/monitors", monitorBody(v, true));
            m = `${r.message} ${r.quota_remaining} monitors left on your plan.`;
            newId = r.id;
          }
        });
        if (ok) onDone(m, newId);
      }}
    >
      <TextField form={form} name="cn" label="Hostname on the certificate (CN, sent as SNI)" required />
      <TextField form={form} name="port" label="Port" inputMode="numeric" />
      <TextField form={form} name="target_dns" label="SNI override (optional)" />
      <SelectField form={form} name="starttls" label="STARTTLS" options={STARTTLS.map((s) => ({ value: s, label: s === "auto" ? "auto (by port)" : s }))} />
      {!id && <TextArea form={form} name="ip_addresses" label="IP addresses to scan" hint="One per line or separated by commas." rows={3} mono />}
      <TextField form={form} name="notes" label="Notes" />
      <TextArea form={form} name="root_ca" label="Private root CA (PEM, optional)" rows={3} mono />
      <CheckField form={form} name="enabled" label="Enabled" />
    </Form>
  );
}

const NEW_MONITOR: MonitorValues = { cn: "", port: "443", target_dns: "", starttls: "auto", notes: "", root_ca: "", enabled: true, ip_addresses: "" };

function MonitorsTab() {
  const s = useSession();
  const [state, setState] = useTableState({ sortBy: "cn", pageSize: 20 });
  const r = useResource(() => get<{ monitors: Monitor[]; total: number }>("/api/cert-watcher/monitors", { ...limitOffset(state), ...sortQuery(state) }), [state]);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
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
            render: (m) =>
              canUpdate ? (
                <label class="switch">
                  <input
                    type="checkbox"
                    checked={m.enabled}
                    aria-label={`${m.cn} enabled`}
                    onChange={async (e) => {
                      try {
                        await patch(`/api/cert-watcher/monitors/${m.id}`, { enabled: (e.target as HTMLInputElement).checked });
                      } catch (x) {
                        setErr(x);
                      }
                      r.reload();
                    }}
                  />
                  <span aria-hidden="true" />
                </label>
              ) : (
                <Badge value={m.enabled ? "active" : "disabled"} label={m.enabled ? "enabled" : "disabled"} />
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
                  render: (m: Monitor) => (
                    <ActionButton
                      class="danger"
                      label={`Delete ${m.cn}`}
                      confirm={`Delete the monitor ${m.cn}:${m.port} and its targets?`}
                      onError={setErr}
                      onClick={async () => {
                        setNotice((await del(`/api/cert-watcher/monitors/${m.id}`)).message);
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

const daysTone = (d: number | null) => (d === null ? "neutral" : d < 0 ? "bad" : d <= 30 ? "warn" : "good");

function ScansTab() {
  const [state, setState] = useTableState({ sortBy: "last_scan_time", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get<{ scans: ScanSummary[]; total: number }>("/api/cert-watcher/recent-scans", { ...limitOffset(state), ...sortQuery(state) }), [state]);
  const soon = useResource(() => get<{ scans: ScanSummary[]; total: number }>("/api/cert-watcher/recent-scans", { limit: 25, sort_by: "validity", sort_order: "asc" }), []);
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

interface Agent {
  id: number;
  name: string;
  token_prefix: string;
  status: string;
  created_at: string;
  last_seen_at: string | null;
  revoked_at: string | null;
}

function AgentsTab() {
  const s = useSession();
  const [state, setState] = useTableState({ sortBy: "name", pageSize: 20 });
  const r = useResource(() => get<{ agents: Agent[] }>("/api/cert-watcher/agents"), []);
  const form = useForm({ name: "" });
  const [secret, setSecret] = useState<{ name: string; token: string } | null>(null);
  const [err, setErr] = useState<any>();
  const rows = r.data?.agents ?? [];
  const sorted = [...rows].sort((a, b) => {
    const k = state.sortBy as keyof Agent;
    const c = String(a[k] ?? "").localeCompare(String(b[k] ?? ""));
    return state.sortOrder === "asc" ? c : -c;
  });
  return (
    <>
      {s.can("cert-watcher:create_monitoring") && (
        <Section title="Register an agent">
          <p class="muted">
            An agent runs <code>scanner-node</code> where it can reach your endpoints and only connects out to this service.
          </p>
          {secret && (
            <>
              <SecretOnce label={`Agent token of ${secret.name}.`} value={secret.token} />
              <p class="small">
                Start it with <code>npm --prefix scanner-node start -- --api {window.location.origin} --token {secret.token.slice(0, 8)}…</code>
              </p>
            </>
          )}
          <Form
            form={form}
            label="Register an agent"
            class="form inline-form"
            submitLabel="Register agent"
            onSubmit={async () => {
              let res: any;
              if (await form.submit(async (v) => (res = await post("/api/cert-watcher/agents", v)))) {
                setSecret({ name: res.name, token: res.token });
                form.reset();
                r.reload();
              }
            }}
          >
            <TextField form={form} name="name" label="Agent name" required />
          </Form>
        </Section>
      )}
      <Section title="Agents">
        <ErrorBox error={err} />
        <DataTable
          caption="Scanner agents"
          state={state}
          onState={setState}
          total={rows.length}
          rows={r.data ? sorted.slice((state.page - 1) * state.pageSize, state.page * state.pageSize) : undefined}
          loading={r.loading}
          error={r.error}
          rowKey={(a) => a.id}
          empty={<p>No agent registered.</p>}
          columns={[
            { label: "Name", sort: "name", render: (a) => a.name },
            { label: "Token", render: (a) => <span class="mono">{a.token_prefix}…</span> },
            { label: "Status", sort: "status", render: (a) => <Badge value={a.status} /> },
            { label: "Registered", sort: "created_at", render: (a) => <Time iso={a.created_at} /> },
            { label: "Last seen", sort: "last_seen_at", render: (a) => <Time iso={a.last_seen_at} /> },
            ...(s.can("cert-watcher:delete_monitoring")
              ? [
                  {
                    label: "Actions",
                    render: (a: Agent) =>
                      a.status === "active" ? (
                        <ActionButton class="danger" label={`Revoke ${a.name}`} confirm={`Revoke the agent ${a.name}? Its token stops working at once.`} onError={setErr} onClick={async () => (await del(`/api/cert-watcher/agents/${a.id}`), r.reload())}>
                          Revoke
                        </ActionButton>
                      ) : (
                        <span class="muted">revoked</span>
                      ),
                  },
                ]
              : []),
          ]}
        />
      </Section>
    </>
  );
}

interface SuiteFinding {
  code: number;
  name: string;
  weaknesses: string[];
}

/** A suite's concern in words (weak_suites / legacy_suites `weaknesses`). */
function weaknessWords(w: string): string {
  return ({ CBC: "CBC mode", no_forward_secrecy: "no forward secrecy", MD5: "MD5 MAC", outside_profile: "not in the profile", anon: "anonymous" } as Record<string, string>)[w] ?? w;
}

interface Verdict {
  id: string;
  name: string;
  version: string;
  status: "pass" | "fail" | "unknown";
  reasons: { category: string; item: string; code?: number; message: string }[];
}

function ScanDetail({ scan }: { scan: any }) {
  // Each suite's grade, from the one judgement (docs/tls-judgement.md): weak (broken), legacy (outside Mozilla's intermediate profile), or neither.
  const grade = new Map<string, { grade: "weak" | "legacy"; why: string }>([
    ...((scan.legacy_suites ?? []) as SuiteFinding[]).map((w) => [w.name, { grade: "legacy" as const, why: w.weaknesses.map(weaknessWords).join(", ") }] as const),
    ...((scan.weak_suites ?? []) as SuiteFinding[]).map((w) => [w.name, { grade: "weak" as const, why: w.weaknesses.map(weaknessWords).join(", ") }] as const),
  ]);
  const cert = scan.certificate ?? {};
  return (
    <div class="scan-detail">
      {scan.has_error && <Notice kind="warn">The scan failed: {scan.error}</Notice>}
      <h3>Framework verdicts</h3>
      <ul class="verdicts">
        {(scan.frameworks as Verdict[]).map((f) => (
          <li>
            <Badge value={f.status} /> <strong>{f.name}</strong> <span class="muted small">{f.version}</span>
            {f.reasons.length > 0 && (
              <details>
                <summary>
                  {f.reasons.length} {f.reasons.length === 1 ? "reason" : "reasons"}
                </summary>
                <ul>
                  {f.reasons.map((r) => (
                    <li class="small">
                      {r.message} <span class="muted">({r.category}: {r.item})</span>
                    </li>
                  ))}
                </ul>
              </details>
            )}
          </li>
        ))}
      </ul>
      <h3>Certificate</h3>
      <KeyValues
        items={[
          ["Subject", cert.subject],
          ["Issuer", cert.issuer],
          ["Names", <Chips items={cert.dns_names} />],
          ["Valid until", <>{cert.not_after ? <Time iso={cert.not_after} /> : "—"} ({scan.validity_days ?? "?"} days)</>],
          ["Key", [cert.public_key_algorithm, cert.key_bits && `${cert.key_bits} bits`, cert.curve].filter(Boolean).join(" ")],
          ["SHA-256", <span class="mono small break">{cert.sha256}</span>],
        ]}
      />
      <h3>Chain ({scan.chain_length ?? "?"} certificates served)</h3>
      <ol class="chain">
        {(scan.validation_path?.length ? scan.validation_path : scan.intermediates ?? []).map((c: any) => (
          <li class="small">
            <span class="mono">{c.certificate_subject ?? c.subject}</span> <span class="muted">issued by</span> <span class="mono">{c.certificate_issuer ?? c.issuer}</span>
          </li>
        ))}
      </ol>
      <h3>Protocols</h3>
      <Chips items={scan.protocol} label="Accepted protocols" />
      <h3>Cipher suites {scan.cipher_preference && <span class="muted small">(order: {scan.cipher_preference}'s preference)</span>}</h3>
      <ul class="chips" aria-label="Cipher suites">
        {(scan.ciphers as string[]).map((c) => {
          const g = grade.get(c);
          return (
            <li class={g?.grade ?? ""} title={g && `${g.grade}: ${g.why}`}>
              {c}
              {g && <span class="sr-only"> ({g.grade}: {g.why})</span>}
              {g && <span aria-hidden="true"> {g.grade === "weak" ? "⚠" : "·"}</span>}
            </li>
          );
        })}
      </ul>
      {grade.size > 0 && (
        <p class="muted small">
          Marked suites are outside Mozilla's intermediate profile: <span class="chip-key weak">weak</span> ones are broken (RC4, DES, 3DES, NULL, EXPORT, anonymous),{" "}
          <span class="chip-key legacy">legacy</span> ones are not recommended; hover or focus a suite for why.
        </p>
      )}
      <h3>Named groups</h3>
      <Chips items={scan.named_groups} label="Named groups" />
    </div>
  );
}

export function CertMonitorPage({ id }: { id: string }) {
  const s = useSession();
  const m = useResource(() => get<Monitor>(`/api/cert-watcher/monitors/${id}`), [id]);
  const [hState, setHState] = useTableState({ sortBy: "scan_time", sortOrder: "desc", pageSize: 10 });
  const h = useResource(() => get<{ scans: any[]; total: number }>(`/api/cert-watcher/history/${id}`, { page: hState.page, page_size: hState.pageSize }), [id, hState]);
  const [editing, setEditing] = useState(false);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
  const [open, setOpen] = useState<number | null>(null);
  const target = useForm({ ip_address: "" });
  const mon = m.data;
  const canUpdate = s.can("cert-watcher:update_monitoring");
  // Days left per target over its scans (oldest first): one line per address.
  const trends = new Map<string, any[]>();
  for (const x of [...(h.data?.scans ?? [])].reverse()) if (x.validity_days !== null) trends.set(x.ip_address, [...(trends.get(x.ip_address) ?? []), x]);
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
                  render: (t) =>
                    canUpdate ? (
                      <label class="switch">
                        <input
                          type="checkbox"
                          checked={t.enabled}
                          aria-label={`${t.ip_address} enabled`}
                          onChange={async (e) => {
                            try {
                              await patch(`/api/cert-watcher/monitors/${id}/targets/${t.id}`, { enabled: (e.target as HTMLInputElement).checked });
                            } catch (x) {
                              setErr(x);
                            }
                            m.reload();
                          }}
                        />
                        <span aria-hidden="true" />
                      </label>
                    ) : (
                      <Badge value={t.enabled ? "active" : "disabled"} label={t.enabled ? "enabled" : "disabled"} />
                    ),
                },
                { label: "Latest scan", render: (t) => (t.last_scan ? <><Badge value={t.last_scan.has_error ? "failed" : t.last_scan.validity_status} /> {t.last_scan.days_left ?? ""} d, <Time iso={t.last_scan.scan_time} /></> : <span class="muted">not scanned yet</span>) },
                ...(canUpdate
                  ? [
                      {
                        label: "Actions",
                        render: (t: NonNullable<Monitor["targets"]>[number]) => (
                          <ActionButton class="danger" label={`Remove ${t.ip_address}`} confirm={`Remove the target ${t.ip_address}?`} onError={setErr} onClick={async () => (setNotice((await del(`/api/cert-watcher/monitors/${id}/targets/${t.id}`)).message), m.reload())}>
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
                  if (await target.submit((v) => post(`/api/cert-watcher/monitors/${id}/targets`, v))) {
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
                { label: "Frameworks", render: (x) => <span class="badges">{(x.frameworks as Verdict[]).map((f) => <Badge value={f.status} label={`${f.id}: ${f.status}`} />)}</span> },
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
            {open !== null && h.data?.scans.find((x) => x.id === open) && (
              <Section title={`Scan ${open} in detail`}>
                <ScanDetail scan={h.data.scans.find((x) => x.id === open)} />
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
