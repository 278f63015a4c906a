/**
 * Certificate Transparency: filters (create, edit, toggle, delete, typosquatting
 * eligibility), matches with a per-day chart and their detail (certificate, CAA
 * verdict, log occurrences), typosquatting matches with evidence, feed proposals.
 */
import { MatchDeployments } from "./inventory";
import { useState } from "preact/hooks";
import { del, get, post, put } from "../api/legacy";
import { setQuery, useLocation } from "../router";
import { useSession } from "../session";
import { BarChart } from "../ui/charts";
import { CheckField, Form, SelectField, TextField, useForm } from "../ui/form";
import { pagePageSize, sortQuery, useResource, useTableState } from "../ui/resource";
import { DataTable } from "../ui/table";
import { CollectionBadge, ERROR_CLASS_LABEL, type Collection, type CollectionErrorClass } from "../ui/collection";
import { Time } from "../ui/time";
import { ActionButton, Badge, Chips, Dialog, ErrorBox, KeyValues, Notice, PageHeader, Section, TabPanel, Tabs } from "../ui/widgets";

export interface CtFilter {
  id: number;
  pattern: string;
  match_type: "wide" | "exact";
  enabled: boolean;
  description: string;
  feed_dns_enabled: boolean;
  feed_certs_enabled: boolean;
  typosquat_enabled: boolean;
  typosquat_eligible: boolean;
  typosquat_ineligible_reason: string;
  created_at: string;
  updated_at: string;
}

interface CtMatch {
  id: number;
  sha256: string;
  certificate_domain: string;
  matched_names: string[];
  subject: string;
  issuer: string;
  not_before: string;
  not_after: string;
  is_precert: boolean;
  has_precert: boolean;
  has_final: boolean;
  log_count: number;
  caa_violation: boolean;
  matched_at: string;
}

interface TyposquatMatch {
  id: number;
  sha256: string;
  filter_id: number;
  filter_pattern: string;
  candidate_domain: string;
  certificate_name: string;
  evidence: string[];
  edit_distance: number | null;
  log_count: number;
  detected_at: string;
  issuer: string;
}

const TABS = [
  { id: "filters", label: "Filters" },
  { id: "matches", label: "Matches" },
  { id: "typosquatting", label: "Typosquatting" },
  { id: "proposals", label: "Feed proposals" },
  { id: "logs", label: "Logs" },
];

export function CtPage() {
  const loc = useLocation();
  const tab = TABS.some((t) => t.id === loc.query.get("tab")) ? loc.query.get("tab")! : "filters";
  return (
    <div>
      <PageHeader title="Certificate Transparency" />
      <Tabs label="Certificate Transparency sections" tabs={TABS} active={tab} onSelect={(id) => setQuery({ tab: id })} />
      <TabPanel id={tab}>
        {tab === "filters" && <FiltersTab />}
        {tab === "matches" && <MatchesTab />}
        {tab === "typosquatting" && <TyposquatTab />}
        {tab === "proposals" && <ProposalsTab />}
        {tab === "logs" && <LogsTab />}
      </TabPanel>
    </div>
  );
}

type FilterValues = Pick<CtFilter, "pattern" | "match_type" | "description" | "enabled" | "feed_dns_enabled" | "feed_certs_enabled" | "typosquat_enabled">;
const NEW_FILTER: FilterValues = { pattern: "", match_type: "wide", description: "", enabled: true, feed_dns_enabled: false, feed_certs_enabled: false, typosquat_enabled: false };

function FilterForm({ initial, onSaved, onCancel, id }: { initial: FilterValues; onSaved: (msg: string) => void; onCancel: () => void; id?: number }) {
  const form = useForm<FilterValues>(initial);
  return (
    <Form
      form={form}
      label={id ? "Edit filter" : "New filter"}
      submitLabel={id ? "Save filter" : "Create filter"}
      onCancel={onCancel}
      onSubmit={async () => {
        let message = "";
        const ok = await form.submit(async (v) => {
          const r = id ? await put(`/api/ct-log/filters/${id}`, v) : await post("/api/ct-log/filters", v);
          message = id ? r.message : `${r.message} ${r.quota_remaining} filters left on your plan.`;
        });
        if (ok) onSaved(message);
      }}
    >
      <TextField form={form} name="pattern" label="Domain pattern" required hint="example.com, *.example.com or .example.com" />
      <SelectField
        form={form}
        name="match_type"
        label="Match"
        options={[
          { value: "wide", label: "Wide: the domain and all its subdomains" },
          { value: "exact", label: "Exact: only this name" },
        ]}
      />
      <TextField form={form} name="description" label="Description" />
      <CheckField form={form} name="enabled" label="Enabled" />
      <CheckField form={form} name="typosquat_enabled" label="Detect lookalike domains (typosquatting)" hint="Only for a pattern that is exactly one registrable domain, e.g. example.co.uk." />
      <CheckField form={form} name="feed_dns_enabled" label="Propose new subdomains for DNS monitoring" />
      <CheckField form={form} name="feed_certs_enabled" label="Propose new hostnames for certificate monitoring" />
    </Form>
  );
}

