// A backlog at scale, end to end through the Worker (Cron Trigger -> CtLogCursor ->
// D1 + queue -> AlertState), against a local static-ct-api log of 50,000 generated
// certificates, with the default politeness (requests per second, requests in flight,
// run budget):
//  - the backlog is read in a few runs, not one batch per alarm second;
//  - matches become visible batch by batch: the first within a few seconds of its tile
//    being fetched, long before the backlog ends;
//  - a client polling check-new every second with only the server's watermark (the
//    previous answer's as_of as `since`) ends with every match, each exactly once;
//  - /api/health stays responsive meanwhile (its p99 is measured);
//  - GET /api/ct-log/logs shows the log catching up, then up to date.
import { describe, expect, it } from "vitest";
import { call, signup } from "../helpers";
import { base, callWithConfig, createLog, cursor, dohZone, logKey, postJson, publishLogList, requests, runCron, sleep, uid } from "./ingest-helpers";

const ENTRIES = 50_000;
const EVERY = 250;

describe("CT backlog at scale", () => {
  it("reads 50,000 entries at the log's pace, publishing matches per verified batch; pollers miss nothing; the API stays responsive", async () => {
    const id = uid();
    const log = `g${id}`;
    const domain = `backlog-${id}.test`;
    await createLog(log);
    await postJson(`/ctlog/${log}/__control/generate`, { count: ENTRIES, matches: [{ every: EVERY, names: [`m{i}.${domain}`, `www.m{i}.${domain}`] }] });
    const list = await publishLogList(`g${id}`, [{ log, protocol: "static-ct" }]);
    const config = { ...list, DOH_RESOLVER_URLS: await dohZone(`g${id}`, []), CT_START_POSITION: "start" };
    const org = await signup("Backlog");
    expect((await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: domain, match_type: "wide" } })).status).toBe(201);
    const expected = ENTRIES / EVERY;
    const { log_id_b64 } = await logKey(log);
    const stub = cursor(log_id_b64);
    const logName = `Fixture '${log}' log`;

    const t0 = new Date(Date.now() - 1000).toISOString();
    await fetch(`${base}/ctlog/${log}/__control/requests`, { method: "DELETE" });
    const started = Date.now();
    await runCron(config);

    // The poller passes the previous answer's as_of, and nothing of its own clock.
    const poller = { since: t0, seen: 0, polls: 0 };
    let firstVisibleAt: number | null = null;
    let positionWhenFirstVisible: number | null = null;
    let sawCatchingUp = false;
    const health: number[] = [];
    let done = false;
    const healthLoop = (async () => {
      while (!done) {
        const t = performance.now();
        const r = await call("GET", "/api/health");
        health.push(performance.now() - t);
        expect(r.status).toBe(200);
        await sleep(20);
      }
    })();
    const poll = async () => {
      const a = await call("GET", `/api/ct-log/matches/check-new?since=${encodeURIComponent(poller.since)}`, { token: org.session });
      expect(a.status).toBe(200);
      // The watermark never goes back, and the newest match is never past it.
      expect(a.body.as_of >= poller.since || poller.polls === 0).toBe(true);
      if (a.body.latest_timestamp) expect(a.body.latest_timestamp <= a.body.as_of).toBe(true);
      poller.seen += a.body.count;
      poller.since = a.body.as_of;
      poller.polls++;
      return a.body.count as number;
    };
    for (;;) {
      const status = await stub.status();
      const fresh = await poll();
      if (fresh > 0 && firstVisibleAt === null) {
        firstVisibleAt = Date.now();
        positionWhenFirstVisible = (await stub.status()).verifiedPosition;
      }
      if (!sawCatchingUp && status.inProgress) {
        const logs = await callWithConfig(config, "/api/ct-log/logs", org.session);
        const row = logs.body.logs.find((l: any) => l.description === logName);
        if (row?.ingestion === "catching_up") {
          sawCatchingUp = true;
          expect(row.lag_entries).toBe(ENTRIES - row.verified_position);
          expect(row.lag_seconds).toBeGreaterThanOrEqual(0);
        }
      }
      if (status.verifiedPosition === ENTRIES && !status.inProgress) break;
      expect(Date.now() - started, `backlog not read: ${JSON.stringify(status)}`).toBeLessThan(90_000);
      await sleep(1000);
    }
    const elapsedMs = Date.now() - started;
    await poll();
    done = true;
    await healthLoop;

    const final = await stub.status();
    expect(final).toMatchObject({ verifiedPosition: ENTRIES, entriesProcessed: ENTRIES, lastError: null, backlog: 0 });
    // Read at the log's pace: a handful of runs, not one per 1,024 entries and second.
    expect(final.runs).toBeLessThanOrEqual(6);
    // A guard against a pathological slowdown (about 20 s on a quiet 2-core machine; the
    // pace itself is the run count above), with room for a machine shared with other work.
    expect(elapsedMs).toBeLessThan(120_000);
    // A match was visible while most of the backlog was still unread.
    expect(positionWhenFirstVisible).not.toBeNull();
    expect(positionWhenFirstVisible!).toBeLessThan(ENTRIES);
    // The first match became visible within a few seconds of its tile being fetched (D1's clock and the
    // fixture's are this machine's), and before the last tile of the backlog was even asked for.
    const tileFetchedAt = new Map<number, number>();
    for (const r of await requests(log)) {
      const m = /^tile\/data\/(\d{3})(?:\.p\/\d+)?$/.exec(r.path);
      if (m && !tileFetchedAt.has(Number(m[1]))) tileFetchedAt.set(Number(m[1]), r.at);
    }
    const first = (await call("GET", "/api/ct-log/matches?sort_by=matched_at&sort_order=asc&page_size=1", { token: org.session })).body.matches[0];
    const firstIndex = (await call("GET", `/api/ct-log/matches/${first.sha256}`, { token: org.session })).body.cert.log_index as number;
    const firstLatencyMs = Date.parse(first.matched_at) - tileFetchedAt.get(Math.floor(firstIndex / 256))!;
    expect(firstLatencyMs).toBeGreaterThan(0);
    expect(firstLatencyMs).toBeLessThan(5_000);
    expect(Date.parse(first.matched_at)).toBeLessThan(Math.max(...tileFetchedAt.values()));
    // Polling with the watermark alone, every match was counted, each exactly once.
    expect(poller.seen).toBe(expected);
    expect((await call("GET", "/api/ct-log/matches?page_size=1", { token: org.session })).body.total).toBe(expected);
    // The log's state through the API.
    const logs = await callWithConfig(config, "/api/ct-log/logs", org.session);
    expect(logs.status).toBe(200);
    expect(logs.body.logs.find((l: any) => l.description === logName)).toMatchObject({
      protocol: "static-ct",
      operator: "Fixture Operator",
      state: "usable",
      ingestion: "up_to_date",
      tree_size: ENTRIES,
      verified_position: ENTRIES,
      lag_entries: 0,
      lag_seconds: 0,
      last_error: null,
      next_retry_at: null,
      entries_processed: ENTRIES,
      matches_found: expected,
    });
    // The API answered meanwhile.
    health.sort((x, y) => x - y);
    const p99 = health[Math.min(health.length - 1, Math.floor(health.length * 0.99))];
    console.log(
      `backlog of ${ENTRIES} entries: ${elapsedMs} ms (${Math.round((ENTRIES / elapsedMs) * 1000)} entries/s) in ${final.runs} runs; ` +
        `first match visible ${firstLatencyMs} ms after its tile was fetched (seen by the poller at position ${positionWhenFirstVisible} after ${firstVisibleAt! - started} ms); /api/health p50 ${health[Math.floor(health.length / 2)].toFixed(0)} ms, p99 ${p99.toFixed(0)} ms over ${health.length} calls`,
    );
    expect(health.length).toBeGreaterThan(20);
    // Before issue 12 the API stalled for 15-20 s during such a backlog; the bench measures the 100 ms target
    // on a quiet machine, this bound only has to hold on a loaded one.
    expect(p99).toBeLessThan(1500);
  }, 120_000);
});
