/**
 * Administration: users and their roles, invitations, the roles catalogue, API
 * tokens (scopes, shown once, renew, revoke), audit log, subscription tier and
 * quotas, the mail outbox (the mailbox of a deployment without SMTP), sign-in: the
 * second-factor policy and single sign-on (admin-identity.tsx), and the heartbeat (the
 * team's own dead-man's switch, pinged after each healthy run).
 */
import { useState } from "preact/hooks";
import { del, get, post, put, type ApiError, type Schemas } from "../api";
import { setQuery, useLocation } from "../router";
import { MODULE_LABELS, useSession } from "../session";
import { CheckField, Form, TextField, useForm } from "../ui/form";
import { useResource, useTableState } from "../ui/resource";
import { DataTable, localPage } from "../ui/table";
import { Time } from "../ui/time";
import { ActionButton, Badge, Chips, Dialog, ErrorBox, Notice, PageHeader, Section, TabPanel, Tabs } from "../ui/widgets";
import { SecurityPolicyTab, SsoTab } from "./admin-identity";
import { AuditTab, HeartbeatTab, OutboxTab, SubscriptionTab } from "./admin-service";
import { TokensTab } from "./admin-tokens";
import { RolePicker, type RoleRef } from "./role-picker";

type User = Schemas["User"];

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
  const r = useResource(() => get("/api/admin/users"), []);
  const catalog = useResource(() => (s.can("admin:manage_users") ? get("/api/admin/roles") : Promise.resolve(undefined)), []);
  const [state, setState] = useTableState({ sortBy: "email", pageSize: 20 });
  const [editing, setEditing] = useState<User | null>(null);
  const [roles, setRoles] = useState<RoleRef[]>([]);
  // An error saving roles shows inside the (modal) role dialog: outside it, it would be hidden behind it.
  const [rolesErr, setRolesErr] = useState<ApiError>();
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
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
                        <ActionButton label={`${u.status === "active" ? "Disable" : "Enable"} ${u.email}`} onError={setErr} onClick={async () => (setNotice((await put("/api/admin/users/{user_id}/status", { params: { path: { user_id: u.id } }, body: { status: u.status === "active" ? "disabled" : "active" } })).message), r.reload())}>
                          {u.status === "active" ? "Disable" : "Enable"}
                        </ActionButton>
                        {u.mfa_enabled && (
                          <ActionButton
                            label={`Reset the second factors of ${u.email}`}
                            confirm={`Remove every second factor of ${u.email} (app, passkeys, recovery codes)? They are signed out and told by email.`}
                            onError={setErr}
                            onClick={async () => (setNotice((await del("/api/admin/users/{user_id}/mfa", { params: { path: { user_id: u.id } } })).message), r.reload())}
                          >
                            Reset 2FA
                          </ActionButton>
                        )}
                        <ActionButton class="danger" label={`Remove ${u.email}`} confirm={`Remove ${u.email}? This cannot be undone.`} onError={setErr} onClick={async () => (setNotice((await del("/api/admin/users/{user_id}", { params: { path: { user_id: u.id } } })).message), r.reload())}>
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
                  setNotice((await put("/api/admin/users/{user_id}", { params: { path: { user_id: editing.id } }, body: { roles } })).message);
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
  const r = useResource(() => get("/api/admin/invitations"), []);
  const catalog = useResource(() => get("/api/admin/roles"), []);
  const [state, setState] = useTableState({ sortBy: "sent_at", sortOrder: "desc", pageSize: 20 });
  const form = useForm({ email: "", roles: [] as RoleRef[], weekly_audit_report_enabled: false });
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
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
            if (await form.submit(async (v) => (m = (await post("/api/admin/invitations", { body: v })).message))) {
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
          rows={r.data ? localPage(r.data.invitations, state) : undefined}
          loading={r.loading}
          error={r.error}
          rowKey={(i) => i.id}
          empty={<p>No pending invitation.</p>}
          columns={[
            { label: "Email", sort: "email", render: (i) => i.email },
            { label: "Roles", render: (i) => <Chips items={i.roles.map((x) => `${MODULE_LABELS[x.module_name] ?? x.module_name}: ${x.role_name}`)} /> },
            { label: "Status", sort: "status", render: (i) => <Badge value={i.status === "expired" ? "expired" : "pending"} label={i.status} /> },
            { label: "Sent", sort: "sent_at", render: (i) => <Time iso={i.sent_at} /> },
            { label: "Expires", sort: "expires_at", render: (i) => <Time iso={i.expires_at} /> },
            { label: "Actions", render: (i) => <ActionButton label={`Resend the invitation to ${i.email}`} onError={setErr} onClick={async () => (setNotice((await post("/api/admin/invitations/{invitation_id}/resend", { params: { path: { invitation_id: i.id } } })).message), r.reload())}>Resend</ActionButton> },
          ]}
        />
      </Section>
    </>
  );
}

function RolesTab() {
  const r = useResource(() => get("/api/admin/roles"), []);
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

