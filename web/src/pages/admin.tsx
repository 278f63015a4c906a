/**
 * Administration: users and their roles, invitations, the roles catalogue, API
 * tokens (scopes, shown once, renew, revoke), audit log, subscription tier and
 * quotas, the mail outbox (the mailbox of a deployment without SMTP), sign-in: the
 * second-factor policy and single sign-on (admin-identity.tsx), and the heartbeat (the
 * team's own dead-man's switch, pinged after each healthy run).
 */
import { useState } from "preact/hooks";
import { ApiError } from "../api";
import { del, get, post, put } from "../api/legacy";
import { setQuery, useLocation } from "../router";
import { MODULE_LABELS, useSession } from "../session";
import { CheckField, Form, SelectField, TextField, useForm, type FormState } from "../ui/form";
import { limitOffset, useResource, useTableState } from "../ui/resource";
import { DataTable, localPage } from "../ui/table";
import { Time } from "../ui/time";
import { ActionButton, Badge, Chips, Dialog, ErrorBox, KeyValues, Notice, PageHeader, SecretOnce, Section, TabPanel, Tabs } from "../ui/widgets";
import { SecurityPolicyTab, SsoTab } from "./admin-identity";
import { RolePicker, type RoleRef, type RolesCatalog } from "./role-picker";

interface User {
  id: number;
  email: string;
  status: string;
  is_signup_user: boolean;
  weekly_audit_report_enabled: boolean;
  created_at: string;
  permissions: { module: string; role: string }[];
  mfa_enabled: boolean;
  sso_only: boolean;
}

export function AdminPage() {
  const s = useSession();
  const loc = useLocation();
  const tabs = [
    ...(s.canAny("admin:view_users", "admin:manage_users") ? [{ id: "users", label: "Users" }] : []),
    ...(s.can("admin:manage_users") ? [{ id: "invitations", label: "Invitations" }, { id: "roles", label: "Roles" }] : []),
    ...(s.canAny("api-tokens:view_own_tokens", "api-tokens:create_tokens", "api-tokens:view_all_tokens") ? [{ id: "tokens", label: "API tokens" }] : []),
    ...(s.can("admin:view_audit_logs") ? [{ id: "audit", label: "Audit log" }] : []),
    ...(s.can("admin:view_subscription") ? [{ id: "subscription", label: "Subscription" }] : []),
    ...(s.can("admin:manage_users") ? [{ id: "outbox", label: "Mail outbox" }] : []),
    ...(s.canAny("admin:view_users", "admin:manage_users") ? [{ id: "security", label: "Sign-in security" }, { id: "sso", label: "Single sign-on" }] : []),
    ...(s.can("admin:manage_users") ? [{ id: "heartbeat", label: "Heartbeat" }] : []),
  ];
  const tab = tabs.find((t) => t.id === loc.query.get("tab"))?.id ?? tabs[0]?.id;
  return (
    <div>
      <PageHeader title="Administration" />
      {!tab ? (
        <p class="empty">Your roles include no administration permission.</p>
      ) : (
        <>
          <Tabs label="Administration sections" tabs={tabs} active={tab} onSelect={(id) => setQuery({ tab: id })} />
          <TabPanel id={tab}>
            {tab === "users" && <UsersTab />}
            {tab === "invitations" && <InvitationsTab />}
            {tab === "roles" && <RolesTab />}
            {tab === "tokens" && <TokensTab />}
            {tab === "audit" && <AuditTab />}
            {tab === "subscription" && <SubscriptionTab />}
            {tab === "outbox" && <OutboxTab />}
            {tab === "security" && <SecurityPolicyTab />}
            {tab === "sso" && <SsoTab />}
            {tab === "heartbeat" && <HeartbeatTab />}
          </TabPanel>
        </>
      )}
    </div>
  );
}

