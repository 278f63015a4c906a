/**
 * Turns a module's flat variable schema (variables/) into
 * - CEL object types with real field lists, so the checker rejects `cert.subjct`, and
 * - a converter from JSON events to the values cel-js works on natively (ints as bigint,
 *   objects as instances of the registered classes).
 *
 * Converting once per event (prepareEvent) instead of letting cel-js convert plain
 * objects on every evaluation is what keeps 50 rules per event cheap.
 */
import type { VariableSpec, VariableType } from "./variables/types";

export type FieldShape =
  | { kind: "scalar"; celType: string; int: boolean }
  | { kind: "list"; celType: string; int: boolean }
  | { kind: "object"; shape: ObjectShape }
  | { kind: "objectList"; shape: ObjectShape }
  | { kind: "dyn"; celType: string };

export interface ObjectShape {
  /** Registered CEL type name, e.g. `CtLog.cert.scts.item`. */
  typeName: string;
  ctor: new () => Record<string, unknown>;
  fields: Map<string, FieldShape>;
}

export interface EventShape {
  /** Top-level variables. */
  variables: Map<string, FieldShape>;
  /** Every object type, nested types before the types that contain them. */
  objectTypes: ObjectShape[];
}

/** The CEL type string of a field, as used in registerVariable/registerType. */
export function celTypeOf(field: FieldShape): string {
  switch (field.kind) {
    case "object":
      return field.shape.typeName;
    case "objectList":
      return `list<${field.shape.typeName}>`;
    default:
      return field.celType;
  }
}

function makeClass(typeName: string): new () => Record<string, unknown> {
  // A distinct named class per type: cel-js identifies message types by constructor.
  return { [typeName]: class {} }[typeName] as unknown as new () => Record<string, unknown>;
}

export function buildEventShape(typePrefix: string, specs: readonly VariableSpec[]): EventShape {
  const byPath = new Map(specs.map((s) => [s.path, s]));
  const objectTypes: ObjectShape[] = [];

  const childrenOf = (prefix: string): VariableSpec[] =>
    specs.filter((s) => s.path.startsWith(prefix) && !s.path.slice(prefix.length).includes("."));

  const fieldFor = (spec: VariableSpec): FieldShape => fieldOfType(spec.path, spec.type);

  function objectShape(path: string, childPrefix: string): ObjectShape {
    const typeName = `${typePrefix}.${path.replace(/\[\]/g, ".item")}`;
    const fields = new Map<string, FieldShape>();
    for (const child of childrenOf(childPrefix)) fields.set(child.path.slice(childPrefix.length), fieldFor(child));
    const shape: ObjectShape = { typeName, ctor: makeClass(typeName), fields };
    objectTypes.push(shape); // after its children: they were built by fieldFor above
    return shape;
  }

  function fieldOfType(path: string, type: VariableType): FieldShape {
    switch (type) {
      case "object":
        return { kind: "object", shape: objectShape(path, `${path}.`) };
      case "list<object>":
        return { kind: "objectList", shape: objectShape(`${path}[]`, `${path}[].`) };
      case "map<string, dyn>":
        return { kind: "dyn", celType: type };
      case "list<string>":
      case "list<int>":
        return { kind: "list", celType: type, int: type === "list<int>" };
      default:
        return { kind: "scalar", celType: type, int: type === "int" };
    }
  }

  const variables = new Map<string, FieldShape>();
  for (const spec of specs) {
    if (spec.path.includes(".") || spec.path.includes("[")) {
      const parent = spec.path.replace(/(\[\])?\.[^.]+$/, "");
      if (!byPath.has(parent)) throw new Error(`variable schema: ${spec.path} has no parent entry ${parent}`);
      continue;
    }
    variables.set(spec.path, fieldFor(spec));
  }
  return { variables, objectTypes };
}

/**
 * Converts a JSON event to CEL-native values. Never throws: a value of the wrong JSON
 * type is passed through unchanged, and cel-js reports a type error when a rule reads it.
 * Absent and null fields are left absent (rules see "no such key"; has() tests them).
 */
export function convertEvent(shape: EventShape, event: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isPlainObject(event)) return out;
  for (const [name, field] of shape.variables) {
    const v = event[name];
    if (v !== undefined && v !== null) out[name] = convertValue(field, v);
  }
  return out;
}

function convertValue(field: FieldShape, v: unknown): unknown {
  switch (field.kind) {
    case "scalar":
      return field.int ? toInt(v) : v;
    case "list":
      return field.int && Array.isArray(v) ? v.map(toInt) : v;
    case "object":
      return convertObject(field.shape, v);
    case "objectList":
      return Array.isArray(v) ? v.map((e) => convertObject(field.shape, e)) : v;
    case "dyn":
      return v;
  }
}

function convertObject(shape: ObjectShape, v: unknown): unknown {
  if (!isPlainObject(v)) return v;
  const o = new shape.ctor();
  for (const [name, field] of shape.fields) {
    const fv = v[name];
    if (fv !== undefined && fv !== null) o[name] = convertValue(field, fv);
  }
  return o;
}

function toInt(v: unknown): unknown {
  return typeof v === "number" && Number.isSafeInteger(v) ? BigInt(v) : v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
