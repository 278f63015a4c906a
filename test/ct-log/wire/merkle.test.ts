import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { CollapsedMerkleTree, hashChildren, merkleRoot, rangeDecomposition, verifyConsistency } from "../../../src/modules/ct-log/merkle";
import { CtWireError, sha256 } from "../../../src/modules/ct-log/wire/bytes";
import { hex } from "./fixture";

/** RFC 6962 §2.1 MTH written straight from the definition (reference for the collapsed tree). */
async function mth(leaves: Uint8Array[]): Promise<Uint8Array> {
  if (leaves.length === 0) return sha256(new Uint8Array(0));
  if (leaves.length === 1) return leaves[0];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return hashChildren(await mth(leaves.slice(0, k)), await mth(leaves.slice(k)));
}

const leaf = (i: number) => sha256(new Uint8Array([0, i & 255, i >> 8]));

/** RFC 6962 §2.1.2 SUBPROOF, straight from the definition (the reference the verifier is checked against). */
async function subproof(m: number, leaves: Uint8Array[], complete: boolean): Promise<Uint8Array[]> {
  const n = leaves.length;
  if (m === n) return complete ? [] : [await mth(leaves)];
  let k = 1;
  while (k * 2 < n) k *= 2;
  if (m <= k) return [...(await subproof(m, leaves.slice(0, k), complete)), await mth(leaves.slice(k))];
  return [...(await subproof(m - k, leaves.slice(k), false)), await mth(leaves.slice(0, k))];
}

describe("collapsed Merkle tree", () => {
  it("matches the definition for every size up to 70, through a JSON round trip", async () => {
    const leaves: Uint8Array[] = [];
    let tree = CollapsedMerkleTree.empty();
    expect(hex(await tree.root())).toBe(hex(await sha256(new Uint8Array(0))));
    for (let n = 1; n <= 70; n++) {
      leaves.push(await leaf(n));
      await tree.append(leaves[n - 1]);
      expect(hex(await tree.root()), `size ${n}`).toBe(hex(await mth(leaves)));
      tree = CollapsedMerkleTree.fromJSON(JSON.parse(JSON.stringify(tree)));
      expect(tree.size).toBe(n);
      expect(tree.toJSON().nodes.length).toBe(n.toString(2).replace(/0/g, "").length);
    }
  });

  it("property: split appends equal one-shot root", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 }), async (a, b) => {
        const hs = await Promise.all(Array.from({ length: a + b }, (_, i) => leaf(i)));
        const t = CollapsedMerkleTree.empty();
        await t.appendAll(hs.slice(0, a));
        const resumed = CollapsedMerkleTree.fromJSON(t.toJSON());
        await resumed.appendAll(hs.slice(a));
        return hex(await resumed.root()) === hex(await merkleRoot(hs)) && hex(await merkleRoot(hs)) === hex(await mth(hs));
      }),
      { numRuns: 25 },
    );
  });

  it("rejects malformed state", () => {
    expect(() => CollapsedMerkleTree.fromJSON({ size: 3, nodes: [] })).toThrow(CtWireError);
    expect(() => CollapsedMerkleTree.fromJSON({ size: 1, nodes: ["AAAA"] })).toThrow(CtWireError);
    expect(() => CollapsedMerkleTree.fromJSON("nope")).toThrow(CtWireError);
    expect(() => CollapsedMerkleTree.fromJSON({ size: -1, nodes: [] })).toThrow(CtWireError);
  });

  it("appends aligned perfect subtrees: completing a prefix with the rest's nodes gives the whole root", async () => {
    const hs = await Promise.all(Array.from({ length: 70 }, (_, i) => leaf(i)));
    const nodeOf = (level: number, index: number) => mth(hs.slice(index * 2 ** level, (index + 1) * 2 ** level));
    for (let a = 0; a <= 70; a += 7) {
      for (const b of [a, a + 1, 64, 70].filter((x) => x >= a && x <= 70)) {
        const t = CollapsedMerkleTree.empty();
        t.appendAll(hs.slice(0, a));
        const parts = rangeDecomposition(a, b);
        expect(parts.reduce((n, p) => n + 2 ** p.level, 0)).toBe(b - a);
        for (const p of parts) t.appendSubtree(p.level, await nodeOf(p.level, p.index));
        expect(hex(t.root()), `${a}..${b}`).toBe(hex(await mth(hs.slice(0, b))));
      }
    }
    const t = CollapsedMerkleTree.empty();
    t.append(hs[0]);
    expect(() => t.appendSubtree(1, hs[1])).toThrow(CtWireError); // not aligned
  });

  it("verifies RFC 6962 consistency proofs for every pair of sizes up to 33, and rejects altered ones", async () => {
    const hs = await Promise.all(Array.from({ length: 33 }, (_, i) => leaf(i)));
    for (let n = 1; n <= 33; n++) {
      const rootN = await mth(hs.slice(0, n));
      for (let m = 1; m <= n; m++) {
        const rootM = await mth(hs.slice(0, m));
        const proof = m === n ? [] : await subproof(m, hs.slice(0, n), true);
        expect(verifyConsistency(m, n, rootM, rootN, proof), `${m} -> ${n}`).toBe(true);
        if (m < n) {
          expect(verifyConsistency(m, n, await leaf(999), rootN, proof)).toBe(false);
          expect(verifyConsistency(m, n, rootM, await leaf(999), proof)).toBe(false);
          if (proof.length) expect(verifyConsistency(m, n, rootM, rootN, [await leaf(998), ...proof.slice(1)])).toBe(false);
          expect(verifyConsistency(m, n, rootM, rootN, [...proof, await leaf(997)])).toBe(false);
        }
      }
    }
  });
});
