/**
 * TyposquatIndex: every organization's protected domains (typosquat-enabled,
 * eligible filters), arranged so that the CT hot path finds the few protected
 * domains a certificate name may imitate without comparing it with all of them.
 * Only those candidates go through detectLookalike (detect.ts), which decides.
 *
 * Which labels of a name are looked at: the second and third from the right
 * (the label below a one- or two-label public suffix, "paypa1.com",
 * "paypa1.co.uk"), and the concatenations of neighbouring labels there
 * ("pay.pal.com"). Every key is a confusable skeleton (skeleton.ts), so
 * homoglyphs land in the same buckets as plain letters.
 *
 * Buckets (protected skeleton -> protected domains):
 *   exact      the skeleton itself: TLD changes, confusables, hyphen-stripped labels
 *   deletion   hashes of the skeleton and of each one-character deletion (labels >= 4):
 *              a candidate looks up the hash of itself and of each of its own one-character
 *              deletions; any pair at Damerau–Levenshtein distance 1 shares one (symmetric
 *              deletion, as in SymSpell), found with O(length) arithmetic and no allocation
 *   ends       hashes of the first and of the last 4 characters (labels >= 8), for distance 2:
 *              two edits leave one end intact unless they fall one in each half (a prefilter,
 *              not exhaustive: "bankofamerica" with one edit near each end is missed)
 *   affix      an Aho–Corasick automaton over the protected skeletons: a candidate
 *              containing one ("paypal-login") is found in one pass over its characters;
 *              and the protected domains themselves, for names that carry one as labels
 *              ("paypal.com.evil.net")
 *
 * Immutable: the cursor builds a new index when ct_filter_generation moves, so a
 * filter that is disabled, deleted or loses typosquat_enabled stops at the next batch.
 */
import { typosquatEligibility } from "./eligibility";
import { detectLookalike, prepareProtected, protectedDomainOf, type LookalikeMatch, type PreparedProtected } from "./detect";
import { boundedDamerauLevenshtein } from "./distance";
import { labelToUnicode } from "./punycode";
import { skeleton } from "./skeleton";

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
const POW: number[] = [1];
for (let i = 1; i <= 256; i++) POW.push(Math.imul(POW[i - 1], B) >>> 0);

/** Map keys are cut to 30 bits: small integers (Smis) hash and compare much faster than heap numbers. */
const SMI = 0x3fffffff;

function hashOf(s: string, from = 0, to = s.length): number {
  let h = 0;
  for (let i = from; i < to; i++) h = (Math.imul(h, B) + s.charCodeAt(i)) >>> 0;
  return h & SMI;
}

/** Calls f with the hash of s and of each one-character deletion of s (duplicates possible). */
function forDeletionHashes(s: string, prefix: Uint32Array, f: (h: number) => void): void {
  const n = s.length;
  if (n + 1 > prefix.length || n > 255) return;
  prefix[0] = 0;
  for (let i = 0; i < n; i++) prefix[i + 1] = (Math.imul(prefix[i], B) + s.charCodeAt(i)) >>> 0;
  const whole = prefix[n];
  f(whole & SMI);
  for (let i = 0; i < n; i++) {
    // H(s without i) = P[i]*B^(n-1-i) + (H(s) - P[i+1]*B^(n-1-i))
    const p = POW[n - 1 - i];
    const rest = (whole - Math.imul(prefix[i + 1], p)) >>> 0;
    f((Math.imul(prefix[i], p) + rest) & SMI);
  }
}

/** Which characters (mod 32) a string contains. */
function charMask(s: string): number {
  let m = 0;
  for (let i = 0; i < s.length; i++) m |= 1 << (s.charCodeAt(i) & 31);
  return m >>> 0;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}

function addAll(into: Set<number>, list: number[] | undefined): void {
  if (list) for (let i = 0; i < list.length; i++) into.add(list[i]);
}

function push<K>(m: Map<K, number[]>, k: K, v: number): void {
  const list = m.get(k);
  if (!list) m.set(k, [v]);
  else if (list[list.length - 1] !== v) list.push(v);
}

