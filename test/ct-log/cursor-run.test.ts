// The log cursor's loop without a Durable Object: the local fixture logs (static-ct-api
// and RFC 6962, thousands of generated certificates), a store in memory, and a sink
// that publishes into D1 for real (the queue is a recording array). Verified batches,
// reading that goes on while a batch commits (within a bounded window), a tampered tile
// in the middle of small and large runs, a crash between publishing and saving, short
// get-entries answers, 429s with several requests in flight, a long Retry-After that
// pauses the log for the time it asked.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { ctMatchOccurrences, organizations } from "../../src/db/schema";
import { MAX_LOG_PAUSE_MS, runCursor, type CursorRunInput } from "../../src/modules/ct-log/cursor/run";
import { MemoryCursorStore, type CursorRecord, type VerifiedBatch } from "../../src/modules/ct-log/cursor/state";
import { publishVerified, type CtLogPublished } from "../../src/modules/ct-log/fanout";
import { FilterIndex } from "../../src/modules/ct-log/filters/label-index";
import { CAA_LOOKUPS_AT_ONCE, EntryMatcher } from "../../src/modules/ct-log/ingest";
import { Rfc6962Client } from "../../src/modules/ct-log/log-client/rfc6962-client";
import { StaticCtClient } from "../../src/modules/ct-log/log-client/static-ct-client";
import type { LogClient } from "../../src/modules/ct-log/log-client/types";
import { createDohClient, type DnsResolver } from "../../src/platform/dns/doh";
import { control, createLog, logKey, logUrl, requests } from "./wire/fixture";
import { dohZone, sleep, uid } from "./ingest-helpers";

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
    // One queue message per published batch, naming its range and the organization.
    expect(h.messages.map((m) => [m.from, m.to])).toEqual(h.published.map((b) => [b.from, b.to]));
    expect(h.messages.every((m) => m.organizationIds.length === 1 && m.organizationIds[0] === org && m.logId === h.logId)).toBe(true);
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
    // Classified where it is recorded: a tile that does not verify is a protocol failure, said with the log's name.
    expect(status.lastErrorClass).toBe("protocol");
    expect(status.lastError).toMatch(/^reading CT log ".+": the tree head of size 4000 \(root .+\) does not contain the entries served after 2048: stopped at 2048$/);
    expect(status.failingSince).toBe(h.input.now.toISOString());
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

  it("reading goes on while a batch is verified and published, within the reader's window; commits stay one at a time, in order", async () => {
    const domain = `overlap-${uid()}.test`;
    const name = await generatedLog(8192, 64, domain);
    const org = await newOrg();
    const h = await harness(await staticClient(name), org, domain, { commitEntries: 1024, ahead: 8 });
    // A slow publication (D1 far away, a busy queue): 400 ms per batch.
    const commits: { from: number; to: number; startedAt: number; endedAt: number }[] = [];
    const publish = h.input.sink.publish;
    const { status } = await runCursor({
      ...h.input,
      sink: {
        publish: async (b) => {
          const startedAt = Date.now();
          await publish(b);
          await sleep(400);
          commits.push({ from: b.from, to: b.to, startedAt, endedAt: Date.now() });
        },
      },
    });
    expect(status).toMatchObject({ verifiedPosition: 8192, lastError: null, entriesProcessed: 8192 });
    expectContiguous(h.published, 8192);
    expect(await occurrenceIndexes(org, h.logId)).toEqual(multiples(64, 0, 8192));
    // One commit at a time, in log order.
    for (let i = 1; i < commits.length; i++) expect(commits[i].startedAt).toBeGreaterThanOrEqual(commits[i - 1].endedAt);
    const tiles = (await requests(name))
      .map((r: any) => ({ tile: /^tile\/data\/(\d{3})/.exec(r.path)?.[1], at: r.at as number }))
      .filter((r) => r.tile !== undefined)
      .map((r) => ({ index: Number(r.tile), at: r.at }));
    let overlapped = 0;
    for (const c of commits.slice(0, -1)) {
      // Tiles past the committing batch were asked for while it was published...
      if (tiles.some((t) => t.index * 256 >= c.to && t.at >= c.startedAt && t.at <= c.endedAt)) overlapped++;
      // ...but never more than the next batch and the reader's window ahead of it.
      const furthest = Math.max(...tiles.filter((t) => t.at <= c.endedAt).map((t) => t.index));
      expect(furthest * 256).toBeLessThan(c.to + 1024 + 8 * 256);
    }
    expect(overlapped).toBeGreaterThanOrEqual(Math.floor((commits.length - 1) / 2));
  }, 60_000);

  it("the CAA lookups of one unit's matches go on while the next units are matched (a bounded number at once), and every match has its verdict", async () => {
    const domain = `caa-${uid()}.test`;
    const name = await generatedLog(2560, 16, domain);
    const org = await newOrg();
    const h = await harness(await staticClient(name), org, domain);
    // A resolver 150 ms away, counting the lookups in flight.
    const real = createDohClient({ resolverUrls: [await dohZone(`caa${uid()}`, [])] });
    let open = 0;
    let maxOpen = 0;
    const distant: DnsResolver = {
      query: async (qname, type, options) => {
        maxOpen = Math.max(maxOpen, ++open);
        try {
          await sleep(150);
          return await real.query(qname, type, options);
        } finally {
          open--;
        }
      },
    };
    const index = FilterIndex.from([{ filterId: 1, organizationId: org, pattern: domain, matchType: "wide" }]);
    const { status } = await runCursor({ ...h.input, matcher: async () => new EntryMatcher({ log: h.input.log, index, resolver: distant }) });
    expect(status).toMatchObject({ verifiedPosition: 2560, lastError: null, matchesFound: 160 });
    // One unit checks CAA_LOOKUPS_AT_ONCE certificates at a time, each of its 2 names at once: more in flight
    // means several units' lookups overlapped; at most the unit being matched and the 4 before it.
    const perUnit = CAA_LOOKUPS_AT_ONCE * 2;
    expect(maxOpen).toBeGreaterThan(perUnit);
    expect(maxOpen).toBeLessThanOrEqual(5 * perUnit);
    const observed = h.published.flatMap((b) => b.observed);
    expect(observed.map((o) => o.logIndex)).toEqual(multiples(16, 0, 2560));
    expect(observed.every((o) => o.caa.checked_names.length > 0 && o.caa.error === "")).toBe(true);
  }, 60_000);

  it("a tampered tile in the middle of a large run: publication stops at the last verified position, also for the batch read meanwhile", async () => {
    const domain = `bigtamper-${uid()}.test`;
    const name = await generatedLog(16_384, 64, domain);
    await control(name, "fault", { kind: "tamper-entry", index: 9000 }); // in tile 35 (8960..9215)
    const org = await newOrg();
    const h = await harness(await staticClient(name), org, domain, { commitEntries: 1024, ahead: 16 });
    const { status, more, resumeAfterMs } = await runCursor(h.input);
    expect(status).toMatchObject({ lastErrorClass: "protocol", lastError: expect.stringMatching(/does not contain the entries served after 8960/) });
    // Batches before the tampered tile were verified reads.
    expect(status.lastSuccessAt).not.toBeNull();
    expect(status).toMatchObject({ position: 8960, verifiedPosition: 8960, entriesProcessed: 8960, lastMismatch: { treeSize: 16_384, verifiedPosition: 8960 } });
    expect(more).toBe(false);
    // The host arms its next run at the end of the backoff (30 s after the first failure).
    expect(resumeAfterMs).toBeGreaterThan(20_000);
    expect(resumeAfterMs).toBeLessThanOrEqual(30_000);
    // Every batch published ends at or before the tampered tile; they tile [0, 8960) exactly.
    expect(h.published.every((b) => b.to <= 8960)).toBe(true);
    expectContiguous(h.published, 8960);
    expect(await occurrenceIndexes(org, h.logId)).toEqual(multiples(64, 0, 8960));
    expect(h.store.record!.status.verifiedPosition).toBe(8960);
  }, 60_000);

  it("a Retry-After longer than a run should wait pauses the log for that long (at most an hour), then it reads on", async () => {
    const domain = `pause-${uid()}.test`;
    const name = await generatedLog(3000, 30, domain);
    await control(name, "fault", { kind: "rate-limit", count: 1, retryAfter: "120", path: "tile/data/004" });
    const org = await newOrg();
    // The cursor's retry settings: Retry-After up to 10 s is waited for within the run, longer ends it.
    const h = await harness(await staticClient(name, { maxBackoffMs: 10_000, baseBackoffMs: 10 }), org, domain, { commitEntries: 512 });
    const first = await runCursor(h.input);
    expect(first.status.lastError).toMatch(/tile\/data\/004.* 120 s/);
    expect(first.status.lastErrorClass).toBe("rate_limited");
    // Not counted as a failure of the log: no exponential backoff, just the pause it asked for.
    expect(first.status.consecutiveFailures).toBe(0);
    const pause = Date.parse(first.status.backoffUntil!) - h.input.now.getTime();
    expect(pause).toBeGreaterThanOrEqual(120_000);
    expect(pause).toBeLessThan(125_000);
    expect(first.more).toBe(false);
    expect(first.resumeAfterMs).toBeGreaterThan(115_000);
    expect(first.resumeAfterMs).toBeLessThanOrEqual(pause);
    // Nothing past the tile that answered 429 was published; what was is verified and contiguous.
    expect(first.status.verifiedPosition).toBeLessThanOrEqual(4 * 256);
    expectContiguous(h.published, first.status.verifiedPosition!);
    // Asked once, not again after 10 s within the run.
    expect((await requests(name)).filter((r) => r.path === "tile/data/004")).toHaveLength(1);

    // A minute later (a Cron poke) the log is still paused: not asked anything.
    const asked = (await requests(name)).length;
    const early = await runCursor({ ...h.input, now: new Date(h.input.now.getTime() + 60_000) });
    expect(early.status.verifiedPosition).toBe(first.status.verifiedPosition);
    expect(early.resumeAfterMs).toBeGreaterThan(55_000);
    expect((await requests(name)).length).toBe(asked);

    // When the pause is over, a fresh client (the host drops a failed run's) reads the rest.
    const resumed = await runCursor({ ...h.input, client: await staticClient(name, { maxBackoffMs: 10_000 }), now: new Date(Date.parse(first.status.backoffUntil!) + 1) });
    expect(resumed.status).toMatchObject({ verifiedPosition: 3000, lastError: null, backoffUntil: null, entriesProcessed: 3000 });
    expect(resumed.resumeAfterMs).toBeNull();
    expectContiguous(h.published, 3000);
    expect(await occurrenceIndexes(org, h.logId)).toEqual(multiples(30, 0, 3000));

    // A Retry-After of two hours is held to the hour.
    await control(name, "fault", { kind: "rate-limit", count: 1, retryAfter: "7200", path: "checkpoint" });
    const later = new Date(Date.parse(first.status.backoffUntil!) + 10_000);
    const capped = await runCursor({ ...h.input, client: await staticClient(name, { maxBackoffMs: 10_000 }), now: later });
    expect(capped.status).toMatchObject({ lastErrorClass: "rate_limited", lastError: expect.stringMatching(/asked for a pause of 7200 s/) });
    expect(Date.parse(capped.status.backoffUntil!) - later.getTime()).toBeGreaterThanOrEqual(MAX_LOG_PAUSE_MS);
    expect(Date.parse(capped.status.backoffUntil!) - later.getTime()).toBeLessThan(MAX_LOG_PAUSE_MS + 5_000);
  }, 60_000);

  it("a crash between publishing and saving: the next run reads the range again, publication adds nothing twice", async () => {
    const domain = `crash-${uid()}.test`;
    const name = await generatedLog(3000, 30, domain);
    const org = await newOrg();
    // One request at a time and no time-based cut, so batches end exactly every 512 entries.
    const h = await harness(await staticClient(name, { concurrency: 1 }), org, domain, { commitEntries: 512, commitIntervalMs: 60_000, ahead: 1 });
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
