/**
 * The OpenAPI document as the API serves it and the console's types are generated from
 * (docs/console.md#the-typed-client). Two things are settled here, once for every module:
 *
 * - `orNull(schema)`: `schema | null` for a schema registered as a component. The
 *   generator (zod-to-openapi) renders `Component.nullable()` as
 *   `allOf: [{$ref}, {type: [object, null]}]`, which no value satisfies when it is null
 *   (every member of an allOf must hold), and `Component.nullable().openapi({description})`
 *   as `allOf: [{$ref}, {description}]`, which drops the null altogether. A union renders
 *   as `anyOf: [{$ref}, {type: null}]`: what the API sends.
 * - `normalizeDocument(doc)`: the generator's output restated so that every schema says
 *   its type, without changing what any schema accepts. The reference page (/api/docs)
 *   and openapi-typescript read a schema by its `type`; the generator leaves it out of
 *   composition wrappers (`allOf` of an extended component, `anyOf` of a union) and of
 *   "any value" (`additionalProperties: {}`). `checkDocument` (scripts/openapi.ts, part
 *   of `npm test`) fails when a schema still lacks one.
 */
import { z } from "@hono/zod-openapi";

/** `schema | null`, rendered `anyOf: [{$ref}, {type: "null"}]` (see above for why not `.nullable()`). */
export const orNull = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };
interface DocumentJson {
  components?: { schemas?: Record<string, Schema> };
}

const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** Keywords that annotate and constrain nothing: beside a `$ref` they change no value's validity. */
const ANNOTATIONS = new Set(["description", "title", "example", "examples", "deprecated", "readOnly", "writeOnly", "default"]);
const COMPOSITIONS = ["allOf", "anyOf", "oneOf"] as const;

/** Keywords whose values are schemas (maps of schemas for `properties`/`patternProperties`, lists for compositions). */
const SCHEMA_VALUED = new Set(["items", "additionalProperties", "not", "contains", "propertyNames", "contentSchema", "if", "then", "else"]);
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs"]);
const SCHEMA_LISTS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);

function typesOf(schema: Json, components: Record<string, Schema>, seen = new Set<string>()): string[] | null {
  if (!isObject(schema)) return null;
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/components/schemas/", "");
    if (seen.has(name) || !components[name]) return null;
    return typesOf(components[name]!, components, new Set([...seen, name]));
  }
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === "string");
  if ("const" in schema) return schema.const === null ? ["null"] : [typeof schema.const === "number" ? "number" : typeof schema.const];
  for (const key of ["anyOf", "oneOf"] as const) {
    const members = schema[key];
    if (!Array.isArray(members)) continue;
    const all = members.map((m) => typesOf(m, components, seen));
    if (all.some((t) => t === null)) return null;
    return [...new Set(all.flat() as string[])];
  }
  if (Array.isArray(schema.allOf)) {
    const all = schema.allOf.map((m) => typesOf(m, components, seen)).filter((t): t is string[] => t !== null);
    if (all.length === 0) return null;
    return all.reduce((a, b) => a.filter((t) => b.includes(t) || (t === "integer" && b.includes("number"))));
  }
  return null;
}

function normalizeSchema(schema: Json, components: Record<string, Schema>): Json {
  if (!isObject(schema)) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_VALUED.has(key)) out[key] = isObject(value) && Object.keys(value).length === 0 ? true : normalizeSchema(value, components);
    else if (SCHEMA_MAPS.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalizeSchema(v, components)]));
    else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map((v) => normalizeSchema(v, components));
    else out[key] = value;
  }
  // `allOf: [{$ref}, {description}]`: a reference with an annotation, which OpenAPI 3.1 writes beside the $ref.
  const allOf = out.allOf;
  if (Array.isArray(allOf) && allOf.length === 2 && isObject(allOf[0]) && Object.keys(allOf[0]).join() === "$ref" && isObject(allOf[1])) {
    const extra = allOf[1];
    if (Object.keys(extra).every((k) => ANNOTATIONS.has(k))) {
      const { allOf: _, ...rest } = out;
      return { $ref: allOf[0].$ref!, ...extra, ...rest };
    }
  }
  if (out.type === undefined && out.$ref === undefined && COMPOSITIONS.some((k) => Array.isArray(out[k]))) {
    const types = typesOf(out, components);
    if (types && types.length > 0) out.type = types.length === 1 ? types[0]! : types;
  }
  return out;
}

function mapSchemas(value: unknown, components: Record<string, Schema>, key = ""): unknown {
  if (key === "schema" || key === "itemSchema") return normalizeSchema(value as Json, components);
  if (Array.isArray(value)) return value.map((v) => mapSchemas(v, components));
  if (!isObject(value)) return value;
  if (key === "schemas") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalizeSchema(v, components)]));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapSchemas(v, components, k)]));
}

/** The document with every schema stating its type (see the file's comment); what each schema accepts is unchanged. */
export function normalizeDocument<D extends object>(doc: D): D {
  const components = (doc as DocumentJson).components?.schemas ?? {};
  return mapSchemas(doc, components) as D;
}

/**
 * What the document still says wrong or leaves unsaid, one line each: a schema with
 * neither a type nor a reference (other than `true`/`{}`, any value on purpose), and an
 * `allOf` that lets null through one member while a referenced member refuses it (a
 * `.nullable()` of a component: use `orNull`).
 */
export function checkDocument(doc: object): string[] {
  const components = (doc as DocumentJson).components?.schemas ?? {};
  const problems: string[] = [];
  const visit = (schema: Json, where: string) => {
    if (!isObject(schema)) return;
    if (Array.isArray(schema.allOf)) {
      const nullable = schema.allOf.some((m) => (typesOf(m, components) ?? []).includes("null"));
      const refusesNull = schema.allOf.some((m) => isObject(m) && typeof m.$ref === "string" && !(typesOf(m, components) ?? ["null"]).includes("null"));
      if (nullable && refusesNull) problems.push(`${where}: allOf of a component and null accepts no null (declare it with orNull())`);
    }
    if (Object.keys(schema).length > 0 && schema.$ref === undefined && schema.type === undefined && !("const" in schema) && !("enum" in schema)) {
      problems.push(`${where}: a schema without a type`);
    }
    for (const [key, value] of Object.entries(schema)) {
      if (SCHEMA_VALUED.has(key)) visit(value, `${where}/${key}`);
      else if (SCHEMA_MAPS.has(key) && isObject(value)) for (const [k, v] of Object.entries(value)) visit(v, `${where}/${key}/${k}`);
      else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) value.forEach((v, i) => visit(v, `${where}/${key}/${i}`));
    }
  };
  const walk = (value: unknown, where: string, key = "") => {
    if (key === "schema" || key === "itemSchema") return visit(value as Json, where);
    if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${where}/${i}`));
    if (!isObject(value)) return;
    if (key === "schemas") return Object.entries(value).forEach(([k, v]) => visit(v, `${where}/${k}`));
    for (const [k, v] of Object.entries(value)) walk(v, `${where}/${k}`, k);
  };
  walk(doc, "#");
  return problems;
}
