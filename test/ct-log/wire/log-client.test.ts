import { describe, expect, it } from "vitest";
import { Rfc6962Client } from "../../../src/modules/ct-log/log-client/rfc6962-client";
import { StaticCtClient } from "../../../src/modules/ct-log/log-client/static-ct-client";
import { PoliteFetcher, parseRetryAfter } from "../../../src/modules/ct-log/log-client/politeness";
import { CollapsedMerkleTree } from "../../../src/modules/ct-log/merkle";
import { EntryRangeError, LogHttpError, TreeHeadVerificationError, type LogClient } from "../../../src/modules/ct-log/log-client/types";
import { sha256, toBase64 } from "../../../src/modules/ct-log/wire/bytes";
import { createLog, control, dataJson, fakeTime, hex, logKey, logUrl, requests } from "./fixture";

async function rfcClient(name: string, extra: Partial<ConstructorParameters<typeof Rfc6962Client>[0]> = {}) {
  const { key } = await logKey(name);
  const t = fakeTime();
  return { client: new Rfc6962Client({ baseUrl: logUrl(name), key, clock: t.clock, sleep: t.sleep, ...extra }), time: t };
}
async function staticClient(name: string, extra: Partial<ConstructorParameters<typeof StaticCtClient>[0]> = {}) {
  const { key, origin } = await logKey(name);
  const t = fakeTime();
  return { client: new StaticCtClient({ monitoringUrl: logUrl(name), key, origin, clock: t.clock, sleep: t.sleep, ...extra }), time: t };
}

/**
 * Reads from the tree's size to the latest tree head in requests of at most `batch`
 * entries, appending every leaf hash, then asks the log to prove the tree is a
 * prefix of the signed one (the check the cursor makes per batch).
 */
async function ingestAll(client: LogClient, tree: CollapsedMerkleTree, batch: number) {
  const sth = await client.getTreeHead();
  const entries = [];
  while (tree.size < sth.treeSize) {
    const got = await client.fetchRange(tree.size, Math.min(sth.treeSize, tree.size + batch), sth.treeSize);
    for (const e of got) tree.append(e.leafHash);
    entries.push(...got);
  }
  return { sth, entries, verified: await client.provesPrefix(tree, sth) };
}