function FiltersTab() {
  const s = useSession();
  const [state, setState] = useTableState({ sortBy: "pattern", pageSize: 10 });
  const r = useResource(() => get<{ filters: CtFilter[]; total: number }>("/api/ct-log/filters", { ...pagePageSize(state), ...sortQuery(state) }), [state]);
  const [editing, setEditing] = useState<CtFilter | "new" | null>(null);
  const [notice, setNotice] = useState("");
  const [actionError, setActionError] = useState<any>();
  const canCreate = s.can("ct-log:create_monitoring");
  const canUpdate = s.can("ct-log:update_monitoring");
  const canDelete = s.can("ct-log:delete_monitoring");
  return (
    <Section
      title="Filters"
      actions={
        canCreate && (
          <button type="button" class="primary" onClick={() => setEditing("new")}>
            New filter
          </button>
        )
      }
    >
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={actionError} />
      <DataTable
        caption="CT filters"
        state={state}
        onState={setState}
        total={r.data?.total}
        rows={r.data?.filters}
        loading={r.loading}
        error={r.error}
        rowKey={(f) => f.id}
        empty={
          <>
            <p>
              <strong>No filters yet.</strong> A filter names a domain whose certificates you want to see as they appear in public CT logs.
            </p>
            {canCreate && (
              <button type="button" class="primary" onClick={() => setEditing("new")}>
                Create the first filter
              </button>
            )}
          </>
        }
        columns={[
          { label: "Pattern", sort: "pattern", render: (f) => <strong class="mono">{f.pattern}</strong> },
          { label: "Match", sort: "match_type", render: (f) => f.match_type },
          {
            label: "Enabled",
            sort: "enabled",
            render: (f) =>
              canUpdate ? (
                <label class="switch">
                  <input
                    type="checkbox"
                    checked={f.enabled}
                    aria-label={`${f.pattern} enabled`}
                    onChange={async (e) => {
                      const enabled = (e.target as HTMLInputElement).checked;
                      try {
                        await put(`/api/ct-log/filters/${f.id}`, { enabled });
                        setActionError(undefined);
                      } catch (err) {
                        setActionError(err);
                      }
                      r.reload();
                    }}
                  />
                  <span aria-hidden="true" />
                </label>
              ) : (
                <Badge value={f.enabled ? "active" : "disabled"} label={f.enabled ? "enabled" : "disabled"} />
              ),
          },
          {
            label: "Typosquatting",
            render: (f) =>
              f.typosquat_eligible ? (
                <Badge value={f.typosquat_enabled ? "active" : "disabled"} label={f.typosquat_enabled ? "on" : "off (eligible)"} />
              ) : (
                <span>
                  <Badge value="disabled" label="not eligible" /> <span class="small muted">{f.typosquat_ineligible_reason}</span>
                </span>
              ),
          },
          {
            label: "Feeds",
            render: (f) => [f.feed_dns_enabled && "DNS", f.feed_certs_enabled && "certificates"].filter(Boolean).join(", ") || <span class="muted">none</span>,
          },
          { label: "Description", sort: "description", render: (f) => f.description || <span class="muted">—</span> },
          { label: "Created", sort: "created_at", render: (f) => <Time iso={f.created_at} /> },
          ...(canUpdate || canDelete
            ? [
                {
                  label: "Actions",
                  render: (f: CtFilter) => (
                    <span class="row-actions">
                      {canUpdate && (
                        <button type="button" onClick={() => setEditing(f)} aria-label={`Edit ${f.pattern}`}>
                          Edit
                        </button>
                      )}
                      {canDelete && (
                        <ActionButton
                          class="danger"
                          label={`Delete ${f.pattern}`}
                          confirm={`Delete the filter ${f.pattern}? It stops matching at once.`}
                          onError={setActionError}
                          onClick={async () => {
                            const res = await del(`/api/ct-log/filters/${f.id}`);
                            setNotice(res.message);
                            r.reload();
                          }}
                        >
                          Delete
                        </ActionButton>
                      )}
                    </span>
                  ),
                },
              ]
            : []),
        ]}
      />
      <Dialog title={editing === "new" ? "New CT filter" : `Edit ${editing ? (editing as CtFilter).pattern : ""}`} open={editing !== null} onClose={() => setEditing(null)}>
        {editing !== null && (
          <FilterForm
            id={editing === "new" ? undefined : editing.id}
            initial={editing === "new" ? NEW_FILTER : { ...editing }}
            onCancel={() => setEditing(null)}
            onSaved={(m) => {
              setNotice(m);
              setEditing(null);
              r.reload();
            }}
          />
        )}
      </Dialog>
    </Section>
  );
}

