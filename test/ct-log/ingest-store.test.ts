// The pieces between the log client and D1, on real navigli entries: the hot-path
// matcher (names -> filters -> full certificate fields only for matches, CAA via the
// local DoH resolver, a lookup failure kept as caa.error), the idempotent commit (a
// replayed range inserts nothing), at-least-once events with the rate.* fields, the
// 30-day prune, the synchronous hashes against the WebCrypto reference, and check-new's
// watermark against a client whose clock runs ahead of the database's.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { ctMatchFilters, ctMatchOccurrences, ctMatches, ctProposals, organizations } from "../../src/db/schema";
import { createDohClient } from "../../src/platform/dns/doh";
import { certificateDedupKey, certificateFingerprint } from "../../src/modules/ct-log/cert/dedup";
import { certificateDedupKeySync, certificateFingerprintSync } from "../../src/modules/ct-log/cert/fast-hash";
import { FilterIndex } from "../../src/modules/ct-log/filters/label-index";
import { EntryMatcher, type ObservedEntry } from "../../src/modules/ct-log/ingest";
import type { LogEntry } from "../../src/modules/ct-log/log-client/types";
import { publishObservations } from "../../src/modules/ct-log/store";
import { fanOutPublished, publicationSlices, publishVerified, unemittedEvents, type CtLogPublished } from "../../src/modules/ct-log/fanout";
import { pruneMatches } from "../../src/modules/ct-log/match-service";
import { parseDataTile, tileLeafHash } from "../../src/modules/ct-log/wire/static-ct";
import { desc, eq, sql } from "drizzle-orm";
import { call, signup } from "../helpers";
import { base, dohZone, indicesMatching, navigliEntries, uid } from "./ingest-helpers";

const db = createDb((env as any).DB);

async function navigliLogEntries(): Promise<LogEntry[]> {
  const out: LogEntry[] = [];
  for (const t of ["000", "001"]) {
    const bytes = new Uint8Array(await (await fetch(`${base}/data/ct/static-ct/navigli2025h2/tile/data/${t}`)).arrayBuffer());
    for (const [i, leaf] of parseDataTile(bytes).entries()) {
      out.push({ index: Number(t) * 256 + i, leafHash: await tileLeafHash(leaf), entry: leaf.entry, preCertificate: leaf.preCertificate, chain: [] });
    }
  }
  return out;
}

async function newOrg(): Promise<number> {
  const [row] = await db.insert(organizations).values({ name: `store ${uid()}` }).returning({ id: organizations.id });
  return row.id;
}