export class TyposquatIndex {
  private readonly groups: Group[] = [];
  /** Protected registrable domain -> its group ("paypal.com" in "paypal.com.evil.net"). */
  private readonly byRegistrable = new Map<string, number>();
  private readonly exact = new Map<string, number[]>();
  private readonly deletion = new Map<number, number[]>();
  private readonly prefix4 = new Map<number, number[]>();
  private readonly suffix4 = new Map<number, number[]>();
  /** charMask of each group's skeleton (2g) and plain label (2g+1). */
  private masks: Uint32Array = new Uint32Array(0);
  // Aho–Corasick over the protected skeletons.
  private readonly next: Map<number, number>[] = [new Map()];
  private fail: Int32Array = new Int32Array(1);
  private readonly out: number[][] = [[]];
  private readonly scratch = new Uint32Array(257);
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
      }
      index.groups[g].rows.push(row);
      index.rowCount++;
    }
    index.masks = new Uint32Array(2 * index.groups.length);
    index.groups.forEach((g, i) => {
      index.masks[2 * i] = charMask(g.protected.skeleton);
      index.masks[2 * i + 1] = charMask(g.protected.unicode);
      index.addGroup(g.protected.skeleton, i);
      // The plain label too: one plain edit can be two on skeletons ("paypam": "payparn" vs "paypal").
      if (g.protected.unicode !== g.protected.skeleton) index.addGroup(g.protected.unicode, i);
    });
    index.buildFailureLinks();
    return index;
  }

  /** Filters in the index. */
  get size(): number {
    return this.rowCount;
  }

  private addGroup(sk: string, g: number): void {
    push(this.exact, sk, g);
    if (sk.length >= 4) forDeletionHashes(sk, this.scratch, (h) => push(this.deletion, h, g));
    if (sk.length >= 8) {
      push(this.prefix4, hashOf(sk, 0, 4), g);
      push(this.suffix4, hashOf(sk, sk.length - 4), g);
    }
    let node = 0;
    for (let i = 0; i < sk.length; i++) {
      const c = sk.charCodeAt(i);
      let nx = this.next[node].get(c);
      if (nx === undefined) {
        nx = this.next.push(new Map()) - 1;
        this.out.push([]);
        this.next[node].set(c, nx);
      }
      node = nx;
    }
    this.out[node].push(g);
  }

  private buildFailureLinks(): void {
    this.fail = new Int32Array(this.next.length);
    const queue: number[] = [];
    for (const child of this.next[0].values()) queue.push(child);
    for (let q = 0; q < queue.length; q++) {
      const node = queue[q];
      for (const [c, child] of this.next[node]) {
        let f = this.fail[node];
        while (f !== 0 && !this.next[f].has(c)) f = this.fail[f];
        const target = this.next[f].get(c);
        this.fail[child] = target !== undefined && target !== child ? target : 0;
        if (this.out[this.fail[child]].length) this.out[child] = [...this.out[child], ...this.out[this.fail[child]]];
        queue.push(child);
      }
    }
  }

  /** Adds to `into` every group a skeleton label may imitate. (No closures: this runs for every name.) */
  private candidates(sk: string, into: Set<number>): void {
    addAll(into, this.exact.get(sk));
    if (sk.includes("-")) addAll(into, this.exact.get(sk.replaceAll("-", "")));
    const n = sk.length;
    if (n >= 3 && n <= 255) {
      const prefix = this.scratch;
      prefix[0] = 0;
      for (let i = 0; i < n; i++) prefix[i + 1] = (Math.imul(prefix[i], B) + sk.charCodeAt(i)) >>> 0;
      const whole = prefix[n];
      addAll(into, this.deletion.get(whole & SMI));
      for (let i = 0; i < n; i++) {
        const p = POW[n - 1 - i];
        addAll(into, this.deletion.get((Math.imul(prefix[i], p) + ((whole - Math.imul(prefix[i + 1], p)) >>> 0)) & SMI));
      }
    }
    if (n >= 6) {
      this.nearEnds(sk, this.prefix4.get(hashOf(sk, 0, 4)), into);
      this.nearEnds(sk, this.suffix4.get(hashOf(sk, n - 4)), into);
    }
    let node = 0;
    for (let i = 0; i < sk.length; i++) {
      const c = sk.charCodeAt(i);
      let nx = this.next[node].get(c);
      while (nx === undefined && node !== 0) {
        node = this.fail[node];
        nx = this.next[node].get(c);
      }
      node = nx ?? 0;
      addAll(into, this.out[node]);
    }
  }

  /**
   * Groups sharing the first or last 4 characters: many brands start alike, so a character-set
   * filter (each edit flips at most 2 bits of it: distance 2 flips at most 4), then the distance,
   * before the full detector.
   */
  private nearEnds(sk: string, list: number[] | undefined, into: Set<number>): void {
    if (!list) return;
    const mask = charMask(sk);
    for (const g of list) {
      if (into.has(g)) continue;
      const p = this.groups[g].protected;
      if (
        (popcount(mask ^ this.masks[2 * g]) <= 4 && boundedDamerauLevenshtein(sk, p.skeleton, 2) <= 2) ||
        (popcount(mask ^ this.masks[2 * g + 1]) <= 4 && boundedDamerauLevenshtein(sk, p.unicode, 2) <= 2)
      ) {
        into.add(g);
      }
    }
  }

  /** Lookalikes of protected domains among an entry's certificate names (one hit per filter and candidate domain). */
  match(names: readonly string[]): TyposquatHit[] {
    if (this.groups.length === 0) return [];
    let hits: TyposquatHit[] | null = null;
    for (const raw of names) {
      const groups = this.lookup(raw);
      if (groups === null) continue;
      for (const g of groups) {
        const group = this.groups[g];
        const m = detectLookalike(group.protected, raw);
        if (!m) continue;
        hits ??= [];
        for (const row of group.rows) {
          if (hits.some((h) => h.filterId === row.filterId && h.match.candidate_domain === m.candidate_domain)) continue;
          hits.push({ filterId: row.filterId, organizationId: row.organizationId, pattern: group.protected.registrable, name: raw, match: m });
        }
      }
    }
    return hits ?? [];
  }

  private lookupLabel(label: string, found: Set<number> | null, exactOnly: boolean): Set<number> | null {
    let plain = label;
    if (label.includes("xn--")) {
      try {
        plain = label.split(/(?=xn--)/).map(labelToUnicode).join("");
      } catch {
        return found;
      }
    }
    const sk = skeleton(plain);
    found ??= new Set();
    if (exactOnly) {
      addAll(found, this.exact.get(sk));
      return found;
    }
    this.candidates(sk, found);
    if (sk !== plain) this.candidates(plain, found);
    return found;
  }

  /**
   * Groups whose whole registrable domain appears as labels of a longer name
   * ("paypal.com.evil.net"): every run of 2-4 labels that ends before the name's last
   * two labels is looked up as a whole domain (at most a dozen Map lookups per name).
   */
  private labelRuns(name: string, found: Set<number> | null): Set<number> | null {
    const dots: number[] = [];
    for (let i = name.indexOf("."); i >= 0; i = name.indexOf(".", i + 1)) dots.push(i);
    // At least 4 labels: a protected domain (2+) below a registrable domain (2+).
    if (dots.length < 3) return found;
    const starts = [0, ...dots.map((d) => d + 1)];
    for (let s = 0; s < starts.length; s++) {
      for (let k = 2; k <= 4; k++) {
        const endDot = s + k - 1; // the run ends before dots[endDot]
        if (endDot > dots.length - 2) break; // keep the name's last two labels out of the run
        const g = this.byRegistrable.get(name.slice(starts[s], dots[endDot]));
        if (g !== undefined) (found ??= new Set()).add(g);
      }
    }
    return found;
  }

  /** The groups a name's labels may imitate, or null. */
  private lookup(raw: string): Set<number> | null {
    let name = raw.toLowerCase();
    if (name.endsWith(".")) name = name.slice(0, -1);
    if (name.startsWith("*.")) name = name.slice(2);
    const d1 = name.lastIndexOf(".");
    if (d1 <= 0) return null;
    const d2 = name.lastIndexOf(".", d1 - 1);
    const d3 = d2 > 0 ? name.lastIndexOf(".", d2 - 1) : -1;
    let found: Set<number> | null = d3 > 0 ? this.labelRuns(name, null) : null;
    found = this.lookupLabel(name.slice(d2 + 1, d1), found, false);
    if (d2 > 0) {
      const last = name.slice(d2 + 1, d1);
      const second = name.slice(d3 + 1, d2);
      found = this.lookupLabel(second, found, false);
      // Labels split by dots ("pay.pal.com"): only the exact skeleton is looked up.
      found = this.lookupLabel(second + last, found, true);
      if (d3 > 0) found = this.lookupLabel(name.slice(name.lastIndexOf(".", d3 - 1) + 1, d3) + second, found, true);
    }
    return found && found.size ? found : null;
  }
}
