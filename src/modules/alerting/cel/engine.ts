/**
 * The CEL rule engine of alerting (docs/modules/alerting.md), on @marcbachmann/cel-js.
 *
 *   compileRule(module, expression, knownListNames) -> CompiledRule | CelError
 *   prepareEvent(module, event)                     -> PreparedEvent (once per event)
 *   evaluate(compiled, event, listData)             -> {matched, error?} (never throws)
 *
 * `in_list(value, lists["name"])` is a macro: at parse time it checks that its second
 * argument is `lists[<string literal>]` (a computed lookup is refused with its position),
 * that the list exists, and records the name (compiled.listNames, so a referenced list
 * cannot be deleted). `lists` itself is not a CEL variable, so no other use of it type-checks.
 * At run time the macro reads the ListData the engine puts beside the event variables.
 */
import { Environment, ParseError, TypeError as CelTypeError } from "@marcbachmann/cel-js";
import { isCollectionEventType } from "../../../platform/collection/event";
import { buildEventShape, celTypeOf, convertEvent, type EventShape } from "./event-shape";
import { EMPTY_LIST_DATA, type ListData } from "./list-data";
import { MODULE_OPT_IN_EVENTS, MODULE_VARIABLES, type ModuleName } from "./variables";
import { COMPILE_LIMITS, comprehensionNesting, MAX_COMPREHENSION_NESTING, meterComprehensions, withBudget } from "./cost";
import { registerRe2Matches, startExpression } from "./regex";

export const MAX_EXPRESSION_BYTES = 4096;

export type CelErrorCode =
  | "expression_too_long"
  /** Over a cost bound (cost.ts, regex.ts): too many nodes, too deep, too many nested comprehensions, a regular expression too large. */
  | "too_complex"
  /** A literal matches() pattern that is not RE2 syntax. */
  | "invalid_regex"
  | "syntax_error"
  | "type_error"
  | "computed_list_lookup"
  | "unknown_list"
  | "not_boolean";

export interface SourcePosition {
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units of the line. */
  column: number;
  /** 0-based offset into the expression (UTF-16 code units). */
  offset: number;
}

/** A rule that does not compile; maps to a 400 with the position. */
export interface CelError {
  ok: false;
  code: CelErrorCode;
  message: string;
  position?: SourcePosition;
}

export interface CompiledRule {
  ok: true;
  module: ModuleName;
  expression: string;
  /** Names of the lists the rule reads, sorted, without duplicates. */
  listNames: string[];
  /** Static result type: "bool", or "dyn" when only evaluation can tell. */
  resultType: string;
  /**
   * The rule reads `event_type` or `collection`, so it is written for collection events
   * too. A rule that reads neither was written for the module's own events (as every
   * rule was before collection events existed) and never matches a collection event:
   * its fields there hold the last observed or empty values, which such a rule would
   * read as a finding (`dmarc.current.p != "reject"` on a domain that merely went blind).
     */
  seesCollectionEvents: boolean;
  /** The identifiers the rule reads (for the module's opt-in event types, MODULE_OPT_IN_EVENTS). */
  readonly identifiers: ReadonlySet<string>;
  /** @internal the parsed, type-checked cel-js program. */
  readonly program: (context: Record<string, unknown>) => unknown;
}

export interface EvaluationResult {
  matched: boolean;
  error?: string;
  /** The event is a collection event (or of a type a rule must name) and the rule does not read `event_type` or `collection` (see CompiledRule.seesCollectionEvents). */
  notForCollectionEvents?: true;
  /** The event is of a type the rule does not opt into (MODULE_OPT_IN_EVENTS). */
  notForRule?: true;
}

/** The key under which the evaluation context carries the ListData (not a CEL variable). */
const LISTS_KEY = "lists";

// ---- environments -----------------------------------------------------------------

interface ModuleRuntime {
  env: Environment;
  shape: EventShape;
}

const TYPE_PREFIX: Record<ModuleName, string> = {
  "ct-log": "CtLog",
  rdap: "Rdap",
  "cert-watcher": "CertWatcher",
  "dns-watcher": "DnsWatcher",
};

/** State of the compileRule call in progress (parsing is synchronous, so one suffices). */
let activeCompilation: { knownListNames: ReadonlySet<string>; listNames: Set<string> } | null = null;

const runtimes = new Map<ModuleName, ModuleRuntime>();

function runtimeOf(module: ModuleName): ModuleRuntime {
  let rt = runtimes.get(module);
  if (rt) return rt;
  const specs = MODULE_VARIABLES[module];
  if (!specs) throw new Error(`unknown module ${module}`);
  const shape = buildEventShape(TYPE_PREFIX[module], specs);
  const env = new Environment({ unlistedVariablesAreDyn: false, limits: { ...COMPILE_LIMITS } });
  for (const t of shape.objectTypes) {
    const fields: Record<string, string> = {};
    for (const [name, f] of t.fields) fields[name] = celTypeOf(f);
    env.registerType(t.typeName, { ctor: t.ctor, fields });
  }
  const descriptions = new Map(specs.map((s) => [s.path, s.description]));
  for (const [name, f] of shape.variables) {
    env.registerVariable(name, celTypeOf(f), { description: descriptions.get(name) });
  }
  registerInList(env);
  registerRe2Matches(env);
  rt = { env, shape };
  runtimes.set(module, rt);
  return rt;
}

