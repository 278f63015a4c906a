/**
 * The rule editor: a CEL condition with the module's variables from introspection
 * beside it (inserted at the cursor), and a test against a sample event before saving;
 * for a saved rule the test also says whether a real event like it would be suppressed now.
 */
import { useMemo, useRef, useState } from "preact/hooks";
import { ApiError, get, post, put } from "../../api";
import { MODULE_LABELS, useSession, type ModuleName } from "../../session";
import { CheckField, Field, Form, SelectField, TextField, useForm } from "../../ui/form";
import { useResource, type Resource } from "../../ui/resource";
import { ErrorBox, Notice, Section } from "../../ui/widgets";
import { SEVERITIES, type Channel, type Introspection, type Rule, type RuleList, type RuleTestResult, type Severity, type Template, type Variable } from "./types";

/** An example event with every variable of the module at a neutral value. */
function sampleEvent(vars: Variable[]): Record<string, unknown> {
  type Node = Record<string, unknown>;
  const root: Node = {};
  for (const v of vars) {
    if (v.path.includes("[]")) continue;
    const parts = v.path.split(".");
    let at = root;
    for (const p of parts.slice(0, -1)) at = (at[p] ??= {}) as Node;
    const leaf = parts[parts.length - 1];
    if (at[leaf] !== undefined) continue;
    at[leaf] = v.type === "object" ? {} : v.type.startsWith("list") ? [] : v.type === "int" || v.type === "double" || v.type === "uint" ? 0 : v.type === "bool" ? false : v.type === "string" ? "" : null;
  }
  return root;
}

interface RuleValues {
  name: string;
  severity: Severity;
  expression: string;
  enabled: boolean;
  throttle_seconds: string;
  template_id: string;
  channel_ids: number[];
  event: string;
}

export function RuleEditor({ module, rule, onClose }: { module: ModuleName; rule: Rule | null; onClose: (msg?: string) => void }) {
  const s = useSession();
  const intro = useResource(() => get(`/api/${module}/introspection`), [module]);
  const templates = useResource(() => (s.can(`${module}:view_alert_templates`) ? get(`/api/${module}/alert-templates`) : Promise.resolve({ templates: [] as Template[] })), [module]);
  const channels = useResource(() => (s.can("admin:manage_users") ? get("/api/notification-channels") : Promise.resolve({ channels: [] as Channel[] })), []);
  const lists = useResource(() => (s.can("lists:view_lists") ? get("/api/lists") : Promise.resolve({ lists: [] as RuleList[] })), []);
  const form = useForm<RuleValues>({
    name: rule?.name ?? "",
    severity: SEVERITIES.find((x) => x === rule?.severity) ?? "medium",
    expression: rule?.expression ?? "",
    enabled: rule?.enabled ?? true,
    throttle_seconds: String(rule?.throttle_seconds ?? 3600),
    template_id: rule?.template_id ? String(rule.template_id) : "",
    channel_ids: rule?.channel_ids ?? [],
    event: "",
  });
  const [result, setResult] = useState<RuleTestResult | null>(null);
  const [testing, setTesting] = useState(false);
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
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(eventText);
      } catch (e) {
        throw new ApiError(400, "validation_error", "The sample event is not valid JSON", [{ path: "event", message: `Not valid JSON: ${(e as Error).message}` }]);
      }
      // A saved rule: the answer also says whether a real event like this one would be suppressed now.
      const r = await post(`/api/${module}/alert-rules/test`, { body: { expression: v.expression, event, ...(rule ? { rule_id: rule.id } : {}) } });
      if (r.error) throw new ApiError(400, "validation_error", "The expression does not compile or evaluate", [{ path: "expression", message: r.error }]);
      setResult(r);
    }, ["expression", "event"]);
    setTesting(false);
  };

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
              msg = (rule ? await put(`/api/${module}/alert-rules/{rule_id}`, { params: { path: { rule_id: rule.id } }, body }) : await post(`/api/${module}/alert-rules`, { body })).message;
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
              {result && <TestOutcome result={result} />}
            </div>
          </div>
        </Form>
        <VariablesAside module={module} intro={intro} lists={lists.data?.lists ?? []} onInsert={insert} />
      </div>
    </Section>
  );
}

/** The module's variables (inserted at the cursor), functions and rule lists, beside the editor. */
function VariablesAside({ module, intro, lists, onInsert: insert }: { module: ModuleName; intro: Resource<Introspection>; lists: { name: string; list_type: string }[]; onInsert: (text: string) => void }) {
  const [filter, setFilter] = useState("");
  const vars = (intro.data?.variables ?? []).filter((v) => !filter || v.path.includes(filter) || v.description.toLowerCase().includes(filter.toLowerCase()));
  return (
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
      {lists.length > 0 && (
        <>
          <h3>Rule lists</h3>
          <ul class="var-list">
            {lists.map((l) => (
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
  );
}

/** What testing against the sample event showed; for a saved rule, also what a real event would become now. */
function TestOutcome({ result }: { result: RuleTestResult }) {
  if (!result.matched) return <Notice>Did not match: this event would not raise an alert.</Notice>;
  if (result.outcome === "would_be_suppressed") return <Notice kind="warn">Matched, but a real event like this one would not be sent now. {result.explanation}</Notice>;
  if (result.outcome === "rule_disabled") return <Notice kind="warn">Matched, but {result.explanation}</Notice>;
  return <Notice kind="success">Matched: this event would raise an alert.</Notice>;
}
