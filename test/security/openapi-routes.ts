/**
 * The route table as the OpenAPI document declares it (method, path, required
 * permission, request schemas), and valid sample inputs built from those schemas:
 * what the generated security suites iterate over. A new route is picked up here
 * without any test being written for it.
 */
import { createApp } from "../../src/app";
import { OPENAPI_INFO } from "../../src/modules/system/routes";

export type JsonSchema = Record<string, any>;

export interface DocRoute {
  method: string;
  /** OpenAPI path with `{param}` placeholders. */
  path: string;
  /** `x-required-permission`: a permission, a list (any of), "authenticated" or "none". */
  permission: string | string[];
  pathParams: string[];
  query: { name: string; required: boolean; schema: JsonSchema }[];
  body: JsonSchema | null;
}

export const openApiDocument = createApp().getOpenAPI31Document(OPENAPI_INFO as never) as any;

export const ROUTES: DocRoute[] = Object.entries(openApiDocument.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({
    method: method.toUpperCase(),
    path,
    permission: op["x-required-permission"],
    pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
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

/** Query string with every required parameter sampled. */
export function sampleQuery(r: DocRoute): string {
  const required = r.query.filter((q) => q.required);
  if (!required.length) return "";
  return "?" + required.map((q) => `${encodeURIComponent(q.name)}=${encodeURIComponent(String(sample(q.schema)))}`).join("&");
}
