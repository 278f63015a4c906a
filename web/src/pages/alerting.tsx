/**
 * Alerting per module: rules (with a CEL editor that lists the module's variables
 * from introspection and tests an expression against a sample event before saving),
 * templates, history with delivery status; and, organization-wide, notification
 * channels (with test-send) and rule lists.
 */
import { useMemo, useRef, useState } from "preact/hooks";
import { ApiError, del, get, patch, post, put } from "../api";
import { setQuery, useLocation } from "../router";
import { MODULE_LABELS, MONITORING_MODULES, useSession, type ModuleName } from "../session";
import { CheckField, Field, Form, SelectField, TextArea, TextField, useForm } from "../ui/form";
import { limitOffset, useResource, useTableState } from "../ui/resource";
import { DataTable, localPage } from "../ui/table";
import { Time } from "../ui/time";
import { ActionButton, Badge, Dialog, ErrorBox, Notice, PageHeader, SecretOnce, Section, TabPanel, Tabs } from "../ui/widgets";

interface Rule {
  id: number;
  name: string;
  expression: string;
  enabled: boolean;
  severity: string;
  template_id: number | null;
  channel_ids: number[];
  throttle_seconds: number;
  created_at: string;
  updated_at: string;
}

interface Template {
  id: number;
  name: string;
  subject: string;
  body: string;
  created_at: string;
  updated_at: string;
}

interface Channel {
  id: number;
  name: string;
  kind: string;
  enabled: boolean;
  settings: Record<string, unknown>;
  created_at: string;
}

interface Variable {
  path: string;
  type: string;
  description: string;
}

interface Introspection {
  module: string;
  variables: Variable[];
  functions: { name: string; signature: string; description: string }[];
}

const SEVERITIES = ["info", "low", "medium", "high", "critical"];

export function AlertingPage() {
  const s = useSession();
  const loc = useLocation();
  const sections = [
    ...MONITORING_MODULES.filter((m) => s.canAny(`${m}:view_alert_rules`, `${m}:view_alerts`, `${m}:view_alert_templates`)).map((m) => ({ id: m, label: MODULE_LABELS[m] })),
    ...(s.can("admin:manage_users") ? [{ id: "channels", label: "Channels" }] : []),
    ...(s.can("lists:view_lists") ? [{ id: "lists", label: "Rule lists" }] : []),
  ];
  const section = sections.find((x) => x.id === loc.query.get("section"))?.id ?? sections[0]?.id;
  return (
    <div>
      <PageHeader title="Alerting" />
      {!section ? (
        <p class="empty">Your roles include no alerting permission.</p>
      ) : (
        <>
          <Tabs label="Alerting sections" tabs={sections} active={section} onSelect={(id) => setQuery({ section: id, tab: null, rule: null })} />
          <TabPanel id={section}>
            {section === "channels" ? <ChannelsTab /> : section === "lists" ? <ListsTab /> : <ModuleAlerting module={section as ModuleName} />}
          </TabPanel>
        </>
      )}
    </div>
  );
}

function ModuleAlerting({ module }: { module: ModuleName }) {
  const s = useSession();
  const loc = useLocation();
  const tabs = [
    ...(s.can(`${module}:view_alert_rules`) ? [{ id: "rules", label: "Rules" }] : []),
    ...(s.can(`${module}:view_alert_templates`) ? [{ id: "templates", label: "Templates" }] : []),
    ...(s.can(`${module}:view_alerts`) ? [{ id: "history", label: "History" }] : []),
  ];
  const tab = tabs.find((t) => t.id === loc.query.get("tab"))?.id ?? tabs[0]?.id;
  return (
    <div class="subtabs">
      <Tabs label={`${MODULE_LABELS[module]} alerting`} tabs={tabs.map((t) => ({ ...t, id: t.id }))} active={tab} onSelect={(id) => setQuery({ tab: id, rule: null })} />
      <TabPanel id={tab}>
        {tab === "rules" && <RulesTab module={module} />}
        {tab === "templates" && <TemplatesTab module={module} />}
        {tab === "history" && <HistoryTab module={module} />}
      </TabPanel>
    </div>
  );
}

