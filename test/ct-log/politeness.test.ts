// Politeness towards each CT log, without a network: CT_LOG_POLITENESS and the
// defaults as an operator sets them (loadConfig -> cursorOptions), and the
// PoliteFetcher's guarantees with a counting fetch on an injected clock: never more
// than `concurrency` requests in flight, a Retry-After too long to wait stops every
// request to the log (LogPausedError) until it has passed, and requests a stopped
// reader dropped are never sent.
import { describe, expect, it } from "vitest";
import { loadConfig, type Bindings } from "../../src/env";
import { readWindow, READ_AHEAD_ENTRIES } from "../../src/modules/ct-log/cursor/resources";
import { cursorOptions } from "../../src/modules/ct-log/jobs";
import { PoliteFetcher } from "../../src/modules/ct-log/log-client/politeness";
import { LogPausedError, RequestDroppedError } from "../../src/modules/ct-log/log-client/types";

const config = (vars: Record<string, string>) => loadConfig(vars as unknown as Bindings);
const LOG = { logId: "pLOGid+/base64=", readUrl: "https://ct.example.net/2026h1/" };
const OTHER = { logId: "b3RoZXI=", readUrl: "https://static.example.org/log/" };

describe("CT_LOG_POLITENESS and the politeness defaults", () => {
  it("applies CT_REQUESTS_PER_SECOND and CT_CONCURRENCY to every log, with overrides by host and by log id (the id wins)", () => {
    const c = config({
      CT_REQUESTS_PER_SECOND: "40",
      CT_CONCURRENCY: "6",
      CT_LOG_POLITENESS: JSON.stringify({
        "ct.example.net": { requests_per_second: 5, concurrency: 2 },
        [LOG.logId]: { concurrency: 3 },
      }),
    });
    expect(cursorOptions(c)).toMatchObject({ requestsPerSecond: 40, concurrency: 6 });
    // The host's rate, the id's concurrency.
    expect(cursorOptions(c, LOG)).toMatchObject({ requestsPerSecond: 5, concurrency: 3 });
    expect(cursorOptions(c, OTHER)).toMatchObject({ requestsPerSecond: 40, concurrency: 6 });
    // 0 requests per second: no rate limit for that log.
    expect(cursorOptions(config({ CT_LOG_POLITENESS: '{"static.example.org":{"requests_per_second":0}}' }), OTHER).requestsPerSecond).toBe(0);
  });

  it("ignores what it cannot read: not JSON, not an object, bad values; concurrency is capped at 16", () => {
    const defaults = cursorOptions(config({ CT_REQUESTS_PER_SECOND: "40", CT_CONCURRENCY: "6" }), LOG);
    for (const raw of ["{not json", "[1,2]", "42", '"ct.example.net"', ""]) {
      expect(cursorOptions(config({ CT_REQUESTS_PER_SECOND: "40", CT_CONCURRENCY: "6", CT_LOG_POLITENESS: raw }), LOG), raw).toEqual(defaults);
    }
    const bad = config({
      CT_REQUESTS_PER_SECOND: "40",
      CT_CONCURRENCY: "6",
      CT_LOG_POLITENESS: JSON.stringify({ "ct.example.net": { requests_per_second: -1, concurrency: 0 }, [OTHER.logId]: { requests_per_second: "fast", concurrency: 2.5 } }),
    });
    expect(cursorOptions(bad, LOG)).toMatchObject({ requestsPerSecond: 40, concurrency: 6 });
    expect(cursorOptions(bad, OTHER)).toMatchObject({ requestsPerSecond: 40, concurrency: 6 });
    expect(cursorOptions(config({ CT_LOG_POLITENESS: '{"ct.example.net":{"concurrency":64}}' }), LOG).concurrency).toBe(16);
    expect(cursorOptions(config({ CT_CONCURRENCY: "64" }), LOG).concurrency).toBe(16);
    // Unparseable global values fall back to the defaults rather than to 0 (no limit).
    const fallback = cursorOptions(config({}), LOG);
    expect(cursorOptions(config({ CT_REQUESTS_PER_SECOND: "lots", CT_CONCURRENCY: "-3" }), LOG)).toMatchObject({ requestsPerSecond: fallback.requestsPerSecond, concurrency: fallback.concurrency });
    expect(fallback.requestsPerSecond).toBeGreaterThan(0);
  });

  it("the reader's window holds a bounded number of entries, and never fewer units than the log's places", () => {
    expect(readWindow({ protocol: "static-ct" }, { batchSize: 1000, concurrency: 4 })).toBe(READ_AHEAD_ENTRIES / 256);
    expect(readWindow({ protocol: "rfc6962" }, { batchSize: 1024, concurrency: 4 })).toBe(READ_AHEAD_ENTRIES / 1024);
    expect(readWindow({ protocol: "rfc6962" }, { batchSize: 100_000, concurrency: 4 })).toBe(4);
  });
});

