/** The scanner agents tab: register an agent (its token shown once), list and revoke them. */
import { useState } from "preact/hooks";
import { del, get, post, type ApiError, type ResponseOf, type Schemas } from "../../api";
import { useSession } from "../../session";
import { Form, TextField, useForm } from "../../ui/form";
import { useResource, useTableState } from "../../ui/resource";
import { DataTable, localPage } from "../../ui/table";
import { Time } from "../../ui/time";
import { ActionButton, Badge, ErrorBox, SecretOnce, Section } from "../../ui/widgets";

export function AgentsTab() {
  const s = useSession();
  const [state, setState] = useTableState({ sortBy: "name", pageSize: 20 });
  const r = useResource(() => get("/api/cert-watcher/agents"), []);
  const form = useForm({ name: "" });
  const [secret, setSecret] = useState<{ name: string; token: string } | null>(null);
  const [err, setErr] = useState<ApiError>();
  const rows = r.data?.agents ?? [];
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
              let res: ResponseOf<"post", "/api/cert-watcher/agents"> | undefined;
              if ((await form.submit(async (v) => (res = await post("/api/cert-watcher/agents", { body: v })))) && res) {
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
          rows={r.data ? localPage(rows, state) : undefined}
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
                    render: (a: Schemas["ScannerAgent"]) =>
                      a.status === "active" ? (
                        <ActionButton class="danger" label={`Revoke ${a.name}`} confirm={`Revoke the agent ${a.name}? Its token stops working at once.`} onError={setErr} onClick={async () => (await del("/api/cert-watcher/agents/{agent_id}", { params: { path: { agent_id: a.id } } }), r.reload())}>
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