describe("RFC 6962 client against the local log", () => {
  it("pilot: verified get-sth with the real root, entries with the real leaf hashes and chains", async () => {
    const { client } = await rfcClient("pilot");
    const sth = await client.getTreeHead();
    expect(sth.treeSize).toBe(4);
    expect(toBase64(sth.rootHash)).toBe("A26tmgcaUJpkFXFpkzCS8bJ29cQBEgExKAYFL8hiJ5E=");
    const expected = (await dataJson("rfc6962/expected.json")).files["get-entries.pilot-2013.4-x509.json"];
    const entries = await client.getEntries(0, 3);
    expect(entries.map((e) => hex(e.leafHash))).toEqual(expected.map((e: any) => e.leaf_hash_hex));
    expect(entries.map((e) => e.chain.length)).toEqual(expected.map((e: any) => e.extra_data_chain_len));
    const tree = CollapsedMerkleTree.empty();
    expect((await ingestAll(client, tree, 3)).verified).toBe(true);
    expect(tree.size).toBe(4);
  });

  it("short reads are followed up, and nothing past the tree size is ever asked", async () => {
    const name = await createLog({ from: "navigli2025h2", size: 100 });
    await control(name, "config", { maxGetEntries: 7 });
    const { client } = await rfcClient(name, { batchSize: 32 });
    const sth = await client.getTreeHead();
    expect(sth.treeSize).toBe(100);
    const entries = await client.getEntries(0, 99);
    expect(entries.map((e) => e.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const expected = await dataJson("static-ct/navigli2025h2/expected.json");
    expect(hex(entries[1].leafHash)).toBe(expected.entries[1].leaf_hash_hex);
    expect(entries[0].preCertificate?.length).toBe(expected.entries[0].pre_certificate_len);
    const asked = (await requests(name)).filter((r) => r.path === "ct/v1/get-entries").map((r) => new URLSearchParams(r.query));
    expect(asked.length).toBe(Math.ceil(100 / 7));
    let next = 0;
    for (const q of asked) {
      expect(Number(q.get("start"))).toBe(next); // continues where the short answer stopped
      expect(Number(q.get("end"))).toBeLessThan(100);
      expect(Number(q.get("end")) - Number(q.get("start"))).toBeLessThan(32);
      next = Math.min(Number(q.get("end")), next + 6) + 1;
    }
    await expect(client.getEntries(90, 100)).rejects.toThrow(EntryRangeError);
    // Ingestion with a batch larger than what is left stays inside the tree too.
    expect((await ingestAll(client, CollapsedMerkleTree.empty(), 64)).verified).toBe(true);
    expect((await requests(name)).every((r) => r.path !== "ct/v1/get-entries" || Number(new URLSearchParams(r.query).get("end")) < 100)).toBe(true);
  });

  it("429 with Retry-After is honoured through the injected sleeper; 500s back off with jitter", async () => {
    const name = await createLog({ from: "pilot" });
    await control(name, "fault", { kind: "rate-limit", count: 2, retryAfter: 7, path: "get-sth" });
    const { client, time } = await rfcClient(name, { random: () => 0.5, baseBackoffMs: 1000 });
    await client.getTreeHead();
    expect(time.slept).toEqual([7000, 7000]);
    await control(name, "fault", { kind: "server-error", count: 3, path: "get-entries" });
    const entries = await client.getEntries(0, 3);
    expect(entries).toHaveLength(4);
    expect(time.slept.slice(2)).toEqual([500, 1000, 2000]); // 0.5 * 1000 * 2^attempt
  });

  it("gives up with LogHttpError after the retries", async () => {
    const name = await createLog({ from: "pilot" });
    await control(name, "fault", { kind: "server-error", count: 10 });
    const { client, time } = await rfcClient(name, { maxRetries: 2, random: () => 0 });
    const err = await client.getTreeHead().catch((e) => e);
    expect(err).toBeInstanceOf(LogHttpError);
    expect(err.status).toBe(500);
    expect(time.slept).toHaveLength(2);
  });

  it("a stalled answer times out and is retried", async () => {
    const name = await createLog({ from: "pilot" });
    await control(name, "fault", { kind: "stall", count: 1, ms: 1500, path: "get-sth" });
    const { client, time } = await rfcClient(name, { timeoutMs: 150, random: () => 0.5, baseBackoffMs: 100 });
    expect((await client.getTreeHead()).treeSize).toBe(4);
    expect(time.slept).toEqual([50]);
    await control(name, "fault", { kind: "stall", count: 1, ms: 1500, path: "get-sth" });
    const impatient = (await rfcClient(name, { timeoutMs: 150, maxRetries: 0 })).client;
    await expect(impatient.getTreeHead()).rejects.toThrow(/timeout/);
  });

  it("a tree head with a broken signature is rejected", async () => {
    const name = await createLog({ from: "pilot" });
    await control(name, "fault", { kind: "bad-signature" });
    const { client } = await rfcClient(name);
    await expect(client.getTreeHead()).rejects.toThrow(TreeHeadVerificationError);
    // And the key of another log does not verify this log's heads.
    const other = await rfcClient("pilot");
    const stranger = new Rfc6962Client({ baseUrl: logUrl(name), key: (await logKey("navigli2025h2")).key });
    await control(name, "fault", { kind: "clear" });
    await expect(stranger.getTreeHead()).rejects.toThrow(TreeHeadVerificationError);
    expect((await other.client.getTreeHead()).treeSize).toBe(4);
  });

  it("a forged tree head (validly signed, wrong root) does not prove what was read", async () => {
    const name = await createLog({ from: "navigli2025h2", size: 40 });
    const { client } = await rfcClient(name);
    const tree = CollapsedMerkleTree.empty();
    expect((await ingestAll(client, tree, 16)).verified).toBe(true);
    await control(name, "entries", { certificates: [toBase64(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]))] });
    await control(name, "fault", { kind: "forge-root" });
    const forged = CollapsedMerkleTree.fromJSON(tree.toJSON());
    const { sth, verified } = await ingestAll(client, forged, 16);
    expect(sth.treeSize).toBe(41);
    expect(verified).toBe(false);
    // The consistency proof from 40 to the forged head fails too.
    expect(await client.provesPrefix(tree, sth)).toBe(false);
    await control(name, "fault", { kind: "clear" });
    expect((await ingestAll(client, tree, 16)).verified).toBe(true);
    expect(tree.size).toBe(41);
  });

  it("each batch is proven against a larger signed tree with a consistency proof", async () => {
    const name = await createLog({ from: "navigli2025h2", size: 300, leafIndexExtension: false });
    const { client } = await rfcClient(name, { batchSize: 64 });
    const sth = await client.getTreeHead();
    const tree = CollapsedMerkleTree.empty();
    for (const size of [1, 64, 128, 200, 256, 299]) {
      while (tree.size < size) for (const e of await client.fetchRange(tree.size, size, sth.treeSize)) tree.append(e.leafHash);
      expect(await client.provesPrefix(tree, sth), `prefix ${size}`).toBe(true);
    }
    // A leaf that is not the log's: no proof makes it a prefix.
    const wrong = CollapsedMerkleTree.fromJSON(tree.toJSON());
    wrong.append(new Uint8Array(32));
    expect(await client.provesPrefix(wrong, sth)).toBe(false);
    const asked = (await requests(name)).filter((r) => r.path === "ct/v1/get-sth-consistency").map((r) => r.query);
    expect(asked).toContain("?first=200&second=300");
  });

  it("a tampered entry is detected against the signed root", async () => {
    const name = await createLog({ from: "pilot" });
    await control(name, "fault", { kind: "tamper-entry", index: 2 });
    const { client } = await rfcClient(name);
    expect((await ingestAll(client, CollapsedMerkleTree.empty(), 2)).verified).toBe(false);
    await control(name, "fault", { kind: "clear" });
    expect((await ingestAll(client, CollapsedMerkleTree.empty(), 2)).verified).toBe(true);
  });

  it("RSA logs verify too", async () => {
    const name = await createLog({ from: "pilot", keyType: "rsa" });
    const { client } = await rfcClient(name);
    expect(toBase64((await client.getTreeHead()).rootHash)).toBe("A26tmgcaUJpkFXFpkzCS8bJ29cQBEgExKAYFL8hiJ5E=");
  });
});

