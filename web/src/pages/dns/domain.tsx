/** One watched domain: its mail and signing policy, mail transport security, lookups, record sets and history of changes. */
import { useState } from "preact/hooks";
import { del, get, post, type ApiError, type Schemas } from "../../api";
import { useSession } from "../../session";
import { CollectionBadge, CollectionDetail } from "../../ui/collection";
import { Form, SelectField, TextField, useForm } from "../../ui/form";
import { limitOffset, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { ActionButton, Badge, ErrorBox, KeyValues, PageHeader, Section } from "../../ui/widgets";
import { EmailSecurityPanel } from "./email";
import { DmarcState, SpfState } from "./policies";
import { RecordDiff } from "./record-diff";
import { CHECK_TONE, DNSSEC_TONE } from "./tones";

type RecordSet = Schemas["DnsRecordSet"];
type RecordType = RecordSet["type"];
/** The record types a record set can watch, in the order offered (every type of the API: a new one fails the type check here). */
const RECORD_TYPES = Object.keys({ A: 1, AAAA: 1, CNAME: 1, MX: 1, NS: 1, TXT: 1, CAA: 1, SOA: 1, DS: 1, DNSKEY: 1, TLSA: 1 } satisfies Record<RecordType, 1>) as RecordType[];

export function DnsDomainPage({ id }: { id: string }) {
  const s = useSession();
  const path = { domain_id: Number(id) };
  const domain = useResource(() => get("/api/dns-watcher/domains/{domain_id}", { params: { path } }), [id]);
  const [hState, setHState] = useTableState({ sortBy: "observed_at", sortOrder: "desc", pageSize: 20 });
  const history = useResource(() => get("/api/dns-watcher/domains/{domain_id}/history", { params: { path, query: limitOffset(hState) } }), [id, hState]);
  const form = useForm<{ name: string; type: RecordType }>({ name: "", type: "A" });
  const [err, setErr] = useState<ApiError>();
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
              <Badge value={d.last_check_status} tone={CHECK_TONE[d.last_check_status]} /> some lookups of the last run failed: {d.last_check_detail}
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
              ? [{ label: "Actions", render: (x: RecordSet) => <ActionButton class="danger" label={`Remove ${x.name} ${x.type}`} onError={setErr} onClick={async () => (await del("/api/dns-watcher/domains/{domain_id}/records/{record_id}", { params: { path: { ...path, record_id: x.id } } }), domain.reload())}>Remove</ActionButton> }]
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
              if (await form.submit((v) => post("/api/dns-watcher/domains/{domain_id}/records", { params: { path }, body: v }))) {
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
