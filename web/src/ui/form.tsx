/**
 * Forms: each control is labelled, and each API error `detail` is shown under the
 * control whose name matches its `path`. Details that match no
 * control, and errors without details, are shown above the buttons as a sentence.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { ApiError, type ErrorDetail } from "../api";
import { ErrorBox } from "./widgets";

export interface FormState<V> {
  values: V;
  set<K extends keyof V>(key: K, value: V[K]): void;
  setAll(values: V): void;
  errors: Record<string, string>;
  error: ApiError | undefined;
  busy: boolean;
  /** Runs `action`; an ApiError is spread over the fields. Resolves true on success. */
  submit(action: (values: V) => Promise<unknown>, fields?: string[]): Promise<boolean>;
  reset(values?: V): void;
}

export function useForm<V extends Record<string, any>>(initial: V): FormState<V> {
  const [values, setValues] = useState<V>(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  return {
    values,
    set: (key, value) => {
      setValues((v) => ({ ...v, [key]: value }));
      setErrors((e) => {
        if (!(key as string in e)) return e;
        const { [key as string]: _drop, ...rest } = e;
        return rest;
      });
    },
    setAll: setValues,
    errors,
    error,
    busy,
    async submit(action, fields) {
      setBusy(true);
      setErrors({});
      setError(undefined);
      try {
        await action(values);
        return true;
      } catch (e) {
        const err = e instanceof ApiError ? e : new ApiError(0, "client_error", String((e as Error)?.message ?? e));
        const known = new Set(fields ?? Object.keys(values));
        const byField: Record<string, string> = {};
        const rest: ErrorDetail[] = [];
        for (const d of err.details) {
          const field = fieldOf(d.path, known);
          if (field) byField[field] = byField[field] ? `${byField[field]}; ${d.message}` : d.message;
          else rest.push(d);
        }
        // A message naming a field of the form (e.g. typosquat_ineligible, conflicts) without details.
        if (err.details.length === 0 && err.code === "typosquat_ineligible" && known.has("typosquat_enabled")) {
          byField.typosquat_enabled = err.message;
        }
        setErrors(byField);
        const residual = Object.keys(byField).length > 0 && rest.length === 0 ? undefined : new ApiError(err.status, err.code, err.message, rest);
        setError(residual ?? new ApiError(err.status, err.code, "Please correct the marked fields.", []));
        return false;
      } finally {
        setBusy(false);
      }
    },
    reset(v) {
      setValues(v ?? initial);
      setErrors({});
      setError(undefined);
    },
  };
}

/** `entries.2` -> `entries`, `roles.0.role_name` -> `roles`, `body.x` -> `x`. */
function fieldOf(path: string, known: Set<string>): string | undefined {
  const parts = path.split(".").filter((p) => p !== "body" && p !== "json");
  for (let i = parts.length; i > 0; i--) {
    const candidate = parts.slice(0, i).join(".");
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}

let idSeq = 0;
const nextId = () => `f${++idSeq}`;

interface FieldProps {
  label: string;
  name: string;
  form: FormState<any>;
  hint?: ComponentChildren;
  children: (props: { id: string; name: string; "aria-invalid": "true" | "false"; "aria-describedby"?: string }) => ComponentChildren;
}

/** A labelled control with its hint and its error message right below it. */
export function Field({ label, name, form, hint, children }: FieldProps) {
  const [id] = useState(nextId);
  const error = form.errors[name];
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div class={`field${error ? " has-error" : ""}`}>
      <label for={id}>{label}</label>
      {children({ id, name, "aria-invalid": error ? "true" : "false", "aria-describedby": described })}
      {hint && (
        <div class="hint" id={`${id}-hint`}>
          {hint}
        </div>
      )}
      {error && (
        <div class="field-error" id={`${id}-error`} data-field-error={name}>
          {error}
        </div>
      )}
    </div>
  );
}

export function TextField(props: { label: string; name: string; form: FormState<any>; type?: string; hint?: ComponentChildren; required?: boolean; autoComplete?: string; placeholder?: string; inputMode?: string }) {
  const { form, name } = props;
  return (
    <Field label={props.label} name={name} form={form} hint={props.hint}>
      {(a) => (
        <input
          {...a}
          type={(props.type ?? "text") as "text"}
          required={props.required}
          autoComplete={props.autoComplete}
          placeholder={props.placeholder}
          inputMode={props.inputMode as any}
          value={form.values[name] ?? ""}
          onInput={(e) => form.set(name, (e.target as HTMLInputElement).value)}
        />
      )}
    </Field>
  );
}

export function TextArea(props: { label: string; name: string; form: FormState<any>; hint?: ComponentChildren; rows?: number; mono?: boolean; required?: boolean }) {
  const { form, name } = props;
  return (
    <Field label={props.label} name={name} form={form} hint={props.hint}>
      {(a) => (
        <textarea
          {...a}
          rows={props.rows ?? 3}
          required={props.required}
          class={props.mono ? "mono" : undefined}
          spellcheck={props.mono ? false : undefined}
          value={form.values[name] ?? ""}
          onInput={(e) => form.set(name, (e.target as HTMLTextAreaElement).value)}
        />
      )}
    </Field>
  );
}

export function SelectField(props: { label: string; name: string; form: FormState<any>; options: { value: string; label: string }[]; hint?: ComponentChildren }) {
  const { form, name } = props;
  return (
    <Field label={props.label} name={name} form={form} hint={props.hint}>
      {(a) => (
        <select {...a} value={String(form.values[name] ?? "")} onChange={(e) => form.set(name, (e.target as HTMLSelectElement).value)}>
          {props.options.map((o) => (
            <option value={o.value}>{o.label}</option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function CheckField(props: { label: string; name: string; form: FormState<any>; hint?: ComponentChildren; disabled?: boolean }) {
  const { form, name } = props;
  const [id] = useState(nextId);
  const error = form.errors[name];
  const described = [props.hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div class={`field check${error ? " has-error" : ""}`}>
      <input
        id={id}
        type="checkbox"
        name={name}
        disabled={props.disabled}
        checked={!!form.values[name]}
        aria-invalid={error ? "true" : "false"}
        aria-describedby={described}
        onChange={(e) => form.set(name, (e.target as HTMLInputElement).checked)}
      />
      <label for={id}>{props.label}</label>
      {props.hint && (
        <div class="hint" id={`${id}-hint`}>
          {props.hint}
        </div>
      )}
      {error && (
        <div class="field-error" id={`${id}-error`} data-field-error={name}>
          {error}
        </div>
      )}
    </div>
  );
}

/** The form element: the residual error and the submit button with progress. */
export function Form(props: { form: FormState<any>; onSubmit: () => void; submitLabel: string; busyLabel?: string; children: ComponentChildren; onCancel?: () => void; class?: string; label?: string }) {
  return (
    <form
      class={props.class ?? "form"}
      aria-label={props.label}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
    >
      {props.children}
      <ErrorBox error={props.form.error} />
      <div class="form-actions">
        <button type="submit" class="primary" disabled={props.form.busy} aria-busy={props.form.busy ? "true" : "false"}>
          {props.form.busy ? (
            <>
              <span class="spinner" aria-hidden="true" /> {props.busyLabel ?? "Saving…"}
            </>
          ) : (
            props.submitLabel
          )}
        </button>
        {props.onCancel && (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
