import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { CtWireError, toBase64 } from "../../../src/modules/ct-log/wire/bytes";
import {
  dataTileFor,
  decodeTileIndex,
  encodeTileIndex,
  gunzip,
  maybeGunzip,
  parseDataTile,
  parseHashTile,
  parseTilePath,
  tileLeafHash,
  tilePath,
} from "../../../src/modules/ct-log/wire/static-ct";
import { CollapsedMerkleTree } from "../../../src/modules/ct-log/merkle";
import { dataBytes, dataJson, hex } from "./fixture";

describe("tile path encoding", () => {
  it("follows the x001/x234/067 scheme", () => {
    expect(encodeTileIndex(1234067)).toBe("x001/x234/067");
    expect(encodeTileIndex(0)).toBe("000");
    expect(encodeTileIndex(67)).toBe("067");
    expect(encodeTileIndex(1000)).toBe("x001/000");
    expect(tilePath("data", 3, 10)).toBe("tile/data/003.p/10");
    expect(tilePath(0, 1234067)).toBe("tile/0/x001/x234/067");
    expect(parseTilePath("tile/data/x001/x234/067.p/255")).toEqual({ level: "data", index: 1234067, width: 255 });
    for (const bad of ["tile/data/1", "tile/data/x01/000", "tile/0/000.p/256", "tile/0/000.p/0", "tile/data/001/002"]) {
      expect(() => parseTilePath(bad)).toThrow(CtWireError);
    }
  });
  it("round-trips every index", () => {
    fc.assert(fc.property(fc.nat({ max: Number.MAX_SAFE_INTEGER }), (n) => decodeTileIndex(encodeTileIndex(n)) === n));
  });
  it("picks the partial tile of the last entries", () => {
    expect(dataTileFor(777, 778)).toEqual({ index: 3, width: 10 });
    expect(dataTileFor(767, 778)).toEqual({ index: 2, width: 256 });
    expect(() => dataTileFor(778, 778)).toThrow(CtWireError);
  });
});

describe("navigli2025h2 data tiles (real static-ct-api log)", () => {
  it("every entry's leaf hash equals the level-0 tile, leaf_index equals the position, fields match expected.json", async () => {
    const expected = await dataJson("static-ct/navigli2025h2/expected.json");
    const byIndex = new Map<number, any>(expected.entries.map((e: any) => [e.index, e]));
    const tree = CollapsedMerkleTree.empty();
    let checked = 0;
    for (let t = 0; t < 4; t++) {
      const name = encodeTileIndex(t);
      const leaves = parseDataTile(await dataBytes(`static-ct/navigli2025h2/tile/data/${name}`), 256);
      const hashes = parseHashTile(await dataBytes(`static-ct/navigli2025h2/tile/0/${name}`), 256);
      for (const [j, leaf] of leaves.entries()) {
        const index = t * 256 + j;
        const h = await tileLeafHash(leaf);
        expect(hex(h)).toBe(hex(hashes[j]));
        expect(leaf.leafIndex).toBe(index);
        expect(leaf.entry.entryType).toBe("precert_entry");
        const want = byIndex.get(index);
        if (want) {
          checked++;
          expect(leaf.entry.timestamp).toBe(want.timestamp_ms);
          expect(hex(h)).toBe(want.leaf_hash_hex);
          expect(leaf.preCertificate!.length).toBe(want.pre_certificate_len);
          expect(leaf.chainFingerprints.map(hex)).toEqual(want.chain_sha256);
          if (leaf.entry.entryType === "precert_entry") {
            expect(hex(leaf.entry.issuerKeyHash)).toBe(want.issuer_key_hash_hex);
            expect(leaf.entry.tbsCertificate.length).toBe(want.tbs_len);
          }
        }
        await tree.append(h);
        if (tree.size === 1) expect(hex(await tree.root())).toBe(expected.tree_root_hash.size_1_hex);
        if (tree.size === 256) expect(hex(await tree.root())).toBe(expected.tree_root_hash.size_256_hex);
      }
    }
    expect(checked).toBe(expected.entries.length);
    expect(toBase64(await tree.root())).toBe(expected.tree_root_hash.size_1024_b64);
  });

  it("the partial tile 003.p/10 completes the size-778 tree", async () => {
    const expected = await dataJson("static-ct/navigli2025h2/expected.json");
    const tree = CollapsedMerkleTree.empty();
    for (let t = 0; t < 3; t++) {
      for (const h of parseHashTile(await dataBytes(`static-ct/navigli2025h2/tile/0/${encodeTileIndex(t)}`), 256)) await tree.append(h);
    }
    const partial = parseDataTile(await dataBytes("static-ct/navigli2025h2/tile/data/003.p/10"), 10);
    const partialHashes = parseHashTile(await dataBytes("static-ct/navigli2025h2/tile/0/003.p/10"), 10);
    for (const [j, leaf] of partial.entries()) {
      expect(leaf.leafIndex).toBe(768 + j);
      expect(hex(await tileLeafHash(leaf))).toBe(hex(partialHashes[j]));
      await tree.append(await tileLeafHash(leaf));
    }
    expect(toBase64(await tree.root())).toBe(expected.tree_root_hash.size_778_b64);
  });

  it("truncated or miscounted tiles are CtWireError, gzip is undone", async () => {
    const tile = await dataBytes("static-ct/navigli2025h2/tile/data/003.p/10");
    expect(() => parseDataTile(tile.subarray(0, tile.length - 1))).toThrow(CtWireError);
    expect(() => parseDataTile(tile, 11)).toThrow(/holds 10 entries, want 11/);
    expect(() => parseHashTile(new Uint8Array(33))).toThrow(CtWireError);
    const gz = new Uint8Array(await new Response(new Blob([tile]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
    expect(hex(await maybeGunzip(gz))).toBe(hex(tile));
    expect(await maybeGunzip(tile)).toBe(tile);
    await expect(gunzip(new Uint8Array([0x1f, 0x8b, 1, 2, 3]))).rejects.toThrow(CtWireError);
  });
});