export const IN_LIST_DESCRIPTION =
  'True when the string value matches the rule list: an IP inside any network of an ip list, or the exact domain (case-insensitive, trailing dot ignored, IDN as A-label) of a domain list, or a key hash (SHA-256 of the SubjectPublicKeyInfo, hex) of an spki list: in_list(cert.spki_sha256, lists["our_keys"]). The list name must be a quoted literal: in_list(ip_address, lists["dmz"]). A value that is not an IP/domain, or a list that no longer exists, does not match.';

function registerInList(env: Environment): void {
  env.registerFunction(
    "in_list(ast, ast): bool",
    ({ args }: { args: any[] }) => {
      const [valueNode, listNode] = args;
      const listName = literalListName(listNode);
      const compilation = activeCompilation;
      if (compilation) {
        if (!compilation.knownListNames.has(listName)) {
          throw new ParseError({ code: "unknown_list", message: `unknown rule list "${listName}"`, node: listNode.args[1] });
        }
        compilation.listNames.add(listName);
      }
      return {
        async: false,
        listName,
        valueNode,
        typeCheck(checker: any, macro: any, ctx: any) {
          const t = checker.check(macro.valueNode, ctx);
          if (t.kind !== "dyn" && t.name !== "string") {
            throw new CelTypeError({
              code: "type_error",
              message: `in_list() expects a string value, got ${t.name}`,
              node: macro.valueNode,
            });
          }
          return checker.getType("bool");
        },
        evaluate(ev: any, macro: any, ctx: any) {
          const value = ev.run(macro.valueNode, ctx);
          const lists = ctx.getValue(LISTS_KEY) as ListData | undefined;
          return lists ? lists.matches(macro.listName, value) : false;
        },
      };
    },
    { description: IN_LIST_DESCRIPTION },
  );
}

function literalListName(node: any): string {
  const isListsIndex = node?.op === "[]" && node.args[0]?.op === "id" && node.args[0].args === LISTS_KEY;
  if (isListsIndex && node.args[1]?.op === "value" && typeof node.args[1].args === "string") return node.args[1].args;
  throw new ParseError({
    code: "computed_list_lookup",
    message: isListsIndex
      ? 'computed list lookups are not supported: the list name must be a quoted literal, e.g. lists["vip_domains"]'
      : 'in_list() takes a list as lists["<name>"] with a quoted literal name',
    node: isListsIndex ? node.args[1] : node,
  });
}

// ---- compile ----------------------------------------------------------------------

const CACHE_LIMIT = 2000;
const compileCache = new Map<string, CompiledRule | CelError>();

/**
 * Compiles and type-checks a rule against the module's variable schema. Results are
 * memoized by (module, expression, known list names), so the alert processor can call it
 * for every rule version without parsing twice.
 */
export function compileRule(
  module: ModuleName,
  expression: string,
  knownListNames: Iterable<string>,
): CompiledRule | CelError {
  const known = new Set(knownListNames);
  const key = `${module}\u0000${[...known].sort().join(",")}\u0000${expression}`;
  const cached = compileCache.get(key);
  if (cached) return cached;
  const result = compileUncached(module, expression, known);
  if (compileCache.size >= CACHE_LIMIT) compileCache.delete(compileCache.keys().next().value as string);
  compileCache.set(key, result);
  return result;
}

function compileUncached(module: ModuleName, expression: string, known: ReadonlySet<string>): CompiledRule | CelError {
  if (typeof expression !== "string") return { ok: false, code: "syntax_error", message: "expression must be a string" };
  const bytes = new TextEncoder().encode(expression).length;
  if (bytes > MAX_EXPRESSION_BYTES) {
    return { ok: false, code: "expression_too_long", message: `expression is ${bytes} bytes; at most ${MAX_EXPRESSION_BYTES} are allowed` };
  }
  if (expression.trim() === "") return { ok: false, code: "syntax_error", message: "expression is empty" };
  const { env } = runtimeOf(module);
  const listNames = new Set<string>();
  let program: ReturnType<Environment["parse"]>;
  activeCompilation = { knownListNames: known, listNames };
  startExpression();
  try {
    program = env.parse(expression);
  } catch (e) {
    return toCelError(e, expression, "syntax_error");
  } finally {
    activeCompilation = null;
  }
  const checked = program.check();
  if (!checked.valid) return toCelError(checked.error, expression, "type_error");
  const nesting = comprehensionNesting(program.ast as never, MAX_COMPREHENSION_NESTING);
  if (nesting.offender) {
    return {
      ok: false,
      code: "too_complex",
      message: `comprehensions (exists, all, map, filter...) may be nested at most ${MAX_COMPREHENSION_NESTING} deep`,
      position: positionAt(expression, (nesting.offender as { start: number }).start),
    };
  }
  meterComprehensions(program.ast as never);
  if (checked.type !== "bool" && checked.type !== "dyn") {
    return {
      ok: false,
      code: "not_boolean",
      message: `a rule must evaluate to bool, this expression is ${checked.type}`,
      position: positionAt(expression, 0),
    };
  }
  const identifiers = identifiersOf(program.ast);
  return {
    ok: true,
    module,
    expression,
    listNames: [...listNames].sort(),
    resultType: checked.type,
    seesCollectionEvents: identifiers.has("event_type") || identifiers.has("collection"),
    identifiers,
    program: program as unknown as CompiledRule["program"],
  };
}

