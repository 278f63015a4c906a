/**
 * `GET /api/{module}/introspection`: the module's CEL variables (the same
 * schema the type checker uses) and the functions a rule may call.
 */
import { IN_LIST_DESCRIPTION } from "./engine";
import { MODULE_SUGGESTED_RULES, MODULE_VARIABLES, type ModuleName, type SuggestedRule, type VariableSpec } from "./variables";

export interface IntrospectionFunction {
  name: string;
  signature: string;
  description: string;
}

export interface Introspection {
  module: ModuleName;
  variables: VariableSpec[];
  functions: IntrospectionFunction[];
  suggested_rules: SuggestedRule[];
}

/** Standard CEL functions and macros usable on event fields, plus in_list. */
export const RULE_FUNCTIONS: readonly IntrospectionFunction[] = [
  { name: "in_list", signature: 'in_list(string, lists["<name>"]) -> bool', description: IN_LIST_DESCRIPTION },
  { name: "has", signature: "has(object.field) -> bool", description: "True when the field is present in the event (e.g. has(cert.key_size))" },
  { name: "exists", signature: "list.exists(x, predicate) -> bool", description: "True when the predicate holds for at least one element" },
  { name: "exists_one", signature: "list.exists_one(x, predicate) -> bool", description: "True when the predicate holds for exactly one element" },
  { name: "all", signature: "list.all(x, predicate) -> bool", description: "True when the predicate holds for every element" },
  { name: "filter", signature: "list.filter(x, predicate) -> list", description: "The elements for which the predicate holds" },
  { name: "map", signature: "list.map(x, expr) -> list", description: "The list of expr for each element" },
  { name: "size", signature: "size(list|string|map) -> int, value.size() -> int", description: "Number of elements or characters" },
  { name: "contains", signature: "string.contains(string) -> bool", description: "Substring test" },
  { name: "startsWith", signature: "string.startsWith(string) -> bool", description: "Prefix test" },
  { name: "endsWith", signature: "string.endsWith(string) -> bool", description: "Suffix test" },
  { name: "matches", signature: "string.matches(regex) -> bool", description: "Regular expression test, RE2 syntax, matched in linear time (no backreferences or lookaround); true when the pattern matches anywhere in the string (anchor with ^ and $)" },
  { name: "lowerAscii", signature: "string.lowerAscii() -> string", description: "ASCII lowercase" },
  { name: "in", signature: "value in list -> bool", description: "Membership in a list (e.g. \"TLSv1.0\" in protocol)" },
  { name: "timestamp", signature: "timestamp(string) -> timestamp", description: "Parses an RFC 3339 time, e.g. timestamp(cert.not_after)" },
  { name: "duration", signature: 'duration(string) -> duration', description: 'Parses a duration such as "720h"' },
  { name: "int", signature: "int(value) -> int", description: "Conversion to int" },
  { name: "string", signature: "string(value) -> string", description: "Conversion to string" },
];

export function introspect(module: ModuleName): Introspection {
  const variables = MODULE_VARIABLES[module];
  if (!variables) throw new Error(`unknown module ${module}`);
  return { module, variables: variables.map((v) => ({ ...v })), functions: RULE_FUNCTIONS.map((f) => ({ ...f })), suggested_rules: MODULE_SUGGESTED_RULES[module].map((r) => ({ ...r })) };
}
