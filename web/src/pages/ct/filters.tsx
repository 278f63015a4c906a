/** The CT filters tab: the organization's filters, created, edited, switched on and off and deleted in place. */
import { useState } from "preact/hooks";
import { del, get, post, put, type ApiError, type QueryOf, type Schemas } from "../../api";
import { useSession } from "../../session";
import { CheckField, Form, SelectField, TextField, useForm } from "../../ui/form";
import { pagePageSize, sortQuery, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { ActionButton, Badge, Dialog, EnabledSwitch, ErrorBox, Notice, Section } from "../../ui/widgets";

type CtFilter = Schemas["CtFilter"];
const SORTS: readonly NonNullable<QueryOf<"/api/ct-log/filters">["sort_by"]>[] = ["pattern", "match_type", "enabled", "description", "created_at", "updated_at"];

/** What the form edits: the filter's own settings (its authorized issuers are edited on the issuance policy). */
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
          if (id) message = (await put("/api/ct-log/filters/{filter_id}", { params: { path: { filter_id: id } }, body: v })).message;
          else {
            const r = await post("/api/ct-log/filters", { body: v });
            message = `${r.message} ${r.quota_remaining} filters left on your plan.`;
          }
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

export function FiltersTab() {
  const s = useSession();
  const [state, setState] = useTableState({ sortBy: "pattern", pageSize: 10 });
  const r = useResource(() => get("/api/ct-log/filters", { params: { query: { ...pagePageSize(state), ...sortQuery(state, SORTS) } } }), [state]);
  const [editing, setEditing] = useState<CtFilter | "new" | null>(null);
  const [notice, setNotice] = useState("");
  const [actionError, setActionError] = useState<ApiError>();
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
            render: (f) => (
              <EnabledSwitch
                name={f.pattern}
                enabled={f.enabled}
                canUpdate={canUpdate}
                save={async (enabled) => {
                  await put("/api/ct-log/filters/{filter_id}", { params: { path: { filter_id: f.id } }, body: { enabled } });
                  setActionError(undefined);
                }}
                onError={setActionError}
                onDone={r.reload}
              />
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
                            const res = await del("/api/ct-log/filters/{filter_id}", { params: { path: { filter_id: f.id } } });
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