describe("CT ingest: matcher, commit, events", () => {
  it("matches only what the filters cover, with full certificate fields, CAA verdicts and caa.error on a failed lookup", async () => {
    const entries = await navigliLogEntries();
    const org = await newOrg();
    const index = FilterIndex.from([
      { filterId: 9_000_001, organizationId: org, pattern: "chixbbq.org", matchType: "wide" },
      { filterId: 9_000_002, organizationId: org, pattern: "*.jccsmatrei.top", matchType: "exact" },
    ]);
    const id = uid();
    const good = createDohClient({ resolverUrls: [await dohZone(`ok${id}`, [{ name: "chixbbq.org", type: "CAA", ttl: 60, data: { flags: 0, tag: "issue", value: "letsencrypt.org" } }])] });
    const log = { logId: "dGVzdA==", logName: "Store test log" };
    const observed = await new EntryMatcher({ log, index, resolver: good }).observe(entries);
    const expected = [...new Set([...(await indicesMatching("chixbbq.org", "wide", 0, 512)), ...(await indicesMatching("*.jccsmatrei.top", "exact", 0, 512))])].sort((a, b) => a - b);
    expect(observed.map((o) => o.logIndex)).toEqual(expected);
    const names = await navigliEntries();
    for (const o of observed) {
      expect(o.cert.dns_names).toEqual(names[o.logIndex].dns);
      expect(o.cert).toMatchObject({ is_precert: true, log_name: "Store test log", log_index: o.logIndex });
      expect(o.cert.sha256).toBe(o.sha256);
      const caaExpected = o.hits.some((h) => h.filterId === 9_000_001);
      if (caaExpected) expect(o.caa).toMatchObject({ has_records: true, records: ["letsencrypt.org"], error: "" });
    }

    // The resolver fails: the match stays, with caa.error.
    await fetch(`${base}/doh/__control/zone`, { method: "POST", body: JSON.stringify({ ns: `bad${id}`, records: [], fail: "servfail" }) });
    const bad = createDohClient({ resolverUrls: [`${base}/doh/bad${id}/dns-query`] });
    const failed = await new EntryMatcher({ log, index, resolver: bad }).observe(entries.slice(0, 256));
    expect(failed.length).toBe(expected.filter((i) => i < 256).length);
    for (const o of failed) {
      expect(o.caa.error).toMatch(/SERVFAIL/);
      expect(o.caa.authorized).toBe(true);
    }
  });

  it("the synchronous fingerprint and dedup key equal the WebCrypto reference", async () => {
    const entries = (await navigliLogEntries()).slice(0, 64);
    for (const e of entries) {
      const der = e.preCertificate!;
      expect(certificateFingerprintSync(der)).toBe(await certificateFingerprint(der));
      expect(certificateDedupKeySync(der)).toBe(await certificateDedupKey(der));
    }
  });

  it("a replayed commit inserts nothing new; events are emitted once with rate fields; proposals follow the feeds; old matches are pruned", async () => {
    const org = await newOrg();
    const filterId = 9_100_000 + Math.floor(Math.random() * 100_000);
    const at = new Date().toISOString();
    const certOf = (sha: string, idx: number) => ({ subject: "a.example", issuer: "CN=Test CA", dns_names: ["a.example", "*.b.example"], sha256: sha, serial: "01", not_before: at, not_after: at, signature_algorithm: "ecdsa-with-SHA256", key_algorithm: "EC", is_precert: idx === 1, log_name: "L", log_index: idx, aia_issuing: [], ocsp_servers: [], scts: [], spki_sha256: "", issuer_spki_sha256: "" });
    const caa = { has_records: false, authorized: true, records: [], error: "", checked_names: ["a.example"], issuer_candidates: [], evaluated_at: at };
    const obs = (idx: number, sha: string, dedup: string, isPrecert: boolean): ObservedEntry => ({
      logIndex: idx,
      isPrecert,
      sha256: sha,
      dedupKey: dedup,
      cert: certOf(sha, idx),
      caa,
      hits: [{ filterId, organizationId: org, names: ["a.example", "*.b.example"] }],
      typosquats: [],
      entryTimestamp: Date.parse(at),
    });
    // A precertificate and its final certificate (same dedup key), then an unrelated certificate.
    const batch = [obs(1, "aa".repeat(32), "d1".repeat(32), true), obs(2, "bb".repeat(32), "d1".repeat(32), false), obs(3, "cc".repeat(32), "d2".repeat(32), true)];
    const log = { logId: `log-${uid()}`, logName: "L" };
    await db.run(sql`INSERT INTO ct_filters (id, organization_id, pattern, match_type, feed_dns_enabled, feed_certs_enabled) VALUES (${filterId}, ${org}, 'a.example', 'wide', 1, 1)`);

    expect(await publishObservations(db, log, batch)).toEqual([org]);
    expect(await publishObservations(db, log, batch)).toEqual([org]); // the replay after a crash
    const matches = await db.select().from(ctMatches).where(eq(ctMatches.organizationId, org)).all();
    expect(matches).toHaveLength(2);
    const occ = await db.select().from(ctMatchOccurrences).where(eq(ctMatchOccurrences.organizationId, org)).all();
    expect(occ.map((o) => o.logIndex).sort()).toEqual([1, 2, 3]);
    // Typed JSON columns: the event's certificate and CAA fields as they were observed.
    expect(occ.find((o) => o.logIndex === 2)!.cert).toEqual(certOf("bb".repeat(32), 2));
    expect(occ[0].caa).toEqual(caa);
    // Every row of one publication carries the time it became visible, and the replay did not move first_matched_at.
    expect(new Set(occ.map((o) => o.observedAt)).size).toBe(1);
    expect(matches.every((m) => m.firstMatchedAt === occ[0].observedAt)).toBe(true);
    const mf = await db.select().from(ctMatchFilters).where(eq(ctMatchFilters.organizationId, org)).all();
    expect(mf).toHaveLength(2);

    const published: CtLogPublished = { type: "ct-log.published", organizationIds: [org], logId: log.logId, from: 0, to: 4 };
    const { events } = await unemittedEvents(db, [published]);
    expect(events).toHaveLength(2);
    expect(events.map((e) => e.id).sort()).toEqual(mf.map((m) => `ct-log:match:${m.matchId}:${filterId}`).sort());
    const ev = events.find((x) => x.event.cert.log_index === 1)!.event;
    expect(Object.keys(ev).sort()).toEqual(["caa", "cert", "collection", "event_type", "filter", "filter_id", "kind", "lifecycle", "log", "lookalike", "matched_at", "rate", "typosquat"]);
    // The matched filter is named, and without an inventory's facts the key is not known: not routine.
    expect(ev.filter).toEqual({ id: filterId, pattern: expect.any(String) });
    expect(ev.cert.authorization).toBe("unknown_key");
    expect(ev).toMatchObject({ kind: "match", filter_id: filterId, matched_at: occ[0].observedAt, caa, typosquat: { candidate_domain: "", evidence: [] } });
    // Two certificates (one with precert + final) matched this filter within the hour: 3 entries.
    expect(ev.rate).toEqual({ count: 2, window: "1h", precert_count: 2, final_count: 1, total_count: 3 });
    // The fan-out evaluates them (no rules: nothing fires) and marks them: a second delivery finds nothing.
    await fanOutPublished([published, published], { env: env as any, db, now: new Date() });
    expect((await unemittedEvents(db, [published])).events).toHaveLength(0);
    expect((await db.select().from(ctMatchFilters).where(eq(ctMatchFilters.organizationId, org)).all()).every((m) => m.eventEmittedAt !== null)).toBe(true);

    const props = await db.select().from(ctProposals).where(eq(ctProposals.organizationId, org)).all();
    expect(props.map((p) => `${p.kind}:${p.hostname}`).sort()).toEqual(["certs:a.example", "dns:a.example", "dns:b.example"]);

    // 31 days later the matches are pruned with their occurrences and filter links.
    expect(await pruneMatches(db, new Date(Date.now() + 31 * 24 * 3600_000))).toBeGreaterThanOrEqual(2);
    expect(await db.select().from(ctMatches).where(eq(ctMatches.organizationId, org)).all()).toHaveLength(0);
    expect(await db.select().from(ctMatchOccurrences).where(eq(ctMatchOccurrences.organizationId, org)).all()).toHaveLength(0);
    expect(await db.select().from(ctMatchFilters).where(eq(ctMatchFilters.organizationId, org)).all()).toHaveLength(0);
  });

  it("a large verified batch is published in short transactions of whole entries, each visible at its own time, then announced once", async () => {
    const org = await newOrg();
    const other = await newOrg();
    const filterId = 9_200_000 + Math.floor(Math.random() * 100_000);
    const at = new Date().toISOString();
    const caa = { has_records: false, authorized: true, records: [], error: "", checked_names: ["s.example"], issuer_candidates: [], evaluated_at: at };
    // 150 entries, each hit by one filter of `org`; every 10th also by a filter of `other` (two hits).
    const observed: ObservedEntry[] = Array.from({ length: 150 }, (_, i) => {
      const sha = (i + 1).toString(16).padStart(64, "0");
      const cert = { subject: "s.example", issuer: "CN=Test CA", dns_names: ["s.example"], sha256: sha, serial: "01", not_before: at, not_after: at, signature_algorithm: "ecdsa-with-SHA256", key_algorithm: "EC", is_precert: false, log_name: "S", log_index: i, aia_issuing: [], ocsp_servers: [], scts: [], spki_sha256: "", issuer_spki_sha256: "" };
      const hits = [{ filterId, organizationId: org, names: ["s.example"] }];
      if (i % 10 === 0) hits.push({ filterId: filterId + 1, organizationId: other, names: ["s.example"] });
      return { logIndex: i, isPrecert: false, sha256: sha, dedupKey: sha, cert, caa, hits, typosquats: [], entryTimestamp: Date.parse(at) };
    });

    const slices = publicationSlices(observed);
    // Whole entries, in log order, none lost, none over 64 hits (165 hits: three slices).
    expect(slices.flat()).toEqual(observed);
    expect(slices.length).toBe(3);
    for (const slice of slices) expect(slice.reduce((n, o) => n + o.hits.length + o.typosquats.length, 0)).toBeLessThanOrEqual(64);
    // One entry with more hits than a slice holds is a slice of its own, never split.
    const crowded = { ...observed[0], hits: Array.from({ length: 70 }, (_, k) => ({ filterId: k, organizationId: org, names: ["s.example"] })) };
    expect(publicationSlices([observed[1], crowded, observed[2]]).map((s) => s.length)).toEqual([1, 1, 1]);

    const sent: MessageSendRequest<CtLogPublished>[] = [];
    const queue = { sendBatch: async (m: Iterable<MessageSendRequest<CtLogPublished>>) => void sent.push(...m) };
    const log = { logId: `log-${uid()}`, logName: "S" };
    await publishVerified(db, queue, log, 0, 150, observed);
    const occ = await db.select().from(ctMatchOccurrences).where(eq(ctMatchOccurrences.organizationId, org)).all();
    expect(occ.map((o) => o.logIndex).sort((a, b) => a - b)).toEqual(observed.map((o) => o.logIndex));
    // One publication time per transaction, increasing with the log index.
    const times = [...new Set(occ.sort((a, b) => a.logIndex - b.logIndex).map((o) => o.observedAt))];
    expect(times).toHaveLength(3);
    expect([...times].sort()).toEqual(times);
    expect(await db.select().from(ctMatches).where(eq(ctMatches.organizationId, other)).all()).toHaveLength(15);
    // One announcement for the whole range, naming both organizations.
    expect(sent.map((m) => m.body)).toEqual([{ type: "ct-log.published", organizationIds: [org, other].sort((a, b) => a - b), logId: log.logId, from: 0, to: 150 }]);
    // A replay after a crash (the cursor's record was not saved) writes nothing new.
    await publishVerified(db, queue, log, 0, 150, observed);
    expect(await db.select().from(ctMatchOccurrences).where(eq(ctMatchOccurrences.organizationId, org)).all()).toHaveLength(150);
  });

  it("check-new: polling with the previous as_of counts every match exactly once, where the client's own clock would skip some", async () => {
    const org = await signup("Watermark");
    const f = await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: `w${uid()}.example`, match_type: "wide" } });
    expect(f.status).toBe(201);
    const log = { logId: `log-${uid()}`, logName: "Watermark log" };
    const at = new Date().toISOString();
    let n = 0;
    const publishOne = async () => {
      n++;
      const sha = n.toString(16).padStart(64, "0");
      const cert = { subject: "w.example", issuer: "CN=Test CA", dns_names: ["w.example"], sha256: sha, serial: "01", not_before: at, not_after: at, signature_algorithm: "ecdsa-with-SHA256", key_algorithm: "EC", is_precert: false, log_name: log.logName, log_index: n, aia_issuing: [], ocsp_servers: [], scts: [], spki_sha256: "", issuer_spki_sha256: "" };
      const caa = { has_records: false, authorized: true, records: [], error: "", checked_names: ["w.example"], issuer_candidates: [], evaluated_at: at };
      const o: ObservedEntry = { logIndex: n, isPrecert: false, sha256: sha, dedupKey: sha, cert, caa, hits: [{ filterId: f.body.id, organizationId: org.organizationId, names: ["w.example"] }], typosquats: [], entryTimestamp: Date.parse(at) };
      await publishObservations(db, log, [o]);
    };
    const checkNew = async (since: string) => {
      const r = await call("GET", `/api/ct-log/matches/check-new?since=${encodeURIComponent(since)}`, { token: org.session });
      expect(r.status).toBe(200);
      return r.body as { has_new: boolean; count: number; latest_timestamp: string | null; as_of: string };
    };

    await publishOne();
    const r1 = await checkNew("2020-01-01T00:00:00Z");
    expect(r1).toMatchObject({ has_new: true, count: 1 });
    // The newest match is never past the watermark.
    expect(r1.latest_timestamp! <= r1.as_of).toBe(true);
    // A client whose clock runs 5 s ahead of the database's polls with its own time...
    const clientClock = new Date(Date.now() + 5_000).toISOString();
    await publishOne();
    // ...and misses the match published after its poll; the watermark does not.
    expect((await checkNew(clientClock)).count).toBe(0);
    const r2 = await checkNew(r1.as_of);
    expect(r2).toMatchObject({ has_new: true, count: 1 });
    expect(r2.as_of > r1.as_of).toBe(true);
    // Nothing new: nothing counted, the watermark stays.
    const r3 = await checkNew(r2.as_of);
    expect(r3).toMatchObject({ has_new: false, count: 0, as_of: r2.as_of, latest_timestamp: r2.latest_timestamp });
    // Publications at once (possibly within one millisecond of the database's clock) still get distinct, later times.
    await Promise.all([publishOne(), publishOne()]);
    const r4 = await checkNew(r3.as_of);
    expect(r4.count).toBe(2);
    expect((await checkNew(r4.as_of)).count).toBe(0);
    // Every match was counted exactly once along the chain of watermarks.
    expect(r1.count + r2.count + r3.count + r4.count).toBe(n);
    expect((await call("GET", "/api/ct-log/matches?page_size=1", { token: org.session })).body.total).toBe(n);
    // latest_timestamp: the newest match still in the 30-day window, whichever index SQLite reads it by.
    const newestFirst = await db.select({ id: ctMatches.id, first: ctMatches.firstMatchedAt }).from(ctMatches).where(eq(ctMatches.organizationId, org.organizationId)).orderBy(desc(ctMatches.firstMatchedAt)).all();
    expect(newestFirst).toHaveLength(n);
    expect(r4.latest_timestamp).toBe(newestFirst[0].first);
    await db.update(ctMatches).set({ lastMatchedAt: new Date(Date.now() - 40 * 86_400_000).toISOString() }).where(eq(ctMatches.id, newestFirst[0].id)).run();
    expect(await checkNew(r4.as_of)).toMatchObject({ count: 0, latest_timestamp: newestFirst[1].first });
    // Validation: since must be a date-time.
    expect((await call("GET", "/api/ct-log/matches/check-new?since=yesterday", { token: org.session })).status).toBe(400);
  });
});