describe("static-ct-api client against the local log", () => {
  it("navigli at size 778: verified checkpoint, partial tile, leaf_index, issuers fetched once and checked", async () => {
    const expected = await dataJson("static-ct/navigli2025h2/expected.json");
    const name = await createLog({ from: "navigli2025h2", size: 778 });
    const { client } = await staticClient(name);
    const { sth, entries, verified } = await ingestAll(client, CollapsedMerkleTree.empty(), 256);
    expect(sth.treeSize).toBe(778);
    expect(toBase64(sth.rootHash)).toBe(expected.tree_root_hash.size_778_b64);
    expect(verified).toBe(true);
    expect(entries).toHaveLength(778);
    for (const want of expected.entries.filter((e: any) => e.index < 778)) {
      const got = entries[want.index];
      expect(hex(got.leafHash)).toBe(want.leaf_hash_hex);
      expect(await Promise.all(got.chain.map(async (c: Uint8Array) => hex(await sha256(c))))).toEqual(want.chain_sha256);
    }
    const paths = (await requests(name)).map((r) => r.path);
    expect(paths).toContain("tile/data/003.p/10");
    expect(paths).not.toContain("tile/data/003");
    const issuerPaths = paths.filter((p) => p.startsWith("issuer/"));
    expect(new Set(issuerPaths).size).toBe(issuerPaths.length); // cached: each issuer once
  });

  it("navigli full tree via gzip tiles (with and without Content-Encoding), root of size 1024", async () => {
    const expected = await dataJson("static-ct/navigli2025h2/expected.json");
    for (const gzip of ["header", "raw"]) {
      const name = await createLog({ from: "navigli2025h2" });
      await control(name, "config", { gzip });
      const { client } = await staticClient(name, { resolveIssuers: false });
      const sth = await client.getTreeHead();
      expect(hex(sth.rootHash)).toBe(expected.tree_root_hash.size_1024_hex);
      const e = await client.getEntries(1000, 1023);
      expect(e.map((x) => x.index)).toEqual(Array.from({ length: 24 }, (_, i) => 1000 + i));
      expect(e[0].chain).toEqual([]);
      expect(e.map((x) => hex(x.leafHash))).toEqual(expected.entries.slice(1000).map((x: any) => x.leaf_hash_hex));
    }
  });

  it("a log that grows: ingestion continues across checkpoints, partial tiles become full", async () => {
    const name = await createLog({ from: "navigli2025h2", size: 250 });
    const { client } = await staticClient(name, { resolveIssuers: false });
    const tree = CollapsedMerkleTree.empty();
    expect((await ingestAll(client, tree, 100)).verified).toBe(true);
    const cert = toBase64(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x05]));
    await control(name, "entries", { certificates: Array(10).fill(cert) });
    const second = await ingestAll(client, tree, 100);
    expect(second.sth.treeSize).toBe(260);
    expect(second.verified).toBe(true);
    expect(second.entries.map((e) => e.entry.entryType)).toEqual(Array(10).fill("x509_entry"));
    const paths = (await requests(name)).map((r) => r.path);
    expect(paths).toContain("tile/data/000.p/250");
    expect(paths).toContain("tile/data/001.p/4");
  });

  it("forged checkpoint root is a mismatch; a broken signature or wrong origin is rejected", async () => {
    const name = await createLog({ from: "navigli2025h2", size: 30 });
    await control(name, "fault", { kind: "forge-root" });
    const { client } = await staticClient(name, { resolveIssuers: false });
    expect((await ingestAll(client, CollapsedMerkleTree.empty(), 256)).verified).toBe(false);
    await control(name, "fault", { kind: "clear" });
    await control(name, "fault", { kind: "bad-signature" });
    await expect(client.getTreeHead()).rejects.toThrow(TreeHeadVerificationError);
    await control(name, "fault", { kind: "clear" });
    const { key } = await logKey(name);
    const wrongOrigin = new StaticCtClient({ monitoringUrl: logUrl(name), key, origin: "elsewhere.example/log" });
    await expect(wrongOrigin.getTreeHead()).rejects.toThrow(/origin/);
  });

  it("each tile is proven against the checkpoint with the log's hash tiles, a tampered one is not", async () => {
    const name = await createLog({ from: "navigli2025h2" });
    await control(name, "generate", { count: 70_000 - 1024 });
    const { client } = await staticClient(name, { resolveIssuers: false });
    const sth = await client.getTreeHead();
    expect(sth.treeSize).toBe(70_000);
    // A monitor that started at 65,280 (a tile boundary far inside, verified from hash tiles).
    const tree = await client.treeAt({ ...sth, treeSize: 65_280, rootHash: (await client.treeAt(sth)).root() }).catch(() => null);
    expect(tree).toBeNull(); // a root that is not the one of size 65,280 does not verify
    const start = CollapsedMerkleTree.empty();
    for (let i = 0; i < 4; i++) for (const e of await client.fetchRange(start.size, start.size + 256, sth.treeSize)) start.append(e.leafHash);
    expect(await client.provesPrefix(start, sth)).toBe(true);
    await control(name, "fault", { kind: "tamper-entry", index: 1100 });
    const tampered = CollapsedMerkleTree.fromJSON(start.toJSON());
    for (const e of await client.fetchRange(1024, 1280, sth.treeSize)) tampered.append(e.leafHash);
    expect(await client.provesPrefix(tampered, sth)).toBe(false);
    // Hash tiles are fetched once per (level, index, width): a second proof asks nothing new.
    const before = (await requests(name)).filter((r) => /^tile\/\d/.test(r.path)).length;
    expect(await client.provesPrefix(start, sth)).toBe(true);
    expect((await requests(name)).filter((r) => /^tile\/\d/.test(r.path)).length).toBe(before);
  });

  it("429 on a tile: Retry-After as an HTTP date is honoured", async () => {
    const name = await createLog({ from: "navigli2025h2", size: 20 });
    const { client, time } = await staticClient(name, { resolveIssuers: false });
    await client.getTreeHead();
    const retryAt = new Date(time.clock.now() + 12_000).toUTCString();
    await control(name, "fault", { kind: "rate-limit", count: 1, retryAfter: retryAt, path: "tile/data" });
    expect(await client.getEntries(0, 19)).toHaveLength(20);
    expect(time.slept).toEqual([12_000]);
  });
});