const dayKey = (iso: string) => iso.slice(0, 10);

/** The organization (or common name) of a distinguished name: "Let's Encrypt" for "CN=R11,O=Let's Encrypt,C=US". */
export function shortDn(dn: string): string {
  const attr = (k: string) => new RegExp(`(?:^|,)\\s*${k}=((?:\\\\,|[^,])+)`).exec(dn)?.[1]?.trim();
  const o = attr("O");
  const cn = attr("CN");
  return o && cn ? `${o} (${cn})` : (o ?? cn ?? dn);
}

/** Matches per day over the 30-day window, counted from up to 1,000 newest matches. */
function MatchesPerDay() {
  const r = useResource(async () => {
    const all: CtMatch[] = [];
    let total = 0;
    for (let page = 1; page <= 10; page++) {
      const res = await get<{ matches: CtMatch[]; total: number }>("/api/ct-log/matches", { page, page_size: 100, sort_by: "matched_at", sort_order: "desc" });
      all.push(...res.matches);
      total = res.total;
      if (res.matches.length < 100) break;
    }
    return { all, total };
  }, []);
  if (!r.data) return r.error ? <ErrorBox error={r.error} /> : <div class="loading-bar" role="progressbar" aria-label="Counting matches per day" />;
  const counts = new Map<string, number>();
  for (const m of r.data.all) counts.set(dayKey(m.matched_at), (counts.get(dayKey(m.matched_at)) ?? 0) + 1);
  const days: { label: string; value: number; title: string }[] = [];
  for (let i = 29; i >= 0; i--) {
    const d = new Date(Date.now() - i * 86_400_000);
    const k = d.toISOString().slice(0, 10);
    days.push({ label: i % 5 === 0 ? d.toLocaleDateString(undefined, { month: "short", day: "numeric" }) : "", value: counts.get(k) ?? 0, title: `${d.toLocaleDateString()} (UTC day ${k}): ${counts.get(k) ?? 0}` });
  }
  return (
    <>
      <BarChart title="Matches per day, last 30 days (UTC days)" valueLabel="Matches" data={days} height={140} />
      {r.data.total > r.data.all.length && <p class="small muted">Counted from the newest {r.data.all.length} of {r.data.total} matches.</p>}
    </>
  );
}

