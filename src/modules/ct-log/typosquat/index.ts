/**
 * TyposquatIndex: every organization's protected domains (typosquat-enabled,
 * eligible filters), arranged so that the CT hot path finds the few protected
 * domains a certificate name may imitate without comparing it with all of them.
 * Only those candidates go through the detector (detect.ts judgeCandidate), which
 * decides. The index is EXHAUSTIVE for the detector's policy: every name the detector
 * flags for a protected domain makes the index propose that domain (the property test
 * in test/ct-log/typosquat-parity.test.ts draws lookalikes under the policy and checks
 * it). It may propose more; the detector rejects those.
 *
 * A name is read as the detector reads it (detect.ts candidateName: its public suffix
 * from the Public Suffix List, the label below it), once for every protected domain.
 * Looked up: that label ("paypa1" in "paypa1.co.uk" and in "paypa1.s3.amazonaws.com"),
 * in its plain Unicode form and as its confusable skeleton (skeleton.ts; the index holds
 * both forms of every protected label, so homoglyphs land where plain letters do); the
 * labels below the suffix joined ("pay.pal.com"); runs of labels below the registrable
 * domain as a whole domain ("paypal.com.evil.net").
 *
 * Buckets (protected label forms -> protected domains):
 *   exact      the form itself: TLD changes, confusables, hyphen-stripped labels, dot-split labels
 *   near       hashes of the form and of each of its one-character deletions (labels with an edit
 *              policy, >= 3 characters): a candidate looks up the hash of itself and of each of its
 *              own one-character deletions; two strings at optimal-string-alignment distance 1 share
 *              one (symmetric deletion, as in SymSpell: a substitution or a transposition deletes the
 *              same position on both sides, an insertion or omission one position on one side)
 *   near2      the same with up to two deletions on each side, for labels of 8 or more characters
 *              (distance 2): exhaustive for the same reason, two deletions per side at most
 *   affix      an Aho–Corasick automaton over the forms: a candidate containing one ("paypal-login",
 *              "pay-pal-login" with its hyphens removed) is found in one pass over its characters
 *   whole      the protected registrable domains, for names that carry one as labels
 *
 * The deletion buckets are open-addressing hash tables of 30-bit polynomial hashes
 * (computed for every deletion in O(1) from prefix hashes, no string is built); a hash
 * collision only proposes one more domain to the detector. Characters outside a-z 0-9 -
 * share one symbol in the automaton, which again can only propose more.
 *
 * Immutable: the cursor builds a new index when ct_filter_generation moves, so a
 * filter that is disabled, deleted or loses typosquat_enabled stops at the next batch.
 */
import { typosquatEligibility } from "./eligibility";
import {
  candidateName,
  corroborate,
  judgeCandidate,
  maxEditDistance,
  namesBrandKeyword,
  normalizeCandidateName,
  prepareProtected,
  protectedDomainOf,
  type CandidateName,
  type LookalikeMatch,
  type PreparedProtected,
} from "./detect";
import { labelToUnicode } from "./punycode";
import { isAscii, skeleton } from "./skeleton";

/** A typosquat-enabled filter as stored. */
export interface TyposquatFilterRow {
  filterId: number;
  organizationId: number;
  pattern: string;
}

/** One (filter, candidate domain) lookalike found in an entry's names. */
export interface TyposquatHit {
  filterId: number;
  organizationId: number;
  /** The protected registrable domain (the filter's pattern). */
  pattern: string;
  /** The certificate name as observed. */
  name: string;
  match: LookalikeMatch;
}

interface Group {
  protected: PreparedProtected;
  rows: TyposquatFilterRow[];
}

const B = 0x01000193;
/**
 * Longest label form hashed. Names are at most 253 characters (the detector judges no
 * longer one); decoded and skeletonized, a label stays far below this.
 */
const MAX_LABEL = 2048;
const POW = new Uint32Array(MAX_LABEL + 2);
POW[0] = 1;
for (let i = 1; i < POW.length; i++) POW[i] = Math.imul(POW[i - 1], B) >>> 0;

