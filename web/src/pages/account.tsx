/**
 * The signed-in user's own account: second factors (authenticator app with its QR code,
 * passkeys, recovery codes shown once), the password, and the sessions (where and how
 * each signed in, ending one or all others). A member whose organization requires a
 * second factor and who has none sees only the security part until they enroll one.
 */
import { useState } from "preact/hooks";
import { startRegistration, type PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/browser";
import { ApiError } from "../api";
import { del, get, post, type Schemas } from "../api";
import { setQuery, useLocation } from "../router";
import { useSession, type MfaStatus } from "../session";
import { Form, TextField, useForm } from "../ui/form";
import { QrCode } from "../ui/qr";
import { useResource, useTableState } from "../ui/resource";
import { DataTable, localPage } from "../ui/table";
import { Time } from "../ui/time";
import { ActionButton, Badge, ErrorBox, KeyValues, Notice, PageHeader, Section, TabPanel, Tabs } from "../ui/widgets";

type TotpEnrollment = Schemas["TotpEnrollment"];

const METHOD_LABELS: Record<string, string> = {
  password: "Password",
  "password+totp": "Password and authenticator app",
  "password+passkey": "Password and passkey",
  "password+recovery_code": "Password and recovery code",
  sso: "Single sign-on",
  signup: "Signup",
  invitation: "Invitation",
};

export function AccountPage() {
  const loc = useLocation();
  const s = useSession();
  const tabs = [
    { id: "security", label: "Security" },
    { id: "sessions", label: "Sessions" },
  ];
  const tab = tabs.find((t) => t.id === loc.query.get("tab"))?.id ?? "security";
  return (
    <div>
      <PageHeader title="Your account" />
      <p class="muted">{s.me.user.email}</p>
      <Tabs label="Account sections" tabs={tabs} active={tab} onSelect={(id) => setQuery({ tab: id })} />
      <TabPanel id={tab}>
        {tab === "security" && <SecurityTab />}
        {tab === "sessions" && <SessionsTab />}
      </TabPanel>
    </div>
  );
}

/** Second factors and the password. Also the whole page of a session that must enroll first. */
export function SecurityTab() {
  const s = useSession();
  const status = useResource(() => get("/api/auth/mfa"), []);
  const [codes, setCodes] = useState<string[] | null>(null);
  const enrolling = s.me.mfa_enrollment_required;
  const changed = async (newCodes?: string[] | null) => {
    status.reload();
    if (newCodes) setCodes(newCodes);
    // In the enrollment-only view, the session reloads once the codes are saved: reloading it
    // now ends that view (the first factor lifts the restriction) and the codes with it.
    if (newCodes && enrolling) return;
    await s.reload();
  };
  return (
    <>
      {s.me.mfa_enrollment_required && (
        <Notice kind="warn">
          {s.me.organization.name} requires a second factor. Set up an authenticator app or a passkey below; until then nothing else is available.
        </Notice>
      )}
      {codes && <RecoveryCodes codes={codes} onDone={() => (setCodes(null), enrolling ? void s.reload() : undefined)} />}
      <ErrorBox error={status.error} />
      {status.data && (
        <>
          <AuthenticatorApp status={status.data} onChanged={changed} />
          <Passkeys onChanged={changed} />
          <RecoveryCodesSection status={status.data} onChanged={changed} />
        </>
      )}
      {!s.me.mfa_enrollment_required && <PasswordSection />}
    </>
  );
}

/** The ten codes, shown once, with copy and download. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const text = codes.join("\n");
  return (
    <section class="card secret" role="status" aria-labelledby="recovery-title">
      <h2 id="recovery-title">Your recovery codes</h2>
      <p>
        <strong>Shown only now.</strong> Each signs you in once when your phone or passkey is out of reach. Keep them somewhere safe, apart from your devices: they cannot be shown again.
      </p>
      <ol class="recovery-codes" data-testid="recovery-codes">
        {codes.map((c) => (
          <li>
            <code>{c}</code>
          </li>
        ))}
      </ol>
      <div class="form-actions">
        <button type="button" onClick={() => navigator.clipboard?.writeText(text).then(() => setCopied(true), () => setCopied(false))}>
          {copied ? "Copied" : "Copy"}
        </button>
        <a class="button" download="trust-plane-recovery-codes.txt" href={`data:text/plain;charset=utf-8,${encodeURIComponent(`Trust-Plane recovery codes\n\n${text}\n`)}`}>
          Download
        </a>
        <button type="button" class="primary" onClick={onDone}>
          I have saved them
        </button>
      </div>
    </section>
  );
}

function AuthenticatorApp({ status, onChanged }: { status: MfaStatus; onChanged: (codes?: string[] | null) => Promise<void> }) {
  const [enrollment, setEnrollment] = useState<TotpEnrollment | null>(null);
  const [err, setErr] = useState<ApiError>();
  const verify = useForm({ code: "" });
  const remove = useForm({ code: "" });
  return (
    <Section title="Authenticator app">
      <ErrorBox error={err} />
      {status.totp_enabled ? (
        <>
          <p>
            <Badge value="ok" label="On" /> Sign-ins ask for the 6-digit code your app shows.
          </p>
          <Form
            form={remove}
            label="Remove the authenticator app"
            submitLabel="Remove the app"
            busyLabel="Removing…"
            onSubmit={async () => {
              const code = remove.values.code.replace(/\s/g, "");
              const body = /^\d{6}$/.test(code) ? { code } : { recovery_code: remove.values.code };
              if (await remove.submit(() => del("/api/auth/mfa/totp", { body }), ["code", "recovery_code"])) {
                remove.reset();
                await onChanged();
              }
            }}
          >
            <TextField form={remove} name="code" label="A current code (or a recovery code) to confirm" autoComplete="one-time-code" required />
          </Form>
        </>
      ) : enrollment ? (
        <div class="totp-enroll">
          <ol>
            <li>Open your authenticator app (1Password, Google Authenticator, Microsoft Authenticator, Aegis…) and add an account.</li>
            <li>Scan this code, or type the key by hand.</li>
            <li>Enter the 6-digit code the app then shows.</li>
          </ol>
          <QrCode text={enrollment.otpauth_uri} label={`QR code to add ${enrollment.account} to an authenticator app`} />
          <KeyValues
            items={[
              ["Key", <code data-testid="totp-secret">{enrollment.secret.replace(/(.{4})/g, "$1 ").trim()}</code>],
              ["Account", enrollment.account],
              ["Type", "Time-based, 6 digits, every 30 seconds"],
            ]}
          />
          <Form
            form={verify}
            label="Confirm the authenticator app"
            submitLabel="Turn on"
            busyLabel="Checking…"
            onCancel={() => setEnrollment(null)}
            onSubmit={async () => {
              let codes: string[] = [];
              if (await verify.submit(async (v) => (codes = (await post("/api/auth/mfa/totp/verify", { body: v })).recovery_codes))) {
                setEnrollment(null);
                verify.reset();
                await onChanged(codes);
              }
            }}
          >
            <TextField form={verify} name="code" label="Code from the app" inputMode="numeric" autoComplete="one-time-code" required />
          </Form>
        </div>
      ) : (
        <>
          <p>An app on your phone makes a new code every 30 seconds; a stolen password alone then no longer signs in.</p>
          <ActionButton class="primary" onError={setErr} onClick={async () => setEnrollment(await post("/api/auth/mfa/totp"))}>
            Set up an authenticator app
          </ActionButton>
        </>
      )}
    </Section>
  );
}

function Passkeys({ onChanged }: { onChanged: (codes?: string[] | null) => Promise<void> }) {
  const list = useResource(() => get("/api/auth/mfa/passkeys"), []);
  const form = useForm({ name: "" });
  const [err, setErr] = useState<ApiError>();
  const [state, setState] = useTableState({ sortBy: "created_at", pageSize: 20 });
  return (
    <Section title="Passkeys">
      <p>A passkey (your device's fingerprint or face unlock, or a security key) confirms sign-ins with a touch.</p>
      <ErrorBox error={err ?? list.error} />
      <DataTable
        caption="Passkeys"
        state={state}
        onState={setState}
        total={list.data?.passkeys.length}
        rows={list.data ? localPage(list.data.passkeys, state) : undefined}
        loading={list.loading}
        rowKey={(p) => p.id}
        empty={<p>No passkey yet.</p>}
        columns={[
          { label: "Name", sort: "name", render: (p) => p.name },
          { label: "Added", sort: "created_at", render: (p) => <Time iso={p.created_at} /> },
          { label: "Last used", sort: "last_used_at", render: (p) => (p.last_used_at ? <Time iso={p.last_used_at} /> : <span class="muted">never</span>) },
          { label: "Kind", render: (p) => (p.device_type === "multiDevice" ? "synced passkey" : "this device or key only") },
          {
            label: "Actions",
            render: (p) => (
              <ActionButton class="danger" label={`Remove the passkey ${p.name}`} confirm={`Remove the passkey “${p.name}”? Your other sessions will end.`} onError={setErr} onClick={async () => (await del("/api/auth/mfa/passkeys/{passkey_id}", { params: { path: { passkey_id: p.id } } }), list.reload(), await onChanged())}>
                Remove
              </ActionButton>
            ),
          },
        ]}
      />
      <Form
        form={form}
        label="Add a passkey"
        submitLabel="Add a passkey"
        busyLabel="Waiting for your device…"
        onSubmit={async () => {
          let codes: string[] | null = null;
          const ok = await form.submit(async (v) => {
            // The API documents its answer as the browser API's PublicKeyCredentialCreationOptionsJSON.
            const optionsJSON = (await post("/api/auth/mfa/passkeys/options")) as unknown as PublicKeyCredentialCreationOptionsJSON;
            let response;
            try {
              response = await startRegistration({ optionsJSON });
            } catch (e) {
              throw new ApiError(0, "passkey_cancelled", `No passkey was created: ${(e as Error).message}`);
            }
            codes = (await post("/api/auth/mfa/passkeys", { body: { name: v.name, response: { ...response } } })).recovery_codes;
          });
          if (ok) {
            form.reset();
            list.reload();
            await onChanged(codes);
          }
        }}
      >
        <TextField form={form} name="name" label="Name of the passkey" placeholder="Work laptop" hint="To tell your passkeys apart later." required />
      </Form>
    </Section>
  );
}

function RecoveryCodesSection({ status, onChanged }: { status: MfaStatus; onChanged: (codes?: string[] | null) => Promise<void> }) {
  const [err, setErr] = useState<ApiError>();
  if (!status.mfa_enabled) return null;
  return (
    <Section title="Recovery codes">
      <ErrorBox error={err} />
      <p>
        {status.recovery_codes_left} of 10 unused.{" "}
        {status.recovery_codes_left < 3 && <strong>Make new ones before you run out.</strong>}
      </p>
      <ActionButton confirm="Make ten new recovery codes? The old ones stop working." onError={setErr} onClick={async () => onChanged((await post("/api/auth/mfa/recovery-codes")).recovery_codes)}>
        Make new recovery codes
      </ActionButton>
    </Section>
  );
}

function PasswordSection() {
  const form = useForm({ current_password: "", new_password: "", confirm: "" });
  const [notice, setNotice] = useState("");
  return (
    <Section title="Password">
      {notice && <Notice kind="success">{notice}</Notice>}
      <Form
        form={form}
        label="Change your password"
        submitLabel="Change password"
        busyLabel="Changing…"
        onSubmit={async () => {
          let message = "";
          const ok = await form.submit(async (v) => {
            if (v.new_password !== v.confirm) throw new ApiError(400, "validation_error", "The passwords differ", [{ path: "confirm", message: "Type the same password twice" }]);
            message = (await post("/api/auth/password", { body: { current_password: v.current_password, new_password: v.new_password } })).message;
          });
          if (ok) {
            setNotice(message);
            form.reset();
          }
        }}
      >
        <TextField form={form} name="current_password" label="Current password" type="password" autoComplete="current-password" required />
        <TextField form={form} name="new_password" label="New password" type="password" autoComplete="new-password" hint="At least 12 characters. Your other sessions end." required />
        <TextField form={form} name="confirm" label="Repeat the new password" type="password" autoComplete="new-password" required />
      </Form>
    </Section>
  );
}

function SessionsTab() {
  const r = useResource(() => get("/api/auth/sessions"), []);
  const [state, setState] = useTableState({ sortBy: "last_used_at", sortOrder: "desc", pageSize: 20 });
  const [err, setErr] = useState<ApiError>();
  const [notice, setNotice] = useState("");
  const others = (r.data?.sessions ?? []).filter((x) => !x.current).length;
  return (
    <Section
      title="Sessions"
      actions={
        others > 0 && (
          <ActionButton confirm={`Sign out the ${others} other session${others === 1 ? "" : "s"}?`} onError={setErr} onClick={async () => (setNotice(`${(await del("/api/auth/sessions")).ended} other sessions ended.`), r.reload())}>
            Sign out everywhere else
          </ActionButton>
        )
      }
    >
      <p class="muted">Where you are signed in. "Last used" is updated every few minutes.</p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBox error={err} />
      <DataTable
        caption="Sessions"
        state={state}
        onState={setState}
        total={r.data?.sessions.length}
        rows={r.data ? localPage(r.data.sessions, state) : undefined}
        loading={r.loading}
        error={r.error}
        rowKey={(x) => x.id}
        empty={<p>No session.</p>}
        columns={[
          { label: "Signed in", sort: "created_at", render: (x) => <>{<Time iso={x.created_at} />} {x.current && <Badge value="info" tone="info" label="this session" />}</> },
          { label: "Last used", sort: "last_used_at", render: (x) => <Time iso={x.last_used_at} /> },
          { label: "Address", sort: "client_ip", render: (x) => x.client_ip ?? <span class="muted">unknown</span> },
          { label: "Browser", render: (x) => <span class="small">{x.user_agent ?? <span class="muted">unknown</span>}</span> },
          { label: "How", sort: "sign_in_method", render: (x) => METHOD_LABELS[x.sign_in_method] ?? x.sign_in_method },
          {
            label: "Actions",
            render: (x) =>
              x.current ? (
                <span class="muted small">Use “Log out” to end this one.</span>
              ) : (
                <ActionButton class="danger" label={`End the session signed in at ${x.created_at}`} onError={setErr} onClick={async () => (await del("/api/auth/sessions/{session_id}", { params: { path: { session_id: x.id } } }), r.reload())}>
                  End
                </ActionButton>
              ),
          },
        ]}
      />
    </Section>
  );
}
