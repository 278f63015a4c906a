/** Rule lists: named IP or domain lists that any module's rules read with in_list(). */
import { useState } from "preact/hooks";
import { del, get, post, type ApiError, type Schemas } from "../../api";
import { useSession } from "../../session";
import { Form, SelectField, TextArea, TextField, useForm } from "../../ui/form";
import { useResource, useTableState } from "../../ui/resource";
import { DataTable, localPage } from "../../ui/table";
import { Time } from "../../ui/time";
import { ActionButton, Dialog, ErrorBox, Notice, Section } from "../../ui/widgets";
import type { RuleList } from "./types";

export function ListsTab() {
  const s = useSession();
  const r = useResource(() => get("/api/lists"), []);
  const [state, setState] = useTableState({ sortBy: "name", pageSize: 20 });
  const [creating, setCreating] = useState(false);
  const [open, setOpen] = useState<RuleList | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
  const canManage = s.can("lists:manage_lists");
  return (
    <Section
      title="Rule lists"
      actions={
        canManage && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New list
          </button>
        )
      }
    >
      <p class="muted">
        Named IP or domain lists, used in any module's rules as <code>in_list(value, lists["name"])</code>.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      <DataTable
        caption="Rule lists"
        state={state}
        onState={setState}
        total={r.data?.lists.length}
        rows={r.data ? localPage(r.data.lists, state) : undefined}
        loading={r.loading}
        error={r.error}
        rowKey={(l) => l.id}
        empty={<p>No rule list.</p>}
        columns={[
          { label: "Name", sort: "name", render: (l) => <button type="button" class="link mono" onClick={() => setOpen(l)}>{l.name}</button> },
          { label: "Type", sort: "list_type", render: (l) => l.list_type },
          { label: "Entries", sort: "entry_count", render: (l) => `${l.entry_count} / ${l.entry_limit}`, class: "num" },
          { label: "Description", render: (l) => l.description || <span class="muted">—</span> },
          { label: "Updated", sort: "updated_at", render: (l) => <Time iso={l.updated_at} /> },
          ...(canManage
            ? [
                {
                  label: "Actions",
                  render: (l: RuleList) => (
                    <ActionButton class="danger" label={`Delete ${l.name}`} confirm={`Delete the list ${l.name}?`} onError={setErr} onClick={async () => (setNotice((await del("/api/lists/{list_id}", { params: { path: { list_id: l.id } } })).message), r.reload())}>
                      Delete
                    </ActionButton>
                  ),
                },
              ]
            : []),
        ]}
      />
      <Dialog title="New rule list" open={creating} onClose={() => setCreating(false)}>
        {creating && <ListForm onCancel={() => setCreating(false)} onDone={() => (setCreating(false), r.reload())} />}
      </Dialog>
      <Dialog title={open ? `List ${open.name}` : ""} open={open !== null} onClose={() => (setOpen(null), r.reload())} wide>
        {open && <ListEntries list={open} canManage={canManage} />}
      </Dialog>
    </Section>
  );
}

function ListForm({ onDone, onCancel }: { onDone: () => void; onCancel: () => void }) {
  const form = useForm<{ name: string; list_type: Schemas["CreateRuleList"]["list_type"]; description: string; entries: string }>({ name: "", list_type: "ip", description: "", entries: "" });
  return (
    <Form
      form={form}
      label="Rule list"
      submitLabel="Create list"
      onCancel={onCancel}
      onSubmit={async () => {
        if (await form.submit((v) => post("/api/lists", { body: { ...v, entries: v.entries.split(/[\s,]+/).filter(Boolean) } }))) onDone();
      }}
    >
      <TextField form={form} name="name" label="Name" hint="Lowercase letters, digits, _ and -. It cannot be changed later." required />
      <SelectField form={form} name="list_type" label="Type" options={[{ value: "ip", label: "IP addresses and networks" }, { value: "domain", label: "Domain names" }]} />
      <TextField form={form} name="description" label="Description" />
      <TextArea form={form} name="entries" label="Entries" hint="One per line." rows={5} mono />
    </Form>
  );
}

function ListEntries({ list, canManage }: { list: RuleList; canManage: boolean }) {
  const r = useResource(() => get("/api/lists/{list_id}", { params: { path: { list_id: list.id } } }), [list.id]);
  const form = useForm({ entries: "" });
  const [err, setErr] = useState<ApiError>();
  return (
    <div>
      <ErrorBox error={err} />
      <DataTable
        caption={`Entries of ${list.name}`}
        rows={r.data?.entries}
        loading={r.loading}
        error={r.error}
        rowKey={(e) => e.id}
        empty={<p>The list is empty.</p>}
        columns={[
          { label: "Value", render: (e) => <span class="mono">{e.value}</span> },
          { label: "Added", render: (e) => <Time iso={e.created_at} /> },
          ...(canManage
            ? [{ label: "Actions", render: (e: Schemas["RuleListEntry"]) => <ActionButton class="danger" label={`Remove ${e.value}`} onError={setErr} onClick={async () => (await del("/api/lists/{list_id}/entries/{entry_id}", { params: { path: { list_id: list.id, entry_id: e.id } } }), r.reload())}>Remove</ActionButton> }]
            : []),
        ]}
      />
      {canManage && (
        <Form
          form={form}
          label="Add entries"
          submitLabel="Add entries"
          onSubmit={async () => {
            if (await form.submit((v) => post("/api/lists/{list_id}/entries", { params: { path: { list_id: list.id } }, body: { entries: v.entries.split(/[\s,]+/).filter(Boolean) } }))) {
              form.reset();
              r.reload();
            }
          }}
        >
          <TextArea form={form} name="entries" label="New entries" hint="All or none are added: one invalid or duplicate value rejects the batch." rows={3} mono />
        </Form>
      )}
    </div>
  );
}