/** Keys are 30 bits plus one, so 0 marks an empty slot. */
const KEY_BITS = 0x3fffffff;

/**
 * A multimap from 30-bit hashes to group numbers: open addressing with linear probing,
 * a key may repeat (one slot per group). At most a quarter full, so a miss usually ends
 * at the first slot.
 */
class HashBuckets {
  /** One bit per hash value modulo its size: most lookups end here, in a table that stays in cache. */
  private readonly bits: Int32Array;
  private readonly bitMask: number;
  private readonly keys: Uint32Array;
  private readonly values: Int32Array;
  private readonly mask: number;
  /** Shortest and longest form indexed (a candidate further off in length cannot be near). */
  readonly minLength: number;
  readonly maxLength: number;

  constructor(entries: Map<number, Set<number>>, minLength: number, maxLength: number) {
    let count = 0;
    for (const groups of entries.values()) count += groups.size;
    let capacity = 16;
    while (capacity < count * 4) capacity *= 2;
    this.keys = new Uint32Array(capacity);
    this.values = new Int32Array(capacity);
    this.mask = capacity - 1;
    let bitCount = 1 << 12;
    while (bitCount < count * 16 && bitCount < 1 << 22) bitCount *= 2;
    this.bits = new Int32Array(bitCount >>> 5);
    this.bitMask = bitCount - 1;
    this.minLength = minLength;
    this.maxLength = maxLength;
    for (const [h, groups] of entries) {
      for (const g of groups) {
        let i = slotOf(h) & this.mask;
        while (this.keys[i] !== 0) i = (i + 1) & this.mask;
        this.keys[i] = h + 1;
        this.values[i] = g;
        const b = h & this.bitMask;
        this.bits[b >>> 5] |= 1 << (b & 31);
      }
    }
  }

  /** Marks every group stored under hash h. */
  collect(h: number, into: Found): void {
    const b = h & this.bitMask;
    if ((this.bits[b >>> 5] & (1 << (b & 31))) === 0) return;
    const key = h + 1;
    for (let i = slotOf(h) & this.mask; this.keys[i] !== 0; i = (i + 1) & this.mask) {
      if (this.keys[i] === key) into.add(this.values[i]);
    }
  }
}

/** Spreads a polynomial hash's bits over the slot index. */
function slotOf(h: number): number {
  return Math.imul(h, 0x9e3779b1) >>> 7;
}

/** The groups proposed for one name: a stamp per group instead of a Set per name. */
class Found {
  private readonly stamp: Uint32Array;
  private current = 1;
  readonly list: number[] = [];
  constructor(size: number) {
    this.stamp = new Uint32Array(size);
  }
  reset(): void {
    this.list.length = 0;
    this.current++;
    if (this.current === 0xffffffff) {
      this.stamp.fill(0);
      this.current = 1;
    }
  }
  add(g: number): void {
    if (this.stamp[g] !== this.current) {
      this.stamp[g] = this.current;
      this.list.push(g);
    }
  }
  addAll(groups: readonly number[] | undefined): void {
    if (groups) for (let i = 0; i < groups.length; i++) this.add(groups[i]);
  }
}

/** Prefix hashes of s into `prefix` (prefix[i] = hash of s[0..i)). */
function prefixHashes(s: string, prefix: Uint32Array): void {
  prefix[0] = 0;
  for (let i = 0; i < s.length; i++) prefix[i + 1] = (Math.imul(prefix[i], B) + s.charCodeAt(i)) >>> 0;
}

/** Hash of s[a..b) from its prefix hashes. */
function rangeHash(prefix: Uint32Array, a: number, b: number): number {
  return (prefix[b] - Math.imul(prefix[a], POW[b - a])) >>> 0;
}

/**
 * Calls f with the hash of s with up to `deletions` (0, 1 or 2) characters deleted, for every
 * choice of positions (a string repeats when the deleted characters repeat). prefix: the
 * prefix hashes of s.
 */