function UsersTab() {
  const s = useSession();
  const r = useResource(() => get<{ users: User[] }>("/api/admin/users"), []);
  const catalog = useResource(() => (s.can("admin:manage_users") ? get<RolesCatalog>("/api/admin/roles") : Promise.resolve(undefined)), []);
  const [state, setState] = useTableState({ sortBy: "email", pageSize: 20 });
  const [editing, setEditing] = useState<User | null>(null);
  const [roles, setRoles] = useState<RoleRef[]>([]);
  // An error saving roles shows inside the (modal) role dialog: outside it, it would be hidden behind it.
  const [rolesErr, setRolesErr] = useState<ApiError>();
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
  const canManage = s.can("admin:manage_users");
  const canRoles = s.can("admin:manage_permissions") && canManage;
  return (
    <Section title="Users">
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      <DataTable
        caption="Users"
        state={state}
        onState={setState}
        total={r.data?.users.length}
        rows={r.data ? localPage(r.data.users, state) : undefined}
        loading={r.loading}
        error={r.error}
        rowKey={(u) => u.id}
        empty={<p>No user.</p>}
        columns={[
          { label: "Email", sort: "email", render: (u) => <>{u.email} {u.is_signup_user && <Badge value="info" tone="info" label="owner" />}</> },
          { label: "Status", sort: "status", render: (u) => <Badge value={u.status} /> },
          { label: "Roles", render: (u) => <Chips items={u.permissions.map((p) => `${MODULE_LABELS[p.module] ?? p.module}: ${p.role}`)} label="Roles" /> },
          { label: "Weekly report", render: (u) => (u.weekly_audit_report_enabled ? "yes" : "no") },
          { label: "Second factor", render: (u) => (u.mfa_enabled ? <Badge value="ok" label="on" /> : u.sso_only ? <span class="muted">SSO only</span> : <Badge value="warn" label="off" />) },
          { label: "Joined", sort: "created_at", render: (u) => <Time iso={u.created_at} date /> },
          ...(canManage
            ? [
                {
                  label: "Actions",
                  render: (u: User) =>
                    u.is_signup_user ? (
                      <span class="muted small">The owner cannot be changed.</span>
                    ) : (
                      <span class="row-actions">
                        {canRoles && (
                          <button type="button" aria-label={`Roles of ${u.email}`} onClick={() => (setRoles(u.permissions.map((p) => ({ module_name: p.module, role_name: p.role }))), setRolesErr(undefined), setEditing(u))}>
                            Roles
                          </button>
                        )}
                        <ActionButton label={`${u.status === "active" ? "Disable" : "Enable"} ${u.email}`} onError={setErr} onClick={async () => (setNotice((await put(`/api/admin/users/${u.id}/status`, { status: u.status === "active" ? "disabled" : "active" })).message), r.reload())}>
                          {u.status === "active" ? "Disable" : "Enable"}
                        </ActionButton>
                        {u.mfa_enabled && (
                          <ActionButton
                            label={`Reset the second factors of ${u.email}`}
                            confirm={`Remove every second factor of ${u.email} (app, passkeys, recovery codes)? They are signed out and told by email.`}
                            onError={setErr}
                            onClick={async () => (setNotice((await del(`/api/admin/users/${u.id}/mfa`)).message), r.reload())}
                          >
                            Reset 2FA
                          </ActionButton>
                        )}
                        <ActionButton class="danger" label={`Remove ${u.email}`} confirm={`Remove ${u.email}? This cannot be undone.`} onError={setErr} onClick={async () => (setNotice((await del(`/api/admin/users/${u.id}`)).message), r.reload())}>
                          Remove
                        </ActionButton>
                      </span>
                    ),
                },
              ]
            : []),
        ]}
      />
      <Dialog title={editing ? `Roles of ${editing.email}` : ""} open={editing !== null} onClose={() => setEditing(null)}>
        {editing && (
          <div class="form">
            <RolePicker catalog={catalog.data} value={roles} onChange={setRoles} />
            <ErrorBox error={rolesErr} />
            <div class="form-actions">
              <ActionButton
                class="primary"
                busyLabel="Saving…"
                onError={setRolesErr}
                onClick={async () => {
                  setRolesErr(undefined);
                  setNotice((await put(`/api/admin/users/${editing.id}`, { roles })).message);
                  setEditing(null);
                  r.reload();
                }}
              >
                Save roles
              </ActionButton>
              <button type="button" onClick={() => setEditing(null)}>
                Cancel
              </button>
            </div>
          </div>
        )}
      </Dialog>
    </Section>
  );
}

