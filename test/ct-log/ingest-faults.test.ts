// Ingestion under faults: a tampered entry and a forged tree head are detected by
// the Merkle check and nothing derived from the unverified entries is ingested (GET
// /api/ct-log/logs shows the log backing off, when it retries, and which tree head
// its verified position was proven against);
// a restart (the Durable Object reset) in the middle of a backlog leaves no gap and
// no duplicate; 429 answers are retried after Retry-After; a read-only log stops at
// its final tree head from the log list.
import { describe, expect, it } from "vitest";
import { runInDurableObject } from "cloudflare:test";
import { call, pollUntil, signup } from "../helpers";
import { advance, callWithConfig, copyEntries, createLog, cronAndWait, cursor, dohZone, fault, indicesMatching, logKey, postJson, publishLogList, requests, runCron, uid, waitForPosition, waitForRun } from "./ingest-helpers";

async function allMatches(token: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const r = await call("GET", `/api/ct-log/matches?page=${page}&page_size=100`, { token });
    out.push(...r.body.matches);
    if (r.body.matches.length < 100) return out;
  }
}

/** The log indexes of every occurrence of every match (through the detail endpoint). */
async function occurrenceIndexes(token: string, logName: string): Promise<number[]> {
  const idx: number[] = [];
  for (const m of await allMatches(token)) {
    const d = await call("GET", `/api/ct-log/matches/${m.sha256}?log_name=${encodeURIComponent(logName)}`, { token });
    if (d.status === 200) idx.push(...d.body.occurrences.map((o: any) => o.log_index));
  }
  return idx.sort((a, b) => a - b);
}


