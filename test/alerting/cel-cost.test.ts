/**
 * User-written rules cannot stall the service (issue 13): matches() runs on RE2
 * (linear time) with bounded patterns, texts and work per evaluation, and expressions
 * are bounded in size, comprehension nesting and evaluation steps. Exercised through
 * the API (POST /alert-rules/test, rule create) and the engine.
 */
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { compileRule, evaluate } from "../../src/modules/alerting/cel/engine";
import { EVALUATION_STEP_BUDGET, MAX_COMPREHENSION_NESTING, REGEX_WORK_BUDGET } from "../../src/modules/alerting/cel/cost";
import { estimateProgram, MAX_MATCH_TEXT_LENGTH, MAX_PROGRAM_SIZE, MAX_REPEAT_COUNT } from "../../src/modules/alerting/cel/regex";
import { MAX_TEST_EVENT_BYTES } from "../../src/modules/alerting/schema";
import { call, expectErrorShape, signup } from "../helpers";
import { ctLogEvent } from "./events";

// 2^34 backtracking paths: a backtracking engine (JavaScript's) needs minutes for this.
const evil = "a".repeat(34) + "!";
/**
 * Linear, but large: RE2 compiles it to 5,003 instructions, and matching it against
 * 20 KB of "a" took 4.3 s (100 KB: 31 s) before patterns were bounded.
 */
const BIG = "(?:a|aa){0,1000}[^a]";
/** The same shape at the largest allowed count: 503 instructions. */
const LARGEST = `(?:a|aa){0,${MAX_REPEAT_COUNT}}[^a]`;

function compiled(expression: string) {
  const c = compileRule("ct-log", expression, []);
  if (!c.ok) throw new Error(c.message);
  return c;
}

/** Runs `f` and returns its result with the milliseconds it took. */
function timed<T>(f: () => T): [T, number] {
  const t0 = performance.now();
  const r = f();
  return [r, performance.now() - t0];
}

describe("matches() is RE2: linear time", () => {
  it("the catastrophic-backtracking pattern answers in milliseconds through POST /api/ct-log/alert-rules/test", async () => {
    const org = await signup();
    const event = ctLogEvent();
    event.cert.subject = evil;
    const t0 = performance.now();
    const r = await call("POST", "/api/ct-log/alert-rules/test", { token: org.session, body: { expression: "cert.subject.matches('^(a+)+$')", event } });
    const elapsed = performance.now() - t0;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ matched: false, error: null });
    // RE2 needs well under a millisecond; the rest is the HTTP round trip in the test
    // runtime, which a loaded CI machine stretches to a few hundred ms. A backtracking
    // engine would take minutes, so 1.5 s separates the two with room on either side.
    expect(elapsed).toBeLessThan(1500);
    // The same pattern still matches what it should.
    event.cert.subject = "a".repeat(34);
    const ok = await call("POST", "/api/ct-log/alert-rules/test", { token: org.session, body: { expression: "cert.subject.matches('^(a+)+$')", event } });
    expect(ok.body).toMatchObject({ matched: true, error: null });
  });

  it(`texts up to ${MAX_MATCH_TEXT_LENGTH} characters match in milliseconds; a longer one is an evaluation error, also in milliseconds`, () => {
    const rule = compiled("cert.subject.matches('(x+x+)+y') || cert.subject.matches('^(a|aa)+$')");
    const event = ctLogEvent();
    event.cert.subject = "x".repeat(MAX_MATCH_TEXT_LENGTH);
    const [within, ms] = timed(() => evaluate(rule, event));
    expect(within).toEqual({ matched: false });
    expect(ms).toBeLessThan(500);
    event.cert.subject = "x".repeat(100_000);
    const [over, overMs] = timed(() => evaluate(rule, event));
    expect(over.matched).toBe(false);
    expect(over.error).toContain(`at most ${MAX_MATCH_TEXT_LENGTH} are matched`);
    expect(overMs).toBeLessThan(100);
  });

  it("keeps CEL semantics: partial match, anchors, inline flags, computed patterns", () => {
    const e = ctLogEvent(); // subject 26d54cff.sni.cloudflaressl.com
    const run = (expr: string) => evaluate(compiled(expr), e);
    expect(run("cert.subject.matches('cloudflare')")).toEqual({ matched: true });
    expect(run("cert.subject.matches('^cloudflare')")).toEqual({ matched: false });
    expect(run("cert.subject.matches('(?i)CLOUDFLARESSL\\\\.COM$')")).toEqual({ matched: true });
    expect(run("cert.dns_names.exists(n, n.matches('^[a-z]+\\\\.com$'))")).toEqual({ matched: true });
    // A pattern taken from the event is compiled at evaluation time, also by RE2.
    expect(run("cert.subject.matches(cert.dns_names[1])")).toEqual({ matched: false });
    expect(run("'cloudflare.com'.matches(cert.dns_names[1])")).toEqual({ matched: true });
  });

  it("a pattern RE2 does not accept (backreference, lookahead) is a 400 with its position on save", async () => {
    const org = await signup();
    for (const pattern of ["(a)\\\\1", "a(?=b)"]) {
      const r = await call("POST", "/api/ct-log/alert-rules", { token: org.session, body: { name: "bad", expression: `cert.subject.matches('${pattern}')` } });
      expectErrorShape(r, 400, "validation_error");
      expect(r.body.error.details[0].message).toMatch(/^invalid_regex at line 1, column 22: invalid regular expression \(RE2 syntax\)/);
    }
    // A matches() on a non-string is a type error, as with the built-in.
    const typed = await call("POST", "/api/ct-log/alert-rules", { token: org.session, body: { name: "bad", expression: "cert.log_index.matches('1')" } });
    expectErrorShape(typed, 400, "validation_error");
  });
});