function InvitationsTab() {
  const r = useResource(() => get<{ invitations: any[] }>("/api/admin/invitations"), []);
  const catalog = useResource(() => get<RolesCatalog>("/api/admin/roles"), []);
  const [state, setState] = useTableState({ sortBy: "sent_at", sortOrder: "desc", pageSize: 20 });
  const form = useForm({ email: "", roles: [] as RoleRef[], weekly_audit_report_enabled: false });
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
  return (
    <>
      <Section title="Invite a colleague">
        {notice && <Notice kind="success">{notice}</Notice>}
        <Form
          form={form}
          label="Invite"
          submitLabel="Send invitation"
          busyLabel="Sending…"
          onSubmit={async () => {
            let m = "";
            if (await form.submit(async (v) => (m = (await post("/api/admin/invitations", v)).message))) {
              setNotice(m);
              form.reset();
              r.reload();
            }
          }}
        >
          <TextField form={form} name="email" label="Email" type="email" required />
          <RolePicker catalog={catalog.data} value={form.values.roles} onChange={(v) => form.set("roles", v)} />
          {form.errors.roles && <div class="field-error">{form.errors.roles}</div>}
          <CheckField form={form} name="weekly_audit_report_enabled" label="Send them the weekly audit report" />
        </Form>
      </Section>
      <Section title="Pending invitations">
        <ErrorBox error={err} />
        <DataTable
          caption="Invitations"
          state={state}
          onState={setState}
          total={r.data?.invitations.length}
          rows={r.data ? localPage(r.data.invitations, state, (x, k) => x[k]) : undefined}
          loading={r.loading}
          error={r.error}
          rowKey={(i) => i.id}
          empty={<p>No pending invitation.</p>}
          columns={[
            { label: "Email", sort: "email", render: (i) => i.email },
            { label: "Roles", render: (i) => <Chips items={i.roles.map((x: RoleRef) => `${MODULE_LABELS[x.module_name] ?? x.module_name}: ${x.role_name}`)} /> },
            { label: "Status", sort: "status", render: (i) => <Badge value={i.status === "expired" ? "expired" : "pending"} label={i.status} /> },
            { label: "Sent", sort: "sent_at", render: (i) => <Time iso={i.sent_at} /> },
            { label: "Expires", sort: "expires_at", render: (i) => <Time iso={i.expires_at} /> },
            { label: "Actions", render: (i) => <ActionButton label={`Resend the invitation to ${i.email}`} onError={setErr} onClick={async () => (setNotice((await post(`/api/admin/invitations/${i.id}/resend`)).message), r.reload())}>Resend</ActionButton> },
          ]}
        />
      </Section>
    </>
  );
}

function RolesTab() {
  const r = useResource(() => get<RolesCatalog>("/api/admin/roles"), []);
  return (
    <Section title="Roles and what they grant">
      <ErrorBox error={r.error} />
      {r.data?.modules.map((m) => (
        <div class="roles-module">
          <h3>{MODULE_LABELS[m.module] ?? m.module}</h3>
          <dl class="kv">
            {m.roles.map((role) => (
              <>
                <dt>{role.name}</dt>
                <dd>
                  {role.description}
                  <Chips items={role.permissions} label={`Permissions of ${role.name}`} />
                </dd>
              </>
            ))}
          </dl>
        </div>
      ))}
    </Section>
  );
}

interface Token {
  id: number;
  name: string;
  token_prefix: string;
  scopes: string[];
  validity_days: number;
  expires_at: string;
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
  status: string;
  user_email?: string;
}

function ScopePicker({ form, held }: { form: FormState<any>; held: string[] }) {
  const byModule = new Map<string, string[]>();
  for (const p of held) {
    const [m] = p.split(":");
    byModule.set(m, [...(byModule.get(m) ?? []), p]);
  }
  const chosen: string[] = form.values.scopes;
  return (
    <fieldset class="field scopes">
      <legend>Scopes (what the token may do; at most what you may do)</legend>
      {[...byModule.entries()].map(([m, ps]) => (
        <fieldset class="scope-group">
          <legend>{MODULE_LABELS[m] ?? m}</legend>
          {ps.map((p) => (
            <label class="check-inline">
              <input type="checkbox" checked={chosen.includes(p)} onChange={(e) => form.set("scopes", (e.target as HTMLInputElement).checked ? [...chosen, p] : chosen.filter((x) => x !== p))} /> {p.split(":")[1].replace(/_/g, " ")}
            </label>
          ))}
        </fieldset>
      ))}
      {form.errors.scopes && <div class="field-error" data-field-error="scopes">{form.errors.scopes}</div>}
    </fieldset>
  );
}