/** The names of every identifier the parsed expression reads (cel-js AST: nodes `{op, args, meta}`, `op: "id"`). */
function identifiersOf(root: unknown): Set<string> {
  const out = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (v: unknown): void => {
    if (typeof v !== "object" || v === null || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) return v.forEach(visit);
    const node = v as { op?: unknown; args?: unknown; meta?: { alternate?: unknown } };
    if (node.op === "id" && typeof node.args === "string") out.add(node.args);
    if (node.op === "value") return; // a literal may be any object
    if ("args" in node) visit(node.args);
    else if (node.op === undefined) Object.values(node).forEach(visit); // a comprehension's parts
    visit(node.meta?.alternate);
  };
  visit(root);
  return out;
}

function toCelError(e: unknown, expression: string, fallback: CelErrorCode): CelError {
  const err = e as { code?: string; summary?: string; message?: string; range?: { start: number } };
  let code: CelErrorCode = fallback;
  if (["computed_list_lookup", "unknown_list", "invalid_regex", "too_complex"].includes(err?.code as string)) code = err.code as CelErrorCode;
  if (err?.code === "limit_exceeded") code = "too_complex";
  let message = err?.summary ?? err?.message ?? String(e);
  if (/^Unknown variable: lists$/.test(message)) {
    message = 'lists can only be used as the second argument of in_list(value, lists["<name>"])';
  }
  const out: CelError = { ok: false, code, message };
  if (typeof err?.range?.start === "number") out.position = positionAt(expression, err.range.start);
  return out;
}

export function positionAt(text: string, offset: number): SourcePosition {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1, offset };
}

// ---- evaluate ---------------------------------------------------------------------

/** An event converted to CEL values; reuse it for every rule of the module. */

export class PreparedEvent {
  constructor(
    readonly module: ModuleName,
    /** Variables by name, plus the lists slot the engine fills per evaluation. */
    readonly context: Record<string, unknown>,
  ) {}
}

export function prepareEvent(module: ModuleName, event: unknown): PreparedEvent {
  if (event instanceof PreparedEvent) return event;
  return new PreparedEvent(module, convertEvent(runtimeOf(module).shape, event));
}

/**
 * Evaluates a compiled rule. Errors (a missing field, a type mismatch in dyn data, a
 * non-bool result) are returned, never thrown: one bad rule must not stop the others.
 */
export function evaluate(
  compiled: CompiledRule,
  event: PreparedEvent | Record<string, unknown>,
  listData: ListData = EMPTY_LIST_DATA,
): EvaluationResult {
  const prepared = event instanceof PreparedEvent ? event : prepareEvent(compiled.module, event);
  const context = prepared.context;
  if (!compiled.seesCollectionEvents && isCollectionEventType(context.event_type)) return { matched: false, notForCollectionEvents: true };
  // Event types a module added after rules were written: seen only by a rule that reads
  // event_type or the fields they are about (ct-log's lookalike events: `lookalike`).
  const optIn = MODULE_OPT_IN_EVENTS[compiled.module]?.[String(context.event_type)];
  if (optIn && !compiled.identifiers.has("event_type") && !compiled.identifiers.has(optIn)) return { matched: false, notForRule: true };
  context[LISTS_KEY] = listData;
  let value: unknown;
  try {
    // A fresh budget of comprehension steps per evaluation (cost.ts).
    value = withBudget(() => compiled.program(context));
  } catch (e) {
    const err = e as { summary?: string; message?: string };
    return { matched: false, error: err?.summary ?? err?.message ?? String(e) };
  }
  if (typeof value === "boolean") return { matched: value };
  return { matched: false, error: `rule did not evaluate to bool (got ${describe(value)})` };
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "double";
  if (Array.isArray(v)) return "list";
  return typeof v === "object" ? "map" : typeof v;
}

/** For introspection: the environment's own view of variables and functions. */
export function environmentDefinitions(module: ModuleName) {
  return runtimeOf(module).env.getDefinitions();
}
