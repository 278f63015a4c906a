// End to end: a signed log list served by the fixture names one static-ct-api log
// and one RFC 6962 log (both real navigli2025h2 entries, re-signed by the fixture);
// the Cron Trigger, fired through the Worker's scheduled handler, pokes one
// CtLogCursor per log; matches, CAA verdicts (local DoH), occurrences across both
// logs, feed proposals and alert events become visible through the API.
import { describe, expect, it } from "vitest";
import { call, expectError, pollUntil, signup } from "../helpers";
import { copyEntries, createLog, cronAndWait, cursor, dohZone, indicesMatching, logKey, navigliEntries, publishLogList, runCron, uid, waitForPosition } from "./ingest-helpers";

const caa = (name: string, value: string, tag = "issue") => ({ name, type: "CAA", ttl: 300, data: { flags: 0, tag, value } });

describe("CT ingestion end to end", () => {
  it("starts at the end of each log, then reports every later match once per certificate with CAA, occurrences, proposals and events", async () => {
    const id = uid();
    const staticLog = `s${id}`;
    const rfcLog = `r${id}`;
    await createLog(staticLog, { from: "navigli2025h2", size: 256 });
    await createLog(rfcLog, { from: "navigli2025h2", size: 300, leafIndexExtension: false });
    const list = await publishLogList(`l${id}`, [
      { log: staticLog, protocol: "static-ct" },
      { log: rfcLog, protocol: "rfc6962" },
    ]);
    // chixbbq.org forbids every CA: each of its certificates is a CAA violation. cynova.dev has no CAA records.
    const resolver = await dohZone(`ct${id}`, [caa("chixbbq.org", ";")]);
    const config = { ...list, DOH_RESOLVER_URLS: resolver, CT_BATCH_SIZE: "128" };

    const a = await signup("CT A");
    const b = await signup("CT B");
    const fA = await call("POST", "/api/ct-log/filters", { token: a.session, body: { pattern: "chixbbq.org", match_type: "wide", feed_dns_enabled: true } });
    const fA2 = await call("POST", "/api/ct-log/filters", { token: a.session, body: { pattern: "cynova.dev", match_type: "wide", feed_certs_enabled: true } });
    const fB = await call("POST", "/api/ct-log/filters", { token: b.session, body: { pattern: "chixbbq.org", match_type: "wide" } });
    expect([fA.status, fA2.status, fB.status]).toEqual([201, 201, 201]);
    // A disabled filter never matches.
    await call("POST", "/api/ct-log/filters", { token: b.session, body: { pattern: "cynova.dev", match_type: "wide", enabled: false } });
    const rule = await call("POST", "/api/ct-log/alert-rules", {
      token: a.session,
      body: { name: "CAA violation", expression: 'caa.has_records && !caa.authorized && rate.window == "1h" && rate.count >= 1', severity: "high" },
    });
    expect(rule.status).toBe(201);

    // First run: a new deployment starts at each log's current size (verified subtree roots, nothing read).
    const sKey = await logKey(staticLog);
    const rKey = await logKey(rfcLog);
    const [s0, r0] = await cronAndWait(config, [sKey.log_id_b64, rKey.log_id_b64]);
    expect(s0).toMatchObject({ position: 256, verifiedPosition: 256, lastError: null, entriesProcessed: 0 });
    expect(r0).toMatchObject({ position: 300, verifiedPosition: 300, lastError: null, entriesProcessed: 0 });
    expect((await call("GET", "/api/ct-log/matches", { token: a.session })).body.total).toBe(0);

    // Both logs grow to all 1024 real entries.
    await copyEntries(staticLog, "navigli2025h2", 256, 1024);
    await copyEntries(rfcLog, "navigli2025h2", 300, 1024);
    // One Cron run; each cursor's alarm works through its backlog (512 entries per run at 128 per fetch).
    await runCron(config);
    await waitForPosition(sKey.log_id_b64, 1024);
    await waitForPosition(rKey.log_id_b64, 1024);
    expect(await cursor(sKey.log_id_b64).status()).toMatchObject({ position: 1024, verifiedPosition: 1024, treeSize: 1024, backlog: 0, lastError: null, entriesProcessed: 768 });
    expect(await cursor(rKey.log_id_b64).status()).toMatchObject({ position: 1024, verifiedPosition: 1024, backlog: 0, lastError: null, entriesProcessed: 724 });

    const chix = await indicesMatching("chixbbq.org", "wide", 256, 1024);
    const cyn = await indicesMatching("cynova.dev", "wide", 256, 1024);
    expect(chix.length).toBeGreaterThan(20);
    expect(cyn.length).toBeGreaterThan(20);

    // Organization A: one match per certificate, log_count 2 where both logs carry it.
    const all: any[] = [];
    for (let page = 1; ; page++) {
      const r = await call("GET", `/api/ct-log/matches?page=${page}&page_size=100`, { token: a.session });
      expect(r.status).toBe(200);
      all.push(...r.body.matches);
      if (r.body.matches.length < 100) {
        expect(r.body.total).toBe(all.length);
        break;
      }
    }
    const entries = await navigliEntries();
    const expectedIdx = new Set([...chix, ...cyn]);
    expect(all.length).toBe(expectedIdx.size);
    const byDomainUnder = (d: string) => all.filter((m) => m.matched_names.some((n: string) => n === d || n.endsWith("." + d)));
    expect(byDomainUnder("chixbbq.org")).toHaveLength(chix.length);
    expect(byDomainUnder("cynova.dev")).toHaveLength(cyn.length);
    const logCounts = all.map((m) => m.log_count);
    expect(logCounts.filter((c) => c === 2)).toHaveLength([...expectedIdx].filter((i) => i >= 300).length);
    expect(logCounts.filter((c) => c === 1)).toHaveLength([...expectedIdx].filter((i) => i < 300).length);
    for (const m of byDomainUnder("chixbbq.org")) expect(m.caa_violation).toBe(true);
    for (const m of byDomainUnder("cynova.dev")) expect(m.caa_violation).toBe(false);
    expect(all.every((m) => m.is_precert && m.has_precert && !m.has_final)).toBe(true);

    // Sorting by log_count and certificate_domain.
    const byLogCount = (await call("GET", "/api/ct-log/matches?sort_by=log_count&sort_order=asc&page_size=100", { token: a.session })).body.matches;
    expect(byLogCount[0].log_count).toBe(1);
    const byDomain = (await call("GET", "/api/ct-log/matches?sort_by=certificate_domain&sort_order=asc&page_size=5", { token: a.session })).body.matches;
    const domains = byDomain.map((m: any) => m.certificate_domain);
    expect(domains).toEqual([...domains].sort());
    expectError(await call("GET", "/api/ct-log/matches?sort_by=issuer", { token: a.session }), 400, "validation_error");

    // Detail of a certificate in both logs: the CT event's certificate fields and both occurrences.
    const idx = chix.find((i) => i >= 300)!;
    const entry = entries[idx];
    const m = all.find((x) => x.matched_names.some((n: string) => entry.dns.map((d) => d.toLowerCase()).includes(n)) && x.log_count === 2)!;
    const detail = await call("GET", `/api/ct-log/matches/${m.sha256}`, { token: a.session });
    expect(detail.status).toBe(200);
    const d = detail.body;
    expect(d.cert.dns_names).toEqual(entry.dns);
    expect(d.cert.subject).toBe(entry.subject_cn ?? "");
    expect(d.cert).toMatchObject({ sha256: m.sha256, is_precert: true, log_index: idx, key_algorithm: expect.any(String), signature_algorithm: expect.any(String) });
    expect(d.cert.issuer).toMatch(/Let's Encrypt/);
    expect(d.cert.serial).toMatch(/^[0-9a-f]+$/);
    expect(Date.parse(d.cert.not_after)).toBeGreaterThan(Date.parse(d.cert.not_before));
    expect(d.caa).toMatchObject({ has_records: true, authorized: false, records: [";"], error: "" });
    expect(d.caa.checked_names).toContain("chixbbq.org");
    expect(d.occurrences.map((o: any) => [o.log_name, o.log_index]).sort()).toEqual(
      [
        [`Fixture '${rfcLog}' log`, idx],
        [`Fixture '${staticLog}' log`, idx],
      ].sort(),
    );
    // The authorization verdict is null until the match's event is processed, then a verdict with its reason.
    const authorization = d.filters[0]?.authorization === null ? null : { verdict: expect.any(String), reason: expect.any(String) };
    expect(d.filters).toEqual([{ filter_id: fA.body.id, pattern: "chixbbq.org", match_type: "wide", matched_names: expect.any(Array), authorization }]);
    const narrowed = await call("GET", `/api/ct-log/matches/${m.sha256}?log_name=${encodeURIComponent(`Fixture '${rfcLog}' log`)}`, { token: a.session });
    expect(narrowed.body.occurrences).toHaveLength(1);
    expect(narrowed.body.cert.log_name).toBe(`Fixture '${rfcLog}' log`);
    expectError(await call("GET", `/api/ct-log/matches/${m.sha256}?log_name=nope`, { token: a.session }), 404, "not_found");
    expectError(await call("GET", `/api/ct-log/matches/${"0".repeat(64)}`, { token: a.session }), 404, "not_found");
    expectError(await call("GET", "/api/ct-log/matches/not-a-hash", { token: a.session }), 400, "validation_error");

    // Organization B matched the same chixbbq.org certificates with its own filter, and cannot see A's cynova.dev ones.
    const bAll = await call("GET", "/api/ct-log/matches?page_size=100", { token: b.session });
    expect(bAll.body.total).toBe(chix.length);
    const cynMatch = byDomainUnder("cynova.dev")[0];
    expectError(await call("GET", `/api/ct-log/matches/${cynMatch.sha256}`, { token: b.session }), 404, "not_found");

    // check-new.
    const cn = await call("GET", "/api/ct-log/matches/check-new?since=2000-01-01T00:00:00Z", { token: a.session });
    expect(cn.body).toMatchObject({ has_new: true, count: expectedIdx.size });
    expect(Date.parse(cn.body.latest_timestamp)).not.toBeNaN();
    const none = await call("GET", `/api/ct-log/matches/check-new?since=${encodeURIComponent(cn.body.latest_timestamp)}`, { token: a.session });
    expect(none.body).toMatchObject({ has_new: false, count: 0, latest_timestamp: cn.body.latest_timestamp });
    expectError(await call("GET", "/api/ct-log/matches/check-new?since=yesterday", { token: a.session }), 400, "validation_error");

    // Feeds: DNS proposals from the chixbbq.org filter, certificate proposals from the cynova.dev filter.
    const props = await call("GET", "/api/ct-log/proposals?page_size=100", { token: a.session });
    expect(props.status).toBe(200);
    const kinds = new Set(props.body.proposals.map((p: any) => p.kind));
    expect(kinds).toEqual(new Set(["dns", "certs"]));
    expect(props.body.proposals.filter((p: any) => p.kind === "dns").every((p: any) => p.filter_id === fA.body.id && p.hostname.endsWith("chixbbq.org"))).toBe(true);
    expect(props.body.proposals.filter((p: any) => p.kind === "certs").every((p: any) => !p.hostname.startsWith("*."))).toBe(true);
    const p0 = props.body.proposals[0];
    expect((await call("POST", `/api/ct-log/proposals/${p0.id}/accept`, { token: a.session })).status).toBe(200);
    expectError(await call("POST", `/api/ct-log/proposals/${p0.id}/dismiss`, { token: b.session }), 404, "not_found");
    const accepted = await call("GET", "/api/ct-log/proposals?status=accepted", { token: a.session });
    expect(accepted.body.proposals.map((p: any) => p.id)).toEqual([p0.id]);
    expect((await call("GET", "/api/ct-log/proposals", { token: b.session })).body.total).toBe(0);

    // Events (through the queue): the rule fired for CAA violations (chixbbq.org), never for cynova.dev.
    const hist = await pollUntil(async () => {
      const r = await call("GET", "/api/ct-log/alert-history?limit=100", { token: a.session });
      return r.status === 200 && r.body.total >= chix.length ? r : null;
    }, 20_000, 100);
    expect(hist?.body.total).toBe(chix.length);
    expect(JSON.stringify(hist!.body.alerts)).not.toMatch(/cynova\.dev/);

    // A later run with nothing new changes nothing.
    await cronAndWait(config, [sKey.log_id_b64, rKey.log_id_b64]);
    expect((await call("GET", "/api/ct-log/matches", { token: a.session })).body.total).toBe(expectedIdx.size);
  }, 90_000);

  it("serves the log list in use and falls back to the bundled copy when the signature does not verify", async () => {
    const id = uid();
    await createLog(`ll${id}`, { from: "navigli2025h2", size: 10 });
    const list = await publishLogList(`ll${id}`, [{ log: `ll${id}`, protocol: "static-ct" }, { log: "pilot", protocol: "rfc6962", state: "retired" }]);
    await runCron({ ...list, CT_START_POSITION: "end" });
    const org = await signup("LogList");
    const r = await call("GET", "/api/cert-watcher/ct-log-list", { token: org.session });
    expect(r.status).toBe(200);
    // The API request runs with the deployment's configuration: in tests, the fixture's
    // empty signed list (vitest.config.mts), fetched and verified.
    expect(r.body).toMatchObject({ source: "remote", version: "fixture-empty", logs: [] });

    // Through the service with the fixture URL: the signed list is used.
    const { currentLogList, describeLogList } = await import("../../src/modules/ct-log/loglist-service");
    const { createDb } = await import("../../src/db/client");
    const { env } = await import("cloudflare:workers");
    const db = createDb((env as any).DB);
    const now = new Date();
    const remote = describeLogList(await currentLogList(db, { ctLogListUrl: list.CT_LOG_LIST_URL, ctLogListPublicKey: list.CT_LOG_LIST_PUBLIC_KEY }, now, { force: true }));
    expect(remote.source).toBe("remote");
    expect(remote.logs.map((l) => [l.description, l.protocol, l.state, l.monitored])).toEqual([
      ["Fixture 'pilot' log", "rfc6962", "retired", false],
      [`Fixture 'll${id}' log`, "static-ct", "usable", true],
    ]);
    // Cached for 24 hours: the same URL within a day is not fetched again (same fetched_at).
    const again = await currentLogList(db, { ctLogListUrl: list.CT_LOG_LIST_URL, ctLogListPublicKey: list.CT_LOG_LIST_PUBLIC_KEY }, new Date(now.getTime() + 3600_000));
    expect(again.fetchedAt).toBe(remote.fetched_at);
    // A wrong key: the bundled Google list (v81.14) is used instead, and says why.
    const wrongKey = (await import("../../src/modules/ct-log/loglist")).GOOGLE_LOG_LIST_PUBLIC_KEY_PEM;
    const fallback = await currentLogList(db, { ctLogListUrl: list.CT_LOG_LIST_URL.replace(`ll${id}`, `missing${id}`), ctLogListPublicKey: wrongKey }, now);
    expect(fallback.source).toBe("bundled");
    expect(fallback.list.version).toBe("81.14");
    expect(fallback.remoteError).toMatch(/404|signature/);
    // The bundled v81.14 list: 49 RFC 6962 logs (36 usable, 9 readonly, 4 retired) + 26 tiled (25 usable, 1 qualified).
    const bundled = describeLogList(fallback);
    expect(bundled).toMatchObject({ source: "bundled", version: "81.14", log_list_timestamp: "2026-01-20T12:54:10Z" });
    expect(bundled.logs).toHaveLength(75);
    expect(bundled.logs.filter((l) => l.monitored)).toHaveLength(71);
    expect(bundled.logs.filter((l) => l.protocol === "static-ct")).toHaveLength(26);
    expect(bundled.logs.filter((l) => l.state === "readonly").every((l) => l.monitored && (l.final_tree_size ?? 0) > 0)).toBe(true);
    const viewerless = await call("GET", "/api/cert-watcher/ct-log-list");
    expectError(viewerless, 401, "unauthorized");
  });
});