function forDeletions(n: number, prefix: Uint32Array, deletions: number, f: (h: number) => void): void {
  f(prefix[n] & KEY_BITS);
  if (deletions < 1) return;
  for (let i = 0; i < n; i++) {
    // s without i = s[0..i) * B^(n-1-i) + s[i+1..n)
    const left = Math.imul(prefix[i], POW[n - 1 - i]);
    f((left + rangeHash(prefix, i + 1, n)) & KEY_BITS);
    if (deletions < 2 || i === n - 1) continue;
    for (let j = i + 1; j < n; j++) {
      // s without i and j = s[0..i) * B^(n-2-i) + s[i+1..j) * B^(n-1-j) + s[j+1..n)
      const h = Math.imul(prefix[i], POW[n - 2 - i]) + Math.imul(rangeHash(prefix, i + 1, j), POW[n - 1 - j]) + rangeHash(prefix, j + 1, n);
      f(h & KEY_BITS);
    }
  }
}

/** The automaton's alphabet: a-z, 0-9, "-" and one symbol for every other character. */
const SYMBOLS = 38;
const OTHER = 37;
const SYMBOL = new Int8Array(128).fill(OTHER);
for (let c = 0; c < 26; c++) SYMBOL[97 + c] = c;
for (let c = 0; c < 10; c++) SYMBOL[48 + c] = 26 + c;
SYMBOL[45] = 36;
const symbolOf = (code: number) => (code < 128 ? SYMBOL[code] : OTHER);

/** Aho–Corasick over the protected forms, as a complete transition table (goto with failures resolved). */
class AffixAutomaton {
  private readonly delta: Int32Array;
  private readonly out: (number[] | undefined)[];

  constructor(patterns: readonly { form: string; group: number }[]) {
    const trie: Int32Array[] = [new Int32Array(SYMBOLS).fill(-1)];
    const out: number[][] = [[]];
    for (const { form, group } of patterns) {
      let node = 0;
      for (let i = 0; i < form.length; i++) {
        const s = symbolOf(form.charCodeAt(i));
        if (trie[node][s] < 0) {
          trie[node][s] = trie.length;
          trie.push(new Int32Array(SYMBOLS).fill(-1));
          out.push([]);
        }
        node = trie[node][s];
      }
      if (!out[node].includes(group)) out[node].push(group);
    }
    const delta = new Int32Array(trie.length * SYMBOLS);
    const fail = new Int32Array(trie.length);
    const queue: number[] = [];
    for (let s = 0; s < SYMBOLS; s++) {
      const child = trie[0][s];
      delta[s] = child < 0 ? 0 : child;
      if (child > 0) queue.push(child);
    }
    for (let q = 0; q < queue.length; q++) {
      const node = queue[q];
      const f = fail[node];
      if (out[f].length) out[node] = [...new Set([...out[node], ...out[f]])];
      for (let s = 0; s < SYMBOLS; s++) {
        const child = trie[node][s];
        if (child < 0) delta[node * SYMBOLS + s] = delta[f * SYMBOLS + s];
        else {
          delta[node * SYMBOLS + s] = child;
          fail[child] = delta[f * SYMBOLS + s];
          queue.push(child);
        }
      }
    }
    this.delta = delta;
    this.out = out.map((o) => (o.length ? o : undefined));
  }

  /** Marks every group whose form occurs in s (characters equal to `skip` are left out: hyphens). */
  scan(s: string, into: Found, skip = -1): void {
    let node = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === skip) continue;
      node = this.delta[node * SYMBOLS + symbolOf(c)];
      const o = this.out[node];
      if (o) into.addAll(o);
    }
  }
}

const HYPHEN = 45;

