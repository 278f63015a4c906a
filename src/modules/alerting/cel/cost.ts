/**
 * Bounds on what a rule may cost, so a user-written expression cannot stall the
 * isolate that evaluates it (rules run in the organization's AlertState, and
 * `POST /alert-rules/test` runs on the caller's example event):
 *
 *  - at compile time: the parser's structural limits (COMPILE_LIMITS: AST nodes,
 *    nesting depth, literal sizes) and at most MAX_COMPREHENSION_NESTING nested
 *    comprehensions (exists/all/map/filter inside one another multiply their lists);
 *  - at evaluation time: a budget of comprehension steps (EVALUATION_STEP_BUDGET):
 *    each step of every exists/all/exists_one/map/filter counts, and a rule that
 *    needs more ends with an evaluation error instead of running on;
 *  - and a budget of regular-expression work (REGEX_WORK_BUDGET, in RE2 instructions
 *    x characters): matches() charges each match, and each compilation of a pattern
 *    computed at run time, before doing it (regex.ts).
 *
 * Regular expressions are linear-time and bounded in size (regex.ts), so with these
 * bounds evaluation time is linear in the event's size and capped per evaluation.
 */
export const COMPILE_LIMITS = { maxAstNodes: 1500, maxDepth: 64, maxListElements: 256, maxMapEntries: 256, maxCallArguments: 16 } as const;
export const MAX_COMPREHENSION_NESTING = 2;
export const EVALUATION_STEP_BUDGET = 100_000;
/**
 * RE2 work per evaluation, in instructions x characters: the pessimistic cost of a
 * match (every instruction active at every character). Measured in workerd-like V8 at
 * up to ~140 ns per unit for the worst patterns, so at most ~70 ms of matching per
 * evaluation; a typical pattern (30 instructions) against 100 names of 30 characters
 * uses 93,000.
 */
export const REGEX_WORK_BUDGET = 500_000;

/** An AST node of cel-js as far as this file reads it (ASTNode in cel-js/lib/parser.js). */
interface Node {
  op: string;
  args: unknown;
  meta: { alternate?: Node; macro?: unknown; evaluate?: (ev: unknown, ast: Node, ctx: unknown) => unknown };
  start: number;
}

const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && typeof (v as Node).op === "string" && "args" in (v as object);

/** The nodes that run when `node` runs (a macro call runs its expansion). */
function children(node: Node): Node[] {
  const expanded = node.meta?.alternate;
  if (expanded) return [expanded];
  if (node.op === "value" || node.op === "id") return []; // literal values may be any object
  if (node.op === "comprehension") {
    const a = node.args as Record<string, unknown>;
    return [a.iterable, a.init, a.condition, a.step].filter(isNode);
  }
  const out: Node[] = [];
  const visit = (v: unknown) => {
    if (isNode(v)) out.push(v);
    else if (Array.isArray(v)) v.forEach(visit);
  };
  visit(node.args);
  return out;
}

/** The deepest nesting of comprehensions (a comprehension's iterable is not nested in it) and the first node that exceeds `max`. */
export function comprehensionNesting(root: Node, max: number): { depth: number; offender: Node | null } {
  let deepest = 0;
  let offender: Node | null = null;
  const walk = (node: Node, depth: number) => {
    if (node.op === "comprehension") {
      const args = node.args as { iterable: Node };
      walk(args.iterable, depth);
      const inner = depth + 1;
      deepest = Math.max(deepest, inner);
      if (inner > max && !offender) offender = node;
      for (const child of children(node)) if (child !== args.iterable) walk(child, inner);
      return;
    }
    for (const child of children(node)) walk(child, depth);
  };
  walk(root, 0);
  return { depth: deepest, offender };
}

export class EvaluationBudgetExceeded extends Error {
  constructor(what = `more than ${EVALUATION_STEP_BUDGET} comprehension steps`) {
    super(`evaluation budget exceeded: ${what}`);
  }
}

/** Steps left in the evaluation running now (evaluation is synchronous: one at a time per isolate). */
let stepsLeft = EVALUATION_STEP_BUDGET;
/** Regex work left in the evaluation running now (unbounded outside an evaluation). */
let regexWorkLeft = Infinity;

/** Runs one evaluation with a fresh budget. */
export function withBudget<T>(run: () => T): T {
  stepsLeft = EVALUATION_STEP_BUDGET;
  regexWorkLeft = REGEX_WORK_BUDGET;
  try {
    return run();
  } finally {
    regexWorkLeft = Infinity;
  }
}

/** Charges regular-expression work to the evaluation running now; throws before the work is done when the budget cannot pay for it. */
export function chargeRegexWork(units: number): void {
  if (units > regexWorkLeft) {
    regexWorkLeft = 0;
    throw new EvaluationBudgetExceeded(`regular expressions would need more than ${REGEX_WORK_BUDGET} units of work (instructions x characters)`);
  }
  regexWorkLeft -= units;
}

/**
 * Makes every comprehension step of a checked program count against the budget: the
 * step node's evaluation is wrapped (it resolves the node's handler the way cel-js's
 * ASTNode.evaluate does, reading it on every call since type checking may replace it).
 */
export function meterComprehensions(root: Node): void {
  const walk = (node: Node) => {
    if (node.op === "comprehension") {
      const step = (node.args as { step: Node }).step;
      Object.defineProperty(step, "evaluate", {
        configurable: true,
        writable: true,
        value(ev: unknown, ast: Node, ctx: unknown) {
          if (--stepsLeft < 0) throw new EvaluationBudgetExceeded();
          const m = step.meta;
          if (m.alternate) return (m.alternate as any).evaluate(ev, m.alternate, ctx);
          if (m.macro) return (m.macro as any).evaluate(ev, m.macro, ctx);
          return m.evaluate!(ev, ast, ctx);
        },
      });
    }
    children(node).forEach(walk);
  };
  walk(root);
}
