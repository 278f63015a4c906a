/**
 * RDAP: monitored domains with days until expiry, the changes across all domains,
 * and per domain the snapshot history and a side-by-side diff of any two snapshots.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { del, get, patch, post } from "../api/legacy";
import { navigate, setQuery, useLocation } from "../router";
import { useSession } from "../session";
import { CheckField, Form, TextField, useForm } from "../ui/form";
import { limitOffset, sortQuery, useResource, useTableState } from "../ui/resource";
import { DataTable } from "../ui/table";
import { daysUntil, Time } from "../ui/time";
import { ActionButton, Badge, Chips, Dialog, ErrorBox, KeyValues, Notice, PageHeader, Section, TabPanel, Tabs } from "../ui/widgets";
import { CollectionBadge, CollectionDetail, type Collection } from "../ui/collection";

interface RdapDomain {
  id: number;
  domain_name: string;
  tld: string;
  enabled: boolean;
  notes: string;
  last_checked_at: string | null;
  last_check_status: string | null;
  last_success_at: string | null;
  collection: Collection;
  created_at: string;
}

interface RdapChange {
  domain_name: string;
  tld: string;
  changed_at: string;
  previous_hash: string;
  current_hash: string;
  snapshot_id: string;
  previous_snapshot_id: string | null;
}

interface SnapshotSummary {
  id: string;
  timestamp: string;
  changed: boolean;
  hash: string;
}

const enc = encodeURIComponent;

/** Facts of an RFC 9083 domain object that people look for first. */
export function rdapFacts(snapshot: any) {
  const events: { eventAction?: string; eventDate?: string }[] = Array.isArray(snapshot?.events) ? snapshot.events : [];
  const expiry = events.find((e) => e.eventAction === "expiration")?.eventDate ?? null;
  const registered = events.find((e) => e.eventAction === "registration")?.eventDate ?? null;
  const entities: any[] = Array.isArray(snapshot?.entities) ? snapshot.entities : [];
  const registrarEntity = entities.find((e) => Array.isArray(e.roles) && e.roles.includes("registrar"));
  const vcardName = (e: any) => {
    const fn = e?.vcardArray?.[1]?.find?.((p: any[]) => p[0] === "fn");
    return fn ? String(fn[3]) : null;
  };
  return {
    expiry,
    registered,
    registrar: registrarEntity ? vcardName(registrarEntity) ?? registrarEntity.handle ?? null : null,
    status: Array.isArray(snapshot?.status) ? (snapshot.status as string[]) : [],
    nameservers: Array.isArray(snapshot?.nameservers) ? snapshot.nameservers.map((n: any) => String(n.ldhName ?? "").toLowerCase()) : [],
  };
}

function ExpiryDays({ iso }: { iso: string | null }) {
  const d = daysUntil(iso);
  if (d === null) return <span class="muted">unknown</span>;
  const tone = d < 0 ? "bad" : d <= 30 ? "warn" : "good";
  return (
    <span title={iso ?? ""}>
      <Badge value={null} tone={tone} label={d < 0 ? `expired ${-d} d ago` : `${d} days`} />
    </span>
  );
}

/** Days until expiry of one domain, read from its latest snapshot. */
function LazyExpiry({ domain }: { domain: string }) {
  const r = useResource(() => get(`/api/rdap/domains/${enc(domain)}/snapshot`), [domain]);
  if (r.error) return <span class="muted">{r.error.status === 404 ? "not collected yet" : "unknown"}</span>;
  if (!r.data) return <span class="muted">…</span>;
  return <ExpiryDays iso={rdapFacts(r.data).expiry} />;
}

const TABS = [
  { id: "domains", label: "Domains" },
  { id: "changes", label: "Changes" },
];

export function RdapPage() {
  const loc = useLocation();
  const tab = loc.query.get("tab") === "changes" ? "changes" : "domains";
  return (
    <div>
      <PageHeader title="RDAP registrations" />
      <Tabs label="RDAP sections" tabs={TABS} active={tab} onSelect={(id) => setQuery({ tab: id })} />
      <TabPanel id={tab}>{tab === "domains" ? <DomainsTab /> : <ChangesTab />}</TabPanel>
    </div>
  );
}

