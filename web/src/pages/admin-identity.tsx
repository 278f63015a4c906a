/**
 * Administration of sign-in: the organization's second-factor policy, and single
 * sign-on (the OpenID provider, its email domains with the DNS TXT record that proves
 * each, default roles, enforcement with its break-glass administrator).
 */
import { useState } from "preact/hooks";
import { ApiError } from "../api";
import { del, get, post, put } from "../api";
import { useSession } from "../session";
import { CheckField, Form, SelectField, TextArea, TextField, useForm } from "../ui/form";
import { useResource } from "../ui/resource";
import { Time } from "../ui/time";
import { ActionButton, Badge, ErrorBox, KeyValues, Notice, Section } from "../ui/widgets";
import { RolePicker, type RoleRef } from "./role-picker";

export function SecurityPolicyTab() {
  const s = useSession();
  const r = useResource(() => get("/api/admin/security-policy"), []);
  const form = useForm({ require_mfa: false });
  const [loaded, setLoaded] = useState(false);
  const [notice, setNotice] = useState("");
  if (r.data && !loaded) {
    form.setAll({ require_mfa: r.data.require_mfa });
    setLoaded(true);
  }
  const canManage = s.can("admin:manage_users");
  return (
    <Section title="Second factor">
      <ErrorBox error={r.error} />
      {notice && <Notice kind="success">{notice}</Notice>}
      {r.data && (
        <>
          <p>
            {r.data.members_without_mfa === 0 ? "Every active member has a second factor." : `${r.data.members_without_mfa} active member${r.data.members_without_mfa === 1 ? " has" : "s have"} no second factor.`}{" "}
            Members signing in through single sign-on are left to the identity provider's own rules. API tokens are not affected.
          </p>
          {!s.me.mfa.mfa_enabled && !r.data.require_mfa && (
            <Notice kind="info">
              Set up your own second factor first (<a href="/account">Your account</a>): the policy would otherwise restrict you too.
            </Notice>
          )}
          {canManage && (
            <Form
              form={form}
              label="Second-factor policy"
              submitLabel="Save policy"
              busyLabel="Saving…"
              onSubmit={async () => {
                if (await form.submit((v) => put("/api/admin/security-policy", { body: v }))) {
                  setNotice(form.values.require_mfa ? "Saved: members without a second factor must now set one up before anything else." : "Saved: a second factor is optional.");
                  r.reload();
                }
              }}
            >
              <CheckField form={form} name="require_mfa" label="Require a second factor of every member" hint="Takes effect at once: members without one can only set one up until they have." />
            </Form>
          )}
        </>
      )}
    </Section>
  );
}