describe("pattern size and regex work are bounded", () => {
  it(`a repetition over ${MAX_REPEAT_COUNT} is a 400 too_complex with its position on save, and an error in milliseconds in /test`, async () => {
    const org = await signup();
    const r = await call("POST", "/api/ct-log/alert-rules", { token: org.session, body: { name: "big", expression: `\n  cert.subject.matches('${BIG}')` } });
    expectErrorShape(r, 400, "validation_error");
    expect(r.body.error.details[0]).toEqual({ path: "expression", message: expect.stringMatching(/^too_complex at line 2, column 24: repetition \{0,1000\} at pattern offset 8 counts beyond 100/) });
    expect((await call("GET", "/api/ct-log/alert-rules", { token: org.session })).body.rules).toEqual([]);

    // The reported attack: a Viewer's /test with 20 KB of "a".
    const event = ctLogEvent();
    event.cert.subject = "a".repeat(20_000);
    const t0 = performance.now();
    const t = await call("POST", "/api/ct-log/alert-rules/test", { token: org.session, body: { expression: `cert.subject.matches('${BIG}')`, event } });
    expect(t.status).toBe(200);
    expect(t.body.matched).toBe(false);
    expect(t.body.error).toMatch(/^too_complex at line 1, column 22: repetition/);
    expect(performance.now() - t0).toBeLessThan(1500);
  });

  it(`a program over ${MAX_PROGRAM_SIZE} instructions is refused (clearly larger ones before compiling), also when the pattern is computed`, () => {
    // (Bounds in ms are loose for a loaded CI machine: the unbounded engine took seconds.)
    for (const pattern of ["(?:[a-z]{100}){10}", `${LARGEST}${LARGEST}${LARGEST}`, "(?:(?:ab){50}){20}"]) {
      const [r, ms] = timed(() => compileRule("ct-log", `cert.subject.matches('${pattern}')`, []));
      expect(r, pattern).toMatchObject({ ok: false, code: "too_complex", position: { line: 1, column: 22 } });
      expect(ms).toBeLessThan(300);
    }
    // The same pattern taken from the event: an evaluation error, in milliseconds.
    const event = ctLogEvent();
    event.cert.dns_names = [BIG, "(?:[a-z]{100}){10}"];
    for (const expr of ["cert.subject.matches(cert.dns_names[0])", "cert.subject.matches(cert.dns_names[1])"]) {
      const [r, ms] = timed(() => evaluate(compiled(expr), event));
      expect(r.matched).toBe(false);
      expect(r.error).toMatch(/repetition \{0,1000\}|too large: it compiles to (about )?\d+ instructions/);
      expect(ms).toBeLessThan(300);
      // A refused pattern is remembered: seen again, it costs nothing.
      const [again, againMs] = timed(() => evaluate(compiled(expr), event));
      expect(again.error).toBe(r.error);
      expect(againMs).toBeLessThan(50);
    }
  });

  it("the largest allowed pattern against long texts: charged before it runs, so over the budget it ends in milliseconds", () => {
    const rule = compiled(`cert.subject.matches('${LARGEST}')`);
    const event = ctLogEvent();
    // 503 instructions x 16,384 characters is far over the budget: refused without matching.
    event.cert.subject = "a".repeat(MAX_MATCH_TEXT_LENGTH);
    const [over, overMs] = timed(() => evaluate(rule, event));
    expect(over.matched).toBe(false);
    expect(over.error).toContain(`more than ${REGEX_WORK_BUDGET} units`);
    expect(overMs).toBeLessThan(100);
    // Within the budget it runs and matches as RE2 does.
    event.cert.subject = "a".repeat(800) + "b";
    const [within, ms] = timed(() => evaluate(rule, event));
    expect(within).toEqual({ matched: true });
    expect(ms).toBeLessThan(500);
    // The budget is per evaluation: the same work again is paid for again.
    expect(evaluate(rule, event)).toEqual({ matched: true });
  });

  it("many patterns computed from the event share one budget; their compilation is charged too", () => {
    const event = ctLogEvent();
    // 200 distinct patterns of ~500 instructions each: compiling them all took seconds.
    event.cert.dns_names = Array.from({ length: 200 }, (_, i) => `(?:a|aa){0,99}x${i}`);
    event.cert.subject = "a".repeat(100);
    const [r, ms] = timed(() => evaluate(compiled("cert.dns_names.exists(p, cert.subject.matches(p))"), event));
    expect(r.matched).toBe(false);
    expect(r.error).toContain("evaluation budget exceeded");
    expect(ms).toBeLessThan(500);
  });

  it("the literal patterns of one expression are bounded together", () => {
    // Nine patterns of ~470 instructions each: over 4,000 together, though each is allowed.
    const nine = Array.from({ length: 9 }, (_, i) => `cert.subject.matches('(?:a|aa){0,${90 + i}}b')`);
    expect(compileRule("ct-log", nine.join(" || "), [])).toMatchObject({ ok: false, code: "too_complex", message: expect.stringContaining("together") });
    expect(compileRule("ct-log", nine.slice(0, 3).join(" || "), []).ok).toBe(true);
  });

  it("the pattern estimate is never below the compiled size (so nothing large is compiled unseen)", () => {
    const patterns = [
      "^(a+)+$", "(x+x+)+y", "[a-z]+@example\\.com", "(?i)CLOUDFLARE", "w0|w1|w2|w3", "(?:x{10}){10}", "a{2,}", "a{3}", "a{2,5}?",
      "\\pL{5}\\p{Greek}+[[:alpha:]]\\Qa.b\\E", "(a)(b(c|d))*?", "(?P<n>ab)+", "^[^@]+@(?:[a-z0-9-]+\\.)+[a-z]{2,}$", "[]a]", "[^]a]{3}",
      "\\x{41}{10}", "(?s).{50}", "(?:(?:a|b|c){10}){10}", LARGEST, "(?:[a-z]{100}){5}", "x{0}", "(?:)", "a|", "\\d{1,3}(?:\\.\\d{1,3}){3}",
    ];
    for (const p of patterns) expect(estimateProgram(p).size, p).toBeGreaterThanOrEqual(RE2JS.compile(p).programSize());
  });

  it(`POST /alert-rules/test evaluates an example event of at most ${MAX_TEST_EVENT_BYTES / 1024} KiB`, async () => {
    const org = await signup();
    const event = ctLogEvent();
    event.cert.dns_names = Array.from({ length: 2000 }, (_, i) => `host-${i}-${"a".repeat(40)}.example.com`);
    const r = await call("POST", "/api/ct-log/alert-rules/test", { token: org.session, body: { expression: "true", event } });
    expectErrorShape(r, 400, "validation_error");
    expect(r.body.error.details).toEqual([{ path: "event", message: expect.stringContaining(`at most ${MAX_TEST_EVENT_BYTES}`) }]);
    event.cert.dns_names = event.cert.dns_names.slice(0, 100);
    expect((await call("POST", "/api/ct-log/alert-rules/test", { token: org.session, body: { expression: "true", event } })).body).toMatchObject({ matched: true, error: null });
  });
});

