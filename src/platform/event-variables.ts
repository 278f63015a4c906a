/**
 * A module's event is declared ONCE, as a zod object whose fields carry their
 * descriptions (`.describe(...)`). From that one declaration come the TypeScript type
 * (`z.infer`), the runtime check of built events, and — here — the flat variable
 * schema that the CEL type environment and the introspection endpoint read.
 *
 *   string -> string        number().int() -> int      number() -> double
 *   boolean -> bool         array(string) -> list<string>   array(int) -> list<int>
 *   object -> object (fields below `path.`)    array(object) -> list<object> (fields below `path[].`)
 *   record(string, unknown) / unknown -> map<string, dyn> (free-form JSON, e.g. an RDAP answer)
 * Optional, nullable and defaulted fields are described by their inner type, a field with
 * a transform by the type it reads (the agent contract's liberal fields, for example).
 */
import type { z } from "zod";

/**
 * The variable schema of a module's events: ONE flat list of `{path, type, description}`
 * that feeds both the CEL type environment (alerting's cel/engine.ts) and the
 * introspection endpoint. It lives in the platform because the modules that raise events
 * declare it and alerting reads it: neither imports the other for it.
 *
 * Paths: `cert` (an object), `cert.subject` (its field), `cert.scts` (a list<object>) and
 * `cert.scts[].log_id` (a field of each element). Types:
 * - scalars `string`, `int`, `bool`, `double`; `list<string>`, `list<int>`;
 * - `object`: fields are the entries below it, checked by the CEL type checker;
 * - `list<object>`: elements' fields are the entries below `path[]`;
 * - `map<string, dyn>`: free-form JSON (e.g. an RDAP response); any sub-path is allowed.
 */
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

type AnySchema = z.ZodType;

function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  for (;;) {
    const def = s._zod.def as { type: string; innerType?: AnySchema; in?: AnySchema; out?: AnySchema };
    if ((def.type === "optional" || def.type === "nullable" || def.type === "default" || def.type === "readonly") && def.innerType) s = def.innerType;
    // A transform (`x.transform(f)`) is typed by what it reads; a preprocess by what it checks after.
    else if (def.type === "pipe" && def.in && def.out) s = def.in._zod.def.type === "transform" ? def.out : def.in;
    else return s;
  }
}

const isInt = (s: AnySchema) => (s as unknown as { isInt?: boolean }).isInt === true;

function scalarType(s: AnySchema, path: string): "string" | "int" | "double" | "bool" {
  const type = s._zod.def.type;
  if (type === "string" || type === "enum" || type === "literal") return "string";
  if (type === "boolean") return "bool";
  if (type === "number") return isInt(s) ? "int" : "double";
  throw new Error(`event schema: ${path} has type ${type}, which has no CEL variable type`);
}

/** Description of a field: its own `.describe()`, or that of the wrapper it came in. */
function describe(original: AnySchema, inner: AnySchema, path: string): string {
  const d = original.description ?? inner.description;
  if (!d) throw new Error(`event schema: ${path} has no description (add .describe(...))`);
  return d;
}

function walk(fields: Record<string, AnySchema>, prefix: string, out: VariableSpec[]): void {
  for (const [name, original] of Object.entries(fields)) {
    const path = prefix + name;
    const s = unwrap(original);
    const def = s._zod.def as { type: string; element?: AnySchema; shape?: Record<string, AnySchema> };
    const description = describe(original, s, path);
    let type: VariableType;
    if (def.type === "object") {
      out.push({ path, type: "object", description });
      walk((s as z.ZodObject).shape, `${path}.`, out);
      continue;
    } else if (def.type === "array") {
      const element = unwrap(def.element as AnySchema);
      if (element._zod.def.type === "object") {
        out.push({ path, type: "list<object>", description });
        walk((element as z.ZodObject).shape, `${path}[].`, out);
        continue;
      }
      const el = scalarType(element, `${path}[]`);
      if (el !== "string" && el !== "int") throw new Error(`event schema: ${path} is a list of ${el}; only list<string> and list<int> exist`);
      type = `list<${el}>`;
    } else if (def.type === "record" || def.type === "unknown" || def.type === "any") {
      type = "map<string, dyn>";
    } else {
      type = scalarType(s, path);
    }
    out.push({ path, type, description });
  }
}

/** The flat CEL variable schema of an event declared as a zod object. */
export function variablesOf(schema: z.ZodObject): VariableSpec[] {
  const out: VariableSpec[] = [];
  walk(schema.shape, "", out);
  return out;
}
