/** Login, signup and invitation acceptance: the pages that work without a session. */
import type { ComponentChildren } from "preact";
import { ApiError, post } from "../api";
import { Form, TextField, useForm } from "../ui/form";
import { Notice } from "../ui/widgets";

const PASSWORD_HINT = "At least 12 characters. A passphrase of several words is easiest to remember.";

function PublicFrame({ title, children }: { title: string; children: ComponentChildren }) {
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
  const form = useForm({ email: "", password: "" });
  return (
    <PublicFrame title="Log in">
      <Form
        form={form}
        label="Log in"
        submitLabel="Log in"
        busyLabel="Logging in…"
        onSubmit={async () => {
          if (await form.submit((v) => post("/api/auth/login", v, { allowUnauthorized: true }))) await onDone();
        }}
      >
        <TextField form={form} name="email" label="Email" type="email" autoComplete="username" required />
        <TextField form={form} name="password" label="Password" type="password" autoComplete="current-password" required />
      </Form>
      <p>
        New here? <a href="/signup">Create an organization</a>.
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
          if (await form.submit((v) => post("/api/auth/signup", v, { allowUnauthorized: true }))) await onDone();
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
            return post("/api/auth/invitations/accept", { token, password: v.password }, { allowUnauthorized: true });
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
