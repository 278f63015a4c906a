/**
 * Request handling and limits (docs/decisions.md#errors-and-validation): malformed bodies, unknown fields,
 * the 1 MiB body limit, unknown endpoints, rate-limit headers and 429.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { decide } from "../../src/platform/rate-limit/buckets";
import { MAX_BODY_BYTES, createApp } from "../../src/app";
import { call, callFresh, createToken, expectErrorShape, signupFresh, uniqueIp } from "../helpers";

describe("request bodies", () => {
  it("malformed JSON: 400 validation_error", async () => {
    const org = await signupFresh();
    const r = await call("POST", "/api/api-tokens", { token: org.session, rawBody: '{"name": "x",', headers: { "content-type": "application/json" } });
    expectErrorShape(r, 400, "validation_error");
  });

  it("a wrong or missing content type: 415 unsupported_media_type (the one error body), nothing created", async () => {
    const org = await signupFresh();
    const body = JSON.stringify({ name: "x", validity_days: 1, scopes: ["rdap:view_monitoring"] });
    for (const headers of [{ "content-type": "text/plain" }, { "content-type": "application/x-www-form-urlencoded" }, {}] as Record<string, string>[]) {
      const r = await call("POST", "/api/api-tokens", { token: org.session, rawBody: body, headers });
      expectErrorShape(r, 415, "unsupported_media_type");
    }
    // `application/json; charset=utf-8` is JSON.
    const ok = await call("POST", "/api/api-tokens", { token: org.session, rawBody: body, headers: { "content-type": "application/json; charset=utf-8" } });
    expect(ok.status).toBe(201);
    const list = await call("GET", "/api/api-tokens", { token: org.session });
    expect(list.body.tokens).toHaveLength(1);
  });

  it("unknown JSON fields are ignored (201)", async () => {
    const org = await signupFresh();
    const r = await call("POST", "/api/api-tokens", {
      token: org.session,
      body: { name: "x", validity_days: 1, scopes: ["rdap:view_monitoring"], colour: "blue", nested: { a: 1 } },
    });
    expect(r.status).toBe(201);
    expect(r.body).not.toHaveProperty("colour");
  });

  it("a body over 1 MiB (with Content-Length): 413 payload_too_large", async () => {
    expect(MAX_BODY_BYTES).toBe(1024 * 1024);
    const org = await signupFresh();
    const big = JSON.stringify({ name: "x".repeat(MAX_BODY_BYTES), validity_days: 1, scopes: ["rdap:view_monitoring"] });
    const r = await call("POST", "/api/api-tokens", {
      token: org.session,
      rawBody: big,
      headers: { "content-type": "application/json", "content-length": String(new TextEncoder().encode(big).length) },
    });
    expectErrorShape(r, 413, "payload_too_large");
  });

  it("a body over 1 MiB streamed without Content-Length: 413 payload_too_large", async () => {
    const org = await signupFresh();
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"name":"'));
      },
      pull(c) {
        if (sent > MAX_BODY_BYTES + chunk.length) {
          c.enqueue(new TextEncoder().encode('","validity_days":1,"scopes":["rdap:view_monitoring"]}'));
          c.close();
          return;
        }
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    const r = await call("POST", "/api/api-tokens", { token: org.session, rawBody: stream, headers: { "content-type": "application/json" } });
    expectErrorShape(r, 413, "payload_too_large");
  });

  it("an unknown endpoint: 404 not_found (with or without a bearer)", async () => {
    const org = await signupFresh();
    expectErrorShape(await call("GET", "/api/nope", { token: org.session }), 404, "not_found");
    expectErrorShape(await callFresh("GET", "/api/admin/nope"), 404, "not_found");
    expectErrorShape(await call("PATCH", "/api/api-tokens", { token: org.session }), 404, "not_found");
  });
});

describe("rate-limit headers", () => {
  const expectHeaders = (h: Headers) => {
    for (const k of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) expect(h.get(k) ?? "(missing)", k).toMatch(/^\d+$/);
  };

  it("are on success and error responses, including health, 401, 403, 404, 400", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["rdap:view_monitoring"]);
    const health = await callFresh("GET", "/api/health");
    expectHeaders(health.headers);
    expect(health.headers.get("RateLimit-Limit")).toBe("120");
    const ok = await call("GET", "/api/auth/me", { token: t.token });
    expectHeaders(ok.headers);
    // The tightest bucket is reported: the token's (600/min) before the organization's (1200/min).
    expect(ok.headers.get("RateLimit-Limit")).toBe("600");
    for (const r of [
      await callFresh("GET", "/api/api-tokens"),
      await call("GET", "/api/admin/users", { token: t.token }),
      await call("GET", "/api/nope", { token: t.token }),
      await call("POST", "/api/api-tokens", { token: org.session, body: {} }),
      await call("DELETE", "/api/admin/users/999999999", { token: org.session }),
    ]) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expectHeaders(r.headers);
    }
  });

  it("are on 413 responses too", async () => {
    const org = await signupFresh();
    const big = "x".repeat(MAX_BODY_BYTES + 10);
    const r = await call("POST", "/api/api-tokens", {
      token: org.session,
      rawBody: big,
      headers: { "content-type": "application/json", "content-length": String(big.length) },
    });
    expect(r.status).toBe(413);
    expectHeaders(r.headers);
  });

  it("Remaining decreases with each call of the same credential", async () => {
    const org = await signupFresh();
    const t = await createToken(org.session, ["rdap:view_monitoring"]);
    const a = Number((await call("GET", "/api/auth/me", { token: t.token })).headers.get("RateLimit-Remaining"));
    const started = Date.now();
    const b = Number((await call("GET", "/api/auth/me", { token: t.token })).headers.get("RateLimit-Remaining"));
    const elapsedMs = Date.now() - started;
    expect(a).toBeLessThanOrEqual(599);
    // One token taken; the bucket refills 600 per minute (one per 100 ms), so on a slow
    // machine what flowed back in between the calls is added (the exact arithmetic is the
    // decide() test below, with an injected clock).
    expect(b).toBeGreaterThanOrEqual(a - 1);
    expect(b).toBeLessThanOrEqual(Math.min(599, a - 1 + Math.ceil(elapsedMs / 100)));
    if (elapsedMs < 100) expect(b).toBe(a - 1);
  });
});

describe("429", () => {
  it("anonymous calls beyond 120/min from one IP: 429 rate_limited with Retry-After and the headers", async () => {
    const ip = uniqueIp();
    const results = await Promise.all(
      Array.from({ length: 125 }, () => call("GET", "/api/health", { headers: { "cf-connecting-ip": ip } })),
    );
    const limited = results.filter((r) => r.status === 429);
    // The bucket holds 120 and refills 2 per second: on a slow machine a token or two
    // may refill while the 125 calls are in flight. The exact boundary is proven by
    // the decide() test below with an injected clock.
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBeGreaterThanOrEqual(120);
    expect(ok + limited.length).toBe(125);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    const r = limited[0];
    expectErrorShape(r, 429, "rate_limited");
    expect(Number(r.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(r.headers.get("RateLimit-Limit")).toBe("120");
    expect(r.headers.get("RateLimit-Remaining")).toBe("0");
    expect(Number(r.headers.get("RateLimit-Reset"))).toBeGreaterThan(0);
    // Another IP is unaffected.
    expect((await callFresh("GET", "/api/health")).status).toBe(200);
  });

  it("a token beyond RATE_LIMIT_TOKEN_PER_MINUTE: 429; another token of the same org still works", async () => {
    const org = await signupFresh();
    const t1 = await createToken(org.session, ["rdap:view_monitoring"]);
    const t2 = await createToken(org.session, ["rdap:view_monitoring"]);
    // The same app with a small limit (bindings of the test worker are fixed at 600).
    const app = createApp();
    const testEnv = { ...env, RATE_LIMIT_TOKEN_PER_MINUTE: "5" } as any;
    const get = async (token: string) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(new Request("http://trust-plane.test/api/auth/me", { headers: { authorization: `Bearer ${token}` } }), testEnv, ctx);
      await waitOnExecutionContext(ctx);
      return { status: res.status, headers: res.headers, body: (await res.json()) as any };
    };
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof get>> | undefined;
    for (let i = 0; i < 6; i++) {
      last = await get(t1.token);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(last!.body).toMatchObject({ success: false, error: { code: "rate_limited" } });
    expect(last!.headers.get("RateLimit-Limit")).toBe("5");
    expect(Number(last!.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(Number(last!.headers.get("Retry-After"))).toBeLessThanOrEqual(12);
    expect((await get(t2.token)).status).toBe(200);
  });
});

describe("token bucket (decide)", () => {
  const spec = (perMinute: number, key = "k") => ({ key, perMinute });

  it("allows a full minute's burst, then refuses until refilled", () => {
    const buckets = new Map();
    const t0 = 1_000_000;
    for (let i = 0; i < 60; i++) {
      const d = decide(buckets, [spec(60)], t0);
      expect(d.allowed).toBe(true);
      expect(d.remaining).toBe(59 - i);
      expect(d.limit).toBe(60);
    }
    const refused = decide(buckets, [spec(60)], t0);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(refused.resetSeconds).toBe(60);
    // 60/min = one token per second.
    expect(decide(buckets, [spec(60)], t0 + 500).allowed).toBe(false);
    expect(decide(buckets, [spec(60)], t0 + 1000).allowed).toBe(true);
    expect(decide(buckets, [spec(60)], t0 + 1000).allowed).toBe(false);
    // A minute later the bucket is full again (and never more than full).
    const later = decide(buckets, [spec(60)], t0 + 10 * 60_000);
    expect(later).toMatchObject({ allowed: true, remaining: 59 });
  });

  it("charges every bucket or none, and reports the tightest", () => {
    const buckets = new Map();
    const specs = [spec(10, "org"), spec(3, "token")];
    const t0 = 5_000;
    for (let i = 0; i < 3; i++) expect(decide(buckets, specs, t0).allowed).toBe(true);
    const d = decide(buckets, specs, t0);
    expect(d).toMatchObject({ allowed: false, limit: 3, remaining: 0, retryAfterSeconds: 20 });
    // The refused request did not consume from the organization bucket: 7 left there.
    expect(buckets.get("org").tokens).toBe(7);
    // Another token of the same organization still has its own bucket.
    const other = decide(buckets, [spec(10, "org"), spec(3, "token2")], t0);
    // Now the organization bucket (6/10) is tighter than the fresh token's (2/3).
    expect(other).toMatchObject({ allowed: true, limit: 10, remaining: 6 });
    expect(buckets.get("org").tokens).toBe(6);
  });

  it("Retry-After covers the slowest bucket", () => {
    const buckets = new Map([["a", { tokens: 0, updatedMs: 0 }], ["b", { tokens: 0, updatedMs: 0 }]]);
    const d = decide(buckets, [spec(60, "a"), spec(6, "b")], 0);
    expect(d.allowed).toBe(false);
    expect(d.retryAfterSeconds).toBe(10);
  });
});
