/**
 * `string.matches(regex)` on RE2 (re2js, a pure-JavaScript port of RE2/J): matching
 * time is linear in the input for every pattern, as the CEL specification intends
 * ("RE2 syntax"). cel-js's built-in `matches` uses the JavaScript engine, which
 * backtracks: `'^(a+)+$'` against "a"*29+"!" takes seconds and stalls the isolate.
 *
 * Linear is not cheap by itself: RE2 simulates its compiled program over the text, so
 * a match costs up to (instructions) x (characters), and both compiling and running a
 * large program are slow in JavaScript (`(?:a|aa){0,1000}[^a]` compiles to 5,003
 * instructions and needs 4 s against a 20 KB text). So, besides the syntax:
 *  - a repetition count above MAX_REPEAT_COUNT is refused, and so is a pattern whose
 *    program would exceed MAX_PROGRAM_SIZE instructions (estimated from the pattern
 *    before compiling, so an oversized pattern costs nothing; checked exactly after);
 *  - the text given to matches() is at most MAX_MATCH_TEXT_LENGTH characters;
 *  - every match is charged (instructions x (characters + 1)) and every compilation
 *    of a pattern computed at run time (instructions x COMPILE_COST_PER_INSTRUCTION)
 *    to the evaluation's regex budget (cost.ts), before it runs.
 *
 * How it replaces the built-in: cel-js expands macros by method name while parsing,
 * before types are known, so a macro named `matches` takes over every `x.matches(p)`
 * call; its own type check then accepts exactly the standard signature
 * `string.matches(string) -> bool`. (The macro is declared on a receiver type other
 * than string only because cel-js refuses two overloads on the same one.) A literal
 * pattern is compiled once at parse time, so an invalid or oversized one is a compile
 * error with its position; a computed pattern is compiled when evaluated (cached).
 */
import { Environment, ParseError, TypeError as CelTypeError } from "@marcbachmann/cel-js";
import { RE2JS } from "re2js";
import { chargeRegexWork, EvaluationBudgetExceeded } from "./cost";

type Re2 = ReturnType<typeof RE2JS.compile>;

/** Patterns longer than this are refused. */
export const MAX_PATTERN_LENGTH = 1024;
/** The largest count of a `{n}`, `{n,}` or `{n,m}` repetition (RE2 itself allows 1,000). */
export const MAX_REPEAT_COUNT = 100;
/** The largest compiled program, in RE2 instructions. */
export const MAX_PROGRAM_SIZE = 1000;
/** The longest text matches() looks at; a longer one is an evaluation error. */
export const MAX_MATCH_TEXT_LENGTH = 16_384;
/** What compiling one instruction costs, in units of the regex budget (measured: compiling is ~100x slower per instruction than matching one character). */
export const COMPILE_COST_PER_INSTRUCTION = 100;

/** The most instructions the literal patterns of one expression may compile to together (each compiles in ~10 µs per instruction). */
export const MAX_EXPRESSION_PROGRAM_SIZE = 4 * MAX_PROGRAM_SIZE;

/** A pattern refused for its size rather than its syntax: `too_complex`, not `invalid_regex`. */
export class PatternTooComplex extends Error {}

const cache = new Map<string, Re2>();
/** Patterns refused for their size, by the reason: a pattern computed from events is often seen again. */
const refused = new Map<string, string>();

function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  if (map.size >= 512) map.delete(map.keys().next().value as K);
  map.set(key, value);
}

/**
 * An upper estimate of the instructions RE2 compiles `pattern` to, read from the
 * pattern's text without compiling it (RE2 expands `x{n,m}` into m copies of x), and
 * the first repetition whose count is over MAX_REPEAT_COUNT. Syntax errors are left to
 * RE2; the estimate only has to be large where the program is.
 */
