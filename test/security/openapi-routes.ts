/**
 * The route table as the OpenAPI document declares it (method, path, required
 * permission, request schemas), and valid sample inputs built from those schemas:
 * what the generated security suites iterate over. A new route is picked up here
 * without any test being written for it.
 */
import { createApp } from "../../src/app";
import { openApiDocument as servedDocument } from "../../src/modules/system/routes";

export type JsonSchema = Record<string, any>;

export interface DocRoute {
  method: string;
  /** OpenAPI path with `{param}` placeholders. */
  path: string;
  /** `x-required-permission`: a permission, a list (any of), "authenticated" or "none". */
  permission: string | string[];
  pathParams: string[];
  /** The schema of each path parameter. */
  pathSchemas: Record<string, JsonSchema>;
  query: { name: string; required: boolean; schema: JsonSchema }[];
  body: JsonSchema | null;
}

/** The document /api/openapi.json serves. */
export const openApiDocument = servedDocument(createApp()) as any;

export const ROUTES: DocRoute[] = Object.entries(openApiDocument.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({
    method: method.toUpperCase(),
    path,
    permission: op["x-required-permission"],
    pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
    pathSchemas: Object.fromEntries((op.parameters ?? []).filter((p: any) => p.in === "path").map((p: any) => [p.name, p.schema ?? {}])),
    query: (op.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => ({ name: p.name, required: !!p.required, schema: p.schema ?? {} })),
    body: op.requestBody?.content?.["application/json"]?.schema ?? null,
  })),
);

export const label = (r: DocRoute) => `${r.method} ${r.path}`;

export function resolve(schema: JsonSchema | undefined): JsonSchema {
  let s = schema ?? {};
  for (let i = 0; i < 10 && typeof s.$ref === "string"; i++) s = openApiDocument.components.schemas[s.$ref.replace("#/components/schemas/", "")];
  return s;
}

/** A value the schema accepts (required fields only; examples where the document has them). */
export function sample(schema: JsonSchema | undefined): unknown {
  const s = resolve(schema);
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (Array.isArray(s[key])) return sample(s[key].find((x: JsonSchema) => resolve(x).type !== "null") ?? s[key][0]);
  }
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type;
  switch (type) {
    case "string":
      if (s.format === "email") return "someone@example.com";
      if (s.format === "date-time") return "2026-01-01T00:00:00Z";
      return "x".repeat(Math.max(1, s.minLength ?? 1));
    case "integer":
    case "number":
      return Math.max(1, s.minimum ?? s.exclusiveMinimum ?? 1);
    case "boolean":
      return true;
    case "array":
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items));
    case "object": {
      const out: Record<string, unknown> = {};
      for (const k of s.required ?? []) out[k] = sample(s.properties?.[k]);
      return out;
    }
    default:
      return null;
  }
}

/** The path with every parameter sampled (a well-formed id or value, not necessarily an existing one). */
export function samplePath(r: DocRoute): string {
  return r.path.replace(/\{([^}]+)\}/g, (_, p) => encodeURIComponent(String(sample(r.pathSchemas[p]) ?? "1")));
}

/** Query string with every required parameter sampled. */
export function sampleQuery(r: DocRoute): string {
  const required = r.query.filter((q) => q.required);
  if (!required.length) return "";
  return "?" + required.map((q) => `${encodeURIComponent(q.name)}=${encodeURIComponent(String(sample(q.schema)))}`).join("&");
}

/** A request-body field the unsafe-text refinement guards (marked `x-text` by src/platform/text.ts). */
export interface TextField {
  /** Keys from the body root; a number is an array index. */
  path: (string | number)[];
  multiline: boolean;
}

/** Every field of a body schema marked `x-text`, nested objects and array items included. */
export function textFields(schema: JsonSchema | null): TextField[] {
  const out: TextField[] = [];
  const walk = (raw: JsonSchema | undefined, path: (string | number)[], seen: Set<JsonSchema>) => {
    const s = resolve(raw);
    if (!s || seen.has(s)) return;
    seen = new Set(seen).add(s);
    if (s["x-text"]) out.push({ path, multiline: s["x-text"] === "multi-line" });
    for (const key of ["anyOf", "oneOf", "allOf"]) for (const alt of s[key] ?? []) walk(alt, path, seen);
    for (const [name, prop] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)) walk(prop, [...path, name], seen);
    if (s.items) walk(s.items, [...path, 0], seen);
  };
  if (schema) walk(schema, [], new Set());
  return out;
}

/** `body` with `value` at `path`, building the objects and arrays on the way (a copy). */
export function withValueAt(body: unknown, path: (string | number)[], value: unknown): unknown {
  if (!path.length) return value;
  const [head, ...rest] = path;
  if (typeof head === "number") {
    const arr = Array.isArray(body) ? [...body] : [];
    arr[head] = withValueAt(arr[head], rest, value);
    return arr;
  }
  const obj = body && typeof body === "object" && !Array.isArray(body) ? { ...(body as object) } : {};
  (obj as Record<string, unknown>)[head] = withValueAt((obj as Record<string, unknown>)[head], rest, value);
  return obj;
}
