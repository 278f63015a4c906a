/**
 * Verified ingestion, as certspotter does it: every downloaded leaf hash goes into
 * a collapsed Merkle tree; when the tree reaches the size of a signed tree head,
 * its recomputed root must equal the signed root. Only then is the position
 * "verified". On a mismatch the state rewinds to the last verified position and
 * the caller is told, so it can discard what it derived from the unverified
 * entries and alert.
 *
 * The state is two collapsed trees (current and last verified), plain JSON for
 * Durable Object storage.
 */
import { CollapsedMerkleTree, type CollapsedTreeJson } from "../merkle";
import { bytesEqual, toBase64 } from "../wire/bytes";
import { LogDataError, type LogClient, type LogEntry, type SignedTreeHead } from "./types";

export interface IngestionStateJson {
  current: CollapsedTreeJson;
  verified: CollapsedTreeJson;
}

export type IngestStep =
  /** Entries appended; the tree has not yet reached the tree head's size. */
  | { kind: "progress"; entries: LogEntry[]; position: number }
  /** The tree reached the tree head's size and its root matched: position is now verified. */
  | { kind: "verified"; entries: LogEntry[]; position: number; treeHead: SignedTreeHead }
  /** Nothing to do: the tree head is not ahead of the position (or is older; it cannot be checked here). */
  | { kind: "up-to-date"; position: number }
  /**
   * The recomputed root differs from the signed one: the log (or the path to it)
   * served entries that are not those of the signed tree. The state was rewound
   * to `rewoundTo`; entries fetched since then must be treated as unverified.
   */
  | { kind: "mismatch"; treeSize: number; signedRoot: string; computedRoot: string; rewoundTo: number };

export class VerifiedIngestion {
  private constructor(
    private current: CollapsedMerkleTree,
    private verified: CollapsedMerkleTree,
  ) {}

  /** A log read from entry 0. */
  static fromStart(): VerifiedIngestion {
    return new VerifiedIngestion(CollapsedMerkleTree.empty(), CollapsedMerkleTree.empty());
  }

  /** Resumes from a known verified tree (e.g. subtree roots from static-ct hash tiles). */
  static fromVerifiedTree(tree: CollapsedMerkleTree): VerifiedIngestion {
    return new VerifiedIngestion(tree.clone(), tree.clone());
  }

  static fromJSON(json: unknown): VerifiedIngestion {
    const j = json as Partial<IngestionStateJson> | null;
    return new VerifiedIngestion(CollapsedMerkleTree.fromJSON(j?.current), CollapsedMerkleTree.fromJSON(j?.verified));
  }

  toJSON(): IngestionStateJson {
    return { current: this.current.toJSON(), verified: this.verified.toJSON() };
  }

  /** Next entry to fetch. */
  get position(): number {
    return this.current.size;
  }
  /** Entries below this index have been checked against a signed tree head. */
  get verifiedPosition(): number {
    return this.verified.size;
  }

  /** Goes back to the last verified position (after a mismatch or a crash mid-batch). */
  rewind(): void {
    this.current = this.verified.clone();
  }

  /**
   * Fetches up to `maxEntries` entries towards `treeHead` (already signature-
   * verified by the client) and checks the root when the head's size is reached.
   */
  async step(client: LogClient, treeHead: SignedTreeHead, maxEntries: number): Promise<IngestStep> {
    const target = treeHead.treeSize;
    if (target <= this.current.size) {
      if (target === this.current.size) return this.check(treeHead, []);
      return { kind: "up-to-date", position: this.current.size };
    }
    const start = this.current.size;
    const end = Math.min(target, start + Math.max(1, maxEntries)) - 1;
    const entries = await client.getEntries(start, end, { treeSize: target });
    for (const e of entries) {
      if (e.index !== this.current.size) throw new LogDataError(`entry ${e.index} arrived at position ${this.current.size}`);
      await this.current.append(e.leafHash);
    }
    if (this.current.size < target) return { kind: "progress", entries, position: this.current.size };
    return this.check(treeHead, entries);
  }

  private async check(treeHead: SignedTreeHead, entries: LogEntry[]): Promise<IngestStep> {
    const root = await this.current.root();
    if (bytesEqual(root, treeHead.rootHash)) {
      const fresh = this.verified.size < this.current.size;
      this.verified = this.current.clone();
      if (!fresh && entries.length === 0) return { kind: "up-to-date", position: this.current.size };
      return { kind: "verified", entries, position: this.current.size, treeHead };
    }
    this.rewind();
    return {
      kind: "mismatch",
      treeSize: treeHead.treeSize,
      signedRoot: toBase64(treeHead.rootHash),
      computedRoot: toBase64(root),
      rewoundTo: this.verified.size,
    };
  }
}
