// The log cursor's loop without a Durable Object: the local fixture logs (static-ct-api
// and RFC 6962, thousands of generated certificates), a store in memory, and a sink
// that publishes into D1 for real (the queue is a recording array). Verified batches,
// a tampered tile in the middle, a crash between publishing and saving, short
// get-entries answers, 429s with several requests in flight.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { ctMatchOccurrences, organizations } from "../../src/db/schema";
import { runCursor, type CursorRunInput } from "../../src/modules/ct-log/cursor/run";
import { MemoryCursorStore, type CursorRecord, type VerifiedBatch } from "../../src/modules/ct-log/cursor/state";
import { publishVerified, type CtLogPublished } from "../../src/modules/ct-log/fanout";
import { FilterIndex } from "../../src/modules/ct-log/filters/label-index";
import { EntryMatcher } from "../../src/modules/ct-log/ingest";
import { Rfc6962Client } from "../../src/modules/ct-log/log-client/rfc6962-client";
import { StaticCtClient } from "../../src/modules/ct-log/log-client/static-ct-client";
import type { LogClient } from "../../src/modules/ct-log/log-client/types";
import { createDohClient } from "../../src/platform/dns/doh";
import { control, createLog, logKey, logUrl, requests } from "./wire/fixture";
import { dohZone, uid } from "./ingest-helpers";

const db = createDb((env as any).DB);

async function newOrg(): Promise<number> {
  const [row] = await db.insert(organizations).values({ name: `cursor ${uid()}` }).returning({ id: organizations.id });
  return row.id;
}

/** A generated log of `count` entries; entry i with i % every == 0 names m<i>.<domain>. */
async function generatedLog(count: number, every: number, domain: string, opts: { leafIndexExtension?: boolean } = {}) {
  const name = await createLog(opts);
  await control(name, "generate", { count, names: ["host{i}.noise.test"], matches: [{ every, names: [`m{i}.${domain}`, "other{i}.noise.test"] }] });
  return name;
}

interface Harness {
  input: CursorRunInput;
  store: MemoryCursorStore;
  published: VerifiedBatch[];
  messages: CtLogPublished[];
  logId: string;
}

async function harness(client: LogClient, org: number, domain: string, extra: Partial<CursorRunInput> = {}): Promise<Harness> {
  const store = new MemoryCursorStore();
  const published: VerifiedBatch[] = [];
  const messages: CtLogPublished[] = [];
  const logId = `cursor-${uid()}`;
  const log = { logId, logName: `Cursor test ${logId}` };
  const resolver = createDohClient({ resolverUrls: [await dohZone(`c${uid()}`, [])] });
  const index = FilterIndex.from([{ filterId: 1, organizationId: org, pattern: domain, matchType: "wide" }]);
  const queue = { sendBatch: async (ms: Iterable<MessageSendRequest<CtLogPublished>>) => void messages.push(...[...ms].map((m) => m.body)) };
  const input: CursorRunInput = {
    log,
    client,
    startPosition: "start",
    store,
    sink: {
      publish: async (b) => {
        published.push(b);
        await publishVerified(db, queue, log, b.from, b.to, b.observed);
      },
    },
    matcher: async () => new EntryMatcher({ log, index, resolver }),
    ahead: 4,
    budgetMs: 60_000,
    now: new Date(),
    clock: () => Date.now(),
    pause: async () => undefined,
    ...extra,
  };
  return { input, store, published, messages, logId };
}

async function staticClient(name: string, extra: Partial<ConstructorParameters<typeof StaticCtClient>[0]> = {}) {
  const { key, origin } = await logKey(name);
  return new StaticCtClient({ monitoringUrl: logUrl(name), key, origin, resolveIssuers: false, concurrency: 4, ...extra });
}

const occurrenceIndexes = async (org: number, logId: string) =>
  (await db.select({ i: ctMatchOccurrences.logIndex, log: ctMatchOccurrences.logId }).from(ctMatchOccurrences).where(eq(ctMatchOccurrences.organizationId, org)).all())
    .filter((o) => o.log === logId)
    .map((o) => o.i)
    .sort((a, b) => a - b);

