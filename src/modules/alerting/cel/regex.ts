/**
 * `string.matches(regex)` on RE2 (re2js, a pure-JavaScript port of RE2/J): matching
 * time is linear in the input for every pattern, as the CEL specification intends
 * ("RE2 syntax"). cel-js's built-in `matches` uses the JavaScript engine, which
 * backtracks: `'^(a+)+$'` against "a"*29+"!" takes seconds and stalls the isolate.
 *
 * How it replaces the built-in: cel-js expands macros by method name while parsing,
 * before types are known, so a macro named `matches` takes over every `x.matches(p)`
 * call; its own type check then accepts exactly the standard signature
 * `string.matches(string) -> bool`. (The macro is declared on a receiver type other
 * than string only because cel-js refuses two overloads on the same one.) A literal
 * pattern is compiled once at parse time, so an invalid one is a compile error with
 * its position; a computed pattern is compiled when evaluated (cached).
 */
import { Environment, ParseError, TypeError as CelTypeError } from "@marcbachmann/cel-js";
import { RE2JS } from "re2js";

type Re2 = ReturnType<typeof RE2JS.compile>;

/** Patterns longer than this are refused (RE2 compiles in time linear in the pattern, but bound it anyway). */
export const MAX_PATTERN_LENGTH = 1024;

const cache = new Map<string, Re2>();

/** Compiles an RE2 pattern; throws with RE2's message when the syntax is invalid (backreferences, lookaround...). */
export function compileRe2(pattern: string): Re2 {
  let re = cache.get(pattern);
  if (re) return re;
  if (pattern.length > MAX_PATTERN_LENGTH) throw new Error(`regular expression longer than ${MAX_PATTERN_LENGTH} characters`);
  re = RE2JS.compile(pattern);
  if (cache.size >= 512) cache.delete(cache.keys().next().value as string);
  cache.set(pattern, re);
  return re;
}

/** RE2 partial-match semantics, as CEL's matches(): true when the pattern matches anywhere in the text. */
export function re2Matches(text: string, pattern: string | Re2): boolean {
  const re = typeof pattern === "string" ? compileRe2(pattern) : pattern;
  return re.matcher(text).find();
}

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function registerRe2Matches(env: Environment): void {
  env.registerFunction(
    "list.matches(ast): bool",
    ({ receiver, args }: { receiver: any; args: any[] }) => {
      const patternNode = args[0];
      let literal: Re2 | undefined;
      if (patternNode?.op === "value" && typeof patternNode.args === "string") {
        try {
          literal = compileRe2(patternNode.args);
        } catch (e) {
          throw new ParseError({ code: "invalid_regex", message: `invalid regular expression (RE2 syntax): ${reason(e)}`, node: patternNode });
        }
      }
      return {
        async: false,
        typeCheck(checker: any, _macro: any, ctx: any) {
          for (const [node, what] of [[receiver, "receiver"], [patternNode, "pattern"]] as const) {
            const t = checker.check(node, ctx);
            if (t.kind !== "dyn" && t.name !== "string") {
              throw new CelTypeError({ code: "type_error", message: `matches() expects a string ${what}, got ${t.name}`, node });
            }
          }
          return checker.getType("bool");
        },
        evaluate(ev: any, _macro: any, ctx: any) {
          const text = ev.run(receiver, ctx);
          const pattern = literal ?? ev.run(patternNode, ctx);
          if (typeof text !== "string" || (literal === undefined && typeof pattern !== "string")) {
            throw new Error("matches() expects a string receiver and pattern");
          }
          try {
            return re2Matches(text, pattern as string | Re2);
          } catch (e) {
            throw new Error(`invalid regular expression (RE2 syntax): ${reason(e)}`);
          }
        },
      };
    },
    { description: "RE2 regular expression test (linear time); the macro stands in for the built-in string.matches(string)" },
  );
}