/** A fetch whose answers the test releases; it records how many requests are open at once. */
function heldFetch() {
  let open = 0;
  let maxOpen = 0;
  const sent: string[] = [];
  const pending: { url: string; answer: (r: Response) => void }[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    sent.push(url);
    open++;
    maxOpen = Math.max(maxOpen, open);
    try {
      return await new Promise<Response>((answer, fail) => {
        const entry = { url, answer };
        pending.push(entry);
        init?.signal?.addEventListener("abort", () => {
          pending.splice(pending.indexOf(entry), 1);
          fail(init.signal!.reason);
        });
      });
    } finally {
      open--;
    }
  }) as typeof globalThis.fetch;
  const settle = () => new Promise((r) => setTimeout(r, 0));
  return {
    fetch,
    sent,
    get maxOpen() {
      return maxOpen;
    },
    get waiting() {
      return pending.length;
    },
    /** Answers the oldest open request. */
    async answer(res: Response = new Response("ok")) {
      await settle();
      pending.shift()!.answer(res);
      await settle();
    },
    settle,
  };
}

describe("PoliteFetcher", () => {
  it("keeps at most `concurrency` requests to the log in flight, however many are asked at once", async () => {
    const f = heldFetch();
    const http = new PoliteFetcher({ concurrency: 3, fetch: f.fetch, timeoutMs: 0 });
    const all = Array.from({ length: 10 }, (_, i) => http.fetch(`https://log.example/tile/data/${i}`));
    await f.settle();
    expect(f.waiting).toBe(3);
    for (let answered = 0; answered < 10; answered++) {
      expect(f.waiting).toBeLessThanOrEqual(3);
      await f.answer();
    }
    expect((await Promise.all(all)).every((r) => r.status === 200)).toBe(true);
    expect(f.maxOpen).toBe(3);
    // In the order asked.
    expect(f.sent).toEqual(Array.from({ length: 10 }, (_, i) => `https://log.example/tile/data/${i}`));
  });

  it("a Retry-After longer than maxBackoffMs is not slept through: that request and every later one fail with LogPausedError until it has passed", async () => {
    let now = 1_700_000_000_000;
    const slept: number[] = [];
    let calls = 0;
    const http = new PoliteFetcher({
      maxBackoffMs: 10_000,
      clock: { now: () => now },
      sleep: async (ms) => void slept.push(ms),
      fetch: async () => (++calls === 1 ? new Response("slow down", { status: 429, headers: { "retry-after": "60" } }) : new Response("ok")),
    });
    const err = await http.fetch("https://log.example/tile/data/000").catch((e) => e);
    expect(err).toBeInstanceOf(LogPausedError);
    expect(err.retryAfterMs).toBe(60_000);
    expect(err.message).toMatch(/tile\/data\/000 asked for a pause of 60 s/);
    now += 30_000;
    const later = await http.fetch("https://log.example/tile/data/001").catch((e) => e);
    expect(later).toBeInstanceOf(LogPausedError);
    expect(later.retryAfterMs).toBe(30_000);
    // Neither asked the log again nor slept.
    expect(calls).toBe(1);
    expect(slept).toEqual([]);
    now += 30_000;
    expect((await http.fetch("https://log.example/tile/data/001")).status).toBe(200);
    // A Retry-After within maxBackoffMs is waited for, as before.
    calls = 0;
    const short = new PoliteFetcher({
      maxBackoffMs: 10_000,
      clock: { now: () => now },
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
      },
      fetch: async () => (++calls === 1 ? new Response("slow down", { status: 429, headers: { "retry-after": "7" } }) : new Response("ok")),
    });
    expect((await short.fetch("https://log.example/checkpoint")).status).toBe(200);
    expect(slept).toEqual([7000]);
  });

  it("requests of a reader that stopped are never sent (those waiting for a place) or are aborted (the one in flight)", async () => {
    const f = heldFetch();
    const http = new PoliteFetcher({ concurrency: 1, fetch: f.fetch, timeoutMs: 5000 });
    const stop = new AbortController();
    const all = [0, 1, 2, 3].map((i) => http.fetch(`https://log.example/tile/data/00${i}`, { signal: stop.signal }).catch((e) => e));
    await f.settle();
    expect(f.sent).toEqual(["https://log.example/tile/data/000"]);
    stop.abort(new Error("the reader stopped"));
    for (const r of await Promise.all(all)) expect(r).toBeInstanceOf(RequestDroppedError);
    // Only the one in flight had left; the places it freed did not send the others.
    expect(f.sent).toHaveLength(1);
    // The log's places are all free again.
    const after = http.fetch("https://log.example/tile/data/004");
    await f.answer();
    expect((await after).status).toBe(200);
  });
});
