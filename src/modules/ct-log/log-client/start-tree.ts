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
import { CollapsedMerkleTree } from "../merkle";
import { bytesEqual, toBase64 } from "../wire/bytes";
import { LogDataError, type LogEntry, type SignedTreeHead } from "./types";

/** What the start needs of a static-ct-api log: its nodes (StaticCtClient has it). */
export interface NodeSource {
  nodeAt(level: number, index: number, treeSize: number): Promise<Uint8Array>;
}

/** What the start needs of an RFC 6962 log: an entry and an audit path (Rfc6962Client has them). */
export interface AuditPathSource {
  getEntries(start: number, end: number, opts: { treeSize: number }): Promise<LogEntry[]>;
  getProofByIndex(index: number, treeSize: number): Promise<Uint8Array[]>;
}

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

function checkRoot(tree: CollapsedMerkleTree, sth: SignedTreeHead, how: string): CollapsedMerkleTree {
  const root = tree.root();
  if (!bytesEqual(root, sth.rootHash)) {
    throw new StartTreeMismatchError(
      `${how}: subtree roots at size ${sth.treeSize} hash to ${toBase64(root)}, the signed root is ${toBase64(sth.rootHash)}`,
    );
  }
  return tree;
}

/** The verified collapsed tree at `sth.treeSize` of a static-ct-api log, from its hash tiles. */
export async function staticCtTreeAt(client: NodeSource, sth: SignedTreeHead): Promise<CollapsedMerkleTree> {
  const nodes: Uint8Array[] = [];
  for (const { level, index } of subtreeDecomposition(sth.treeSize)) nodes.push(await client.nodeAt(level, index, sth.treeSize));
  return checkRoot(CollapsedMerkleTree.fromSubtreeRoots(sth.treeSize, nodes), sth, "static-ct hash tiles");
}

/** The verified collapsed tree at `sth.treeSize` of an RFC 6962 log, from the last leaf's audit path. */
export async function rfc6962TreeAt(client: AuditPathSource, sth: SignedTreeHead): Promise<CollapsedMerkleTree> {
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
  tree.append(last.leafHash);
  return checkRoot(tree, sth, "RFC 6962 audit path");
}