function TokensTab() {
  const s = useSession();
  const own = useResource(() => (s.can("api-tokens:view_own_tokens") ? get<{ tokens: Token[] }>("/api/api-tokens") : Promise.resolve({ tokens: [] as Token[] })), []);
  const org = useResource(() => (s.can("api-tokens:view_all_tokens") ? get<{ tokens: Token[] }>("/api/api-tokens/org") : Promise.resolve(null)), []);
  const [state, setState] = useTableState({ sortBy: "created_at", sortOrder: "desc", pageSize: 20 });
  const [orgState, setOrgState] = useTableState({ sortBy: "created_at", sortOrder: "desc", pageSize: 20 });
  const form = useForm({ name: "", validity_days: "30", scopes: [] as string[] });
  const [created, setCreated] = useState<{ name: string; token: string; scopes: string[] } | null>(null);
  const [renewing, setRenewing] = useState<Token | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<any>();
  const reload = () => (own.reload(), org.reload());
  const canRevokeOwn = s.can("api-tokens:delete_tokens") || s.can("api-tokens:revoke_all_tokens");
  const columns = (revoke: boolean, withUser: boolean) => [
    { label: "Name", sort: "name", render: (t: Token) => <strong>{t.name}</strong> },
    ...(withUser ? [{ label: "User", sort: "user_email", render: (t: Token) => t.user_email }] : []),
    { label: "Token", render: (t: Token) => <span class="mono">{t.token_prefix}…</span> },
    { label: "Scopes", render: (t: Token) => <details><summary>{t.scopes.length} scopes</summary><Chips items={t.scopes} /></details> },
    { label: "Status", sort: "status", render: (t: Token) => <Badge value={t.status === "active" ? "active" : t.status === "expired" ? "expired" : "revoked"} label={t.status} /> },
    { label: "Expires", sort: "expires_at", render: (t: Token) => <Time iso={t.expires_at} /> },
    { label: "Last used", sort: "last_used_at", render: (t: Token) => <Time iso={t.last_used_at} /> },
    { label: "Created", sort: "created_at", render: (t: Token) => <Time iso={t.created_at} /> },
    {
      label: "Actions",
      render: (t: Token) =>
        t.status !== "active" ? (
          <span class="muted">—</span>
        ) : (
          <span class="row-actions">
            {!withUser && (
              <button type="button" aria-label={`Renew ${t.name}`} onClick={() => setRenewing(t)}>
                Renew
              </button>
            )}
            {revoke && (
              <ActionButton class="danger" label={`Revoke ${t.name}`} confirm={`Revoke the token ${t.name}? It stops working at once.`} onError={setErr} onClick={async () => (setNotice((await del(`/api/api-tokens/${t.id}`)).message), reload())}>
                Revoke
              </ActionButton>
            )}
          </span>
        ),
    },
  ];
  return (
    <>
      {s.can("api-tokens:create_tokens") && (
        <Section title="Create an API token">
          {created && <SecretOnce label={`API token ${created.name}, with ${created.scopes.length} scopes.`} value={created.token} />}
          <Form
            form={form}
            label="Create an API token"
            submitLabel="Create token"
            onSubmit={async () => {
              let res: any;
              if (await form.submit(async (v) => (res = await post("/api/api-tokens", { name: v.name, validity_days: Number(v.validity_days), scopes: v.scopes })))) {
                setCreated({ name: res.name, token: res.token, scopes: res.scopes });
                form.reset();
                reload();
              }
            }}
          >
            <TextField form={form} name="name" label="Name" hint="What uses it, e.g. ci-deploy." required />
            <TextField form={form} name="validity_days" label="Valid for (days, 1 to 30)" inputMode="numeric" required />
            <ScopePicker form={form} held={s.me.permissions} />
          </Form>
        </Section>
      )}
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      {s.can("api-tokens:view_own_tokens") && (
        <Section title="Your tokens">
          <DataTable
            caption="Your API tokens"
            state={state}
            onState={setState}
            total={own.data?.tokens.length}
            rows={own.data ? localPage(own.data.tokens, state) : undefined}
            loading={own.loading}
            error={own.error}
            rowKey={(t) => t.id}
            empty={<p>You have no API token.</p>}
            columns={columns(canRevokeOwn, false)}
          />
        </Section>
      )}
      {org.data && (
        <Section title="All tokens of the organization">
          <DataTable
            caption="All API tokens"
            state={orgState}
            onState={setOrgState}
            total={org.data.tokens.length}
            rows={localPage(org.data.tokens, orgState)}
            loading={org.loading}
            error={org.error}
            rowKey={(t) => t.id}
            empty={<p>No token in the organization.</p>}
            columns={columns(s.can("api-tokens:revoke_all_tokens"), true)}
          />
        </Section>
      )}
      <Dialog title={renewing ? `Renew ${renewing.name}` : ""} open={renewing !== null} onClose={() => setRenewing(null)}>
        {renewing && <RenewForm token={renewing} onDone={(m) => (setNotice(m), setRenewing(null), reload())} onCancel={() => setRenewing(null)} />}
      </Dialog>
    </>
  );
}

