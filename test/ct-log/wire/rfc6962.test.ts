import { describe, expect, it } from "vitest";
import { CtWireError, fromBase64, sha256, toBase64 } from "../../../src/modules/ct-log/wire/bytes";
import {
  decodeGetEntriesItem,
  merkleLeafHash,
  parseExtraData,
  parseGetEntriesResponse,
  parseMerkleTreeLeaf,
  serializeMerkleTreeLeaf,
} from "../../../src/modules/ct-log/wire/rfc6962";
import { merkleRoot } from "../../../src/modules/ct-log/merkle";
import { dataJson, hex } from "./fixture";

describe("RFC 6962 get-entries decoding on real log entries", () => {
  for (const file of ["get-entries.pilot-2013.4-x509.json", "get-entries.letsencrypt-2018.1-x509.json"]) {
    it(`decodes ${file} as the expected leaves`, async () => {
      const body = await dataJson(`rfc6962/${file}`);
      const expected = (await dataJson("rfc6962/expected.json")).files[file] as any[];
      const entries = parseGetEntriesResponse(body);
      expect(entries).toHaveLength(expected.length);
      for (const [i, e] of entries.entries()) {
        const want = expected[i];
        expect(e.entry.timestamp).toBe(want.timestamp_ms);
        expect(e.entry.entryType).toBe(want.entry_type === 0 ? "x509_entry" : "precert_entry");
        expect(e.entry.extensions.length).toBe(want.extensions_len);
        if (e.entry.entryType !== "x509_entry") throw new Error("want x509");
        expect(e.entry.certificate.length).toBe(want.cert_len);
        expect(hex(await sha256(e.entry.certificate))).toBe(want.cert_sha256_hex);
        expect(hex(await merkleLeafHash(e.leafInput))).toBe(want.leaf_hash_hex);
        expect(e.extra.chain).toHaveLength(want.extra_data_chain_len);
        // Re-serializing the decoded leaf gives the served bytes back.
        expect(toBase64(serializeMerkleTreeLeaf(e.entry))).toBe(body.entries[i].leaf_input);
      }
    });
  }

  it("the 4 pilot leaves hash to the real Merkle tree head", async () => {
    const entries = parseGetEntriesResponse(await dataJson("rfc6962/get-entries.pilot-2013.4-x509.json"));
    const root = await merkleRoot(await Promise.all(entries.map((e) => merkleLeafHash(e.leafInput))));
    expect(toBase64(root)).toBe("A26tmgcaUJpkFXFpkzCS8bJ29cQBEgExKAYFL8hiJ5E=");
  });
});

describe("RFC 6962 faults become CtWireError", () => {
  it("truncated, wrong version, unknown entry type, trailing bytes", async () => {
    const body = await dataJson("rfc6962/get-entries.pilot-2013.4-x509.json");
    const leaf = fromBase64(body.entries[0].leaf_input);
    for (let cut = 0; cut < leaf.length; cut += 97) {
      expect(() => parseMerkleTreeLeaf(leaf.subarray(0, cut))).toThrow(CtWireError);
    }
    const v1 = leaf.slice();
    v1[0] = 1;
    expect(() => parseMerkleTreeLeaf(v1)).toThrow(/version/);
    const badType = leaf.slice();
    badType[11] = 7; // low byte of entry_type (after version, leaf_type, 8-byte timestamp, high byte)
    expect(() => parseMerkleTreeLeaf(badType)).toThrow(/entry_type 7/);
    const trailing = new Uint8Array(leaf.length + 1);
    trailing.set(leaf);
    expect(() => parseMerkleTreeLeaf(trailing)).toThrow(/trailing/);
    expect(() => parseExtraData("x509_entry", new Uint8Array([0, 0, 9, 0]))).toThrow(CtWireError);
    expect(() => parseExtraData("precert_entry", new Uint8Array([0, 0, 0]))).toThrow(CtWireError);
    expect(() => decodeGetEntriesItem({ leaf_input: "!!!", extra_data: "" })).toThrow(CtWireError);
    expect(() => decodeGetEntriesItem(null)).toThrow(CtWireError);
    expect(() => parseGetEntriesResponse({ nope: 1 })).toThrow(CtWireError);
  });
});