export function SsoTab() {
  const s = useSession();
  const canManage = s.can("admin:manage_users");
  const r = useResource(async () => {
    try {
      return await get("/api/admin/sso");
    } catch (e) {
      if (e instanceof ApiError && e.status === 404 && e.code === "not_found" && !/endpoint/i.test(e.message)) return null;
      throw e;
    }
  }, []);
  const users = useResource(() => get("/api/admin/users"), []);
  const catalog = useResource(() => (canManage ? get("/api/admin/roles") : Promise.resolve(undefined)), []);
  const form = useForm({ issuer: "", client_id: "", client_secret: "", email_domains: "", default_roles: [] as RoleRef[], enforce: false, break_glass_user_id: "" });
  const [loaded, setLoaded] = useState(false);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
  if (r.data !== undefined && !loaded) {
    if (r.data) {
      form.setAll({
        issuer: r.data.issuer,
        client_id: r.data.client_id,
        client_secret: "",
        email_domains: r.data.email_domains.map((d) => d.domain).join("\n"),
        default_roles: r.data.default_roles,
        enforce: r.data.enforce,
        break_glass_user_id: r.data.break_glass_user_id ? String(r.data.break_glass_user_id) : "",
      });
    }
    setLoaded(true);
  }
  const redirectUri = r.data?.redirect_uri ?? `${window.location.origin}/api/auth/sso/callback`;
  const admins = (users.data?.users ?? []).filter((u) => u.status === "active" && !u.sso_only && (u.is_signup_user || u.permissions.some((p) => p.module === "admin")));
  return (
    <>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={r.error ?? err} />
      {r.data && (
        <Section title="Email domains">
          <p>A domain counts only once a DNS TXT record proves your organization controls it. Publish the record, then check it.</p>
          <div class="sso-domains">
            {r.data.email_domains.map((d) => (
              <div class="card-inner" data-testid={`sso-domain-${d.domain}`}>
                <h3>
                  {d.domain} {d.verified ? <Badge value="ok" label="verified" /> : <Badge value="warn" label="not verified" />}
                </h3>
                <KeyValues
                  items={[
                    ["TXT record name", <code>{d.txt_record_name}</code>],
                    ["TXT record value", <code>{d.txt_record_value}</code>],
                    ["Verified", d.verified_at ? <Time iso={d.verified_at} /> : null],
                    ["Last checked", d.last_checked_at ? <Time iso={d.last_checked_at} /> : <span class="muted">never</span>],
                    ...(d.last_check_error ? ([["Last check", <span class="field-error">{d.last_check_error}</span>]] as [string, preact.ComponentChildren][]) : []),
                  ]}
                />
                {canManage && (
                  <ActionButton label={`Check DNS now for ${d.domain}`} busyLabel="Looking up…" onError={(e) => (setErr(e), r.reload())} onClick={async () => (setErr(undefined), await post("/api/admin/sso/domains/{domain}/verify", { params: { path: { domain: d.domain } } }), setNotice(`${d.domain} is verified.`), r.reload())}>
                    Check DNS now
                  </ActionButton>
                )}
              </div>
            ))}
          </div>
        </Section>
      )}
      <Section title={r.data ? "Identity provider" : "Set up single sign-on"}>
        <p>
          Any OpenID Connect provider: Okta, Microsoft Entra ID, Google Workspace, Keycloak, Authentik. Register a web application there with this redirect URI:{" "}
          <code data-testid="redirect-uri">{redirectUri}</code>
        </p>
        {r.data && (
          <p class="muted small">
            Discovery read at <Time iso={r.data.discovered_at} />.
          </p>
        )}
        {canManage ? (
          <Form
            form={form}
            label="Single sign-on"
            submitLabel="Save"
            busyLabel="Checking the provider…"
            onSubmit={async () => {
              const v = form.values;
              const body = {
                issuer: v.issuer.trim(),
                client_id: v.client_id.trim(),
                ...(v.client_secret ? { client_secret: v.client_secret } : {}),
                email_domains: v.email_domains.split(/[\s,]+/).filter(Boolean),
                default_roles: v.default_roles,
                enforce: v.enforce,
                ...(v.break_glass_user_id ? { break_glass_user_id: Number(v.break_glass_user_id) } : {}),
              };
              if (await form.submit(() => put("/api/admin/sso", { body }), ["issuer", "client_id", "client_secret", "email_domains", "default_roles", "enforce", "break_glass_user_id"])) {
                setNotice("Saved. Publish the TXT record of each new domain, then check it.");
                form.set("client_secret", "");
                r.reload();
              }
            }}
          >
            <TextField form={form} name="issuer" label="Issuer URL" placeholder="https://login.corp.example/realms/main" hint="Where the provider's /.well-known/openid-configuration is." required />
            <TextField form={form} name="client_id" label="Client ID" required />
            <TextField form={form} name="client_secret" label="Client secret" type="password" autoComplete="off" hint={r.data ? "Saved (sealed). Leave empty to keep it." : "Sealed when saved; never shown again."} />
            <TextArea form={form} name="email_domains" label="Email domains" hint="One per line: whose members sign in through this provider." rows={3} required />
            <RolePicker catalog={catalog.data} value={form.values.default_roles} onChange={(v) => form.set("default_roles", v)} legend="Roles of members created at their first sign-in" />
            {form.errors.default_roles && <div class="field-error">{form.errors.default_roles}</div>}
            <CheckField form={form} name="enforce" label="Enforce: members of these domains cannot sign in with a password" hint="Except the break-glass administrator below, who keeps a password for when the provider is down." />
            <SelectField
              form={form}
              name="break_glass_user_id"
              label="Break-glass administrator"
              options={[{ value: "", label: "You (default)" }, ...admins.map((u) => ({ value: String(u.id), label: u.email }))]}
            />
          </Form>
        ) : (
          !r.data && <p class="empty">Single sign-on is not configured.</p>
        )}
        {r.data && canManage && (
          <p>
            <ActionButton class="danger" confirm="Remove single sign-on? Members sign in with passwords again; members created by SSO have none." onError={setErr} onClick={async () => (setNotice((await del("/api/admin/sso")).message), setLoaded(false), r.reload())}>
              Remove single sign-on
            </ActionButton>
          </p>
        )}
      </Section>
    </>
  );
}