export class TyposquatIndex {
  private readonly groups: Group[] = [];
  /** Protected registrable domain -> its group ("paypal.com" in "paypal.com.evil.net"). */
  private readonly byRegistrable = new Map<string, number>();
  private readonly exact = new Map<string, number[]>();
  private near!: HashBuckets;
  private near2!: HashBuckets;
  private affix!: AffixAutomaton;
  /** Longest protected form (a joined run longer than this cannot be one exactly). */
  private maxForm = 0;
  /** Most labels of a protected registrable domain. */
  private maxWholeLabels = 2;
  private found!: Found;
  private readonly prefix = new Uint32Array(MAX_LABEL + 1);
  private rowCount = 0;

  /** Builds the index; rows whose pattern is not eligible (typosquatEligibility) are left out. */
  static from(rows: Iterable<TyposquatFilterRow>): TyposquatIndex {
    const index = new TyposquatIndex();
    for (const row of rows) {
      if (!typosquatEligibility(row.pattern).eligible) continue;
      const p = protectedDomainOf(row.pattern.trim().toLowerCase());
      if (!p) continue;
      let g = index.byRegistrable.get(p.registrable);
      if (g === undefined) {
        g = index.groups.push({ protected: prepareProtected(p), rows: [] }) - 1;
        index.byRegistrable.set(p.registrable, g);
        index.maxWholeLabels = Math.max(index.maxWholeLabels, p.registrable.split(".").length);
      }
      index.groups[g].rows.push(row);
      index.rowCount++;
    }
    index.build();
    return index;
  }

  /** Filters in the index. */
  get size(): number {
    return this.rowCount;
  }

  private build(): void {
    const near = new Map<number, Set<number>>();
    const near2 = new Map<number, Set<number>>();
    const lengths = { near: [Infinity, 0], near2: [Infinity, 0] };
    const patterns: { form: string; group: number }[] = [];
    const add = (m: Map<number, Set<number>>, h: number, g: number) => {
      const set = m.get(h);
      if (set) set.add(g);
      else m.set(h, new Set([g]));
    };
    this.groups.forEach((group, g) => {
      const p = group.protected;
      const max = maxEditDistance(p.length);
      // The plain label too: one plain edit can be two on skeletons ("paypam": "payparn" vs "paypal").
      for (const form of p.unicode === p.skeleton ? [p.skeleton] : [p.skeleton, p.unicode]) {
        const list = this.exact.get(form);
        if (!list) this.exact.set(form, [g]);
        else if (!list.includes(g)) list.push(g);
        this.maxForm = Math.max(this.maxForm, form.length);
        patterns.push({ form, group: g });
        if (max === 0 || form.length > MAX_LABEL) continue;
        const bucket = max >= 2 ? near2 : near;
        const range = max >= 2 ? lengths.near2 : lengths.near;
        range[0] = Math.min(range[0], form.length);
        range[1] = Math.max(range[1], form.length);
        prefixHashes(form, this.prefix);
        forDeletions(form.length, this.prefix, max, (h) => add(bucket, h, g));
      }
    });
    this.near = new HashBuckets(near, lengths.near[0], lengths.near[1]);
    this.near2 = new HashBuckets(near2, lengths.near2[0], lengths.near2[1]);
    this.affix = new AffixAutomaton(patterns);
    this.found = new Found(this.groups.length);
  }

  /** Lookalikes of protected domains among an entry's certificate names (one hit per filter and candidate domain). */
  match(names: readonly string[]): TyposquatHit[] {
    if (this.groups.length === 0) return [];
    let hits: TyposquatHit[] | null = null;
    for (const raw of names) {
      // The detector judges a name only through this reading of it: no reading, no lookalike.
      const candidate = candidateName(raw);
      if (!candidate) continue;
      const found = this.lookup(candidate);
      for (let i = 0; i < found.length; i++) {
        const group = this.groups[found[i]];
        let m = judgeCandidate(group.protected, candidate);
        if (!m) continue;
        if (m.confidence === "low" && namesBrandKeyword(group.protected, names, candidate.label)) m = corroborate(m, group.protected.length, ["brand_keyword"]);
        hits ??= [];
        for (const row of group.rows) {
          if (hits.some((h) => h.filterId === row.filterId && h.match.candidate_domain === m.candidate_domain)) continue;
          hits.push({ filterId: row.filterId, organizationId: row.organizationId, pattern: group.protected.registrable, name: raw, match: m });
        }
      }
    }
    return hits ?? [];
  }

