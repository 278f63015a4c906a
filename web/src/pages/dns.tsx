/**
 * DNS watcher: watched domains, their record sets, the history of
 * observed changes as a before/after diff, and the SPF, DMARC and DNSSEC state.
 */
import { useState } from "preact/hooks";
import { del, get, patch, post } from "../api/legacy";
import type { Schemas } from "../api";
import { useSession } from "../session";
import { CheckField, Form, SelectField, TextField, useForm } from "../ui/form";
import { limitOffset, sortQuery, useResource, useTableState } from "../ui/resource";
import { DataTable } from "../ui/table";
import { Time } from "../ui/time";
import { ActionButton, Badge, Dialog, ErrorBox, KeyValues, Notice, PageHeader, Section } from "../ui/widgets";
import { CollectionBadge, CollectionDetail, type Collection } from "../ui/collection";
import { EmailSecurityPanel, type EmailSecurity } from "./dns-email";

export interface DnsDomain {
  id: number;
  domain_name: string;
  enabled: boolean;
  notes: string;
  last_checked_at: string | null;
  last_check_status: "ok" | "partial" | "error" | null;
  last_check_detail: string | null;
  dnssec_status: string;
  collection: Collection;
  created_at: string;
}

interface RecordSet {
  id: number;
  name: string;
  type: string;
  values: string[] | null;
  rcode: string | null;
  last_error: string | null;
  last_changed_at: string | null;
  collection: Collection;
}

interface DomainDetail extends DnsDomain {
  records: RecordSet[];
  /** Every field but status and watched is null while status is unknown (never read). */
  spf: Schemas["SpfPolicy"];
  dmarc: Schemas["DmarcPolicy"];
  dnssec: { status: string; validated: boolean; error: string };
  email_checks: boolean;
  dkim_selectors: string[];
  email_security: EmailSecurity;
}

export interface ChangedRecord {
  name: string;
  type: string | null;
  old_values: string[];
  new_values: string[];
}

interface DnsChange extends ChangedRecord {
  id: number;
  observed_at: string;
  kind: "record" | "dnssec" | "spf" | "email";
  detail: string;
}

const RECORD_TYPES = ["A", "AAAA", "CNAME", "MX", "NS", "TXT", "CAA", "SOA", "DS", "DNSKEY", "TLSA"];

const DNSSEC_TONE: Record<string, string> = { validated: "good", insecure: "neutral", bogus: "bad", unknown: "neutral" };
const CHECK_TONE: Record<string, string> = { ok: "good", partial: "warn", error: "bad" };

export function DnsPage() {
  const s = useSession();
  const [state, setState] = useTableState({ sortBy: "domain_name", pageSize: 20 });
  const r = useResource(() => get<{ domains: DnsDomain[]; total: number }>("/api/dns-watcher/domains", { ...limitOffset(state), ...sortQuery(state) }), [state]);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
  const canCreate = s.can("dns-watcher:create_monitoring");
  const canUpdate = s.can("dns-watcher:update_monitoring");
  const canDelete = s.can("dns-watcher:delete_monitoring");
  return (
    <div>
      <PageHeader title="DNS">
        {canCreate && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            Watch a domain
          </button>
        )}
      </PageHeader>
      <Section title="Watched domains">
        {notice && <Notice kind="success">{notice}</Notice>}
        <ErrorBox error={err} />
        <DataTable
          caption="DNS domains"
          state={state}
          onState={setState}
          total={r.data?.total}
          rows={r.data?.domains}
          loading={r.loading}
          error={r.error}
          rowKey={(d) => d.id}
          empty={<p>No domain is watched. A watched domain has its A, AAAA, MX, NS, TXT, CAA and DMARC records resolved on schedule, and every change recorded.</p>}
          columns={[
            { label: "Domain", sort: "domain_name", render: (d) => <a class="mono" href={`/dns/${d.id}`}>{d.domain_name}</a> },
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
                          await patch(`/api/dns-watcher/domains/${d.id}`, { enabled: (e.target as HTMLInputElement).checked });
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
            { label: "DNSSEC", sort: "dnssec_status", render: (d) => <Badge value={d.dnssec_status} tone={DNSSEC_TONE[d.dnssec_status]} /> },
            {
              label: "Lookups",
              sort: "last_checked_at",
              render: (d) => (
                <>
                  <CollectionBadge collection={d.collection} />
                  {d.collection.state === "ok" && d.last_check_status === "partial" && <span class="small collection-error">some record sets failed: see the domain</span>}
                </>
              ),
            },
            { label: "Notes", render: (d) => d.notes || <span class="muted">—</span> },
            { label: "Added", sort: "created_at", render: (d) => <Time iso={d.created_at} date /> },
            ...(canDelete
              ? [
                  {
                    label: "Actions",
                    render: (d: DnsDomain) => (
                      <ActionButton class="danger" label={`Delete ${d.domain_name}`} confirm={`Stop watching ${d.domain_name}?`} onError={setErr} onClick={async () => (setNotice((await del(`/api/dns-watcher/domains/${d.id}`)).message), r.reload())}>
                        Delete
                      </ActionButton>
                    ),
                  },
                ]
              : []),
          ]}
        />
      </Section>
      <Dialog title="Watch a domain" open={creating} onClose={() => setCreating(false)}>
        {creating && <DomainForm onCancel={() => setCreating(false)} onDone={(m) => (setNotice(m), setCreating(false), r.reload())} />}
      </Dialog>
    </div>
  );
}

