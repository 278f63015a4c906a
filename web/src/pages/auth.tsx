/**
 * Sign-in, signup and invitation acceptance: the pages that work without a session.
 * The sign-in has up to two steps: the password, then (for an account with a second
 * factor) the authenticator app's code, a passkey, or a recovery code. "Sign in with
 * SSO" sends the browser to the organization's identity provider; a refused SSO
 * sign-in comes back here with its reason (`?sso_error=`).
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { ApiError } from "../api";
import { post, type Schemas } from "../api";
import { useLocation } from "../router";
import { Form, TextField, useForm } from "../ui/form";
import { ActionButton, ErrorBox, Notice } from "../ui/widgets";

/** The answer of a correct password when a second factor must follow. */
export type MfaRequired = Schemas["MfaRequired"];

const PASSWORD_HINT = "At least 12 characters. A passphrase of several words is easiest to remember.";

export function PublicFrame({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <main id="main" class="public">
      <div class="public-card">
        <p class="brand-lg">
          <span aria-hidden="true" class="logo">
            ◆
          </span>{" "}
          Trust-Plane
        </p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

export function LoginPage({ onDone }: { onDone: () => Promise<void> }) {
  const loc = useLocation();
  const form = useForm({ email: "", password: "" });
  const [step, setStep] = useState<MfaRequired | null>(null);
  const [restartReason, setRestartReason] = useState("");
  const [ssoProblem, setSsoProblem] = useState("");
  const ssoError = loc.query.get("sso_error");
  if (step) {
    return (
      <SecondFactorStep
        challenge={step}
        onDone={onDone}
        onRestart={(why) => {
          setStep(null);
          setRestartReason(why);
        }}
      />
    );
  }
  const signInWithSso = () => {
    const email = form.values.email.trim();
    if (!email.includes("@")) return setSsoProblem("Type your work email first: its domain tells which organization signs you in.");
    const next = loc.query.get("next");
    const query = new URLSearchParams({ email, ...(next && next.startsWith("/") && !next.startsWith("//") ? { return_to: next } : {}) });
    // A navigation, not a fetch: the identity provider's pages take over the browser.
    window.location.assign(`/api/auth/sso/start?${query}`);
  };
  return (
    <PublicFrame title="Log in">
      {ssoError && <Notice kind="warn">Single sign-on did not sign you in: {ssoError}</Notice>}
      {restartReason && <Notice kind="warn">{restartReason}</Notice>}
      <Form
        form={form}
        label="Log in"
        submitLabel="Log in"
        busyLabel="Logging in…"
        onSubmit={async () => {
          let answer: Schemas["LoginResponse"] | undefined;
          if (await form.submit(async (v) => (answer = await post("/api/auth/login", { body: v, allowUnauthorized: true })))) {
            if (answer && "mfa_required" in answer) {
              setRestartReason("");
              setStep(answer);
            } else await onDone();
          }
        }}
      >
        <TextField form={form} name="email" label="Email" type="email" autoComplete="username" required />
        <TextField form={form} name="password" label="Password" type="password" autoComplete="current-password" required />
      </Form>
      <div class="sso">
        <p class="muted">Does your organization sign you in through its identity provider?</p>
        <button type="button" onClick={signInWithSso}>
          Sign in with SSO
        </button>
        {ssoProblem && (
          <p class="field-error" role="alert">
            {ssoProblem}
          </p>
        )}
      </div>
      <p>
        New here? <a href="/signup">Create an organization</a>.
      </p>
    </PublicFrame>
  );
}

/** The second step: a code of the app, a passkey, or a recovery code, within the token's 5 minutes. */
function SecondFactorStep({ challenge, onDone, onRestart }: { challenge: MfaRequired; onDone: () => Promise<void>; onRestart: (why: string) => void }) {
  const hasApp = challenge.methods.includes("totp");
  const [useRecovery, setUseRecovery] = useState(!hasApp);
  const form = useForm({ code: "", recovery_code: "" });
  const [passkeyError, setPasskeyError] = useState<ApiError>();
  const complete = async (proof: Omit<Schemas["LoginMfaRequest"], "mfa_token">) => {
    try {
      const answer = await post("/api/auth/login/mfa", { body: { mfa_token: challenge.mfa_token, ...proof }, allowUnauthorized: true });
      if (answer.recovery_codes_left !== undefined && answer.recovery_codes_left < 3) {
        window.alert(`${answer.recovery_codes_left} recovery codes left: make new ones under Account › Security.`);
      }
      await onDone();
    } catch (e) {
      // The token is spent or expired: only the password step can make a new one.
      if (e instanceof ApiError && e.code === "token_expired") return onRestart(e.message);
      throw e;
    }
  };
  return (
    <PublicFrame title="Second factor">
      <p>Your password was right. Confirm it is you with your second factor.</p>
      {challenge.methods.includes("webauthn") && challenge.webauthn && (
        <div class="passkey-step">
          <ActionButton
            class="primary"
            busyLabel="Waiting for your passkey…"
            onError={setPasskeyError}
            onClick={async () => {
              setPasskeyError(undefined);
              let response;
              try {
                // The API documents `webauthn` as the browser API's PublicKeyCredentialRequestOptionsJSON.
                response = await startAuthentication({ optionsJSON: challenge.webauthn as unknown as PublicKeyCredentialRequestOptionsJSON });
              } catch (e) {
                throw new ApiError(0, "passkey_cancelled", `The passkey was not used: ${(e as Error).message}`);
              }
              await complete({ webauthn: { ...response } });
            }}
          >
            Use a passkey
          </ActionButton>
          <ErrorBox error={passkeyError} />
        </div>
      )}
      {!useRecovery ? (
        <Form form={form} label="Authenticator code" submitLabel="Verify" busyLabel="Verifying…" onSubmit={async () => void (await form.submit((v) => complete({ code: v.code }), ["code"]))}>
          <TextField form={form} name="code" label="Code from your authenticator app" inputMode="numeric" autoComplete="one-time-code" hint="The 6 digits the app shows now." required />
        </Form>
      ) : (
        <Form
          form={form}
          label="Recovery code"
          submitLabel="Verify"
          busyLabel="Verifying…"
          onSubmit={async () => void (await form.submit((v) => complete({ recovery_code: v.recovery_code }), ["recovery_code"]))}
        >
          <TextField form={form} name="recovery_code" label="Recovery code" autoComplete="off" hint="One of the ten codes you saved when you set up your second factor. Each works once." required />
        </Form>
      )}
      <p>
        {hasApp && (
          <button type="button" class="link" onClick={() => setUseRecovery(!useRecovery)}>
            {useRecovery ? "Use the authenticator app instead" : "Use a recovery code instead"}
          </button>
        )}{" "}
        <button type="button" class="link" onClick={() => onRestart("")}>
          Start over
        </button>
      </p>
    </PublicFrame>
  );
}

export function SignupPage({ onDone }: { onDone: () => Promise<void> }) {
  const form = useForm({ organization_name: "", email: "", password: "" });
  return (
    <PublicFrame title="Create your organization">
      <p>You become its administrator and can invite your colleagues afterwards.</p>
      <Form
        form={form}
        label="Sign up"
        submitLabel="Create organization"
        busyLabel="Creating…"
        onSubmit={async () => {
          if (await form.submit((v) => post("/api/auth/signup", { body: v, allowUnauthorized: true }))) await onDone();
        }}
      >
        <TextField form={form} name="organization_name" label="Organization name" autoComplete="organization" required />
        <TextField form={form} name="email" label="Your email" type="email" autoComplete="email" required />
        <TextField form={form} name="password" label="Password" type="password" autoComplete="new-password" hint={PASSWORD_HINT} required />
      </Form>
      <p>
        Already have an account? <a href="/login">Log in</a>.
      </p>
    </PublicFrame>
  );
}

export function AcceptInvitationPage({ token, onDone }: { token: string; onDone: () => Promise<void> }) {
  const form = useForm({ password: "", confirm: "" });
  if (!token) {
    return (
      <PublicFrame title="Accept an invitation">
        <Notice kind="warn">This link has no invitation token. Open the link from your invitation mail exactly as it was sent.</Notice>
      </PublicFrame>
    );
  }
  return (
    <PublicFrame title="Accept your invitation">
      <p>Choose a password to join the organization that invited you. Your email is the one the invitation was sent to.</p>
      <Form
        form={form}
        label="Accept invitation"
        submitLabel="Join"
        busyLabel="Joining…"
        onSubmit={async () => {
          const ok = await form.submit(async (v) => {
            if (v.password !== v.confirm) {
              throw new ApiError(400, "validation_error", "The passwords differ", [{ path: "confirm", message: "Type the same password twice" }]);
            }
            return post("/api/auth/invitations/accept", { body: { token, password: v.password }, allowUnauthorized: true });
          }, ["password", "confirm"]);
          if (ok) await onDone();
        }}
      >
        <TextField form={form} name="password" label="Password" type="password" autoComplete="new-password" hint={PASSWORD_HINT} required />
        <TextField form={form} name="confirm" label="Repeat the password" type="password" autoComplete="new-password" required />
      </Form>
    </PublicFrame>
  );
}
