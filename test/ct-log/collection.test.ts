// Collection state of CT logs, with the local CT logs of the fixture hub: read successfully,
// then one answers 503, one serves a tile that does not verify, one vanishes (closes the
// connection), one is named by a host that does not resolve. Each turns failing with its
// class after its second failed run, the organization with a filter is told once per
// scheduled run (one event for one log, one event for several), and told again when they
// are read again. The log list is a source too: when the signed list cannot be fetched,
// the bundled copy is used and GET /api/ct-log/logs says so.
import { describe, expect, it } from "vitest";
import { call, signup } from "../helpers";
import { advance, callWithConfig, copyEntries, createLog, cronAndWait, dohZone, fault, logKey, publishLogList, uid } from "./ingest-helpers";

describe("CT log collection state", () => {
  it("503, a tampered tile, a vanished log and a name that does not resolve: failing with their class, announced once, then recovered", async () => {
    const id = uid();
    const names = { unavailable: `u${id}`, tampered: `t${id}`, gone: `g${id}`, unresolvable: `n${id}` };
    for (const log of Object.values(names)) await createLog(log, { from: "navigli2025h2", size: 256 });
    const list = await publishLogList(`c${id}`, [
      { log: names.unavailable, protocol: "static-ct" },
      { log: names.tampered, protocol: "static-ct" },
      { log: names.gone, protocol: "rfc6962" },
      { log: names.unresolvable, protocol: "static-ct", url: `http://ct-${id}.invalid/log/` },
    ]);
    const config = { ...list, DOH_RESOLVER_URLS: await dohZone(`c${id}`, []) };
    const keys = Object.fromEntries(await Promise.all(Object.entries(names).map(async ([k, log]) => [k, (await logKey(log)).log_id_b64]))) as Record<keyof typeof names, string>;
    const ids = Object.values(keys);
    const org = await signup("CT collection");
    await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: "cynova.dev", match_type: "wide" } });
    for (const [name, expression] of [["CT blind", 'event_type == "collection_failing"'], ["CT sees again", 'event_type == "collection_recovered"']]) {
      expect((await call("POST", "/api/ct-log/alert-rules", { token: org.session, body: { name, expression, severity: "high" } })).status).toBe(201);
    }
    const history = async () =>
      ((await call("GET", "/api/ct-log/alert-history?limit=100", { token: org.session })).body.alerts as any[]).map((a) => ({ rule: a.rule_name, asset: a.asset, body: a.message.body as string })).reverse();
    const logs = async () => (await callWithConfig(config, "/api/ct-log/logs", org.session)).body;
    const row = (body: any, key: keyof typeof keys) => body.logs.find((l: any) => l.log_id === keys[key]);

    // Read once: every reachable log verified up to its head; the unresolvable one failed once (pending).
    await cronAndWait(config, ids);
    let body = await logs();
    expect(body.log_list).toMatchObject({ source: "fetched", url: config.CT_LOG_LIST_URL, error: null });
    expect(body.summary).toMatchObject({ monitored: 4, relied_upon: true });
    for (const k of ["unavailable", "tampered", "gone"] as const) expect(row(body, k).collection).toMatchObject({ state: "ok", consecutive_failures: 0, error: null });
    expect(row(body, "unresolvable").collection).toMatchObject({
      state: "pending",
      consecutive_failures: 1,
      last_success_at: null,
      error: { class: "dns_resolution", message: `reading CT log "Fixture '${names.unresolvable}' log": DNS lookup of ct-${id}.invalid failed` },
    });
    expect(JSON.stringify(body)).not.toMatch(/internal error|reference =/);

    // The faults: 503 to every request, a tampered entry in a new tile, the connection closed without an answer.
    await fault(names.unavailable, { kind: "server-error", status: 503, count: 1000 });
    await copyEntries(names.tampered, "navigli2025h2", 256, 512);
    await fault(names.tampered, { kind: "tamper-entry", index: 300 });
    await fault(names.gone, { kind: "gone", count: 1000 });

    // Transitions recorded by a round's runs are announced by the next round's scheduled run.
    await cronAndWait(config, ids, advance(1));
    body = await logs();
    expect(row(body, "unresolvable").collection).toMatchObject({ state: "failing", consecutive_failures: 2 });
    // One failure after a success: still ok, with the error said.
    expect(row(body, "unavailable").collection).toMatchObject({ state: "ok", consecutive_failures: 1, error: { class: "http_status" } });
    expect(await history()).toEqual([]);

    await cronAndWait(config, ids, advance(2));
    body = await logs();
    const first = row(body, "unavailable").collection;
    expect(first).toMatchObject({ state: "failing", consecutive_failures: 2, error: { class: "http_status", message: expect.stringMatching(/^reading CT log ".+": HTTP 503 from http:\/\/.+\/checkpoint$/) } });
    expect(row(body, "tampered").collection).toMatchObject({ state: "failing", error: { class: "protocol", message: expect.stringMatching(/does not contain the entries served after 256/) } });
    expect(row(body, "gone").collection).toMatchObject({ state: "failing", error: { class: "connect", message: expect.stringMatching(/^reading CT log ".+": connection to 127\.0\.0\.1:\d+ failed: refused or closed before an answer$/) } });
    expect(row(body, "gone").last_error).toBe(row(body, "gone").collection.error.message);
    expect(Date.parse(first.next_attempt_at)).toBeGreaterThan(Date.now());
    expect(body.summary).toMatchObject({ failing: 4, ok: 0 });
    // The unresolvable log's transition (recorded by the previous round's run) was announced by this round: one event naming it.
    let alerts = await history();
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ rule: "CT blind", asset: expect.stringContaining(keys.unresolvable) });

    // The next round announces the three that entered failing together: ONE event per organization, naming them all.
    await cronAndWait(config, ids, advance(3));
    alerts = await history();
    expect(alerts).toHaveLength(2);
    expect(alerts[1].rule).toBe("CT blind");
    for (const log of [names.unavailable, names.tampered, names.gone]) expect(alerts[1].body).toContain(`Fixture '${log}' log`);
    expect(alerts[1].body).toMatch(/3 CT logs entered failing/);
    // Several logs at once are the monitored logs as a whole: one asset, whichever logs an event names.
    expect(alerts[1].asset).toBe("logs:monitored");

    // The logs come back (the unresolvable one cannot): they recover, announced once together; nothing for the one still failing.
    for (const log of [names.unavailable, names.tampered, names.gone]) await fault(log, { kind: "clear" });
    await cronAndWait(config, ids, advance(10));
    body = await logs();
    for (const k of ["unavailable", "tampered", "gone"] as const) expect(row(body, k).collection).toMatchObject({ state: "ok", consecutive_failures: 0, failing_since: null, error: null });
    expect(row(body, "tampered").verified_position).toBe(512);
    await cronAndWait(config, ids, advance(11));
    alerts = await history();
    expect(alerts.map((a) => a.rule)).toEqual(["CT blind", "CT blind", "CT sees again"]);
    expect(alerts[2].body).toMatch(/^3 CT logs: .+ is collected again/);
    expect(alerts[2].body).toContain('"event_type": "collection_recovered"');
    expect(alerts[2].asset).toBe("logs:monitored");
    await cronAndWait(config, ids, advance(12));
    expect(await history()).toHaveLength(3);
  }, 120_000);

  it("the signed list cannot be fetched: the bundled copy is used and the response says so, with the classified error", async () => {
    const org = await signup("CT list");
    const id = uid();
    const missing = await publishLogList(`l${id}`, []);
    const config = { ...missing, CT_LOG_LIST_URL: missing.CT_LOG_LIST_URL.replace(`l${id}`, `missing-${id}`) };
    const body = (await callWithConfig(config, "/api/ct-log/logs", org.session)).body;
    expect(body.log_list).toMatchObject({
      source: "bundled",
      url: config.CT_LOG_LIST_URL,
      error: { class: "http_status", message: `fetching the signed CT log list: HTTP 404 from ${config.CT_LOG_LIST_URL}` },
    });
    expect(body.summary).toMatchObject({ relied_upon: false });
    expect(body.logs.length).toBeGreaterThan(10);
    // Never read: pending, next attempt the next scheduled run.
    expect(body.logs[0].collection).toMatchObject({ state: "pending", last_attempt_at: null, error: null });
    expect(Date.parse(body.logs[0].collection.next_attempt_at) - Date.now()).toBeLessThanOrEqual(61_000);
  });
});
