/**
 * The variable schema of a module's events: ONE flat list of `{path, type, description}`
 * that feeds both the CEL type environment (engine.ts) and the introspection endpoint.
 *
 * Paths: `cert` (an object), `cert.subject` (its field), `cert.scts` (a list<object>) and
 * `cert.scts[].log_id` (a field of each element). Types:
 * - scalars `string`, `int`, `bool`, `double`; `list<string>`, `list<int>`;
 * - `object`: fields are the entries below it, checked by the CEL type checker;
 * - `list<object>`: elements' fields are the entries below `path[]`;
 * - `map<string, dyn>`: free-form JSON (e.g. an RDAP response); any sub-path is allowed.
 */
export type ModuleName = "ct-log" | "rdap" | "cert-watcher" | "dns-watcher";
export const MODULE_NAMES: readonly ModuleName[] = ["ct-log", "rdap", "cert-watcher", "dns-watcher"];

export type VariableType =
  | "string"
  | "int"
  | "bool"
  | "double"
  | "list<string>"
  | "list<int>"
  | "object"
  | "list<object>"
  | "map<string, dyn>";

export interface VariableSpec {
  path: string;
  type: VariableType;
  description: string;
}

/**
 * A rule a module offers to an organization that has none yet (introspection's
 * `suggested_rules`, the console's rules tab): declared beside the module's events.
 */
export interface SuggestedRule {
  name: string;
  expression: string;
  severity: "info" | "low" | "medium" | "high" | "critical";
  /** What it catches and what it leaves out, for the person deciding to add it. */
  description: string;
}