  /**
   * The protected domains a name may imitate: a superset of those the detector flags, built
   * from what the detector looks at (candidateName): the label below the public suffix in
   * both its forms, the labels below the suffix joined, and runs of labels as a whole domain.
   */
  private lookup(c: CandidateName): readonly number[] {
    const found = this.found;
    found.reset();
    this.candidates(c.skeleton);
    if (c.label !== c.skeleton) this.candidates(c.label);
    const labels = c.name.split(".");
    const below = labels.length - (c.suffix.split(".").length);
    // The labels below the suffix joined ("pay.pal.com"): only an exact skeleton can match. The
    // skeleton of a run of ASCII labels is the run of their skeletons (each character maps on its
    // own), so a run stops growing once it is longer than every protected form; a run with an
    // internationalized label is skeletonized whole, as the detector does.
    if (below >= 2) {
      let joined = "";
      let joinedSkeleton = "";
      let ascii = true;
      for (let start = below - 1; start >= 0; start--) {
        const label = labels[start];
        let part: string;
        try {
          part = labelToUnicode(label);
        } catch {
          break;
        }
        ascii &&= part === label && isAscii(part);
        joined = part + joined;
        joinedSkeleton = (ascii ? skeleton(part) : "") + joinedSkeleton;
        if (start === below - 1) continue;
        const sk = ascii ? joinedSkeleton : skeleton(joined);
        if (sk.length > this.maxForm) break;
        found.addAll(this.exact.get(sk));
      }
    }
    // Runs of labels as a whole protected domain ("paypal.com.evil.net"): below the name's
    // registrable domain.
    const registrableStart = below - 1;
    for (let start = 0; start + 2 <= registrableStart; start++) {
      let run = labels[start];
      for (let k = 2; k <= this.maxWholeLabels && start + k <= registrableStart; k++) {
        run += "." + labels[start + k - 1];
        const g = this.byRegistrable.get(run);
        if (g !== undefined) found.add(g);
      }
    }
    return found.list;
  }

  /** Marks every group a label form (plain or skeleton) may imitate. */
  private candidates(form: string): void {
    const found = this.found;
    found.addAll(this.exact.get(form));
    this.affix.scan(form, found);
    if (form.indexOf("-") >= 0) {
      found.addAll(this.exact.get(form.replaceAll("-", "")));
      this.affix.scan(form, found, HYPHEN);
    }
    const m = form.length;
    if (m > MAX_LABEL) return;
    const near = this.near;
    const near2 = this.near2;
    const inNear = m + 1 >= near.minLength && m - 1 <= near.maxLength;
    const inNear2 = m + 2 >= near2.minLength && m - 2 <= near2.maxLength;
    if (!inNear && !inNear2) return;
    const prefix = this.prefix;
    prefixHashes(form, prefix);
    // Inlined forDeletions (no closure per label: this runs for every label of every name).
    const whole = prefix[m] & KEY_BITS;
    if (inNear) near.collect(whole, found);
    if (inNear2) near2.collect(whole, found);
    for (let i = 0; i < m; i++) {
      const left = Math.imul(prefix[i], POW[m - 1 - i]);
      const h1 = (left + rangeHash(prefix, i + 1, m)) & KEY_BITS;
      if (inNear) near.collect(h1, found);
      if (!inNear2) continue;
      near2.collect(h1, found);
      if (i === m - 1) break;
      const leftShift = Math.imul(prefix[i], POW[m - 2 - i]);
      for (let j = i + 1; j < m; j++) {
        const h2 = (leftShift + Math.imul(rangeHash(prefix, i + 1, j), POW[m - 1 - j]) + rangeHash(prefix, j + 1, m)) & KEY_BITS;
        near2.collect(h2, found);
      }
    }
  }
}

export type { CandidateName };