const multiples = (every: number, from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k).filter((i) => i % every === 0);

/** Published ranges must tile [0, to) exactly: no gap, no overlap. */
function expectContiguous(batches: VerifiedBatch[], to: number) {
  let at = 0;
  for (const b of batches) {
    expect(b.from).toBe(at);
    expect(b.to).toBeGreaterThan(b.from);
    at = b.to;
  }
  expect(at).toBe(to);
}

describe("log cursor loop (no Durable Object)", () => {
  it("reads a static-ct-api backlog in one run, publishing verified batches as it goes", async () => {
    const domain = `run-${uid()}.test`;
    const name = await generatedLog(6000, 50, domain);
    const org = await newOrg();
    const h = await harness(await staticClient(name), org, domain, { commitEntries: 1024 });
    const { status, more } = await runCursor(h.input);
    expect(more).toBe(false);
    expect(status).toMatchObject({ position: 6000, verifiedPosition: 6000, treeSize: 6000, backlog: 0, lastError: null, entriesProcessed: 6000, runs: 1, lastRunEntries: 6000 });
    expect(status.matchesFound).toBe(120);
    // Several verified batches, contiguous, each published before the next was read on.
    expect(h.published.length).toBeGreaterThanOrEqual(5);
    expectContiguous(h.published, 6000);
    expect(h.store.saves).toBeGreaterThanOrEqual(h.published.length);
    expect(await occurrenceIndexes(org, h.logId)).toEqual(multiples(50, 0, 6000));
    // One queue message per published batch for the organization, naming its range.
    expect(h.messages.map((m) => [m.from, m.to])).toEqual(h.published.map((b) => [b.from, b.to]));
    expect(h.messages.every((m) => m.organizationId === org && m.logId === h.logId)).toBe(true);
    // Each tile was asked once; the hash tiles that prove each batch once per (level, index, width).
    const asked = (await requests(name)).map((r) => r.path);
    expect(asked.filter((p) => p.startsWith("tile/data/")).length).toBe(Math.ceil(6000 / 256));
    expect(new Set(asked.filter((p) => /^tile\/\d/.test(p))).size).toBe(asked.filter((p) => /^tile\/\d/.test(p)).length);
    // Nothing new: the next run reads nothing and publishes nothing.
    const again = await runCursor({ ...h.input, now: new Date() });
    expect(again.status).toMatchObject({ verifiedPosition: 6000, entriesProcessed: 6000, runs: 2, lastRunEntries: 0 });
    expect(h.published.length).toBe(h.messages.length);
  }, 60_000);

  it("a tampered tile in the middle: everything before it is published, nothing from it on; the log backs off", async () => {
    const domain = `tamper-${uid()}.test`;
    const name = await generatedLog(4000, 40, domain);
    await control(name, "fault", { kind: "tamper-entry", index: 2100 }); // in tile 8 (2048..2303)
    const org = await newOrg();
    const h = await harness(await staticClient(name), org, domain);
    const { status } = await runCursor(h.input);
    expect(status.lastError).toMatch(/TreeMismatchError/);
    expect(status).toMatchObject({ position: 2048, verifiedPosition: 2048, consecutiveFailures: 1, lastMismatch: { treeSize: 4000, verifiedPosition: 2048 } });
    expect(Date.parse(status.backoffUntil!)).toBeGreaterThan(h.input.now.getTime());
    expectContiguous(h.published, 2048);
    expect(await occurrenceIndexes(org, h.logId)).toEqual(multiples(40, 0, 2048));
    // While backing off, a run does nothing.
    expect((await runCursor({ ...h.input, now: new Date(h.input.now.getTime() + 1000) })).status).toMatchObject({ verifiedPosition: 2048, consecutiveFailures: 1 });
    // The log serves the signed entries again: reading resumes at 2048, without a gap.
    await control(name, "fault", { kind: "clear" });
    const later = await runCursor({ ...h.input, now: new Date(Date.parse(status.backoffUntil!) + 1) });
    expect(later.status).toMatchObject({ verifiedPosition: 4000, lastError: null, consecutiveFailures: 0, entriesProcessed: 4000 });
    expectContiguous(h.published, 4000);
    expect(await occurrenceIndexes(org, h.logId)).toEqual(multiples(40, 0, 4000));
  }, 60_000);

  it("a crash between publishing and saving: the next run reads the range again, publication adds nothing twice", async () => {
    const domain = `crash-${uid()}.test`;
    const name = await generatedLog(3000, 30, domain);
    const org = await newOrg();
    // One request at a time, so batches end exactly every 512 entries.
    const h = await harness(await staticClient(name, { concurrency: 1 }), org, domain, { commitEntries: 512, ahead: 1 });
    // The process dies after publishing the 4th batch, before saving it (saves: start point, batches 1-3).
    let saves = 0;
    const dying = {
      load: () => h.store.load(),
      save: async (r: CursorRecord) => {
        if (++saves > 4) throw new Error("the process is gone");
        await h.store.save(r);
      },
    };
    await expect(runCursor({ ...h.input, store: dying })).rejects.toThrow(/the process is gone/);
    const saved = (await h.store.load())!;
    expect(saved.status.verifiedPosition).toBe(3 * 512);
    expect(h.published.map((b) => b.to)).toEqual([512, 1024, 1536, 2048]);
    // A new process resumes from the saved record, not from where publication got to.
    const resumed = await runCursor({ ...h.input, now: new Date() });
    expect(resumed.status).toMatchObject({ verifiedPosition: 3000, lastError: null });
    // The lost batch was published again: in D1 every match is there once, and every entry counted once
    // (the counters travel with the verified tree in the record).
    expect(h.published.filter((b) => b.from === 1536)).toHaveLength(2);
    expect(resumed.status.entriesProcessed).toBe(3000);
    expect(await occurrenceIndexes(org, h.logId)).toEqual(multiples(30, 0, 3000));
  }, 60_000);

  it("RFC 6962: short get-entries answers, several requests in flight, a 429, each batch proven by a consistency proof", async () => {
    const domain = `rfc-${uid()}.test`;
    const name = await generatedLog(2500, 25, domain, { leafIndexExtension: false });
    await control(name, "config", { maxGetEntries: 90 });
    await control(name, "fault", { kind: "rate-limit", count: 1, retryAfter: "1", path: "get-entries" });
    const { key } = await logKey(name);
    const client = new Rfc6962Client({ baseUrl: logUrl(name), key, batchSize: 256, concurrency: 3, baseBackoffMs: 10 });
    const org = await newOrg();
    const h = await harness(client, org, domain, { ahead: 3, commitEntries: 700 });
    const { status } = await runCursor(h.input);
    expect(status).toMatchObject({ verifiedPosition: 2500, entriesProcessed: 2500, lastError: null });
    expectContiguous(h.published, 2500);
    expect(await occurrenceIndexes(org, h.logId)).toEqual(multiples(25, 0, 2500));
    const asked = await requests(name);
    const ranges = asked.filter((r) => r.path === "ct/v1/get-entries").map((r) => new URLSearchParams(r.query));
    // Once the server's page size is known, requests ask for what it gives (90): only the 3 units in flight
    // before the first answer, and the holes their short answers left, ask more; the 429 costs one request.
    const sizes = ranges.map((q) => Number(q.get("end")) - Number(q.get("start")) + 1);
    expect(sizes.filter((n) => n > 90).length).toBeLessThanOrEqual(3 * 2 + 1);
    expect(ranges.length).toBeLessThanOrEqual(Math.ceil(2500 / 90) + 3 * 2 + 1);
    expect(ranges.every((q) => Number(q.get("end")) < 2500)).toBe(true);
    // One consistency proof per batch that ended before the head.
    const proofs = asked.filter((r) => r.path === "ct/v1/get-sth-consistency");
    expect(proofs.length).toBe(h.published.filter((b) => b.to < 2500).length);
  }, 60_000);
});
