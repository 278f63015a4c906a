/**
 * Starting at the END of a log (CT_START_POSITION=end) without reading it from
 * entry 0: the monitor needs the collapsed Merkle tree at the start size N (the
 * roots of the perfect subtrees N decomposes into), and it must be verified.
 *
 *  - static-ct-api: every such subtree root is a node of the full tree, so it is
 *    in a hash tile: a node at level h lives in tile level floor(h/8), as the fold
 *    of 2^(h mod 8) consecutive hashes of that tile.
 *  - RFC 6962: the audit path of the LAST leaf (N-1) in the tree of size N
 *    consists of exactly the subtree roots of the tree of size N-1 (every
 *    sibling is on its left), smallest first; appending leaf N-1 gives size N.
 *
 * Either way the derived tree's root is compared with the signed tree head's
 * root: a log (or a path to it) that lies about a single node is caught here,
 * exactly like a tampered entry is caught later.
 */
import { CollapsedMerkleTree, hashChildren } from "../merkle";
import { TILE_WIDTH } from "../wire/static-ct";
import { bytesEqual, toBase64 } from "../wire/bytes";
import type { Rfc6962Client } from "./rfc6962-client";
import type { StaticCtClient } from "./static-ct-client";
import { LogDataError, type SignedTreeHead } from "./types";

/** The derived tree does not hash to the signed root. */
export class StartTreeMismatchError extends LogDataError {
  override name = "StartTreeMismatchError";
}

/** Perfect subtrees of a tree of `size` leaves, largest first: [level, index at that level]. */
export function subtreeDecomposition(size: number): { level: number; index: number }[] {
  const out: { level: number; index: number }[] = [];
  let offset = 0;
  for (let level = 52; level >= 0; level--) {
    const span = 2 ** level;
    if (size - offset >= span) {
      out.push({ level, index: offset / span });
      offset += span;
    }
  }
  return out;
}

async function foldPerfect(hashes: Uint8Array[]): Promise<Uint8Array> {
  let layer = hashes;
  while (layer.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < layer.length; i += 2) next.push(await hashChildren(layer[i], layer[i + 1]));
    layer = next;
  }
  return layer[0];
}

async function checkRoot(tree: CollapsedMerkleTree, sth: SignedTreeHead, how: string): Promise<CollapsedMerkleTree> {
  const root = await tree.root();
  if (!bytesEqual(root, sth.rootHash)) {
    throw new StartTreeMismatchError(
      `${how}: subtree roots at size ${sth.treeSize} hash to ${toBase64(root)}, the signed root is ${toBase64(sth.rootHash)}`,
    );
  }
  return tree;
}

/** The verified collapsed tree at `sth.treeSize` of a static-ct-api log, from its hash tiles. */
export async function staticCtTreeAt(client: StaticCtClient, sth: SignedTreeHead): Promise<CollapsedMerkleTree> {
  const tiles = new Map<string, Promise<Uint8Array[]>>();
  const tile = (level: number, index: number) => {
    const key = `${level}/${index}`;
    let t = tiles.get(key);
    if (!t) tiles.set(key, (t = client.getHashTile(level, index, sth.treeSize)));
    return t;
  };
  const nodes: Uint8Array[] = [];
  for (const { level, index } of subtreeDecomposition(sth.treeSize)) {
    const tileLevel = Math.floor(level / 8);
    const width = 2 ** (level % 8); // hashes of tile level folded into this node
    const first = index * width; // index of the first of them at level 8*tileLevel
    const hashes = await tile(tileLevel, Math.floor(first / TILE_WIDTH));
    const offset = first % TILE_WIDTH;
    const slice = hashes.slice(offset, offset + width);
    if (slice.length !== width) throw new LogDataError(`hash tile ${tileLevel}: too short for node ${level}/${index}`);
    nodes.push(await foldPerfect(slice));
  }
  return checkRoot(CollapsedMerkleTree.fromSubtreeRoots(sth.treeSize, nodes), sth, "static-ct hash tiles");
}

/** The verified collapsed tree at `sth.treeSize` of an RFC 6962 log, from the last leaf's audit path. */
export async function rfc6962TreeAt(client: Rfc6962Client, sth: SignedTreeHead): Promise<CollapsedMerkleTree> {
  const n = sth.treeSize;
  if (n === 0) return checkRoot(CollapsedMerkleTree.empty(), sth, "empty tree");
  const [last] = await client.getEntries(n - 1, n - 1, { treeSize: n });
  const path = n === 1 ? [] : await client.getProofByIndex(n - 1, n);
  let tree: CollapsedMerkleTree;
  try {
    tree = CollapsedMerkleTree.fromSubtreeRoots(n - 1, path.slice().reverse());
  } catch (err) {
    throw new LogDataError(`get-proof-by-index: ${(err as Error).message}`);
  }
  await tree.append(last.leafHash);
  return checkRoot(tree, sth, "RFC 6962 audit path");
}
