/** Administration › audit log, subscription and quotas, mail outbox and heartbeat: the organization's service records. */
import { useState } from "preact/hooks";
import { del, get, put, type ApiError, type ResponseOf, type Schemas } from "../api";
import { useSession } from "../session";
import { Form, SelectField, TextField, useForm } from "../ui/form";
import { limitOffset, useResource, useTableState } from "../ui/resource";
import { DataTable } from "../ui/table";
import { Time } from "../ui/time";
import { ActionButton, Badge, Dialog, ErrorBox, KeyValues, Notice, Section } from "../ui/widgets";

type OutboxMessage = ResponseOf<"get", "/api/admin/mail-outbox">["messages"][number];
type Heartbeat = ResponseOf<"get", "/api/admin/heartbeat">;

export function AuditTab() {
  const [state, setState] = useTableState({ sortBy: "created_at", sortOrder: "desc", pageSize: 50 });
  const r = useResource(() => get("/api/admin/audit-logs", { params: { query: limitOffset(state) } }), [state]);
  return (
    <Section title="Audit log (newest first)">
      <DataTable
        caption="Audit log"
        state={state}
        onState={setState}
        total={r.data?.total}
        rows={r.data?.audit_logs}
        loading={r.loading}
        error={r.error}
        rowKey={(a) => a.id}
        empty={<p>Nothing recorded yet.</p>}
        pageSizes={[20, 50, 100]}
        columns={[
          { label: "Time", render: (a) => <Time iso={a.created_at} /> },
          { label: "Who", render: (a) => a.user_email ?? <span class="muted">—</span> },
          { label: "Action", render: (a) => <code>{a.action}</code> },
          { label: "Target", render: (a) => (a.target_type ? `${a.target_type}${a.target_id ? ` ${a.target_id}` : ""}` : "—") },
          { label: "Credential", render: (a) => (a.token_id ? `API token #${a.token_id}` : "session") },
          { label: "Client IP", render: (a) => <span class="mono small">{a.client_ip ?? "—"}</span> },
        ]}
      />
    </Section>
  );
}

const QUOTA_LABELS: Record<string, string> = {
  ct_filters: "CT filters",
  rdap_monitors: "RDAP monitors",
  cert_monitors: "Certificate monitors",
  dns_domains: "DNS domains",
  rule_lists: "Rule lists",
  list_entries: "Entries per list",
};

