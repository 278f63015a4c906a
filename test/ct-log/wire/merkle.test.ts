import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { CollapsedMerkleTree, hashChildren, merkleRoot } from "../../../src/modules/ct-log/merkle";
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
});