function MatchesTab() {
  const [state, setState] = useTableState({ sortBy: "matched_at", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get<{ matches: CtMatch[]; total: number }>("/api/ct-log/matches", { ...pagePageSize(state), ...sortQuery(state) }), [state]);
  return (
    <>
      <Section title="Matches per day">
        <MatchesPerDay />
      </Section>
      <Section title="Certificates matching your filters (past 30 days)">
        <DataTable
          caption="CT matches"
          state={state}
          onState={setState}
          total={r.data?.total}
          rows={r.data?.matches}
          loading={r.loading}
          error={r.error}
          rowKey={(m) => m.id}
          empty={<p>No certificate matched your filters in the past 30 days.</p>}
          columns={[
            {
              label: "Certificate domain",
              sort: "certificate_domain",
              render: (m) => (
                <a href={`/ct/matches/${m.sha256}`} class="mono wrap">
                  {m.certificate_domain}
                </a>
              ),
            },
            {
              label: "Other matched names",
              render: (m) => {
                const others = m.matched_names.filter((n) => n !== m.certificate_domain);
                return others.length ? <span class="small mono wrap">{others.slice(0, 2).join(", ")}{others.length > 2 ? ` and ${others.length - 2} more` : ""}</span> : <span class="muted">—</span>;
              },
            },
            { label: "Issuer", render: (m) => <span class="small" title={m.issuer}>{shortDn(m.issuer)}</span> },
            { label: "Expires", render: (m) => <Time iso={m.not_after} date /> },
            { label: "CAA", render: (m) => (m.caa_violation ? <Badge value="fail" label="violation" /> : <Badge value="pass" label="ok" />) },
            { label: "Entry", render: (m) => [m.has_precert && "precert", m.has_final && "final"].filter(Boolean).join(" + ") },
            { label: "Logs", sort: "log_count", render: (m) => m.log_count, class: "num" },
            { label: "Matched", sort: "matched_at", render: (m) => <Time iso={m.matched_at} /> },
          ]}
        />
      </Section>
    </>
  );
}

function TyposquatTab() {
  const [fState, setFState] = useTableState({ sortBy: "pattern", pageSize: 10 });
  const f = useResource(() => get<{ filters: CtFilter[]; total: number }>("/api/ct-log/typosquatting/filters", { ...pagePageSize(fState), ...sortQuery(fState) }), [fState]);
  const [state, setState] = useTableState({ sortBy: "detected_at", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get<{ matches: TyposquatMatch[]; total: number }>("/api/ct-log/typosquatting/matches", { ...pagePageSize(state), ...sortQuery(state) }), [state]);
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

interface Proposal {
  id: number;
  kind: "dns" | "certs";
  hostname: string;
  filter_id: number;
  source_sha256: string;
  status: "proposed" | "accepted" | "dismissed";
  created_at: string;
  decided_at: string | null;
}

function ProposalsTab() {
  const s = useSession();
  const [status, setStatus] = useState("proposed");
  const [kind, setKind] = useState("");
  const [state, setState] = useTableState({ sortBy: "created_at", pageSize: 20 });
  const r = useResource(() => get<{ proposals: Proposal[]; total: number }>("/api/ct-log/proposals", { ...pagePageSize(state), status, kind }), [state, status, kind]);
  const [err, setErr] = useState<any>();
  const canDecide = s.can("ct-log:update_monitoring");
  return (
    <Section title="Feed proposals">
      <p class="muted">Names seen in matching certificates, proposed for DNS or certificate monitoring by filters with a feed turned on.</p>
      <div class="filters-row">
        <label class="inline">
          Status
          <select value={status} onChange={(e) => (setStatus((e.target as HTMLSelectElement).value), setState({ page: 1 }))}>
            <option value="proposed">Proposed</option>
            <option value="accepted">Accepted</option>
            <option value="dismissed">Dismissed</option>
          </select>
        </label>
        <label class="inline">
          Kind
          <select value={kind} onChange={(e) => (setKind((e.target as HTMLSelectElement).value), setState({ page: 1 }))}>
            <option value="">All</option>
            <option value="dns">DNS</option>
            <option value="certs">Certificates</option>
          </select>
        </label>
      </div>
      <ErrorBox error={err} />
      <DataTable
        caption="Feed proposals"
        state={state}
        onState={setState}
        total={r.data?.total}
        rows={r.data?.proposals}
        loading={r.loading}
        error={r.error}
        rowKey={(p) => p.id}
        empty={<p>No {status} proposals.</p>}
        columns={[
          { label: "Hostname", render: (p) => <span class="mono">{p.hostname}</span> },
          { label: "For", render: (p) => (p.kind === "dns" ? "DNS monitoring" : "Certificate monitoring") },
          { label: "Seen in", render: (p) => <a href={`/ct/matches/${p.source_sha256}`}>certificate {p.source_sha256.slice(0, 12)}…</a> },
          { label: "Status", render: (p) => <Badge value={p.status} /> },
          { label: "Proposed", render: (p) => <Time iso={p.created_at} /> },
          ...(canDecide && status === "proposed"
            ? [
                {
                  label: "Decision",
                  render: (p: Proposal) => (
                    <span class="row-actions">
                      <ActionButton label={`Accept ${p.hostname}`} onError={setErr} onClick={async () => (await post(`/api/ct-log/proposals/${p.id}/accept`), r.reload())}>
                        Accept
                      </ActionButton>
                      <ActionButton label={`Dismiss ${p.hostname}`} onError={setErr} onClick={async () => (await post(`/api/ct-log/proposals/${p.id}/dismiss`), r.reload())}>
                        Dismiss
                      </ActionButton>
                    </span>
                  ),
                },
              ]
            : []),
        ]}
      />
    </Section>
  );
}

interface CertFields {
  subject: string;
  issuer: string;
  dns_names: string[];
  sha256: string;
  serial: string;
  not_before: string;
  not_after: string;
  signature_algorithm: string;
  key_algorithm: string;
  key_size?: number;
  is_precert: boolean;
  log_name: string;
  log_index: number;
  aia_issuing: string[];
  ocsp_servers: string[];
  scts: { log_id: string; timestamp: number; version: number; hash_algorithm: string; signature_algorithm: string }[];
}

interface Occurrence {
  log_name: string;
  log_id: string;
  log_index: number;
  sha256: string;
  is_precert: boolean;
  observed_at: string;
}

export function CertificateDetail({ cert }: { cert: CertFields }) {
  return (
    <Section title="Certificate">
      <KeyValues
        items={[
          ["Subject", <span class="mono">{cert.subject}</span>],
          ["Issuer", cert.issuer],
          ["Names (SAN)", <Chips items={cert.dns_names} label="Subject alternative names" />],
          ["Valid from", <Time iso={cert.not_before} />],
          ["Valid until", <Time iso={cert.not_after} />],
          ["Serial", <span class="mono small">{cert.serial}</span>],
          ["SHA-256", <span class="mono small break">{cert.sha256}</span>],
          ["Key", `${cert.key_algorithm}${cert.key_size ? ` ${cert.key_size} bits` : ""}`],
          ["Signature", cert.signature_algorithm],
          ["Entry", cert.is_precert ? "precertificate" : "final certificate"],
          ["CA issuers (AIA)", <Chips items={cert.aia_issuing} />],
          ["OCSP", <Chips items={cert.ocsp_servers} />],
          ["SCTs", cert.scts.length ? `${cert.scts.length} embedded` : "none"],
        ]}
      />
    </Section>
  );
}

function Occurrences({ rows }: { rows: Occurrence[] }) {
  return (
    <Section title="Seen in CT logs">
      <DataTable
        caption="Log occurrences"
        rows={rows}
        rowKey={(o) => `${o.log_id}:${o.log_index}`}
        empty={<p>No occurrence recorded.</p>}
        columns={[
          { label: "Log", render: (o) => o.log_name },
          { label: "Index", render: (o) => o.log_index, class: "num" },
          { label: "Entry", render: (o) => (o.is_precert ? "precertificate" : "final") },
          { label: "Observed", render: (o) => <Time iso={o.observed_at} /> },
        ]}
      />
    </Section>
  );
}

export function CtMatchPage({ sha256 }: { sha256: string }) {
  const r = useResource(() => get(`/api/ct-log/matches/${sha256}`), [sha256]);
  const m = r.data;
  const caa = m?.caa;
  const verdict = !caa ? null : caa.error ? "unknown" : !caa.has_records ? "no_records" : caa.authorized ? "authorized" : "violation";
  return (
    <div>
      <p class="crumbs">
        <a href="/ct?tab=matches">Certificate Transparency</a> ›
      </p>
      <PageHeader title={m ? m.certificate_domain : "Certificate match"} />
      <ErrorBox error={r.error} />
      {r.loading && !m && <div class="loading-bar" role="progressbar" aria-label="Loading the match" />}
      {m && (
        <>
          <Section title="Where it is deployed">
            <MatchDeployments sha256={m.sha256} />
          </Section>
          <Section title="CAA verdict">
            <p data-testid="caa-verdict">
              {verdict === "violation" && (
                <>
                  <Badge value="fail" label="CAA violation" /> The domain's CAA records do not authorize this certificate's issuer: a potential policy violation.
                </>
              )}
              {verdict === "authorized" && (
                <>
                  <Badge value="pass" label="authorized" /> The issuer is allowed by the domain's CAA records.
                </>
              )}
              {verdict === "no_records" && (
                <>
                  <Badge value="unknown" label="no CAA records" /> The domain publishes no CAA records: any CA may issue.
                </>
              )}
              {verdict === "unknown" && (
                <>
                  <Badge value="unknown" label="not checked" /> The CAA lookup failed: {caa.error}
                </>
              )}
            </p>
            <KeyValues
              items={[
                ["Records", <Chips items={caa.records} />],
                ["Names checked", <Chips items={caa.checked_names} />],
                ["Issuer as CAA names", <Chips items={caa.issuer_candidates} />],
                ["Evaluated", <Time iso={caa.evaluated_at} />],
              ]}
            />
          </Section>
          <Section title="Matched filters">
            <ul>
              {m.filters.map((f: any) => (
                <li>
                  <span class="mono">{f.pattern}</span> ({f.match_type}): {f.matched_names.join(", ")}
                </li>
              ))}
            </ul>
          </Section>
          <CertificateDetail cert={m.cert} />
          <Occurrences rows={m.occurrences} />
        </>
      )}
    </div>
  );
}

export function TyposquatMatchPage({ sha256 }: { sha256: string }) {
  const loc = useLocation();
  const filterId = loc.query.get("filter_id") ?? "";
  const candidate = loc.query.get("candidate_domain") ?? "";
  const r = useResource(() => get(`/api/ct-log/typosquatting/matches/${sha256}`, { filter_id: filterId, candidate_domain: candidate }), [sha256, filterId, candidate]);
  const m = r.data;
  return (
    <div>
      <p class="crumbs">
        <a href="/ct?tab=typosquatting">Certificate Transparency</a> ›
      </p>
      <PageHeader title={m ? `Lookalike: ${m.candidate_domain}` : "Lookalike domain"} />
      <ErrorBox error={r.error} />
      {m && (
        <>
          <Section title="Why it looks like your domain">
            <KeyValues
              items={[
                ["Protected filter", <span class="mono">{m.filter_pattern}</span>],
                ["Candidate domain", <span class="mono">{m.candidate_domain}</span>],
                ["Name on the certificate", <span class="mono">{m.certificate_name}</span>],
                ["Evidence", <Chips items={m.evidence.map((e: string) => e.replace(/_/g, " "))} label="Evidence" />],
                ["Edit distance", m.edit_distance ?? "—"],
                ["First detected", <Time iso={m.detected_at} />],
                ["Last seen", <Time iso={m.last_seen_at} />],
              ]}
            />
          </Section>
          <CertificateDetail cert={m.cert} />
          <Occurrences rows={m.occurrences} />
        </>
      )}
    </div>
  );
}


/** One monitored log as GET /api/ct-log/logs reports it (schema CtLogsResponse). */
interface CtLogStatus {
  log_id: string;
  description: string;
  operator: string;
  protocol: string;
  url: string;
  /** The log's state in the log list (usable, readonly, ...), not whether it could be read. */
  state: string;
  ingestion: "not_started" | "up_to_date" | "catching_up" | "backing_off";
  tree_size: number | null;
  verified_position: number | null;
  lag_entries: number | null;
  consecutive_failures: number;
  next_retry_at: string | null;
  collection: Collection;
}

interface CtLogsResponse {
  log_list: { source: "fetched" | "bundled"; url: string; fetched_at: string; version: string; log_list_timestamp: string; error: { class: CollectionErrorClass; message: string } | null };
  summary: { monitored: number; ok: number; failing: number; pending: number; relied_upon: boolean; last_success_at: string | null };
  logs: CtLogStatus[];
}

/** Failing logs first, then those not read yet, then the ones read. */
const STATE_ORDER: Record<Collection["state"], number> = { failing: 0, pending: 1, ok: 2, paused: 3 };
const LOG_SORT: Record<string, (l: CtLogStatus) => string | number> = {
  description: (l) => l.description.toLowerCase(),
  collection: (l) => STATE_ORDER[l.collection.state],
  consecutive_failures: (l) => l.consecutive_failures,
  next_attempt_at: (l) => l.collection.next_attempt_at ?? "",
  verified_position: (l) => l.verified_position ?? -1,
  state: (l) => l.state,
};

/**
 * What the organization should know about the logs as a whole, said once above the
 * table: the log list in use (fetched, or the bundled copy and why) and how many logs
 * can be read, and what that means for its filters when none or only some can.
 */
function LogsSummary({ body }: { body: CtLogsResponse }) {
  const { log_list: list, summary } = body;
  const unread = summary.failing + summary.pending;
  return (
    <div data-testid="ct-logs-summary">
      {list.source === "bundled" ? (
        <Notice kind="warn">
          Using the copy of the CT log list shipped with the service (version {list.version}): the signed list could not be had
          {list.error ? (
            <>
              : <Badge value={list.error.class} tone="bad" label={ERROR_CLASS_LABEL[list.error.class]} /> {list.error.message}
            </>
          ) : null}
          . Last tried <Time iso={list.fetched_at} />, tried again every hour.
        </Notice>
      ) : (
        <p class="small muted">
          Signed log list version {list.version}, fetched <Time iso={list.fetched_at} /> from {list.url}
          {list.error && <> (the latest refresh failed: {list.error.message}; the list fetched before is used)</>}.
        </p>
      )}
      <p>
        <strong>
          {summary.ok} of {summary.monitored} logs read
        </strong>
        {summary.failing > 0 && <>, {summary.failing} failing</>}
        {summary.pending > 0 && <>, {summary.pending} not read yet</>}
        {summary.last_success_at ? (
          <>
            ; last verified read <Time iso={summary.last_success_at} />
          </>
        ) : (
          <>; none has been read yet</>
        )}
        .
      </p>
      {summary.relied_upon && unread > 0 && (
        <Notice kind="warn">
          {summary.ok === 0
            ? "No CT log can be read: new certificates for your filters cannot be seen until one is read again."
            : `${unread} of ${summary.monitored} logs cannot be read now: a certificate logged only in them is not seen until they are read again.`}
        </Notice>
      )}
    </div>
  );
}

/** The CT logs the service reads (GET /api/ct-log/logs): per log, whether it could be read, why not, and when it is tried again. */
function LogsTab() {
  const [state, setState] = useTableState({ sortBy: "collection", pageSize: 20 });
  const r = useResource(() => get<CtLogsResponse>("/api/ct-log/logs"), []);
  const rows = r.data?.logs ?? [];
  const key = LOG_SORT[state.sortBy] ?? LOG_SORT.description;
  const sorted = [...rows].sort((a, b) => {
    const va = key(a);
    const vb = key(b);
    const c = typeof va === "number" && typeof vb === "number" ? va - vb : String(va).localeCompare(String(vb));
    return (state.sortOrder === "asc" ? c : -c) || a.description.localeCompare(b.description);
  });
  return (
    <Section title="CT logs read by the service">
      {r.data && <LogsSummary body={r.data} />}
      <DataTable
        caption="CT logs"
        state={state}
        onState={setState}
        total={rows.length}
        rows={r.data ? sorted.slice((state.page - 1) * state.pageSize, state.page * state.pageSize) : undefined}
        loading={r.loading}
        error={r.error}
        rowKey={(x) => x.log_id}
        empty={<p>No CT log is being read.</p>}
        columns={[
          {
            label: "Log",
            sort: "description",
            render: (x) => (
              <>
                <strong class="wrap">{x.description}</strong>
                <div class="small muted wrap">
                  {x.operator} · {x.protocol === "static-ct" ? "static-ct-api" : "RFC 6962"} · {x.url}
                </div>
              </>
            ),
          },
          { label: "Collection", sort: "collection", render: (x) => <CollectionBadge collection={x.collection} /> },
          { label: "Failures in a row", sort: "consecutive_failures", class: "num", render: (x) => x.consecutive_failures },
          {
            label: "Next attempt",
            sort: "next_attempt_at",
            render: (x) => (
              <span class="small">
                {x.next_retry_at ? "retry " : ""}
                <Time iso={x.collection.next_attempt_at} />
              </span>
            ),
          },
          {
            label: "Verified entries",
            sort: "verified_position",
            class: "num",
            render: (x) =>
              x.verified_position === null ? (
                <span class="muted">—</span>
              ) : (
                <>
                  {x.verified_position.toLocaleString()}
                  {x.lag_entries ? <div class="small muted">{x.lag_entries.toLocaleString()} behind</div> : null}
                </>
              ),
          },
          { label: "In the log list", sort: "state", render: (x) => <Badge value={x.state} tone={/usable|qualified|readonly/.test(x.state) ? "good" : "neutral"} /> },
        ]}
      />
    </Section>
  );
}
