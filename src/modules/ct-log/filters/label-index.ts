/**
 * Every organization's CT filters in one reversed-label trie, so a certificate
 * name is matched by walking its labels right to left (com -> example -> www)
 * instead of scanning all filters. Cost per name is O(labels + matches),
 * independent of the number of filters (except for wildcard certificate names,
 * which also look at the direct children of their base: "*.example.com" covers
 * every "x.example.com" filter).
 *
 * Semantics are those of semantics.ts (the reference the tests compare with).
 * add / remove take effect at once: a soft-deleted or disabled filter is
 * removed and stops matching on the next call.
 */
import { classifyCertificateName } from "../cert/names";
import { parseFilterPattern, type FilterPattern, type MatchType } from "./pattern";

/** A filter as stored (one row of the filters table). */
export interface FilterRow {
  filterId: number;
  organizationId: number | string;
  pattern: string;
  matchType: MatchType;
}

/** One filter that matched, with the certificate names that made it match. */
export interface FilterMatch {
  filter: FilterRow;
  /** Normalized certificate names that matched this filter, in input order. */
  names: string[];
}

interface Entry {
  row: FilterRow;
  node: TrieNode;
  list: ListName;
}

type ListName = "exact" | "wide" | "children" | "below";

/**
 * A node stands for one domain. Its lists hold the filters anchored there:
 *   exact    - match the domain itself
 *   wide     - match the domain and everything below it
 *   children - match names exactly one label below ("*.d" exact)
 *   below    - match everything strictly below ("*.d" wide, ".d")
 * Lists and the child map are allocated lazily: most nodes carry one list.
 */
class TrieNode {
  children: Map<string, TrieNode> | undefined;
  exact: Entry[] | undefined;
  wide: Entry[] | undefined;
  childrenOnly: Entry[] | undefined;
  below: Entry[] | undefined;
  constructor(
    readonly label: string,
    readonly parent: TrieNode | undefined,
  ) {}
}

export class InvalidFilterPatternError extends Error {
  override readonly name = "InvalidFilterPatternError";
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`invalid filter pattern '${pattern}': ${reason}`);
  }
}

export class FilterIndex {
  private readonly root = new TrieNode("", undefined);
  private readonly byId = new Map<number, Entry>();

  /** Builds an index from filter rows (invalid patterns throw InvalidFilterPatternError). */
  static from(rows: Iterable<FilterRow>): FilterIndex {
    const index = new FilterIndex();
    for (const r of rows) index.add(r);
    return index;
  }

  get size(): number {
    return this.byId.size;
  }

  has(filterId: number): boolean {
    return this.byId.has(filterId);
  }

  /** Adds a filter, replacing any earlier version with the same filterId. */
  add(row: FilterRow): void {
    const parsed = parseFilterPattern(row.pattern);
    if (!parsed.ok) throw new InvalidFilterPatternError(row.pattern, parsed.error);
    this.remove(row.filterId);
    const { node, list } = this.place(parsed.value, row.matchType);
    const entry: Entry = { row, node, list };
    const key = list === "children" ? "childrenOnly" : list;
    (node[key] ??= []).push(entry);
    this.byId.set(row.filterId, entry);
  }

  /** Removes a filter (soft delete, disable). Returns false when it was not indexed. */
  remove(filterId: number): boolean {
    const entry = this.byId.get(filterId);
    if (!entry) return false;
    this.byId.delete(filterId);
    const key = entry.list === "children" ? "childrenOnly" : entry.list;
    const arr = entry.node[key]!;
    arr.splice(arr.indexOf(entry), 1);
    if (arr.length === 0) entry.node[key] = undefined;
    this.prune(entry.node);
    return true;
  }

  /**
   * Matches certificate names (raw, as reported: they are normalized here and
   * unmatchable ones are skipped) against every indexed filter.
   */
  match(rawNames: readonly string[]): FilterMatch[] {
    // Hot path (every log entry): nothing is allocated for a name that reaches no filter.
    let found: Map<number, FilterMatch> | undefined;
    const hit = (entries: Entry[], name: string) => {
      found ??= new Map();
      for (const e of entries) {
        const m = found.get(e.row.filterId);
        if (!m) found.set(e.row.filterId, { filter: e.row, names: [name] });
        else if (m.names[m.names.length - 1] !== name && !m.names.includes(name)) m.names.push(name);
      }
    };
    const root = this.root.children;
    if (!root) return [];
    for (const raw of rawNames) {
      const name = classifyCertificateName(raw).name;
      if (name === null) continue;
      // Walk labels right to left without splitting the name.
      const wildcard = name.charCodeAt(0) === 0x2a;
      const stopAt = wildcard ? 2 : 0; // first character of the leftmost label walked
      let children: Map<string, TrieNode> | undefined = root;
      let end = name.length;
      while (children && end > stopAt) {
        const dot = name.lastIndexOf(".", end - 1);
        const start = dot < stopAt - 1 ? stopAt : dot + 1;
        const node = children.get(name.slice(start, end));
        if (!node) break;
        const leftmost = start === stopAt; // i === stop in label terms
        const secondLeft = wildcard ? leftmost : !leftmost && name.lastIndexOf(".", start - 2) < 0; // i === 1
        if (node.wide) hit(node.wide, name);
        if (wildcard) {
          // "*.P": every node on P's path is at or above the covered names' parent.
          if (node.below) hit(node.below, name);
          if (leftmost) {
            if (node.childrenOnly) hit(node.childrenOnly, name);
            if (node.children) {
              for (const child of node.children.values()) {
                if (child.exact) hit(child.exact, name);
                if (child.wide) hit(child.wide, name);
              }
            }
          }
        } else {
          if (!leftmost && node.below) hit(node.below, name);
          if (secondLeft && node.childrenOnly) hit(node.childrenOnly, name);
          if (leftmost && node.exact) hit(node.exact, name);
        }
        children = node.children;
        end = start - 1;
      }
    }
    return found ? [...found.values()] : [];
  }

  private place(p: FilterPattern, matchType: MatchType): { node: TrieNode; list: ListName } {
    let node = this.root;
    const labels = p.base.split(".");
    for (let i = labels.length - 1; i >= 0; i--) {
      const label = labels[i];
      let next = node.children?.get(label);
      if (!next) {
        next = new TrieNode(label, node);
        (node.children ??= new Map()).set(label, next);
      }
      node = next;
    }
    let list: ListName;
    if (p.shape === "domain") list = matchType === "exact" ? "exact" : "wide";
    else if (p.shape === "wildcard") list = matchType === "exact" ? "children" : "below";
    else list = "below";
    return { node, list };
  }

  /** Drops nodes that anchor nothing and have no children, so churn does not leak memory. */
  private prune(node: TrieNode): void {
    let n: TrieNode | undefined = node;
    while (n && n.parent && !n.exact && !n.wide && !n.childrenOnly && !n.below && (!n.children || n.children.size === 0)) {
      n.parent.children!.delete(n.label);
      if (n.parent.children!.size === 0) n.parent.children = undefined;
      n = n.parent;
    }
  }
}
