/**
 * User-written rules cannot stall the service (issue 13): matches() runs on RE2
 * (linear time), and expressions are bounded in size, comprehension nesting and
 * evaluation steps. Exercised through the API (POST /alert-rules/test, rule create)
 * and the engine.
 */
import { describe, expect, it } from "vitest";
import { compileRule, evaluate } from "../../src/modules/alerting/cel/engine";
import { EVALUATION_STEP_BUDGET, MAX_COMPREHENSION_NESTING } from "../../src/modules/alerting/cel/cost";
import { call, expectErrorShape, signup } from "../helpers";
import { ctLogEvent } from "./events";

// 2^34 backtracking paths: a backtracking engine (JavaScript's) needs minutes for this.
const evil = "a".repeat(34) + "!";

describe("matches() is RE2: linear time", () => {
  it("the catastrophic-backtracking pattern answers in milliseconds through POST /api/ct-log/alert-rules/test", async () => {
    const org = await signup();
    const event = ctLogEvent();
    event.cert.subject = evil;
    const t0 = performance.now();
    const r = await call("POST", "/api/ct-log/alert-rules/test", { token: org.session, body: { expression: "cert.subject.matches('^(a+)+$')", event } });
    const elapsed = performance.now() - t0;
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ matched: false, error: null });
    // RE2 needs well under a millisecond; the rest is the HTTP round trip in the test
    // runtime, which a loaded CI machine stretches to a few hundred ms. A backtracking
    // engine would take minutes, so 1.5 s separates the two with room on either side.
    expect(elapsed).toBeLessThan(1500);
    // The same pattern still matches what it should.
    event.cert.subject = "a".repeat(34);
    const ok = await call("POST", "/api/ct-log/alert-rules/test", { token: org.session, body: { expression: "cert.subject.matches('^(a+)+$')", event } });
    expect(ok.body).toEqual({ matched: true, error: null });
  });

  it("longer inputs stay linear: 100k characters against nested quantifiers in milliseconds", () => {
    const rule = compileRule("ct-log", "cert.subject.matches('(x+x+)+y') || cert.subject.matches('^(a|aa)+$')", []);
    if (!rule.ok) throw new Error(rule.message);
    const event = ctLogEvent();
    event.cert.subject = "x".repeat(100_000);
    const t0 = performance.now();
    expect(evaluate(rule, event)).toEqual({ matched: false });
    expect(performance.now() - t0).toBeLessThan(1_000);
  });

  it("keeps CEL semantics: partial match, anchors, inline flags, computed patterns", () => {
    const e = ctLogEvent(); // subject 26d54cff.sni.cloudflaressl.com
    const run = (expr: string) => {
      const c = compileRule("ct-log", expr, []);
      if (!c.ok) throw new Error(c.message);
      return evaluate(c, e);
    };
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
      expect(ok.body).toEqual({ matched: true, error: null });
    }
  });
});
