/** Administration › API tokens: the user's own and (for an administrator) the organization's, scopes shown once, renew with the token itself, revoke. */
import { useState } from "preact/hooks";
import { ApiError, del, get, post, type Schemas } from "../api";
import { MODULE_LABELS, useSession } from "../session";
import { Form, TextField, useForm, type FormState } from "../ui/form";
import { useResource, useTableState } from "../ui/resource";
import { DataTable, localPage } from "../ui/table";
import { Time } from "../ui/time";
import { ActionButton, Badge, Chips, Dialog, ErrorBox, Notice, SecretOnce, Section } from "../ui/widgets";

/** A token as the lists show it (the organization's list adds who owns it). */
type Token = Schemas["TokenListingItem"] & { user_email?: string };

function ScopePicker({ form, held }: { form: FormState<{ scopes: string[] }>; held: string[] }) {
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

export function TokensTab() {
  const s = useSession();
  const own = useResource(() => (s.can("api-tokens:view_own_tokens") ? get("/api/api-tokens") : Promise.resolve({ tokens: [] as Token[] })), []);
  const org = useResource(() => (s.can("api-tokens:view_all_tokens") ? get("/api/api-tokens/org") : Promise.resolve(null)), []);
  const [state, setState] = useTableState({ sortBy: "created_at", sortOrder: "desc", pageSize: 20 });
  const [orgState, setOrgState] = useTableState({ sortBy: "created_at", sortOrder: "desc", pageSize: 20 });
  const form = useForm({ name: "", validity_days: "30", scopes: [] as string[] });
  const [created, setCreated] = useState<{ name: string; token: string; scopes: string[] } | null>(null);
  const [renewing, setRenewing] = useState<Token | null>(null);
  const [notice, setNotice] = useState("");
  const [err, setErr] = useState<ApiError>();
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
              <ActionButton class="danger" label={`Revoke ${t.name}`} confirm={`Revoke the token ${t.name}? It stops working at once.`} onError={setErr} onClick={async () => (setNotice((await del("/api/api-tokens/{token_id}", { params: { path: { token_id: t.id } } })).message), reload())}>
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
              let res: Schemas["CreateTokenResponse"] | undefined;
              if (await form.submit(async (v) => (res = await post("/api/api-tokens", { body: { name: v.name, validity_days: Number(v.validity_days), scopes: v.scopes } }))) && res) {
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
          const r = await post("/api/api-tokens/{token_id}/renew", { params: { path: { token_id: token.id } }, bearer: v.value, allowUnauthorized: true });
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

