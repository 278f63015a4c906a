/**
 * Alert templates: subject and body text with `{{field.path}}` placeholders
 * naming event variables of the module (`{{cert.subject}}`, `{{rdap.current.ldhName}}`).
 * Checked on save against the variable schema; rendered from the event's JSON.
 */
import { MODULE_VARIABLES, type ModuleName, type VariableSpec } from "./variables";

export interface TemplateError {
  /** The placeholder text as written, e.g. `{{cert.subjct}}`. */
  placeholder: string;
  /** 0-based offset of the placeholder in the template. */
  offset: number;
  message: string;
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const PATH_SYNTAX = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$/;

/** Every problem of a template; an empty array means it is valid. */
export function validateTemplate(module: ModuleName, text: string): TemplateError[] {
  const specs = MODULE_VARIABLES[module];
  const errors: TemplateError[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) {
    const path = m[1];
    const offset = m.index ?? 0;
    if (!PATH_SYNTAX.test(path)) {
      errors.push({ placeholder: m[0], offset, message: `"${path}" is not a field path (use dotted names like cert.subject)` });
    } else if (!isKnownPath(specs, path)) {
      errors.push({ placeholder: m[0], offset, message: `unknown field "${path}" for ${module} events` });
    }
  }
  // A "{{" that no placeholder consumed is a typo the user would only see in a delivered alert.
  const stripped = text.replace(PLACEHOLDER, (s) => " ".repeat(s.length));
  const stray = stripped.indexOf("{{");
  if (stray >= 0) errors.push({ placeholder: text.slice(stray, stray + 20), offset: stray, message: "unclosed {{ placeholder" });
  return errors;
}

function isKnownPath(specs: readonly VariableSpec[], path: string): boolean {
  for (const s of specs) {
    if (s.path === path) return true;
    // Free-form JSON (an RDAP response): any path below it is allowed.
    if (s.type === "map<string, dyn>" && path.startsWith(`${s.path}.`)) return true;
  }
  return false;
}

/**
 * Renders placeholders from a JSON event: lists are joined with ", ", objects are JSON,
 * missing or null values render as "". Unknown placeholders render as "" too (validation
 * happens on save; an event may legitimately lack a field).
 */
export function renderTemplate(text: string, event: unknown): string {
  return text.replace(PLACEHOLDER, (_whole, path: string) => formatValue(lookup(event, path)));
}

function lookup(event: unknown, path: string): unknown {
  let v: unknown = event;
  for (const key of path.split(".")) {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function formatValue(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (Array.isArray(v)) return v.map((e) => (typeof e === "object" && e !== null ? toJson(e) : formatValue(e))).join(", ");
  if (typeof v === "object") return toJson(v);
  return String(v);
}

function toJson(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x));
}
