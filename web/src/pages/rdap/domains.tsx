/** The RDAP page's Domains tab: the monitored domains with days until expiry; added, edited, switched on and off and deleted here. */
import { useState } from "preact/hooks";
import { del, get, patch, post, type ApiError, type QueryOf, type Schemas } from "../../api";
import { useSession } from "../../session";
import { CollectionBadge } from "../../ui/collection";
import { CheckField, Form, TextField, useForm } from "../../ui/form";
import { limitOffset, sortQuery, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { ActionButton, Dialog, EnabledSwitch, ErrorBox, Notice, Section } from "../../ui/widgets";
import { ExpiryDays, rdapFacts } from "./facts";

type RdapMonitor = Schemas["RdapMonitor"];
const SORTS: readonly NonNullable<QueryOf<"/api/rdap/domains">["sort_by"]>[] = ["domain_name", "tld", "enabled", "last_checked_at", "created_at"];

const enc = encodeURIComponent;

/** Days until expiry of one domain, read from its latest snapshot. */
function LazyExpiry({ domain }: { domain: string }) {
  const r = useResource(() => get("/api/rdap/domains/{domain}/snapshot", { params: { path: { domain } } }), [domain]);
  if (r.error) return <span class="muted">{r.error.status === 404 ? "not collected yet" : "unknown"}</span>;
  if (!r.data) return <span class="muted">…</span>;
  return <ExpiryDays iso={rdapFacts(r.data).expiry} />;
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
          if (id) m = (await patch("/api/rdap/domains/{monitor_id}", { params: { path: { monitor_id: id } }, body: { notes: v.notes, enabled: v.enabled } })).message;
          else {
            const r = await post("/api/rdap/domains", { body: v });
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

export function DomainsTab() {
  const s = useSession();
  const [state, setState] = useTableState({ sortBy: "domain_name", pageSize: 20 });
  const r = useResource(() => get("/api/rdap/domains", { params: { query: { ...limitOffset(state), ...sortQuery(state, SORTS) } } }), [state]);
  const [editing, setEditing] = useState<RdapMonitor | "new" | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
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
            render: (d) => (
              <EnabledSwitch
                name={d.domain_name}
                enabled={d.enabled}
                canUpdate={canUpdate}
                save={(enabled) => patch("/api/rdap/domains/{monitor_id}", { params: { path: { monitor_id: d.id } }, body: { enabled } })}
                onError={setErr}
                onDone={r.reload}
              />
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
                  render: (d: RdapMonitor) => (
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
                            setNotice((await del("/api/rdap/domains/{monitor_id}", { params: { path: { monitor_id: d.id } } })).message);
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
      <Dialog title={editing === "new" ? "Add a domain" : `Edit ${editing ? editing.domain_name : ""}`} open={editing !== null} onClose={() => setEditing(null)}>
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