function RulesTab({ module }: { module: ModuleName }) {
  const s = useSession();
  const r = useResource(() => get<{ rules: Rule[] }>(`/api/${module}/alert-rules`), [module]);
  const [state, setState] = useTableState({ sortBy: "name", pageSize: 20 });
  const [editing, setEditing] = useState<Rule | "new" | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
  const canCreate = s.can(`${module}:create_alert_rules`);
  const canUpdate = s.can(`${module}:update_alert_rules`);
  const canDelete = s.can(`${module}:delete_alert_rules`);
  const rows = r.data ? localPage(r.data.rules, state, (x, k) => (x as any)[k]) : undefined;
  // A rule stores channel ids; their names come from the channel list, which only
  // administrators (admin:manage_users) may read. Others see how many channels a rule notifies.
  const canSeeChannels = s.can("admin:manage_users");
  const channels = useResource(() => (canSeeChannels ? get<{ channels: Channel[] }>("/api/notification-channels") : Promise.resolve({ channels: [] as Channel[] })), [canSeeChannels]);
  const channelName = new Map((channels.data?.channels ?? []).map((c) => [c.id, c.name]));
  if (editing) {
    return (
      <RuleEditor
        module={module}
        rule={editing === "new" ? null : editing}
        onClose={(msg) => {
          setEditing(null);
          if (msg) setNotice(msg);
          r.reload();
        }}
      />
    );
  }
  return (
    <Section
      title="Rules"
      actions={
        canCreate && (
          <button type="button" class="primary" onClick={() => setEditing("new")}>
            New rule
          </button>
        )
      }
    >
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      <DataTable
        caption={`${MODULE_LABELS[module]} alert rules`}
        state={state}
        onState={setState}
        total={r.data?.rules.length}
        rows={rows}
        loading={r.loading}
        error={r.error}
        rowKey={(x) => x.id}
        empty={<p>No alert rule for this module. A rule is a CEL condition over the module's events; when it is true, the chosen channels are notified.</p>}
        columns={[
          { label: "Name", sort: "name", render: (x) => <strong>{x.name}</strong> },
          { label: "Severity", sort: "severity", render: (x) => <Badge value={x.severity} /> },
          {
            label: "Enabled",
            sort: "enabled",
            render: (x) =>
              canUpdate ? (
                <label class="switch">
                  <input
                    type="checkbox"
                    checked={x.enabled}
                    aria-label={`${x.name} enabled`}
                    onChange={async (e) => {
                      try {
                        await patch(`/api/${module}/alert-rules/${x.id}`, { enabled: (e.target as HTMLInputElement).checked });
                      } catch (y) {
                        setErr(y);
                      }
                      r.reload();
                    }}
                  />
                  <span aria-hidden="true" />
                </label>
              ) : (
                <Badge value={x.enabled ? "active" : "disabled"} label={x.enabled ? "enabled" : "disabled"} />
              ),
          },
          { label: "Condition", render: (x) => <code class="expr">{x.expression}</code> },
          {
            label: "Channels",
            render: (x) =>
              x.channel_ids.length === 0 ? (
                <span class="muted">none</span>
              ) : canSeeChannels ? (
                <ul class="plain" aria-label={`Channels of ${x.name}`}>
                  {x.channel_ids.map((c) => (
                    <li>{channelName.get(c) ?? (channels.loading ? "…" : <span class="muted">deleted channel {c}</span>)}</li>
                  ))}
                </ul>
              ) : (
                `${x.channel_ids.length} ${x.channel_ids.length === 1 ? "channel" : "channels"}`
              ),
          },
          { label: "Throttle", sort: "throttle_seconds", render: (x) => `${Math.round(x.throttle_seconds / 60)} min`, class: "num" },
          { label: "Updated", sort: "updated_at", render: (x) => <Time iso={x.updated_at} /> },
          ...(canUpdate || canDelete
            ? [
                {
                  label: "Actions",
                  render: (x: Rule) => (
                    <span class="row-actions">
                      {canUpdate && (
                        <button type="button" onClick={() => setEditing(x)} aria-label={`Edit ${x.name}`}>
                          Edit
                        </button>
                      )}
                      {canDelete && (
                        <ActionButton class="danger" label={`Delete ${x.name}`} confirm={`Delete the rule ${x.name}?`} onError={setErr} onClick={async () => (setNotice((await del(`/api/${module}/alert-rules/${x.id}`)).message), r.reload())}>
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
    </Section>
  );
}

/** An example event with every variable of the module at a neutral value. */
export function sampleEvent(vars: Variable[]): Record<string, unknown> {
  const root: Record<string, any> = {};
  for (const v of vars) {
    if (v.path.includes("[]")) continue;
    const parts = v.path.split(".");
    let at = root;
    for (const p of parts.slice(0, -1)) at = at[p] ??= {};
    const leaf = parts[parts.length - 1];
    if (at[leaf] !== undefined) continue;
    at[leaf] = v.type === "object" ? {} : v.type.startsWith("list") ? [] : v.type === "int" || v.type === "double" || v.type === "uint" ? 0 : v.type === "bool" ? false : v.type === "string" ? "" : null;
  }
  return root;
}

interface RuleValues {
  name: string;
  severity: string;
  expression: string;
  enabled: boolean;
  throttle_seconds: string;
  template_id: string;
  channel_ids: number[];
  event: string;
}

function RuleEditor({ module, rule, onClose }: { module: ModuleName; rule: Rule | null; onClose: (msg?: string) => void }) {
  const s = useSession();
  const intro = useResource(() => get<Introspection>(`/api/${module}/introspection`), [module]);
  const templates = useResource(() => (s.can(`${module}:view_alert_templates`) ? get<{ templates: Template[] }>(`/api/${module}/alert-templates`) : Promise.resolve({ templates: [] })), [module]);
  const channels = useResource(() => (s.can("admin:manage_users") ? get<{ channels: Channel[] }>("/api/notification-channels") : Promise.resolve({ channels: [] as Channel[] })), []);
  const lists = useResource(() => (s.can("lists:view_lists") ? get<{ lists: { name: string; list_type: string }[] }>("/api/lists") : Promise.resolve({ lists: [] })), []);
  const form = useForm<RuleValues>({
    name: rule?.name ?? "",
    severity: rule?.severity ?? "medium",
    expression: rule?.expression ?? "",
    enabled: rule?.enabled ?? true,
    throttle_seconds: String(rule?.throttle_seconds ?? 3600),
    template_id: rule?.template_id ? String(rule.template_id) : "",
    channel_ids: rule?.channel_ids ?? [],
    event: "",
  });
  const [result, setResult] = useState<{ matched: boolean; error: string | null } | null>(null);
  const [testing, setTesting] = useState(false);
  const [filter, setFilter] = useState("");
  const exprRef = useRef<HTMLTextAreaElement | null>(null);
  const defaultEvent = useMemo(() => (intro.data ? JSON.stringify(sampleEvent(intro.data.variables), null, 2) : ""), [intro.data]);
  const eventText = form.values.event || defaultEvent;

  const insert = (text: string) => {
    const el = exprRef.current;
    const v = form.values.expression;
    const at = el ? el.selectionStart : v.length;
    const end = el ? el.selectionEnd : v.length;
    form.set("expression", v.slice(0, at) + text + v.slice(end));
    requestAnimationFrame(() => {
      el?.focus();
      el?.setSelectionRange(at + text.length, at + text.length);
    });
  };

  const runTest = async () => {
    setTesting(true);
    setResult(null);
    await form.submit(async (v) => {
      let event: unknown;
      try {
        event = JSON.parse(eventText);
      } catch (e) {
        throw new ApiError(400, "validation_error", "The sample event is not valid JSON", [{ path: "event", message: `Not valid JSON: ${(e as Error).message}` }]);
      }
      const r = await post<{ matched: boolean; error: string | null }>(`/api/${module}/alert-rules/test`, { expression: v.expression, event });
      if (r.error) throw new ApiError(400, "validation_error", "The expression does not compile or evaluate", [{ path: "expression", message: r.error }]);
      setResult(r);
    }, ["expression", "event"]);
    setTesting(false);
  };

  const vars = (intro.data?.variables ?? []).filter((v) => !filter || v.path.includes(filter) || v.description.toLowerCase().includes(filter.toLowerCase()));
  return (
    <Section title={rule ? `Edit rule: ${rule.name}` : `New ${MODULE_LABELS[module]} rule`}>
      <div class="rule-editor">
        <Form
          form={form}
          label="Alert rule"
          submitLabel={rule ? "Save rule" : "Create rule"}
          onCancel={() => onClose()}
          onSubmit={async () => {
            let msg = "";
            const ok = await form.submit(async (v) => {
              const body = {
                name: v.name,
                severity: v.severity,
                expression: v.expression,
                enabled: v.enabled,
                throttle_seconds: v.throttle_seconds === "" ? undefined : Number(v.throttle_seconds),
                template_id: v.template_id ? Number(v.template_id) : null,
                channel_ids: v.channel_ids,
              };
              msg = (rule ? await put(`/api/${module}/alert-rules/${rule.id}`, body) : await post(`/api/${module}/alert-rules`, body)).message;
            });
            if (ok) onClose(msg);
          }}
        >
          <TextField form={form} name="name" label="Rule name" required />
          <SelectField form={form} name="severity" label="Severity" options={SEVERITIES.map((x) => ({ value: x, label: x }))} />
          <Field form={form} name="expression" label="Condition (CEL)" hint="True for the events that should alert. Insert variables from the list beside.">
            {(a) => (
              <textarea
                {...a}
                ref={exprRef}
                class="mono expr-input"
                rows={4}
                spellcheck={false}
                value={form.values.expression}
                onInput={(e) => {
                  form.set("expression", (e.target as HTMLTextAreaElement).value);
                  setResult(null);
                }}
              />
            )}
          </Field>
          <TextField form={form} name="throttle_seconds" label="Throttle (seconds between alerts for the same subject)" inputMode="numeric" />
          {(templates.data?.templates.length ?? 0) > 0 && (
            <SelectField form={form} name="template_id" label="Message template" options={[{ value: "", label: "Default message" }, ...templates.data!.templates.map((t) => ({ value: String(t.id), label: t.name }))]} />
          )}
          {s.can("admin:manage_users") ? (
            <fieldset class="field">
              <legend>Notify these channels</legend>
              {(channels.data?.channels ?? []).length === 0 && <p class="muted small">No channel yet: add one under Alerting › Channels.</p>}
              {(channels.data?.channels ?? []).map((c) => (
                <label class="check-inline">
                  <input
                    type="checkbox"
                    checked={form.values.channel_ids.includes(c.id)}
                    onChange={(e) => form.set("channel_ids", (e.target as HTMLInputElement).checked ? [...form.values.channel_ids, c.id] : form.values.channel_ids.filter((x) => x !== c.id))}
                  />{" "}
                  {c.name} <span class="muted">({c.kind})</span>
                </label>
              ))}
              {form.errors.channel_ids && <div class="field-error">{form.errors.channel_ids}</div>}
            </fieldset>
          ) : (
            <p class="muted small">Channels are chosen by an administrator.</p>
          )}
          <CheckField form={form} name="enabled" label="Enabled" />
          <div class="test-panel">
            <h3>Test against a sample event</h3>
            <Field form={form} name="event" label="Sample event (JSON)" hint="Prefilled with every variable of the module; change the values to the case you want to try.">
              {(a) => <textarea {...a} class="mono" rows={10} spellcheck={false} value={eventText} onInput={(e) => (form.set("event", (e.target as HTMLTextAreaElement).value), setResult(null))} />}
            </Field>
            <button type="button" onClick={runTest} disabled={testing || !form.values.expression} aria-busy={testing ? "true" : "false"}>
              {testing ? (
                <>
                  <span class="spinner" aria-hidden="true" /> Testing…
                </>
              ) : (
                "Test against the sample event"
              )}
            </button>
            <div role="status" aria-live="polite" data-testid="test-result">
              {result && (result.matched ? <Notice kind="success">Matched: this event would raise an alert.</Notice> : <Notice>Did not match: this event would not raise an alert.</Notice>)}
            </div>
          </div>
        </Form>
        <aside class="vars" aria-label="Variables and functions">
          <h3>Variables of {MODULE_LABELS[module]} events</h3>
          <label class="inline">
            Find
            <input type="search" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
          </label>
          <ErrorBox error={intro.error} />
          <ul class="var-list">
            {vars.map((v) => (
              <li>
                <button type="button" class="link mono" onClick={() => insert(v.path.replace(/\[\]/g, "[0]"))} aria-label={`Insert ${v.path}`}>
                  {v.path}
                </button>{" "}
                <span class="type">{v.type}</span>
                <div class="small muted">{v.description}</div>
              </li>
            ))}
          </ul>
          <h3>Functions</h3>
          <ul class="var-list">
            {(intro.data?.functions ?? []).map((f) => (
              <li>
                <code>{f.signature}</code>
                <div class="small muted">{f.description}</div>
              </li>
            ))}
          </ul>
          {(lists.data?.lists.length ?? 0) > 0 && (
            <>
              <h3>Rule lists</h3>
              <ul class="var-list">
                {lists.data!.lists.map((l) => (
                  <li>
                    <button type="button" class="link mono" onClick={() => insert(`in_list(VALUE, lists["${l.name}"])`)} aria-label={`Insert in_list lookup of lists["${l.name}"]`}>
                      lists["{l.name}"]
                    </button>{" "}
                    <span class="type">{l.list_type}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </aside>
      </div>
    </Section>
  );
}

function TemplatesTab({ module }: { module: ModuleName }) {
  const s = useSession();
  const r = useResource(() => get<{ templates: Template[] }>(`/api/${module}/alert-templates`), [module]);
  const [state, setState] = useTableState({ sortBy: "name", pageSize: 20 });
  const [editing, setEditing] = useState<Template | "new" | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
  const canCreate = s.can(`${module}:create_alert_templates`);
  const canUpdate = s.can(`${module}:update_alert_templates`);
  const canDelete = s.can(`${module}:delete_alert_templates`);
  return (
    <Section
      title="Message templates"
      actions={
        canCreate && (
          <button type="button" class="primary" onClick={() => setEditing("new")}>
            New template
          </button>
        )
      }
    >
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      <DataTable
        caption="Alert templates"
        state={state}
        onState={setState}
        total={r.data?.templates.length}
        rows={r.data ? localPage(r.data.templates, state, (x, k) => (x as any)[k]) : undefined}
        loading={r.loading}
        error={r.error}
        rowKey={(x) => x.id}
        empty={<p>No template: alerts use the default message. A template writes the subject and body with {"{{field.path}}"} placeholders.</p>}
        columns={[
          { label: "Name", sort: "name", render: (x) => <strong>{x.name}</strong> },
          { label: "Subject", sort: "subject", render: (x) => <code class="expr">{x.subject}</code> },
          { label: "Updated", sort: "updated_at", render: (x) => <Time iso={x.updated_at} /> },
          ...(canUpdate || canDelete
            ? [
                {
                  label: "Actions",
                  render: (x: Template) => (
                    <span class="row-actions">
                      {canUpdate && (
                        <button type="button" onClick={() => setEditing(x)} aria-label={`Edit ${x.name}`}>
                          Edit
                        </button>
                      )}
                      {canDelete && (
                        <ActionButton class="danger" label={`Delete ${x.name}`} confirm={`Delete the template ${x.name}?`} onError={setErr} onClick={async () => (setNotice((await del(`/api/${module}/alert-templates/${x.id}`)).message), r.reload())}>
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
      <Dialog title={editing === "new" ? "New template" : "Edit template"} open={editing !== null} onClose={() => setEditing(null)} wide>
        {editing !== null && <TemplateForm module={module} template={editing === "new" ? null : editing} onDone={(m) => (setNotice(m), setEditing(null), r.reload())} onCancel={() => setEditing(null)} />}
      </Dialog>
    </Section>
  );
}

function TemplateForm({ module, template, onDone, onCancel }: { module: ModuleName; template: Template | null; onDone: (m: string) => void; onCancel: () => void }) {
  const form = useForm({ name: template?.name ?? "", subject: template?.subject ?? "", body: template?.body ?? "" });
  return (
    <Form
      form={form}
      label="Template"
      submitLabel="Save template"
      onCancel={onCancel}
      onSubmit={async () => {
        let m = "";
        if (await form.submit(async (v) => (m = (template ? await put(`/api/${module}/alert-templates/${template.id}`, v) : await post(`/api/${module}/alert-templates`, v)).message))) onDone(m);
      }}
    >
      <TextField form={form} name="name" label="Name" required />
      <TextField form={form} name="subject" label="Subject" hint="Placeholders like {{cert.subject}} are replaced by the event's values." required />
      <TextArea form={form} name="body" label="Body" rows={8} mono required />
    </Form>
  );
}

interface Alert {
  id: number;
  rule_name: string;
  severity: string;
  subject: string;
  event_summary: string;
  message: { subject: string; body: string };
  fired_at: string;
  deliveries: { channel_id: number; channel_name: string | null; channel_kind: string | null; status: string; attempts: number; last_error: string | null; response_status: number | null; next_attempt_at: string | null; delivered_at: string | null }[];
}

function HistoryTab({ module }: { module: ModuleName }) {
  const [state, setState] = useTableState({ sortBy: "fired_at", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get<{ alerts: Alert[]; total: number }>(`/api/${module}/alert-history`, limitOffset(state)), [module, state]);
  return (
    <Section title="Alert history">
      <DataTable
        caption="Fired alerts"
        state={state}
        onState={setState}
        total={r.data?.total}
        rows={r.data?.alerts}
        loading={r.loading}
        error={r.error}
        rowKey={(a) => a.id}
        empty={<p>No alert has fired for this module yet.</p>}
        columns={[
          { label: "Fired", render: (a) => <Time iso={a.fired_at} /> },
          { label: "Rule", render: (a) => <strong>{a.rule_name}</strong> },
          { label: "Severity", render: (a) => <Badge value={a.severity} /> },
          { label: "Event", render: (a) => <span class="small">{a.event_summary}</span> },
          {
            label: "Delivery",
            render: (a) =>
              a.deliveries.length === 0 ? (
                <span class="muted">no channel</span>
              ) : (
                <ul class="plain">
                  {a.deliveries.map((d) => (
                    <li>
                      <Badge value={d.status} /> {d.channel_name ?? `#${d.channel_id}`}{" "}
                      <span class="small muted">
                        {d.attempts} attempt{d.attempts === 1 ? "" : "s"}
                        {d.response_status ? `, HTTP ${d.response_status}` : ""}
                        {d.last_error ? `: ${d.last_error}` : ""}
                        {d.status === "retrying" && d.next_attempt_at ? <>, next <Time iso={d.next_attempt_at} /></> : null}
                      </span>
                    </li>
                  ))}
                </ul>
              ),
          },
        ]}
      />
    </Section>
  );
}

function ChannelsTab() {
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

interface RuleList {
  id: number;
  name: string;
  list_type: string;
  description: string;
  entry_count: number;
  entry_limit: number;
  updated_at: string;
}

function ListsTab() {
  const s = useSession();
  const r = useResource(() => get<{ lists: RuleList[] }>("/api/lists"), []);
  const [state, setState] = useTableState({ sortBy: "name", pageSize: 20 });
  const [creating, setCreating] = useState(false);
  const [open, setOpen] = useState<RuleList | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
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
        rows={r.data ? localPage(r.data.lists, state, (x, k) => (x as any)[k]) : undefined}
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
                    <ActionButton class="danger" label={`Delete ${l.name}`} confirm={`Delete the list ${l.name}?`} onError={setErr} onClick={async () => (setNotice((await del(`/api/lists/${l.id}`)).message), r.reload())}>
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
  const form = useForm({ name: "", list_type: "ip", description: "", entries: "" });
  return (
    <Form
      form={form}
      label="Rule list"
      submitLabel="Create list"
      onCancel={onCancel}
      onSubmit={async () => {
        if (await form.submit((v) => post("/api/lists", { ...v, entries: v.entries.split(/[\s,]+/).filter(Boolean) }))) onDone();
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
  const r = useResource(() => get<{ entries: { id: number; value: string; created_at: string }[] }>(`/api/lists/${list.id}`), [list.id]);
  const form = useForm({ entries: "" });
  const [err, setErr] = useState<any>();
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
            ? [{ label: "Actions", render: (e: { id: number; value: string }) => <ActionButton class="danger" label={`Remove ${e.value}`} onError={setErr} onClick={async () => (await del(`/api/lists/${list.id}/entries/${e.id}`), r.reload())}>Remove</ActionButton> }]
            : []),
        ]}
      />
      {canManage && (
        <Form
          form={form}
          label="Add entries"
          submitLabel="Add entries"
          onSubmit={async () => {
            if (await form.submit((v) => post(`/api/lists/${list.id}/entries`, { entries: v.entries.split(/[\s,]+/).filter(Boolean) }))) {
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

