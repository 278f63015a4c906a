/** Organization-wide notification channels: where alerts go, with a test-send. */
import { useState } from "preact/hooks";
import { del, get, post, put } from "../../api";
import { CheckField, Form, SelectField, TextField, useForm } from "../../ui/form";
import { useResource, useTableState } from "../../ui/resource";
import { DataTable, localPage } from "../../ui/table";
import { ActionButton, Badge, Dialog, ErrorBox, Notice, SecretOnce, Section } from "../../ui/widgets";
import type { Channel } from "./types";

export function ChannelsTab() {
  const r = useResource(() => get<{ channels: Channel[] }>("/api/notification-channels"), []);
  const [state, setState] = useTableState({ sortBy: "name", pageSize: 20 });
  const [editing, setEditing] = useState<Channel | "new" | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
  const [tests, setTests] = useState<Record<number, { delivered: boolean; status: number | null; error: string | null }>>({});
  return (
    <Section
      title="Notification channels"
      actions={
        <button type="button" class="primary" onClick={() => setEditing("new")}>
          New channel
        </button>
      }
    >
      {secret && <SecretOnce label="Webhook signing secret." value={secret} />}
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      <DataTable
        caption="Notification channels"
        state={state}
        onState={setState}
        total={r.data?.channels.length}
        rows={r.data ? localPage(r.data.channels, state, (x, k) => (x as any)[k]) : undefined}
        loading={r.loading}
        error={r.error}
        rowKey={(c) => c.id}
        empty={<p>No channel. Channels are where alerts go: a webhook, a Slack incoming webhook, or email.</p>}
        columns={[
          { label: "Name", sort: "name", render: (c) => <strong>{c.name}</strong> },
          { label: "Kind", sort: "kind", render: (c) => c.kind },
          { label: "Destination", render: (c) => <span class="small mono break">{String(c.settings.url ?? (Array.isArray(c.settings.recipients) ? (c.settings.recipients as string[]).join(", ") : ""))}</span> },
          { label: "Enabled", sort: "enabled", render: (c) => <Badge value={c.enabled ? "active" : "disabled"} label={c.enabled ? "enabled" : "disabled"} /> },
          {
            label: "Test",
            render: (c) => (
              <span>
                <ActionButton label={`Send test to ${c.name}`} busyLabel="Sending…" onError={setErr} onClick={async () => setTests({ ...tests, [c.id]: await post(`/api/notification-channels/${c.id}/test`) })}>
                  Send test
                </ActionButton>{" "}
                {tests[c.id] && (tests[c.id].delivered ? <Badge value="delivered" /> : <span><Badge value="failed" /> <span class="small">{tests[c.id].error ?? `HTTP ${tests[c.id].status}`}</span></span>)}
              </span>
            ),
          },
          {
            label: "Actions",
            render: (c) => (
              <span class="row-actions">
                <button type="button" onClick={() => setEditing(c)} aria-label={`Edit ${c.name}`}>
                  Edit
                </button>
                <ActionButton class="danger" label={`Delete ${c.name}`} confirm={`Delete the channel ${c.name}?`} onError={setErr} onClick={async () => (setNotice((await del(`/api/notification-channels/${c.id}`)).message), r.reload())}>
                  Delete
                </ActionButton>
              </span>
            ),
          },
        ]}
      />
      <Dialog title={editing === "new" ? "New channel" : "Edit channel"} open={editing !== null} onClose={() => setEditing(null)}>
        {editing !== null && (
          <ChannelForm
            channel={editing === "new" ? null : editing}
            onCancel={() => setEditing(null)}
            onDone={(m, s) => {
              setNotice(m);
              setSecret(s ?? null);
              setEditing(null);
              r.reload();
            }}
          />
        )}
      </Dialog>
    </Section>
  );
}

function ChannelForm({ channel, onDone, onCancel }: { channel: Channel | null; onDone: (m: string, secret?: string) => void; onCancel: () => void }) {
  const form = useForm({
    name: channel?.name ?? "",
    kind: channel?.kind ?? "webhook",
    url: String(channel?.settings.url ?? ""),
    recipients: Array.isArray(channel?.settings.recipients) ? (channel!.settings.recipients as string[]).join(", ") : "",
    smtp_url: "",
    enabled: channel?.enabled ?? true,
    rotate_secret: false,
  });
  const v = form.values;
  return (
    <Form
      form={form}
      label="Channel"
      submitLabel="Save channel"
      onCancel={onCancel}
      onSubmit={async () => {
        let res: any;
        const ok = await form.submit(async (x) => {
          const body: Record<string, unknown> = { name: x.name, kind: x.kind, enabled: x.enabled };
          if (x.kind === "email") {
            body.recipients = x.recipients.split(/[\s,]+/).filter(Boolean);
            if (x.smtp_url) body.smtp_url = x.smtp_url;
          } else body.url = x.url;
          if (channel && x.rotate_secret) body.rotate_secret = true;
          res = channel ? await put(`/api/notification-channels/${channel.id}`, body) : await post("/api/notification-channels", body);
        });
        if (ok) onDone(res.message, res.secret);
      }}
    >
      <TextField form={form} name="name" label="Name" required />
      <SelectField
        form={form}
        name="kind"
        label="Kind"
        options={[
          { value: "webhook", label: "Webhook (signed JSON POST)" },
          { value: "slack", label: "Slack incoming webhook" },
          { value: "email", label: "Email" },
        ]}
      />
      {v.kind === "email" ? (
        <>
          <TextField form={form} name="recipients" label="Recipients" hint="Email addresses separated by commas." required />
          <TextField form={form} name="smtp_url" label="SMTP server (optional)" hint="smtp://user:pass@host:587; empty: the service's own SMTP." />
        </>
      ) : (
        <TextField form={form} name="url" label="URL" type="url" required />
      )}
      <CheckField form={form} name="enabled" label="Enabled" />
      {channel && v.kind === "webhook" && <CheckField form={form} name="rotate_secret" label="Issue a new signing secret" />}
    </Form>
  );
}