describe("CT ingestion faults", () => {
  it("a tampered entry is detected at the tree head: nothing past the verified position is ingested until the log serves the signed entries", async () => {
    const id = uid();
    const log = `t${id}`;
    await createLog(log, { from: "navigli2025h2", size: 256 });
    const list = await publishLogList(`t${id}`, [{ log, protocol: "static-ct" }]);
    const config = { ...list, DOH_RESOLVER_URLS: await dohZone(`t${id}`, []) };
    const org = await signup("Tamper");
    await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: "cynova.dev", match_type: "wide" } });
    const { log_id_b64 } = await logKey(log);
    expect((await cronAndWait(config, [log_id_b64]))[0]).toMatchObject({ position: 256, verifiedPosition: 256 });

    await copyEntries(log, "navigli2025h2", 256, 512);
    const expected = await indicesMatching("cynova.dev", "wide", 256, 512);
    // The entry served at a matching index differs from the one the tree head commits to.
    await fault(log, { kind: "tamper-entry", index: expected[3] });
    const [s1] = await cronAndWait(config, [log_id_b64], advance(1));
    expect(s1).toMatchObject({ lastErrorClass: "protocol", lastError: expect.stringMatching(/does not contain the entries served after 256/) });
    expect(s1.lastMismatch).toMatchObject({ treeSize: 512 });
    expect(s1).toMatchObject({ position: 256, verifiedPosition: 256, consecutiveFailures: 1 });
    expect((await call("GET", "/api/ct-log/matches", { token: org.session })).body.total).toBe(0);
    // The log's state through the API: backing off until the cursor's next try, verified up to the head of 256.
    const logRow = async () => (await callWithConfig(config, "/api/ct-log/logs", org.session)).body.logs.find((l: any) => l.log_id === log_id_b64);
    const backingOff = await logRow();
    expect(backingOff).toMatchObject({ ingestion: "backing_off", tree_size: 512, verified_position: 256, lag_entries: 256, consecutive_failures: 1, next_retry_at: s1.backoffUntil });
    expect(backingOff.last_error).toMatch(/^reading CT log "Fixture '.+' log": the tree head of size 512/);
    expect(backingOff.collection).toMatchObject({ state: "ok", consecutive_failures: 1, next_attempt_at: s1.backoffUntil, error: { class: "protocol", message: backingOff.last_error } });
    expect(Date.parse(backingOff.next_retry_at)).toBeGreaterThan(Date.now());
    expect(Date.parse(backingOff.verified_tree_head_at)).toBeLessThan(Date.parse(backingOff.tree_head_at));
    expect(backingOff.verified_tree_head_at).toBe(s1.verifiedTreeHeadAt);

    // Backing off: a run within the backoff does not read.
    await fault(log, { kind: "clear" });
    expect((await cronAndWait(config, [log_id_b64], advance(0.1)))[0]).toMatchObject({ position: 256, consecutiveFailures: 1 });
    // After the backoff the honest entries verify and every match appears, exactly once.
    const [s2] = await cronAndWait(config, [log_id_b64], advance(10));
    expect(s2).toMatchObject({ position: 512, verifiedPosition: 512, lastError: null, consecutiveFailures: 0 });
    expect(await occurrenceIndexes(org.session, `Fixture '${log}' log`)).toEqual(expected);
    const recovered = await logRow();
    expect(recovered).toMatchObject({ ingestion: "up_to_date", verified_position: 512, lag_entries: 0, last_error: null, next_retry_at: null, consecutive_failures: 0 });
    expect(recovered.verified_tree_head_at).toBe(s2.verifiedTreeHeadAt);
    expect(Date.parse(recovered.verified_tree_head_at)).toBeGreaterThan(Date.parse(backingOff.verified_tree_head_at));

    // A soft-deleted filter stops matching from the next batch: later entries add nothing.
    const filters = (await call("GET", "/api/ct-log/filters", { token: org.session })).body.filters;
    await call("DELETE", `/api/ct-log/filters/${filters[0].id}`, { token: org.session });
    await copyEntries(log, "navigli2025h2", 512, 768);
    expect(await indicesMatching("cynova.dev", "wide", 512, 768)).not.toEqual([]);
    expect((await cronAndWait(config, [log_id_b64]))[0]).toMatchObject({ verifiedPosition: 768, lastError: null });
    expect(await occurrenceIndexes(org.session, `Fixture '${log}' log`)).toEqual(expected);
  }, 60_000);

  it("a forged tree head (RFC 6962) is refused at the start and later: nothing is ingested", async () => {
    const id = uid();
    const log = `f${id}`;
    await createLog(log, { from: "navigli2025h2", size: 100, leafIndexExtension: false });
    const list = await publishLogList(`f${id}`, [{ log, protocol: "rfc6962" }]);
    const config = { ...list, DOH_RESOLVER_URLS: await dohZone(`f${id}`, []) };
    const org = await signup("Forge");
    await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: "chixbbq.org", match_type: "wide" } });
    const { log_id_b64 } = await logKey(log);

    // At the start: the audit path does not hash to the (forged) signed root.
    await fault(log, { kind: "forge-root" });
    const [s0] = await cronAndWait(config, [log_id_b64]);
    expect(s0).toMatchObject({ lastErrorClass: "protocol", lastError: expect.stringMatching(/subtree roots at size 100 hash to .+, the signed root is/) });
    expect(s0.position).toBeNull();
    await fault(log, { kind: "clear" });
    expect((await cronAndWait(config, [log_id_b64], advance(5)))[0]).toMatchObject({ position: 100, verifiedPosition: 100, lastError: null });

    // Later: entries are downloaded but the forged root never matches them.
    await copyEntries(log, "navigli2025h2", 100, 400);
    await fault(log, { kind: "forge-root" });
    const [s1] = await cronAndWait(config, [log_id_b64], advance(6));
    expect(s1.lastMismatch).toMatchObject({ treeSize: 400 });
    expect(s1).toMatchObject({ position: 100, verifiedPosition: 100 });
    expect((await call("GET", "/api/ct-log/matches", { token: org.session })).body.total).toBe(0);
    // A bad tree-head signature is refused before any entry is read.
    await fault(log, { kind: "clear" });
    await fault(log, { kind: "bad-signature" });
    expect((await cronAndWait(config, [log_id_b64], advance(30)))[0]).toMatchObject({ lastErrorClass: "protocol", lastError: expect.stringMatching(/get-sth: signature does not verify/) });
    expect((await call("GET", "/api/ct-log/matches", { token: org.session })).body.total).toBe(0);
    await fault(log, { kind: "clear" });
    expect((await cronAndWait(config, [log_id_b64], advance(120)))[0]).toMatchObject({ position: 400, verifiedPosition: 400, lastError: null });
    expect(await occurrenceIndexes(org.session, `Fixture '${log}' log`)).toEqual(await indicesMatching("chixbbq.org", "wide", 100, 400));
  }, 60_000);

  it("a restart in the middle of a backlog leaves no gap and no duplicate (entries, matches, events); 429s are retried after Retry-After", async () => {
    const id = uid();
    const log = `b${id}`;
    const domain = `restart-${id}.test`;
    await createLog(log);
    await postJson(`/ctlog/${log}/__control/generate`, { count: 4000, matches: [{ every: 37, names: [`m{i}.${domain}`] }] });
    const list = await publishLogList(`b${id}`, [{ log, protocol: "static-ct" }]);
    // From entry 0, one tile request at a time, 4 per second, 1-second runs: about 4 tiles per run,
    // so the 16 tiles take several runs, each one continued by the alarm the previous one armed.
    const config = { ...list, DOH_RESOLVER_URLS: await dohZone(`b${id}`, []), CT_START_POSITION: "start", CT_RUN_SECONDS: "1", CT_CONCURRENCY: "1", CT_REQUESTS_PER_SECOND: "4" };
    const org = await signup("Restart");
    await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: domain, match_type: "wide" } });
    await call("POST", "/api/ct-log/alert-rules", { token: org.session, body: { name: "every match", expression: 'kind == "match"', severity: "low" } });
    const { log_id_b64 } = await logKey(log);
    const stub = cursor(log_id_b64);

    await fault(log, { kind: "rate-limit", count: 2, retryAfter: "1", path: "tile/data/001" });
    // As soon as a first batch is published, mid-backlog, the object is evicted (its memory, filter
    // index and clients are gone), whether a run is under way or the alarm it armed for the rest
    // is pending: the log resumes from storage, and the alarm chain of fresh invocations reads the
    // rest. (Waiting for an idle moment instead was a race: the chained runs may never be seen
    // idle before the backlog ends. A restarted object answers status() only once that chain is
    // idle, so the runs after the restart cannot be watched one by one from here.)
    await runCron(config);
    const first = await pollUntil(async () => {
      const s = await stub.status();
      return s.verifiedPosition !== null && s.verifiedPosition > 0 ? s : null;
    }, 20_000, 10);
    // Reset the object as a crash would (the workerd of the Node 20 toolchain has no
    // evictDurableObject): ctx.abort() drops its instance, in-flight work included, and
    // keeps its storage and pending alarm.
    await runInDurableObject(stub, (_, state: DurableObjectState) => state.abort("restart mid-backlog")).catch(() => undefined);
    if (!first) throw new Error("no batch was published within 20 s");
    expect(first).toMatchObject({ treeSize: 4000, lastError: null });
    expect(first.verifiedPosition).toBeLessThan(4000);
    expect(first.backlog).toBe(4000 - first.verifiedPosition!);
    const s = await waitForPosition(log_id_b64, 4000, 60_000);
    // Several runs, each within its 1 s budget.
    expect(s.runs).toBeGreaterThanOrEqual(3);
    expect(s).toMatchObject({ position: 4000, verifiedPosition: 4000, lastError: null });
    // Every entry processed exactly once across the restarts.
    expect(s.entriesProcessed).toBe(4000);
    const expected = Array.from({ length: 4000 }, (_, i) => i).filter((i) => i % 37 === 0);
    expect(await occurrenceIndexes(org.session, `Fixture '${log}' log`)).toEqual(expected);
    // One event per match, whatever was re-read: the rule fired once per certificate.
    const fired = await pollUntil(async () => {
      const r = await call("GET", "/api/ct-log/alert-history?limit=100&offset=100", { token: org.session });
      return r.body.total >= expected.length ? r.body.total : 0;
    }, 20_000, 100);
    expect(fired).toBe(expected.length);

    // The 429s were answered and the same tile asked again.
    const tile1 = (await requests(log)).filter((r) => r.path === "tile/data/001");
    expect(tile1.length).toBe(3);
  }, 120_000);

  it("a read-only log is read up to its final tree head and no further", async () => {
    const id = uid();
    const log = `o${id}`;
    await createLog(log, { from: "navigli2025h2", size: 600 });
    // The list freezes the log at 600 entries (final_tree_head); the log then grows anyway.
    const list = await publishLogList(`o${id}`, [{ log, protocol: "static-ct", state: "readonly" }]);
    await copyEntries(log, "navigli2025h2", 600, 1024);
    const config = { ...list, DOH_RESOLVER_URLS: await dohZone(`o${id}`, []), CT_START_POSITION: "start", CT_BATCH_SIZE: "256" };
    const org = await signup("Readonly");
    await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: "cynova.dev", match_type: "wide" } });
    const { log_id_b64 } = await logKey(log);
    await runCron(config);
    await waitForPosition(log_id_b64, 600);
    expect((await cronAndWait(config, [log_id_b64]))[0]).toMatchObject({ position: 600, verifiedPosition: 600, treeSize: 600, backlog: 0, lastError: null });
    expect(await occurrenceIndexes(org.session, `Fixture '${log}' log`)).toEqual(await indicesMatching("cynova.dev", "wide", 0, 600));
    // Never asked for the checkpoint (the final tree head comes from the signed list) nor past entry 599.
    const asked = await requests(log);
    expect(asked.some((r) => r.path === "checkpoint")).toBe(false);
    expect(asked.some((r) => r.path.startsWith("tile/data/002") && !r.path.includes(".p/88"))).toBe(false);
  }, 60_000);
});
