/** Small building blocks shared by every page. */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { asApiError, type ApiError } from "../api";

/** An API error as a sentence, never as raw JSON. */
export function ErrorBox({ error, title }: { error: ApiError | undefined; title?: string }) {
  if (!error) return null;
  const unmatched = error.details ?? [];
  return (
    <div class="alert error" role="alert">
      <strong>{title ?? explain(error)}</strong> {error.message}
      {unmatched.length > 0 && (
        <ul>
          {unmatched.map((d) => (
            <li>
              {d.path ? <code>{d.path}</code> : null} {d.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function explain(e: ApiError): string {
  if (e.status === 403 && e.code === "quota_exceeded") return "Quota reached.";
  if (e.status === 403) return "Not allowed.";
  if (e.status === 404) return "Not found.";
  if (e.status === 409) return "Conflict.";
  if (e.status === 429) return "Too many requests.";
  if (e.status >= 500) return "The service failed.";
  if (e.status === 0) return "Offline.";
  return "Error.";
}

export function Notice({ children, kind = "info" }: { children: ComponentChildren; kind?: "info" | "success" | "warn" }) {
  return (
    <div class={`alert ${kind}`} role="status">
      {children}
    </div>
  );
}

const TONES: Record<string, string> = {
  critical: "bad",
  high: "bad",
  medium: "warn",
  low: "info",
  info: "info",
  pass: "good",
  fail: "bad",
  unknown: "neutral",
  valid: "good",
  expired: "bad",
  not_yet_valid: "bad",
  expiring_soon: "warn",
  legacy: "bad",
  modern: "good",
  weak: "bad",
  strong: "good",
  self_signed: "bad",
  untrusted: "bad",
  hostname_mismatch: "bad",
  trusted: "good",
  success: "good",
  delivered: "good",
  failed: "bad",
  retrying: "warn",
  pending: "neutral",
  active: "good",
  disabled: "neutral",
  revoked: "neutral",
  proposed: "info",
  accepted: "good",
  dismissed: "neutral",
};

/** A status word with a colour that repeats its meaning (the text always says it). */
export function Badge({ value, tone, label }: { value: string | null | undefined; tone?: string; label?: string }) {
  const v = value ?? "unknown";
  return <span class={`badge ${tone ?? TONES[v] ?? "neutral"}`}>{label ?? v.replace(/_/g, " ")}</span>;
}

export function Tabs({ tabs, active, onSelect, label }: { tabs: { id: string; label: string }[]; active: string; onSelect: (id: string) => void; label: string }) {
  // An arrow key selects the next tab; focus follows once that tab is rendered selected
  // (the selection comes back through the URL), so a screen reader never announces the
  // focused tab as "not selected".
  const focusOnSelect = useRef(false);
  useEffect(() => {
    if (!focusOnSelect.current) return;
    focusOnSelect.current = false;
    document.getElementById(`tab-${active}`)?.focus();
  }, [active]);
  return (
    <div class="tabs" role="tablist" aria-label={label}>
      {tabs.map((t) => (
        <button
          type="button"
          role="tab"
          id={`tab-${t.id}`}
          aria-selected={t.id === active ? "true" : "false"}
          tabIndex={t.id === active ? 0 : -1}
          onClick={() => onSelect(t.id)}
          onKeyDown={(e) => {
            const i = tabs.findIndex((x) => x.id === t.id);
            const to = e.key === "ArrowRight" ? tabs[(i + 1) % tabs.length] : e.key === "ArrowLeft" ? tabs[(i - 1 + tabs.length) % tabs.length] : null;
            if (to) {
              e.preventDefault();
              focusOnSelect.current = true;
              onSelect(to.id);
            }
          }}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function TabPanel({ id, children }: { id: string; children: ComponentChildren }) {
  return (
    <section role="tabpanel" aria-labelledby={`tab-${id}`} class="tabpanel">
      {children}
    </section>
  );
}

/** A modal dialog (native <dialog>: focus is trapped and Escape closes it). */
export function Dialog({ title, open, onClose, children, wide }: { title: string; open: boolean; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      opener.current = document.activeElement as HTMLElement | null;
      d.showModal();
    }
    if (!open && d.open) d.close();
    // Closed (Escape, Cancel, saved): a keyboard user continues from the button that opened it.
    const back = opener.current;
    if (!open && back) {
      opener.current = null;
      const at = document.activeElement;
      if (back.isConnected && (!at || at === document.body || d.contains(at))) back.focus();
    }
  }, [open]);
  return (
    <dialog ref={ref} class={wide ? "wide" : ""} aria-labelledby="dialog-title" onClose={onClose} onCancel={onClose}>
      {open && (
        <>
          <header class="dialog-head">
            <h2 id="dialog-title">{title}</h2>
            <button type="button" class="ghost" onClick={onClose} aria-label="Close dialog">
              ✕
            </button>
          </header>
          {children}
        </>
      )}
    </dialog>
  );
}

/** A secret shown once (API token, agent token, webhook secret), with a copy button. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="status">
      <p>
        <strong>{label}</strong> It is shown only now: copy it and keep it somewhere safe. It cannot be retrieved later.
      </p>
      <div class="secret-row">
        <code data-testid="secret-value">{value}</code>
        <button
          type="button"
          onClick={() => {
            navigator.clipboard?.writeText(value).then(() => setCopied(true), () => setCopied(false));
          }}
        >
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
    </div>
  );
}

/**
 * A row's Enabled column: a switch saved at once for who may change it (`save`; a failure
 * goes to `onError`, and `onDone` reloads the table either way, so the switch shows what
 * was saved), the state as a badge for who may not.
 */
export function EnabledSwitch(props: { name: string; enabled: boolean; canUpdate: boolean; save: (enabled: boolean) => Promise<unknown>; onError: (e: ApiError) => void; onDone: () => void }) {
  if (!props.canUpdate) return <Badge value={props.enabled ? "active" : "disabled"} label={props.enabled ? "enabled" : "disabled"} />;
  return (
    <label class="switch">
      <input
        type="checkbox"
        checked={props.enabled}
        aria-label={`${props.name} enabled`}
        onChange={async (e) => {
          try {
            await props.save((e.target as HTMLInputElement).checked);
          } catch (x) {
            props.onError(asApiError(x));
          }
          props.onDone();
        }}
      />
      <span aria-hidden="true" />
    </label>
  );
}

/** A button that shows progress while its async action runs and cannot be pressed twice. */
export function ActionButton(props: {
  onClick: () => Promise<unknown>;
  children: ComponentChildren;
  busyLabel?: string;
  class?: string;
  label?: string;
  confirm?: string;
  onError?: (e: ApiError) => void;
}) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      class={props.class}
      aria-label={props.label}
      aria-busy={busy ? "true" : "false"}
      disabled={busy}
      onClick={async () => {
        if (props.confirm && !window.confirm(props.confirm)) return;
        setBusy(true);
        try {
          await props.onClick();
        } catch (e) {
          props.onError?.(asApiError(e));
        } finally {
          setBusy(false);
        }
      }}
    >
      {busy ? (
        <>
          <span class="spinner" aria-hidden="true" /> {props.busyLabel ?? "Working…"}
        </>
      ) : (
        props.children
      )}
    </button>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="page-head">
      <h1>{title}</h1>
      {children && <div class="page-actions">{children}</div>}
    </div>
  );
}

export function KeyValues({ items }: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="kv">
      {items.map(([k, v]) => (
        <>
          <dt>{k}</dt>
          <dd>{v === undefined || v === null || v === "" ? <span class="muted">—</span> : v}</dd>
        </>
      ))}
    </dl>
  );
}

/** Lists of short strings (SANs, protocols, suites) as a compact list. */
export function Chips({ items, label }: { items: string[] | undefined | null; label?: string }) {
  if (!items || items.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="chips" aria-label={label}>
      {items.map((i) => (
        <li>{i}</li>
      ))}
    </ul>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <div class="card-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** Shown where a module's API is not on this deployment yet. */
export function NotAvailable({ what }: { what: string }) {
  return (
    <div class="empty">
      <p>
        <strong>{what} is not available on this deployment yet.</strong>
      </p>
      <p class="muted">The page appears as soon as the service offers its API.</p>
    </div>
  );
}
