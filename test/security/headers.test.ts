/**
 * Browser hardening (src/platform/browser-hardening.ts) on every answer: every route of
 * the OpenAPI document (successful and refused calls, JSON errors included), the 404
 * and 413 answers, the API reference page and its start-up script, and the console's
 * static-asset headers file, which must say what the code declares.
 */
import { describe, expect, it } from "vitest";
import consoleHeadersFile from "../../web/public/_headers?raw";
import { API_CSP, CONSOLE_CSP, cspOf, DOCS_CSP, HARDENING_HEADERS } from "../../src/platform/browser-hardening";
import { call, signup, type CallResult } from "../helpers";
import { label, ROUTES, samplePath, sampleQuery, sample } from "./openapi-routes";

function expectHardened(r: CallResult, csp: string, what: string) {
  for (const [name, value] of Object.entries(HARDENING_HEADERS)) expect(r.headers.get(name), `${what}: ${name}`).toBe(value);
  expect(r.headers.get("content-security-policy"), `${what}: CSP`).toBe(csp);
}

describe("every route of the OpenAPI document", () => {
  it("answers with nosniff, no framing, no referrer and the API's CSP, without a credential (401 or the public answer)", async () => {
    expect(ROUTES.length).toBeGreaterThan(50);
    for (const r of ROUTES) {
      const res = await call(r.method, samplePath(r) + sampleQuery(r), { body: r.body ? sample(r.body) : undefined });
      expect(res.status, label(r)).toBeLessThan(500);
      expectHardened(res, cspOf(API_CSP), `${label(r)} → ${res.status}`);
    }
  }, 120_000);

  it("and with a credential: each GET without parameters (200 JSON, or 404 for what is not configured yet)", async () => {
    const org = await signup("Headers");
    // Public routes (health, the SSO callback) are in the test above.
    for (const r of ROUTES.filter((r) => r.method === "GET" && !r.pathParams.length && !r.query.some((q) => q.required) && r.permission !== "none")) {
      const res = await call("GET", r.path, { token: org.session });
      expect([200, 404], label(r)).toContain(res.status);
      expectHardened(res, cspOf(API_CSP), label(r));
    }
  }, 120_000);
});

describe("answers no route declares", () => {
  it("an unknown path (404), an oversize body (413), a malformed JSON body (400)", async () => {
    expectHardened(await call("GET", "/api/no/such/thing"), cspOf(API_CSP), "404");
    expectHardened(await call("POST", "/api/auth/login", { rawBody: "x".repeat(1024 * 1024 + 10), headers: { "content-type": "application/json" } }), cspOf(API_CSP), "413");
    expectHardened(await call("POST", "/api/auth/login", { rawBody: "{", headers: { "content-type": "application/json" } }), cspOf(API_CSP), "400");
  });

  it("the API reference: its page allows only this origin's scripts, its start-up script is a file", async () => {
    const page = await call("GET", "/api/docs");
    expect(page.status).toBe(200);
    expectHardened(page, cspOf(DOCS_CSP), "/api/docs");
    expect(DOCS_CSP.scriptSrc).toEqual(["'self'"]);
    expect(DOCS_CSP.connectSrc).toEqual(["'self'"]);
    // No inline script: every <script> has a same-origin src.
    const scripts = [...String(page.body).matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(2);
    for (const [, attrs, inline] of scripts) {
      expect(attrs).toMatch(/src="\/[^/]/);
      expect(inline.trim()).toBe("");
    }
    const init = await call("GET", "/api/docs/init.js");
    expect(init.status).toBe(200);
    expect(init.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(String(init.body)).toContain('"url":"/api/openapi.json"');
    expectHardened(init, cspOf(API_CSP), "/api/docs/init.js");
  });
});

describe("the console's static assets (web/public/_headers)", () => {
  it("say the console's CSP and the same hardening headers for every path", () => {
    const block = /^\/\*\n((?:[ \t]+.*\n)+)/m.exec(consoleHeadersFile);
    expect(block, "a /* block").not.toBeNull();
    const headers = new Map(
      block![1]
        .trim()
        .split("\n")
        .map((l) => l.trim())
        .map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
    );
    expect(headers.get("content-security-policy")).toBe(cspOf(CONSOLE_CSP));
    for (const [name, value] of Object.entries(HARDENING_HEADERS)) expect(headers.get(name.toLowerCase()), name).toBe(value);
  });
});