function DomainForm({ onDone, onCancel }: { onDone: (m: string) => void; onCancel: () => void }) {
  const form = useForm({ domain_name: "", notes: "", enabled: true, email_checks: false });
  return (
    <Form
      form={form}
      label="Watch a domain"
      submitLabel="Watch domain"
      onCancel={onCancel}
      onSubmit={async () => {
        let m = "";
        if (
          await form.submit(async (v) => {
            const r = await post("/api/dns-watcher/domains", v);
            m = `${r.message ?? "Domain added."}${typeof r.quota_remaining === "number" ? ` ${r.quota_remaining} domains left on your plan.` : ""}`;
          })
        )
          onDone(m);
      }}
    >
      <TextField form={form} name="domain_name" label="Domain name" required />
      <TextField form={form} name="notes" label="Notes" />
      <CheckField form={form} name="enabled" label="Enabled" />
      <CheckField form={form} name="email_checks" label="Watch mail transport security (MTA-STS, TLS reporting, DANE, DKIM, BIMI)" />
    </Form>
  );
}

/** One change as a before/after table: each value removed in red, added in green. */
export function RecordDiff({ records }: { records: ChangedRecord[] }) {
  if (!records?.length) return <span class="muted">no record changed</span>;
  return (
    <table class="diff compact">
      <thead>
        <tr>
          <th scope="col">Record</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {records.map((r) => {
          const oldSet = new Set(r.old_values);
          const newSet = new Set(r.new_values);
          return (
            <tr>
              <th scope="row" class="mono small">
                {r.name} {r.type ?? ""}
              </th>
              <td class="mono small">
                {r.old_values.length === 0 ? <span class="muted">absent</span> : null}
                {r.old_values.map((v) => (
                  <div class={newSet.has(v) ? "" : "removed-val"}>
                    {newSet.has(v) ? "" : <span class="sr-only">removed: </span>}
                    {v}
                  </div>
                ))}
              </td>
              <td class="mono small">
                {r.new_values.length === 0 ? <span class="muted">absent</span> : null}
                {r.new_values.map((v) => (
                  <div class={oldSet.has(v) ? "" : "added-val"}>
                    {oldSet.has(v) ? "" : <span class="sr-only">added: </span>}
                    {v}
                  </div>
                ))}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/**
 * What is known of a policy that was not read: never "no record published" unless a
 * lookup said so. `source` is the record set it is read from (apex TXT, _dmarc TXT).
 */
function UnknownPolicy({ watched, source, what }: { watched: boolean; source: RecordSet | undefined; what: string }) {
  if (!watched || !source) return <span class="muted">unknown: {what} is not watched</span>;
  const c = source.collection;
  if (c.error) {
    return (
      <span>
        <Badge value="unknown" tone="neutral" /> <span class="small">{c.state === "failing" ? <>lookups of {what} failing since <Time iso={c.failing_since} /></> : <>the lookup of {what} failed</>}: {c.error.message}</span>
      </span>
    );
  }
  return (
    <span>
      <Badge value="unknown" tone="neutral" /> <span class="small muted">{what} not resolved yet</span>
    </span>
  );
}

/** A policy shown while the lookups of its record set fail: as last observed, and since when they fail. */
function AsLastObserved({ source }: { source: RecordSet | undefined }) {
  const c = source?.collection;
  if (!c || c.state === "ok" || !c.error) return null;
  return (
    <div class="small collection-error">
      as last observed <Time iso={c.last_success_at} />; lookups failing since <Time iso={c.failing_since} />: {c.error.message}
    </div>
  );
}

/**
 * A policy whose status is not unknown: the API fills every field once it was read, so
 * they are read as present. Never used before the unknown case returned: a null would
 * otherwise be drawn as "0 DNS lookups" or "policy on 100 %".
 */
type Read<T> = { [K in keyof T]: NonNullable<T[K]> };
const asRead = <T,>(policy: T) => policy as Read<T>;

function SpfState({ spf: policy, source, domain }: { spf: DomainDetail["spf"]; source: RecordSet | undefined; domain: string }) {
  if (policy.status === "unknown") return <UnknownPolicy watched={policy.watched} source={source} what={`${domain} TXT`} />;
  const spf = asRead(policy);
  if (spf.status === "none") {
    return (
      <span>
        <span class="muted">no SPF record published</span>
        <AsLastObserved source={source} />
      </span>
    );
  }
  return (
    <span>
      <code class="break">{spf.record}</code>{" "}
      <Badge value={spf.allows_all ? "fail" : spf.status === "ok" ? "pass" : "warn"} tone={spf.allows_all ? "bad" : spf.status === "ok" ? "good" : "warn"} label={spf.allows_all ? `allows all senders${spf.allows_all_via ? ` (via ${spf.allows_all_via})` : ""}` : spf.status} />{" "}
      <span class="small muted">
        all: {spf.all || "none"}, {spf.lookup_count} DNS lookups
      </span>
      {spf.errors.length > 0 && <div class="small">{spf.errors.join("; ")}</div>}
      <AsLastObserved source={source} />
    </span>
  );
}

function DmarcState({ dmarc: policy, source, domain }: { dmarc: DomainDetail["dmarc"]; source: RecordSet | undefined; domain: string }) {
  if (policy.status === "unknown") return <UnknownPolicy watched={policy.watched} source={source} what={`_dmarc.${domain} TXT`} />;
  const dmarc = asRead(policy);
  if (dmarc.status === "none") {
    return (
      <span>
        <span class="muted">no DMARC record published</span>
        <AsLastObserved source={source} />
      </span>
    );
  }
  const tone = !dmarc.valid ? "bad" : dmarc.p === "reject" ? "good" : dmarc.p === "quarantine" ? "info" : "warn";
  return (
    <span>
      <code class="break">{dmarc.record}</code> <Badge value={null} tone={tone} label={dmarc.valid ? `policy ${dmarc.p}${dmarc.pct < 100 ? ` on ${dmarc.pct} %` : ""}` : "invalid"} />
      {dmarc.rua.length > 0 && <span class="small muted"> reports to {dmarc.rua.join(", ")}</span>}
      {dmarc.errors.length > 0 && <div class="small">{dmarc.errors.join("; ")}</div>}
      <AsLastObserved source={source} />
    </span>
  );
}

export function DnsDomainPage({ id }: { id: string }) {
  const s = useSession();
  const domain = useResource(() => get<DomainDetail>(`/api/dns-watcher/domains/${id}`), [id]);
  const [hState, setHState] = useTableState({ sortBy: "observed_at", sortOrder: "desc", pageSize: 20 });
  const history = useResource(() => get<{ changes: DnsChange[]; total: number }>(`/api/dns-watcher/domains/${id}/history`, limitOffset(hState)), [id, hState]);
  const form = useForm({ name: "", type: "A" });
  const [err, setErr] = useState<any>();
  const canCreate = s.can("dns-watcher:create_monitoring");
  const canDelete = s.can("dns-watcher:delete_monitoring");
  const d = domain.data;
  const txt = (name: string) => d?.records.find((r) => r.type === "TXT" && r.name === name);
  return (
    <div>
      <p class="crumbs">
        <a href="/dns">DNS</a> ›
      </p>
      <PageHeader title={d?.domain_name ?? "Domain"} />
      <ErrorBox error={domain.error} />
      <ErrorBox error={err} />
      {d && (
        <Section title="Mail and signing policy">
          <KeyValues
            items={[
              ["SPF", <SpfState spf={d.spf} source={txt(d.domain_name)} domain={d.domain_name} />],
              ["DMARC", <DmarcState dmarc={d.dmarc} source={txt(`_dmarc.${d.domain_name}`)} domain={d.domain_name} />],
              ["DNSSEC", <><Badge value={d.dnssec.status} tone={DNSSEC_TONE[d.dnssec.status]} label={d.dnssec.status === "unknown" ? "unknown: not resolved yet" : undefined} /> {d.dnssec.error && <span class="small">{d.dnssec.error}</span>}</>],
            ]}
          />
        </Section>
      )}
      {d && (
        <EmailSecurityPanel
          domainId={d.id}
          domain={d.domain_name}
          email={d.email_security}
          selectors={d.dkim_selectors}
          canUpdate={s.can("dns-watcher:update_monitoring")}
          onChanged={() => domain.reload()}
          onError={setErr}
        />
      )}
      {d && (
        <Section title="Lookups">
          <CollectionDetail collection={d.collection} what="DNS lookups" />
          {/* When nothing resolved the record sets below say why; when some did, this names the others. */}
          {d.last_check_status === "partial" && d.last_check_detail && (
            <p class="small">
              <Badge value={d.last_check_status} tone={CHECK_TONE[d.last_check_status ?? ""]} /> some lookups of the last run failed: {d.last_check_detail}
            </p>
          )}
        </Section>
      )}
      <Section title="Watched record sets">
        <DataTable
          caption="Record sets"
          rows={d?.records}
          loading={domain.loading}
          rowKey={(x) => x.id}
          empty={<p>No record set is watched.</p>}
          columns={[
            { label: "Name", render: (x) => <span class="mono wrap">{x.name}</span> },
            { label: "Type", render: (x) => x.type },
            {
              label: "Current values",
              render: (x) =>
                x.values === null ? <span class="muted">not resolved yet</span> : x.values.length === 0 ? <span class="muted">none ({x.rcode ?? "NODATA"})</span> : x.values.map((v) => <div class="mono small wrap">{v}</div>),
            },
            { label: "Last change", render: (x) => <Time iso={x.last_changed_at} /> },
            { label: "Lookups", render: (x) => <CollectionBadge collection={x.collection} /> },
            ...(canDelete
              ? [{ label: "Actions", render: (x: RecordSet) => <ActionButton class="danger" label={`Remove ${x.name} ${x.type}`} onError={setErr} onClick={async () => (await del(`/api/dns-watcher/domains/${id}/records/${x.id}`), domain.reload())}>Remove</ActionButton> }]
              : []),
          ]}
        />
        {canCreate && (
          <Form
            form={form}
            class="form inline-form"
            label="Watch a record set"
            submitLabel="Watch record set"
            onSubmit={async () => {
              if (await form.submit((v) => post(`/api/dns-watcher/domains/${id}/records`, v))) {
                form.reset();
                domain.reload();
              }
            }}
          >
            <TextField form={form} name="name" label="Name" hint={`@ or a name below ${d?.domain_name ?? "the domain"}`} required />
            <SelectField form={form} name="type" label="Type" options={RECORD_TYPES.map((t) => ({ value: t, label: t }))} />
          </Form>
        )}
      </Section>
      <Section title="History of changes">
        <DataTable
          caption="DNS changes"
          state={hState}
          onState={setHState}
          total={history.data?.total}
          rows={history.data?.changes}
          loading={history.loading}
          error={history.error}
          rowKey={(x) => x.id}
          empty={<p>No change observed since the domain is watched.</p>}
          columns={[
            { label: "Observed", render: (x) => <Time iso={x.observed_at} /> },
            {
              label: "Change",
              render: (x) =>
                x.kind === "dnssec" ? (
                  <span>DNSSEC {x.old_values.join(", ") || "—"} → {x.new_values.join(", ") || "—"}</span>
                ) : x.kind === "email" ? (
                  <span>
                    <Badge value="regression" tone="bad" /> <span class="mono wrap">{x.name}</span>
                  </span>
                ) : (
                  <RecordDiff records={[x]} />
                ),
            },
            { label: "Verdict", render: (x) => <span class="small">{x.detail}</span> },
          ]}
        />
      </Section>
    </div>
  );
}