function DomainForm({ initial, id, onDone, onCancel }: { initial: { domain_name: string; notes: string; enabled: boolean }; id?: number; onDone: (m: string) => void; onCancel: () => void }) {
  const form = useForm(initial);
  return (
    <Form
      form={form}
      label={id ? "Edit domain" : "Add domain"}
      submitLabel={id ? "Save" : "Add domain"}
      onCancel={onCancel}
      onSubmit={async () => {
        let m = "";
        const ok = await form.submit(async (v) => {
          if (id) m = (await patch(`/api/rdap/domains/${id}`, { notes: v.notes, enabled: v.enabled })).message;
          else {
            const r = await post("/api/rdap/domains", v);
            m = `${r.message} ${r.quota_remaining} monitors left on your plan.`;
          }
        });
        if (ok) onDone(m);
      }}
    >
      {!id && <TextField form={form} name="domain_name" label="Domain name" required hint="A registered domain, e.g. example.com" />}
      <TextField form={form} name="notes" label="Notes" />
      <CheckField form={form} name="enabled" label="Enabled (polled on schedule)" />
    </Form>
  );
}

function DomainsTab() {
  const s = useSession();
  const [state, setState] = useTableState({ sortBy: "domain_name", pageSize: 20 });
  const r = useResource(() => get<{ domains: RdapDomain[]; total: number }>("/api/rdap/domains", { ...limitOffset(state), ...sortQuery(state) }), [state]);
  const [editing, setEditing] = useState<RdapDomain | "new" | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
  const canCreate = s.can("rdap:create_monitoring");
  const canUpdate = s.can("rdap:update_monitoring");
  const canDelete = s.can("rdap:delete_monitoring");
  return (
    <Section
      title="Monitored domains"
      actions={
        canCreate && (
          <button type="button" class="primary" onClick={() => setEditing("new")}>
            Add domain
          </button>
        )
      }
    >
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      <DataTable
        caption="RDAP domains"
        state={state}
        onState={setState}
        total={r.data?.total}
        rows={r.data?.domains}
        loading={r.loading}
        error={r.error}
        rowKey={(d) => d.id}
        empty={<p>No domain is monitored. Add one to follow its registrar, owner, nameservers, status and expiry.</p>}
        columns={[
          { label: "Domain", sort: "domain_name", render: (d) => <a href={`/rdap/${enc(d.domain_name)}`} class="mono">{d.domain_name}</a> },
          { label: "TLD", sort: "tld", render: (d) => d.tld },
          {
            label: "Enabled",
            sort: "enabled",
            render: (d) =>
              canUpdate ? (
                <label class="switch">
                  <input
                    type="checkbox"
                    checked={d.enabled}
                    aria-label={`${d.domain_name} enabled`}
                    onChange={async (e) => {
                      try {
                        await patch(`/api/rdap/domains/${d.id}`, { enabled: (e.target as HTMLInputElement).checked });
                      } catch (x) {
                        setErr(x);
                      }
                      r.reload();
                    }}
                  />
                  <span aria-hidden="true" />
                </label>
              ) : (
                <Badge value={d.enabled ? "active" : "disabled"} label={d.enabled ? "enabled" : "disabled"} />
              ),
          },
          { label: "Expires in", render: (d) => <LazyExpiry domain={d.domain_name} /> },
          { label: "Lookups", sort: "last_checked_at", render: (d) => <CollectionBadge collection={d.collection} /> },
          { label: "Notes", render: (d) => d.notes || <span class="muted">—</span> },
          { label: "Added", sort: "created_at", render: (d) => <Time iso={d.created_at} date /> },
          ...(canUpdate || canDelete
            ? [
                {
                  label: "Actions",
                  render: (d: RdapDomain) => (
                    <span class="row-actions">
                      {canUpdate && (
                        <button type="button" onClick={() => setEditing(d)} aria-label={`Edit ${d.domain_name}`}>
                          Edit
                        </button>
                      )}
                      {canDelete && (
                        <ActionButton
                          class="danger"
                          label={`Delete ${d.domain_name}`}
                          confirm={`Stop monitoring ${d.domain_name}?`}
                          onError={setErr}
                          onClick={async () => {
                            setNotice((await del(`/api/rdap/domains/${d.id}`)).message);
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
      <Dialog title={editing === "new" ? "Add a domain" : `Edit ${editing ? (editing as RdapDomain).domain_name : ""}`} open={editing !== null} onClose={() => setEditing(null)}>
        {editing !== null && (
          <DomainForm
            id={editing === "new" ? undefined : editing.id}
            initial={editing === "new" ? { domain_name: "", notes: "", enabled: true } : { domain_name: editing.domain_name, notes: editing.notes, enabled: editing.enabled }}
            onCancel={() => setEditing(null)}
            onDone={(m) => {
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

function ChangesTab() {
  const [state, setState] = useTableState({ sortBy: "changed_at", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get<{ changes: RdapChange[]; total: number }>("/api/rdap/changes", { ...limitOffset(state), ...sortQuery(state) }), [state]);
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

function show(v: unknown): string {
  if (v === undefined) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

interface Diff {
  from: SnapshotSummary;
  to: SnapshotSummary;
  changed: boolean;
  added: { path: string; value?: unknown }[];
  removed: { path: string; value?: unknown }[];
  modified: { path: string; from?: unknown; to?: unknown }[];
  summary: Record<string, any>;
}

function DiffView({ domain, from, to }: { domain: string; from: string; to: string }) {
  const r = useResource(() => get<Diff>(`/api/rdap/domains/${enc(domain)}/diff`, { from, to }), [domain, from, to]);
  const a = useResource(() => get(`/api/rdap/domains/${enc(domain)}/snapshot`, { snapshot_id: from }), [domain, from]);
  const b = useResource(() => get(`/api/rdap/domains/${enc(domain)}/snapshot`, { snapshot_id: to }), [domain, to]);
  const d = r.data;
  if (r.error) return <ErrorBox error={r.error} />;
  if (!d) return <div class="loading-bar" role="progressbar" aria-label="Comparing snapshots" />;
  const rows = [
    ...d.modified.map((m) => ({ path: m.path, before: show(m.from), after: show(m.to), kind: "modified" })),
    ...d.removed.map((m) => ({ path: m.path, before: show(m.value), after: "", kind: "removed" })),
    ...d.added.map((m) => ({ path: m.path, before: "", after: show(m.value), kind: "added" })),
  ].sort((x, y) => x.path.localeCompare(y.path));
  const s = d.summary ?? {};
  const who = (x: any) => (x ? [x.name, x.organization, x.handle, x.iana_id && `IANA ${x.iana_id}`].filter(Boolean).join(", ") || "—" : "—");
  return (
    <Section title="Difference between the two snapshots">
      {!d.changed && <Notice>The two snapshots are the same registration.</Notice>}
      {Object.keys(s).length > 0 && (
        <KeyValues
          items={[
            ...(s.registrar ? ([["Registrar", `${who(s.registrar.from)} → ${who(s.registrar.to)}`]] as [string, string][]) : []),
            ...(s.registrant ? ([["Registrant", `${who(s.registrant.from)} → ${who(s.registrant.to)}`]] as [string, string][]) : []),
            ...(s.nameservers ? ([["Nameservers", `added: ${s.nameservers.added.join(", ") || "none"}; removed: ${s.nameservers.removed.join(", ") || "none"}`]] as [string, string][]) : []),
            ...(s.status ? ([["Status", `added: ${s.status.added.join(", ") || "none"}; removed: ${s.status.removed.join(", ") || "none"}`]] as [string, string][]) : []),
            ...(s.expiration ? ([["Expiry", <><Time iso={s.expiration.from} date /> → <Time iso={s.expiration.to} date /></>]] as [string, any][]) : []),
          ]}
        />
      )}
      {rows.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Changed fields side by side">
          <table class="diff">
            <caption class="sr-only">Changed fields, before and after</caption>
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">
                  Before (<Time iso={d.from.timestamp} />)
                </th>
                <th scope="col">
                  After (<Time iso={d.to.timestamp} />)
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((x) => (
                <tr class={x.kind}>
                  <th scope="row" class="mono small">
                    {x.path}
                    <span class="sr-only"> ({x.kind})</span>
                  </th>
                  <td class="mono small before">{x.before || <span class="muted">absent</span>}</td>
                  <td class="mono small after">{x.after || <span class="muted">absent</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <details class="snapshots-side">
        <summary>Show both snapshots in full, side by side</summary>
        <div class="side-by-side">
          <pre tabIndex={0} aria-label="Earlier snapshot">{a.data ? JSON.stringify(a.data, null, 2) : "…"}</pre>
          <pre tabIndex={0} aria-label="Later snapshot">{b.data ? JSON.stringify(b.data, null, 2) : "…"}</pre>
        </div>
      </details>
    </Section>
  );
}

/** Why there is no registration to show: never looked up yet, or looked up and failing (with the reason and since when). */
function NoSnapshot({ collection: c }: { collection: Collection | null }) {
  if (c?.state === "paused") return <p class="muted">No snapshot: the monitor is disabled, nothing is looked up.</p>;
  if (c?.error) {
    return (
      <Notice kind="warn">
        {c.state === "failing" ? "Lookup failing since " : "First lookup failed at "}
        <Time iso={c.failing_since} />: {c.error.message}.{" "}
        {c.next_attempt_at ? <>Next attempt <Time iso={c.next_attempt_at} />.</> : "Tried again at the next scheduled run."}
      </Notice>
    );
  }
  return <p class="muted">No snapshot yet: the domain is looked up at the next scheduled run.</p>;
}

/**
 * Why the compare button is disabled, in words beside it (null: it is not). A snapshot is
 * stored only when the registration's content changes, so one snapshot means "not changed
 * since", and none means it was never read: said with the lookup state.
 */
function compareBlocked(
  history: { snapshots: SnapshotSummary[]; total: number } | undefined,
  failed: boolean,
  c: Collection | null,
  pickA: string | null,
  pickB: string | null,
): ComponentChildren | null {
  if (!history) return failed ? "The snapshot history could not be loaded (see the error above)." : "Loading the snapshot history.";
  if (history.total === 0) {
    if (c?.state === "paused") return "No snapshot to compare: the monitor is disabled, the registration is not looked up.";
    if (c?.error) {
      return (
        <>
          No snapshot to compare: the registration was never read; lookups failing since <Time iso={c.failing_since} /> ({c.error.message}).
        </>
      );
    }
    return "No snapshot yet: the registration was never read; it is looked up at the next scheduled run.";
  }
  if (history.total === 1) {
    const only = history.snapshots[0];
    return (
      <>
        Needs two snapshots; the only one was taken <Time iso={only?.timestamp} />
        {c?.last_success_at ? (
          <>
            , and the registration has not changed since (last read <Time iso={c.last_success_at} />)
          </>
        ) : null}
        . A new snapshot is stored when the registration changes.
      </>
    );
  }
  if (!pickA || !pickB) return "Pick a before and an after snapshot in the table.";
  if (pickA === pickB) return "Pick two different snapshots: before and after are the same one.";
  return null;
}

/** The compare button, with why it is disabled beside it (read with it by a screen reader). */
function CompareAction(p: {
  history: { snapshots: SnapshotSummary[]; total: number } | undefined;
  failed: boolean;
  collection: Collection | null;
  pickA: string | null;
  pickB: string | null;
  onCompare: (from: string, to: string) => void;
}) {
  const blocked = compareBlocked(p.history, p.failed, p.collection, p.pickA, p.pickB);
  return (
    <div class="compare-action">
      <button type="button" class="primary" disabled={blocked !== null} aria-describedby={blocked ? "compare-why" : undefined} onClick={() => p.pickA && p.pickB && p.onCompare(p.pickA, p.pickB)}>
        Compare the two snapshots
      </button>
      {blocked && (
        <span id="compare-why" class="small muted" data-testid="compare-why">
          {blocked}
        </span>
      )}
    </div>
  );
}

export function RdapDomainPage({ domain }: { domain: string }) {
  const loc = useLocation();
  const from = loc.query.get("from");
  const to = loc.query.get("to");
  const [state, setState] = useTableState({ sortBy: "timestamp", sortOrder: "desc", pageSize: 20 });
  const h = useResource(() => get<{ snapshots: SnapshotSummary[]; total: number }>(`/api/rdap/domains/${enc(domain)}/history`, limitOffset(state)), [domain, state]);
  const latest = useResource(() => get(`/api/rdap/domains/${enc(domain)}/snapshot`), [domain]);
  const monitor = useResource(() => get<{ domains: RdapDomain[] }>("/api/rdap/domains", { domain_name: domain, limit: 1 }), [domain]);
  const collection = monitor.data?.domains[0]?.collection ?? null;
  const [pickA, setPickA] = useState<string | null>(from);
  const [pickB, setPickB] = useState<string | null>(to);
  const facts = latest.data ? rdapFacts(latest.data) : null;
  return (
    <div>
      <p class="crumbs">
        <a href="/rdap">RDAP</a> ›
      </p>
      <PageHeader title={domain} />
      <Section title="Current registration">
        {latest.error && latest.error.status === 404 ? (
          <NoSnapshot collection={collection} />
        ) : (
          <ErrorBox error={latest.error} />
        )}
        {facts && collection && collection.state !== "ok" && collection.error && (
          <Notice kind="warn">
            Lookups failing since <Time iso={collection.failing_since} />: {collection.error.message}. What follows is the last snapshot, taken <Time iso={collection.last_success_at} />.
          </Notice>
        )}
        {facts && (
          <KeyValues
            items={[
              ["Expires", <>{facts.expiry ? <Time iso={facts.expiry} date /> : "unknown"} <ExpiryDays iso={facts.expiry} /></>],
              ["Registered", <Time iso={facts.registered} date />],
              ["Registrar", facts.registrar],
              ["Status", <Chips items={facts.status} label="Status" />],
              ["Nameservers", <Chips items={facts.nameservers} label="Nameservers" />],
            ]}
          />
        )}
      </Section>
      {collection && (
        <Section title="Lookups">
          <CollectionDetail collection={collection} what="RDAP lookups" />
        </Section>
      )}
      <Section title="Snapshot history">
        <p class="muted">Pick two snapshots and compare them side by side.</p>
        <DataTable
          caption="Snapshots"
          state={state}
          onState={setState}
          total={h.data?.total}
          rows={h.data?.snapshots}
          loading={h.loading}
          error={h.error}
          rowKey={(x) => x.id}
          empty={<p>No snapshot stored yet.</p>}
          columns={[
            { label: "Taken", render: (x) => <Time iso={x.timestamp} /> },
            { label: "Changed", render: (x) => (x.changed ? <Badge value="warn" tone="warn" label="changed" /> : <span class="muted">unchanged</span>) },
            { label: "Hash", render: (x) => <span class="mono small">{x.hash.slice(0, 16)}…</span> },
            {
              label: "Compare",
              render: (x) => (
                <span class="row-actions">
                  {/* Every row has a pair: the names say which snapshot each radio picks. */}
                  <label class="inline">
                    <input type="radio" name="snap-a" checked={pickA === x.id} onChange={() => setPickA(x.id)} /> before
                    <span class="sr-only">
                      : snapshot {x.id} of <Time iso={x.timestamp} />
                    </span>
                  </label>
                  <label class="inline">
                    <input type="radio" name="snap-b" checked={pickB === x.id} onChange={() => setPickB(x.id)} /> after
                    <span class="sr-only">
                      : snapshot {x.id} of <Time iso={x.timestamp} />
                    </span>
                  </label>
                </span>
              ),
            },
          ]}
        />
        <CompareAction history={h.data} failed={!!h.error} collection={collection} pickA={pickA} pickB={pickB} onCompare={(a, b) => navigate(`/rdap/${enc(domain)}?from=${enc(a)}&to=${enc(b)}`)} />
      </Section>
      {from && to && <DiffView domain={domain} from={from} to={to} />}
    </div>
  );
}
