/** Organization-wide notification channels: where alerts go, with a test-send. */
import { useEffect, useState } from "preact/hooks";
import { del, get, post, put, type ApiError, type ResponseOf, type Schemas } from "../../api";
import { CheckField, Form, SelectField, TextField, useForm } from "../../ui/form";
import { useResource, useTableState } from "../../ui/resource";
import { DataTable, localPage } from "../../ui/table";
import { ActionButton, Badge, Dialog, ErrorBox, Notice, SecretOnce, Section } from "../../ui/widgets";
import type { Channel } from "./types";

/** What a channel's shown settings say about where alerts go (secrets only as shown: masked). */
function destination(c: Channel): string {
  return Object.entries(c.settings)
    .map(([k, v]) => `${k}: ${formValue(v)}`)
    .join(" · ");
}

export function ChannelsTab() {
  const r = useResource(() => get("/api/notification-channels"), []);
  const [state, setState] = useTableState({ sortBy: "name", pageSize: 20 });
  const [editing, setEditing] = useState<Channel | "new" | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
  const [tests, setTests] = useState<Record<number, ChannelTestResult>>({});
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
        rows={r.data ? localPage(r.data.channels, state) : undefined}
        loading={r.loading}
        error={r.error}
        rowKey={(c) => c.id}
        empty={<p>No channel. Channels are where alerts go: a webhook, Slack, email, PagerDuty, Opsgenie, Microsoft Teams, Discord or Splunk.</p>}
        columns={[
          { label: "Name", sort: "name", render: (c) => <strong>{c.name}</strong> },
          { label: "Kind", sort: "kind", render: (c) => c.kind },
          { label: "Destination", render: (c) => <span class="small mono break">{destination(c)}</span> },
          { label: "Enabled", sort: "enabled", render: (c) => <Badge value={c.enabled ? "active" : "disabled"} label={c.enabled ? "enabled" : "disabled"} /> },
          {
            label: "Test",
            render: (c) => (
              <span>
                <ActionButton label={`Send test to ${c.name}`} busyLabel="Sending…" onError={setErr} onClick={async () => setTests({ ...tests, [c.id]: await post("/api/notification-channels/{channel_id}/test", { params: { path: { channel_id: c.id } } }) })}>
                  Send test
                </ActionButton>{" "}
                {tests[c.id] && (tests[c.id].delivered ? <Badge value="delivered" /> : <span><Badge value="failed" /> <span class="small">{tests[c.id].error ?? "not delivered"}</span></span>)}
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
                <ActionButton class="danger" label={`Delete ${c.name}`} confirm={`Delete the channel ${c.name}?`} onError={setErr} onClick={async () => (setNotice((await del("/api/notification-channels/{channel_id}", { params: { path: { channel_id: c.id } } })).message), r.reload())}>
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

type ChannelTestResult = ResponseOf<"post", "/api/notification-channels/{channel_id}/test">;

/**
 * One setting of a provider's `settings_schema` (GET /api/notification-channels/providers):
 * the JSON Schema keywords the form reads. The API documents `settings_schema` as an open
 * JSON Schema object, so the form names the keywords it uses here.
 */
interface SettingSchema {
  type?: string;
  enum?: string[];
  default?: unknown;
  title?: string;
  description?: string;
  examples?: string[];
  items?: { type?: string };
  writeOnly?: boolean;
  "x-secret"?: boolean;
}

/** The form's text of a setting's current value (lists as "a, b"). */
const formValue = (v: unknown) => (Array.isArray(v) ? v.join(", ") : v === undefined || v === null ? "" : String(v));

/**
 * The channel form, built from the chosen provider's settings schema: one control per
 * setting (a list as comma-separated text, a choice as a select, a secret as a password
 * field that, on edit, keeps the stored value when left empty).
 */
function ChannelForm({ channel, onDone, onCancel }: { channel: Channel | null; onDone: (m: string, secret?: string) => void; onCancel: () => void }) {
  const providers = useResource(() => get("/api/notification-channels/providers"), []);
  const form = useForm<Record<string, string | boolean | undefined>>({ name: channel?.name ?? "", kind: channel?.kind ?? "webhook", enabled: channel?.enabled ?? true, rotate_secret: false });
  const v = form.values;
  const provider = providers.data?.providers.find((p) => p.kind === v.kind);
  const schema = provider?.settings_schema as { properties?: Record<string, SettingSchema>; required?: string[] } | undefined;
  const settings = Object.entries(schema?.properties ?? {});
  const required = new Set(schema?.required ?? []);
  const valueOf = (name: string, s: SettingSchema) => v[name] ?? (s["x-secret"] ? "" : formValue(channel && channel.kind === v.kind ? channel.settings[name] : s.default));
  // Each setting's control starts from the channel's shown value, or the schema's default.
  useEffect(() => {
    for (const [name, s] of settings) if (v[name] === undefined) form.set(name, valueOf(name, s));
  }, [provider, v.kind]);
  return (
    <Form
      form={form}
      label="Channel"
      submitLabel="Save channel"
      onCancel={onCancel}
      onSubmit={async () => {
        let res: { message: string; secret?: string } | undefined;
        const ok = await form.submit(async (x) => {
          const body: Record<string, unknown> = { name: x.name, kind: x.kind, enabled: x.enabled };
          for (const [name, s] of settings) {
            const text = String(valueOf(name, s)).trim();
            // Left empty: an optional setting is left out; a secret on edit keeps its sealed value.
            if (text === "") continue;
            body[name] = s.type === "array" ? text.split(/[\s,]+/).filter(Boolean) : s.type === "integer" || s.type === "number" ? Number(text) : text;
          }
          if (channel && x.rotate_secret) body.rotate_secret = true;
          // The body is built from the provider's settings schema, which the API checks (400 with each field's message).
          res = channel
            ? await put("/api/notification-channels/{channel_id}", { params: { path: { channel_id: channel.id } }, body: body as Schemas["NotificationChannelUpdate"] })
            : await post("/api/notification-channels", { body: body as Schemas["NotificationChannelInput"] });
        });
        if (ok && res) onDone(res.message, res.secret);
      }}
    >
      <ErrorBox error={providers.error} />
      <TextField form={form} name="name" label="Name" required />
      {channel ? (
        <p class="muted small">Kind: {provider?.label ?? channel.kind} (a channel's kind cannot change)</p>
      ) : (
        <SelectField form={form} name="kind" label="Kind" options={(providers.data?.providers ?? []).map((p) => ({ value: p.kind, label: p.label }))} hint={provider?.description} />
      )}
      {settings.map(([name, s]) => {
        const key = name;
        const secret = Boolean(s["x-secret"]);
        const label = s.title ?? name;
        const hint = [s.description, secret && channel ? "Leave empty to keep the stored value." : "", s.type === "array" ? "Separate several with commas." : ""].filter(Boolean).join(" ");
        return s.enum ? (
          <SelectField form={form} name={key} label={label} hint={hint} options={s.enum.map((o) => ({ value: o, label: o }))} />
        ) : (
          <TextField form={form} name={key} label={label} hint={hint} type={secret && !/url/i.test(name) ? "password" : "text"} placeholder={s.examples?.[0]} autoComplete="off" required={required.has(name) && !(secret && channel)} />
        );
      })}
      <CheckField form={form} name="enabled" label="Enabled" />
      {channel && v.kind === "webhook" && <CheckField form={form} name="rotate_secret" label="Issue a new signing secret" />}
    </Form>
  );
}