describe("politeness", () => {
  it("spaces requests at the configured rate on the injected clock", async () => {
    const t = fakeTime();
    const http = new PoliteFetcher({ requestsPerSecond: 4, clock: t.clock, sleep: t.sleep });
    for (let i = 0; i < 4; i++) expect((await http.fetch(logUrl("pilot") + "ct/v1/get-sth")).status).toBe(200);
    expect(t.slept).toEqual([250, 250, 250]);
  });
  it("parses Retry-After", () => {
    expect(parseRetryAfter("3", 0)).toBe(3000);
    expect(parseRetryAfter("Thu, 01 Jan 1970 00:00:10 GMT", 4000)).toBe(6000);
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
    expect(parseRetryAfter(null, 0)).toBeUndefined();
  });
});

describe("PoliteFetcher: unreachable hosts", () => {
  it("with maxNetworkRetries 0, a connection failure is not retried; a timeout or 503 still is", async () => {
    const slept: number[] = [];
    let calls = 0;
    const refused = new PoliteFetcher({
      maxRetries: 3,
      maxNetworkRetries: 0,
      sleep: async (ms) => void slept.push(ms),
      fetch: async () => {
        calls++;
        throw new TypeError("internal error; DNS lookup failed");
      },
    });
    await expect(refused.fetch("https://unreachable.example/ct/v1/get-sth")).rejects.toThrow(/after 1 attempts/);
    expect(calls).toBe(1);
    expect(slept).toEqual([]);

    let answers = 0;
    const busy = new PoliteFetcher({
      maxRetries: 3,
      maxNetworkRetries: 0,
      sleep: async () => undefined,
      fetch: async () => new Response("busy", { status: ++answers < 3 ? 503 : 200 }),
    });
    expect((await busy.fetch("https://log.example/ct/v1/get-sth")).status).toBe(200);
    expect(answers).toBe(3);
  });
});
