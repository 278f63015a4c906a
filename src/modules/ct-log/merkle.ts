/**
 * The collapsed Merkle tree of RFC 6962 §2.1 (a "compact range" from 0 to size):
 * for a tree of `size` leaves it keeps only the roots of the perfect subtrees that
 * the binary expansion of `size` decomposes into, largest (leftmost) first. That
 * is at most 53 hashes for any tree a JS number can count, enough to append the
 * next leaf and to compute the root of the whole tree, so a monitor can check
 * every signed tree head against the leaves it actually downloaded (as
 * certspotter does) without storing the leaves.
 *
 * The state serializes to a small JSON object for Durable Object storage.
 */
import { CtWireError, bytesEqual, fromBase64, sha256Sync, toBase64 } from "./wire/bytes";

/** SHA-256 of the empty string: the root of the empty tree (RFC 6962 §2.1). */
const EMPTY_ROOT_HEX = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** Interior node hash: SHA-256(0x01 || left || right). */
const NODE_PREFIX = new Uint8Array([1]);

export function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256Sync(NODE_PREFIX, left, right);
}

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && n % 2 === 0) n /= 2;
  return n === 1;
}

/** Number of set bits of a non-negative safe integer (no 32-bit bitwise ops: sizes pass 2^32). */
function popcount(n: number): number {
  let c = 0;
  while (n > 0) {
    c += n % 2;
    n = Math.floor(n / 2);
  }
  return c;
}

/** JSON form: `{ size, nodes: [base64 subtree roots, largest first] }`. */
export interface CollapsedTreeJson {
  size: number;
  nodes: string[];
}

export class CollapsedMerkleTree {
  private constructor(
    private _size: number,
    private readonly nodes: Uint8Array[],
  ) {}

  static empty(): CollapsedMerkleTree {
    return new CollapsedMerkleTree(0, []);
  }

  /**
   * Builds a tree from known subtree roots (e.g. computed from static-ct hash
   * tiles), checking the count fits the size.
   */
  static fromSubtreeRoots(size: number, nodes: Uint8Array[]): CollapsedMerkleTree {
    if (!Number.isSafeInteger(size) || size < 0) throw new CtWireError("collapsed tree", `bad size ${size}`);
    if (nodes.length !== popcount(size)) throw new CtWireError("collapsed tree", `size ${size} needs ${popcount(size)} nodes, got ${nodes.length}`);
    if (nodes.some((n) => n.length !== 32)) throw new CtWireError("collapsed tree", "nodes must be 32-byte hashes");
    return new CollapsedMerkleTree(size, nodes.map((n) => n.slice()));
  }

  static fromJSON(json: unknown): CollapsedMerkleTree {
    const j = json as Partial<CollapsedTreeJson> | null;
    if (!j || typeof j.size !== "number" || !Array.isArray(j.nodes) || j.nodes.some((n) => typeof n !== "string")) {
      throw new CtWireError("collapsed tree", "JSON is not {size, nodes[]}");
    }
    return CollapsedMerkleTree.fromSubtreeRoots(j.size, j.nodes.map((n) => fromBase64(n, "collapsed tree")));
  }

  toJSON(): CollapsedTreeJson {
    return { size: this._size, nodes: this.nodes.map(toBase64) };
  }

  clone(): CollapsedMerkleTree {
    return new CollapsedMerkleTree(this._size, this.nodes.slice());
  }

  /** Number of leaves appended so far. */
  get size(): number {
    return this._size;
  }

  /** Subtree roots, largest first (copies). */
  subtreeRoots(): Uint8Array[] {
    return this.nodes.map((n) => n.slice());
  }

  /** Appends one leaf hash (SHA-256(0x00 || leaf), see merkleLeafHash/tileLeafHash). */
  append(leafHash: Uint8Array): void {
    if (leafHash.length !== 32) throw new CtWireError("collapsed tree", "leaf hash must be 32 bytes");
    this.nodes.push(leafHash.slice());
    this._size += 1;
    // Each trailing zero bit of the new size is a pair of equal-sized subtrees to merge.
    for (let s = this._size; s % 2 === 0; s /= 2) {
      const right = this.nodes.pop()!;
      const left = this.nodes.pop()!;
      this.nodes.push(hashChildren(left, right));
    }
  }

