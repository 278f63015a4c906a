/**
 * DNS watcher: watched domains, their record sets, the history of
 * observed changes as a before/after diff, and the SPF, DMARC and DNSSEC state.
 */
import { useState } from "preact/hooks";
import { del, get, patch, post, type ApiError, type QueryOf, type Schemas } from "../../api";
import { useSession } from "../../session";
import { CollectionBadge } from "../../ui/collection";
import { CheckField, Form, TextField, useForm } from "../../ui/form";
import { limitOffset, sortQuery, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { ActionButton, Badge, Dialog, EnabledSwitch, ErrorBox, Notice, PageHeader, Section } from "../../ui/widgets";
import { DNSSEC_TONE } from "./tones";

export { DnsDomainPage } from "./domain";

type DnsDomain = Schemas["DnsDomain"];
const SORTS: readonly NonNullable<QueryOf<"/api/dns-watcher/domains">["sort_by"]>[] = ["domain_name", "enabled", "last_checked_at", "dnssec_status", "created_at"];

export function DnsPage() {
  const s = useSession();
  const [state, setState] = useTableState({ sortBy: "domain_name", pageSize: 20 });
  const r = useResource(() => get("/api/dns-watcher/domains", { params: { query: { ...limitOffset(state), ...sortQuery(state, SORTS) } } }), [state]);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
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
              render: (d) => (
                <EnabledSwitch
                  name={d.domain_name}
                  enabled={d.enabled}
                  canUpdate={canUpdate}
                  save={(enabled) => patch("/api/dns-watcher/domains/{domain_id}", { params: { path: { domain_id: d.id } }, body: { enabled } })}
                  onError={setErr}
                  onDone={r.reload}
                />
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
                      <ActionButton class="danger" label={`Delete ${d.domain_name}`} confirm={`Stop watching ${d.domain_name}?`} onError={setErr} onClick={async () => (setNotice((await del("/api/dns-watcher/domains/{domain_id}", { params: { path: { domain_id: d.id } } })).message), r.reload())}>
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
            const r = await post("/api/dns-watcher/domains", { body: v });
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