describe("expression cost is bounded", () => {
  it(`comprehensions nest at most ${MAX_COMPREHENSION_NESTING} deep (chaining is fine)`, () => {
    expect(compileRule("ct-log", "cert.dns_names.exists(a, cert.dns_names.exists(b, a == b))", []).ok).toBe(true);
    expect(compileRule("ct-log", "cert.dns_names.filter(a, a != '').map(a, a + 'x').exists(a, a.size() > 3)", []).ok).toBe(true);
    const deep = compileRule("ct-log", "cert.dns_names.exists(a, cert.dns_names.exists(b, cert.dns_names.exists(c, a == b && b == c)))", []);
    expect(deep).toMatchObject({ ok: false, code: "too_complex", position: { line: 1, column: 51 } }); // the third exists()
  });

  it("an expression with too many nodes is refused at compile time", () => {
    const r = compileRule("ct-log", Array(1000).fill("1").join("+") + " > 0", []);
    expect(r).toMatchObject({ ok: false, code: "too_complex" });
  });

  it("an evaluation that needs more steps than the budget ends with an error, fast", async () => {
    const org = await signup();
    const event = ctLogEvent();
    event.cert.dns_names = Array.from({ length: 1000 }, (_, i) => `n${i}.example.com`);
    const t0 = performance.now();
    const r = await call("POST", "/api/ct-log/alert-rules/test", {
      token: org.session,
      body: { expression: "cert.dns_names.all(a, cert.dns_names.all(b, a.size() > 0))", event },
    });
    expect(r.status).toBe(200);
    expect(r.body.matched).toBe(false);
    expect(r.body.error).toContain(`more than ${EVALUATION_STEP_BUDGET}`);
    expect(performance.now() - t0).toBeLessThan(2_000);
    // Within the budget the same rule evaluates normally, and the budget is per evaluation.
    event.cert.dns_names = event.cert.dns_names.slice(0, 100);
    for (let i = 0; i < 3; i++) {
      const ok = await call("POST", "/api/ct-log/alert-rules/test", { token: org.session, body: { expression: "cert.dns_names.all(a, cert.dns_names.all(b, a.size() > 0))", event } });
      expect(ok.body).toMatchObject({ matched: true, error: null });
    }
  });
});