  appendAll(leafHashes: Iterable<Uint8Array>): void {
    for (const h of leafHashes) this.append(h);
  }

  /**
   * Appends a whole perfect subtree of 2^level leaves given by its root (a node the
   * log publishes, e.g. in a static-ct hash tile). The tree's size must be a
   * multiple of 2^level: the subtree is then exactly the next node of the tree.
   */
  appendSubtree(level: number, hash: Uint8Array): void {
    const span = 2 ** level;
    if (!Number.isInteger(level) || level < 0 || level > 52) throw new CtWireError("collapsed tree", `bad subtree level ${level}`);
    if (this._size % span !== 0) throw new CtWireError("collapsed tree", `a subtree of 2^${level} leaves cannot start at ${this._size}`);
    if (hash.length !== 32) throw new CtWireError("collapsed tree", "subtree root must be 32 bytes");
    this.nodes.push(hash.slice());
    this._size += span;
    for (let s = this._size / span; s % 2 === 0; s /= 2) {
      const right = this.nodes.pop()!;
      const left = this.nodes.pop()!;
      this.nodes.push(hashChildren(left, right));
    }
  }

  /** Merkle Tree Hash of everything appended: fold the subtree roots right to left. */
  root(): Uint8Array {
    if (this.nodes.length === 0) return fromHexConst(EMPTY_ROOT_HEX);
    let h = this.nodes[this.nodes.length - 1];
    for (let i = this.nodes.length - 2; i >= 0; i--) h = hashChildren(this.nodes[i], h);
    return h;
  }

  /** True when this tree's root equals `rootHash` and its size is `treeSize`. */
  matches(treeSize: number, rootHash: Uint8Array): boolean {
    return this._size === treeSize && bytesEqual(this.root(), rootHash);
  }
}

function fromHexConst(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * The aligned perfect subtrees that cover the leaves [from, to), left to right: at
 * each position the largest subtree that starts there and fits. Appending them in
 * order to a tree of size `from` (appendSubtree) gives the tree of size `to`.
 */
export function rangeDecomposition(from: number, to: number): { level: number; index: number }[] {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) throw new CtWireError("collapsed tree", `bad range ${from}..${to}`);
  const out: { level: number; index: number }[] = [];
  for (let p = from; p < to; ) {
    let level = 0;
    while (level < 52 && p % 2 ** (level + 1) === 0 && p + 2 ** (level + 1) <= to) level++;
    out.push({ level, index: p / 2 ** level });
    p += 2 ** level;
  }
  return out;
}

/**
 * RFC 9162 §2.1.4.2: verifies that the tree of size `first` with root `firstRoot` is
 * a prefix of the tree of size `second` with root `secondRoot`, given the
 * consistency proof between them (RFC 6962 get-sth-consistency). Both roots are
 * checked: a proof that verifies means the first tree's leaves are committed in
 * the second tree exactly.
 */
export function verifyConsistency(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  if (first < 0 || second < first) return false;
  if (first === second) return proof.length === 0 && bytesEqual(firstRoot, secondRoot);
  if (first === 0) return proof.length === 0; // the empty tree is a prefix of every tree
  let path = proof.slice();
  // first a power of two: its root is itself the first node of the proof.
  if (isPowerOfTwo(first)) path = [firstRoot, ...path];
  if (path.length === 0) return false;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = hashChildren(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && bytesEqual(fr, firstRoot) && bytesEqual(sr, secondRoot);
}

/** Merkle Tree Hash of a list of leaf hashes (reference helper for tests and fixtures). */
export function merkleRoot(leafHashes: Uint8Array[]): Uint8Array {
  const t = CollapsedMerkleTree.empty();
  t.appendAll(leafHashes);
  return t.root();
}
