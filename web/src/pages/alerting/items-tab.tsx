/**
 * The scaffolding the Rules and Templates tabs share: one module's items in a sortable
 * table, New / Edit / Delete as the user's permissions allow, the editor (in place of
 * the table, or in a dialog) and a notice of what was done.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { ApiError } from "../../api";
import { useResource, useTableState } from "../../ui/resource";
import { DataTable, localPage, type Column } from "../../ui/table";
import { ActionButton, Dialog, ErrorBox, Notice, Section } from "../../ui/widgets";

export interface ItemsTabProps<T extends { id: number; name: string }> {
  title: string;
  caption: string;
  /** "rule", "template": in the buttons and confirmations. */
  noun: string;
  load: () => Promise<T[]>;
  deps: unknown[];
  can: { create: boolean; update: boolean; delete: boolean };
  /** Deletes the item; the answer's message is shown. */
  remove: (item: T) => Promise<{ message: string }>;
  /** The columns before Actions; they may reload the list or show an error. */
  columns: (ctx: { reload: () => void; setError: (e: ApiError) => void }) => Column<T>[];
  empty: ComponentChildren;
  editor: (item: T | null, done: (message?: string) => void) => ComponentChildren;
  /** "page": the editor replaces the table (a large editor); "dialog": it opens over it. */
  editorIn: "page" | "dialog";
}

export function ItemsTab<T extends { id: number; name: string }>(p: ItemsTabProps<T>) {
  const r = useResource(p.load, p.deps);
  const [state, setState] = useTableState({ sortBy: "name", pageSize: 20 });
  const [editing, setEditing] = useState<T | "new" | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
  const editor = (item: T | null) =>
    p.editor(item, (message) => {
      setEditing(null);
      if (message) setNotice(message);
      r.reload();
    });
  if (editing && p.editorIn === "page") return <>{editor(editing === "new" ? null : editing)}</>;
  const actions: Column<T>[] =
    p.can.update || p.can.delete
      ? [
          {
            label: "Actions",
            render: (x: T) => (
              <span class="row-actions">
                {p.can.update && (
                  <button type="button" onClick={() => setEditing(x)} aria-label={`Edit ${x.name}`}>
                    Edit
                  </button>
                )}
                {p.can.delete && (
                  <ActionButton class="danger" label={`Delete ${x.name}`} confirm={`Delete the ${p.noun} ${x.name}?`} onError={setErr} onClick={async () => (setNotice((await p.remove(x)).message), r.reload())}>
                    Delete
                  </ActionButton>
                )}
              </span>
            ),
          },
        ]
      : [];
  return (
    <Section
      title={p.title}
      actions={
        p.can.create && (
          <button type="button" class="primary" onClick={() => setEditing("new")}>
            New {p.noun}
          </button>
        )
      }
    >
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      <DataTable
        caption={p.caption}
        state={state}
        onState={setState}
        total={r.data?.length}
        rows={r.data ? localPage(r.data, state) : undefined}
        loading={r.loading}
        error={r.error}
        rowKey={(x) => x.id}
        empty={p.empty}
        columns={[...p.columns({ reload: r.reload, setError: setErr }), ...actions]}
      />
      {p.editorIn === "dialog" && (
        <Dialog title={editing === "new" ? `New ${p.noun}` : `Edit ${p.noun}`} open={editing !== null} onClose={() => setEditing(null)} wide>
          {editing !== null && editor(editing === "new" ? null : editing)}
        </Dialog>
      )}
    </Section>
  );
}