export function estimateProgram(pattern: string): { size: number; overlongRepeat: { text: string; offset: number } | null } {
  interface Frame { total: number; last: number; capturing: boolean }
  const stack: Frame[] = [{ total: 0, last: 0, capturing: false }];
  let overlongRepeat: { text: string; offset: number } | null = null;
  const top = () => stack[stack.length - 1];
  const atom = (size: number) => {
    top().total += size;
    top().last = size;
  };
  /** The last atom repeated `times` times, plus `extra` instructions. */
  const repeat = (times: number, extra: number) => {
    const f = top();
    const grown = f.last * times + extra;
    f.total += grown - f.last;
    f.last = grown;
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next === "Q") {
        // \Q...\E: every character up to \E is a literal.
        const end = pattern.indexOf("\\E", i + 2);
        const stop = end < 0 ? pattern.length : end;
        for (let k = i + 2; k < stop; k++) atom(1);
        i = end < 0 ? stop : end + 2;
        continue;
      }
      // \p{Greek}, \x{10FFFF}: one atom up to the closing brace.
      if ((next === "p" || next === "P" || next === "x") && pattern[i + 2] === "{") {
        const close = pattern.indexOf("}", i + 3);
        i = close < 0 ? pattern.length : close + 1;
      } else {
        i += 2;
      }
      atom(1);
      continue;
    }
    if (c === "[") {
      // A character class is one instruction, however it is spelt.
      let k = i + 1;
      if (pattern[k] === "^") k++;
      if (pattern[k] === "]") k++;
      while (k < pattern.length && pattern[k] !== "]") {
        if (pattern[k] === "\\") k += 2;
        else if (pattern.startsWith("[:", k)) {
          const close = pattern.indexOf(":]", k + 2);
          k = close < 0 ? k + 1 : close + 2;
        } else k++;
      }
      i = k + 1;
      atom(1);
      continue;
    }
    if (c === "(") {
      let capturing = true;
      if (pattern[i + 1] === "?") {
        // (?i) sets flags for the rest of the group: no group, no instruction.
        const flags = /^\(\?[a-zA-Z-]*\)/.exec(pattern.slice(i, i + 12));
        if (flags) {
          i += flags[0].length;
          continue;
        }
        // (?:...) and (?i:...) group without capturing; (?P<name>...) and (?<name>...) capture.
        capturing = pattern[i + 2] === "P" || pattern[i + 2] === "<";
      }
      stack.push({ total: 0, last: 0, capturing });
      i++;
      continue;
    }
    if (c === ")") {
      const group = stack.length > 1 ? stack.pop()! : { total: 0, capturing: false };
      atom(group.total + (group.capturing ? 2 : 0)); // a capture saves the start and the end
      i++;
      continue;
    }
    if (c === "|") {
      top().total += 1;
      top().last = 0;
      i++;
      continue;
    }
    if (c === "*" || c === "+" || c === "?") {
      repeat(1, 1);
      i += pattern[i + 1] === "?" ? 2 : 1;
      continue;
    }
    if (c === "{") {
      const m = /^\{(\d+)(?:(,)(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (m) {
        const min = Number(m[1]);
        const unbounded = m[2] !== undefined && m[3] === "";
        const max = m[2] === undefined ? min : unbounded ? min : Number(m[3]);
        if (!overlongRepeat && Math.max(min, max) > MAX_REPEAT_COUNT) overlongRepeat = { text: m[0], offset: i };
        // x{n,m}: m copies of x, the last m-n of them optional (one split each); x{n,}: n copies and a loop.
        repeat(Math.max(1, min, max), unbounded ? 1 : Math.max(0, max - min));
        i += m[0].length + (pattern[i + m[0].length] === "?" ? 1 : 0);
        continue;
      }
    }
    // A literal character (a surrogate pair counts twice: an overestimate is fine).
    atom(1);
    i++;
  }
  // An unclosed group is a syntax error for RE2; count it anyway.
  while (stack.length > 1) atom(stack.pop()!.total + 2);
  // The match instruction, the capture of the whole match and the unanchored prefix.
  return { size: stack[0].total + 6, overlongRepeat };
}

/** Refuses a pattern by its size before anything is compiled; returns the estimate. */
function checkPatternSize(pattern: string): number {
  if (pattern.length > MAX_PATTERN_LENGTH) throw new PatternTooComplex(`regular expression longer than ${MAX_PATTERN_LENGTH} characters`);
  const estimate = estimateProgram(pattern);
  if (estimate.overlongRepeat) {
    const r = estimate.overlongRepeat;
    throw new PatternTooComplex(`repetition ${r.text} at pattern offset ${r.offset} counts beyond ${MAX_REPEAT_COUNT}`);
  }
  // The estimate errs high; twice the limit leaves the borderline to the exact check below.
  if (estimate.size > 2 * MAX_PROGRAM_SIZE) throw new PatternTooComplex(tooLarge(estimate.size, "about "));
  return estimate.size;
}

const tooLarge = (size: number, about = "") =>
  `regular expression too large: it compiles to ${about}${size} instructions, at most ${MAX_PROGRAM_SIZE} are allowed (use fewer or smaller repetitions)`;

/**
 * Compiles an RE2 pattern; throws with RE2's message when the syntax is invalid
 * (backreferences, lookaround...) and PatternTooComplex when it is too large.
 * `charge`: count the compilation against the running evaluation's budget.
 */
export function compileRe2(pattern: string, charge = false): Re2 {
  let re = cache.get(pattern);
  if (re) return re;
  const known = refused.get(pattern);
  if (known !== undefined) throw new PatternTooComplex(known);
  let estimate: number;
  try {
    estimate = checkPatternSize(pattern);
  } catch (e) {
    if (e instanceof PatternTooComplex) remember(refused, pattern, e.message);
    throw e;
  }
  if (charge) chargeRegexWork(estimate * COMPILE_COST_PER_INSTRUCTION);
  re = RE2JS.compile(pattern);
  if (re.programSize() > MAX_PROGRAM_SIZE) {
    const reason = tooLarge(re.programSize());
    remember(refused, pattern, reason);
    throw new PatternTooComplex(reason);
  }
  remember(cache, pattern, re);
  return re;
}

/**
 * RE2 partial-match semantics, as CEL's matches(): true when the pattern matches
 * anywhere in the text. The work is charged to the evaluation's budget first.
 */
export function re2Matches(text: string, pattern: string | Re2): boolean {
  if (text.length > MAX_MATCH_TEXT_LENGTH) {
    throw new Error(`matches() text is ${text.length} characters long; at most ${MAX_MATCH_TEXT_LENGTH} are matched`);
  }
  const re = typeof pattern === "string" ? compileRe2(pattern, true) : pattern;
  chargeRegexWork(re.programSize() * (text.length + 1));
  return re.matcher(text).find();
}

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Instructions of the literal patterns of the expression being parsed (parsing is synchronous: one at a time). */
let literalProgramTotal = 0;

/** Called before an expression is parsed: its literal patterns start a fresh total. */
export function startExpression(): void {
  literalProgramTotal = 0;
}

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
          if (e instanceof PatternTooComplex) throw new ParseError({ code: "too_complex", message: reason(e), node: patternNode });
          throw new ParseError({ code: "invalid_regex", message: `invalid regular expression (RE2 syntax): ${reason(e)}`, node: patternNode });
        }
        literalProgramTotal += literal.programSize();
        if (literalProgramTotal > MAX_EXPRESSION_PROGRAM_SIZE) {
          throw new ParseError({
            code: "too_complex",
            message: `the regular expressions of this expression compile to more than ${MAX_EXPRESSION_PROGRAM_SIZE} instructions together`,
            node: patternNode,
          });
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
          let re: Re2;
          try {
            re = literal ?? compileRe2(pattern as string, true);
          } catch (e) {
            if (e instanceof PatternTooComplex || e instanceof EvaluationBudgetExceeded) throw e;
            throw new Error(`invalid regular expression (RE2 syntax): ${reason(e)}`);
          }
          return re2Matches(text, re);
        },
      };
    },
    { description: `RE2 regular expression test (linear time; repetition counts up to ${MAX_REPEAT_COUNT}, programs up to ${MAX_PROGRAM_SIZE} instructions, texts up to ${MAX_MATCH_TEXT_LENGTH} characters); the macro stands in for the built-in string.matches(string)` },
  );
}