/** Renewal is authenticated with the token itself: the user pastes it. */
function RenewForm({ token, onDone, onCancel }: { token: Token; onDone: (m: string) => void; onCancel: () => void }) {
  const form = useForm({ value: "" });
  return (
    <Form
      form={form}
      label="Renew token"
      submitLabel="Renew"
      onCancel={onCancel}
      onSubmit={async () => {
        let m = "";
        const ok = await form.submit(async (v) => {
          if (!v.value.startsWith(token.token_prefix)) {
            throw new ApiError(400, "validation_error", "That is not this token", [{ path: "value", message: `The token starts with ${token.token_prefix}` }]);
          }
          const r = await post(`/api/api-tokens/${token.id}/renew`, undefined, { bearer: v.value, allowUnauthorized: true });
          m = `${r.message} New expiry: ${new Date(r.expires_at).toLocaleString()}.`;
        });
        if (ok) onDone(m);
      }}
    >
      <p>
        A token is renewed with itself, for another {token.validity_days} days from now. Paste the token that starts with <code>{token.token_prefix}</code>; it is sent once and not kept.
      </p>
      <TextField form={form} name="value" label="Token value" type="password" autoComplete="off" required />
    </Form>
  );
}

function AuditTab() {
  const [state, setState] = useTableState({ sortBy: "created_at", sortOrder: "desc", pageSize: 50 });
  const r = useResource(() => get<{ audit_logs: any[]; total: number }>("/api/admin/audit-logs", limitOffset(state)), [state]);
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

function SubscriptionTab() {
  const s = useSession();
  const r = useResource(() => get<{ tier: string; limits: Record<string, number>; usage: Record<string, number> }>("/api/admin/subscription"), []);
  const form = useForm({ tier: "" });
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
                if (await form.submit((v) => put("/api/admin/subscription", { tier: v.tier || d.tier }))) {
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

function OutboxTab() {
  const [state, setState] = useTableState({ sortBy: "created_at", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get<{ messages: any[] }>("/api/admin/mail-outbox", limitOffset(state)), [state]);
  const [open, setOpen] = useState<any>(null);
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

interface Heartbeat {
  configured: boolean;
  /** Scheme, host and port; the rest of the URL is the check's credential and never returned. */
  url: string | null;
  created_at: string | null;
  updated_at: string | null;
  last_run: {
    at: string;
    outcome: "pinged" | "ping_failed" | "not_pinged";
    reason: string | null;
    error_class: string | null;
    http_status: number | null;
    last_pinged_at: string | null;
  } | null;
}

const HEARTBEAT_URL = "/api/admin/heartbeat";
const HEARTBEAT_OUTCOMES: Record<NonNullable<Heartbeat["last_run"]>["outcome"], { label: string; tone: string }> = {
  pinged: { label: "pinged", tone: "good" },
  ping_failed: { label: "ping failed", tone: "bad" },
  not_pinged: { label: "not pinged", tone: "warn" },
};

function HeartbeatTab() {
  const r = useResource(() => get<Heartbeat>(HEARTBEAT_URL), []);
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
          if (await form.submit((v) => put(HEARTBEAT_URL, { url: v.url.trim() }))) {
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