export function SubscriptionTab() {
  const s = useSession();
  const r = useResource(() => get("/api/admin/subscription"), []);
  const form = useForm<{ tier: Schemas["SetTierRequest"]["tier"] | "" }>({ tier: "" });
  const [notice, setNotice] = useState("");
  const d = r.data;
  const keys = d ? [...new Set([...Object.keys(d.limits), ...Object.keys(d.usage)])] : [];
  return (
    <Section title="Subscription">
      <ErrorBox error={r.error} />
      {notice && <Notice kind="success">{notice}</Notice>}
      {d && (
        <>
          <KeyValues items={[["Tier", <strong class="tier">{d.tier}</strong>]]} />
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Quotas">
            <table>
              <caption class="sr-only">Quotas and usage</caption>
              <thead>
                <tr>
                  <th scope="col">Quota</th>
                  <th scope="col" class="num">
                    Used
                  </th>
                  <th scope="col" class="num">
                    Limit
                  </th>
                  <th scope="col">Usage</th>
                </tr>
              </thead>
              <tbody>
                {keys.map((k) => {
                  const used = d.usage[k] ?? 0;
                  const limit = d.limits[k];
                  return (
                    <tr>
                      <td>{QUOTA_LABELS[k] ?? k.replace(/_/g, " ")}</td>
                      <td class="num">{d.usage[k] ?? "—"}</td>
                      <td class="num">{limit ?? "—"}</td>
                      <td>{limit ? <progress max={limit} value={Math.min(used, limit)} aria-label={`${QUOTA_LABELS[k] ?? k}: ${used} of ${limit}`} /> : null}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {s.can("admin:manage_subscription") && (
            <Form
              form={form}
              class="form inline-form"
              label="Change tier"
              submitLabel="Change tier"
              onSubmit={async () => {
                if (await form.submit((v) => put("/api/admin/subscription", { body: { tier: v.tier || d.tier } }))) {
                  setNotice("Tier changed.");
                  r.reload();
                  void s.reload();
                }
              }}
            >
              <SelectField
                form={form}
                name="tier"
                label="Tier"
                options={["free", "pro", "enterprise"].map((t) => ({ value: t, label: t + (t === d.tier ? " (current)" : "") }))}
              />
            </Form>
          )}
        </>
      )}
    </Section>
  );
}

/** Mail text with its links clickable (the invitation link, without SMTP). */
function MailBody({ text }: { text: string }) {
  const parts = text.split(/(https?:\/\/[^\s]+)/g);
  return (
    <pre class="mail">
      {parts.map((p) => {
        if (!/^https?:\/\//.test(p)) return p;
        let href = p;
        try {
          // A link to this console opens here even when PUBLIC_BASE_URL names another host.
          const u = new URL(p);
          if (u.pathname === "/accept-invitation") href = u.pathname + u.search;
        } catch {
          /* leave as is */
        }
        return <a href={href}>{p}</a>;
      })}
    </pre>
  );
}

export function OutboxTab() {
  const [state, setState] = useTableState({ sortBy: "created_at", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get("/api/admin/mail-outbox", { params: { query: limitOffset(state) } }), [state]);
  const [open, setOpen] = useState<OutboxMessage | null>(null);
  return (
    <Section title="Mail outbox">
      <p class="muted">Mail the service sent or queued. Without SMTP this is where invitations wait.</p>
      <DataTable
        caption="Mail outbox"
        rows={r.data?.messages}
        loading={r.loading}
        error={r.error}
        rowKey={(m) => m.id}
        empty={<p>No mail.</p>}
        columns={[
          { label: "Created", render: (m) => <Time iso={m.created_at} /> },
          { label: "To", render: (m) => m.to },
          { label: "Subject", render: (m) => <button type="button" class="link" onClick={() => setOpen(m)}>{m.subject}</button> },
          { label: "Kind", render: (m) => m.kind },
          { label: "Status", render: (m) => <Badge value={m.status === "sent" ? "delivered" : m.status} label={m.status} /> },
        ]}
      />
      <nav class="pager" aria-label="Pages of the outbox">
        <button type="button" disabled={state.page <= 1} onClick={() => setState({ page: state.page - 1 })}>
          Previous
        </button>
        <span>Page {state.page}</span>
        <button type="button" disabled={(r.data?.messages.length ?? 0) < state.pageSize} onClick={() => setState({ page: state.page + 1 })}>
          Next
        </button>
      </nav>
      <Dialog title={open ? open.subject : ""} open={open !== null} onClose={() => setOpen(null)} wide>
        {open && (
          <>
            <p class="small muted">
              To {open.to}, <Time iso={open.created_at} />
            </p>
            <MailBody text={open.body} />
          </>
        )}
      </Dialog>
    </Section>
  );
}

const HEARTBEAT_URL = "/api/admin/heartbeat" as const;
const HEARTBEAT_OUTCOMES: Record<NonNullable<Heartbeat["last_run"]>["outcome"], { label: string; tone: string }> = {
  pinged: { label: "pinged", tone: "good" },
  ping_failed: { label: "ping failed", tone: "bad" },
  not_pinged: { label: "not pinged", tone: "warn" },
};

export function HeartbeatTab() {
  const r = useResource(() => get(HEARTBEAT_URL), []);
  const form = useForm({ url: "" });
  const [err, setErr] = useState<ApiError | undefined>();
  const h = r.data;
  const run = h?.last_run;
  return (
    <Section title="Heartbeat">
      <p class="muted">
        The URL of your own dead-man's switch (a healthchecks.io check, a Cronitor heartbeat...). After each scheduled run (every minute) in which every job finished
        and every monitored asset was collected within its window, Trust-Plane sends it a POST. When the pings stop, your checker tells you that Trust-Plane stopped.
      </p>
      <ErrorBox error={r.error ?? err} />
      {h?.configured && (
        <KeyValues
          items={[
            ["URL", <code>{h.url}</code>],
            ["Set", <Time iso={h.updated_at!} />],
            [
              "Latest run",
              run ? (
                <span data-testid="heartbeat-run">
                  <Badge value={null} tone={HEARTBEAT_OUTCOMES[run.outcome].tone} label={HEARTBEAT_OUTCOMES[run.outcome].label} /> <Time iso={run.at} />
                  {run.reason && <div class="small">{run.reason}</div>}
                </span>
              ) : (
                "no scheduled run since it was set"
              ),
            ],
            ["Last ping", run?.last_pinged_at ? <Time iso={run.last_pinged_at} /> : "never"],
          ]}
        />
      )}
      <Form
        form={form}
        label="Heartbeat URL"
        submitLabel={h?.configured ? "Replace URL" : "Set URL"}
        onSubmit={async () => {
          if (await form.submit((v) => put(HEARTBEAT_URL, { body: { url: v.url.trim() } }))) {
            form.reset();
            r.reload();
          }
        }}
      >
        <TextField form={form} name="url" label="Ping URL" placeholder="https://hc-ping.com/…" hint="Sealed when saved; shown afterwards as scheme, host and port only." />
      </Form>
      {h?.configured && (
        <ActionButton class="danger" label="Stop the heartbeat" onError={setErr} onClick={async () => (await del(HEARTBEAT_URL), r.reload())}>
          Stop the heartbeat
        </ActionButton>
      )}
    </Section>
  );
}
