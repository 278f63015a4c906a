/**
 * The permutations the registered-permutation discovery asks DNS about: for one
 * protected domain, lookalike registrable domains in the families dnstwist generates
 * (omission, repetition, transposition, keyboard replacement and insertion, bit flips,
 * vowel swaps, homoglyphs, a whole label in Cyrillic, hyphens, additions, keyword
 * affixes, other TLDs), kept only when the detector flags them (detect.ts): discovery
 * looks for exactly what the CT path would report, no more. Ordered by family (the
 * most often registered first), then as generated; bounded per domain.
 *
 * Homoglyphs come from the same Unicode data as the skeletons (a character replaced by
 * one whose skeleton is that character, Identifier_Status=Allowed so registries accept
 * it); keyboard neighbours from the rows of the QWERTY, QWERTZ and AZERTY layouts.
 */
import { detectLookalike, type PreparedProtected } from "../typosquat/detect";
import { AFFIX_KEYWORDS } from "../typosquat/keywords";
import { labelToAscii, labelToUnicode } from "../typosquat/punycode";
import { skeleton } from "../typosquat/skeleton";
import { CLOSURE, CONFUSABLES } from "../typosquat/unicode-tables.generated";
import { isAllowedInIdentifier, scriptExtensions, SCRIPT } from "../typosquat/unicode-tables";

export const PERMUTATION_FAMILIES = [
  "tld-swap",
  "homoglyph",
  "omission",
  "transposition",
  "repetition",
  "replacement",
  "insertion",
  "hyphenation",
  "dictionary",
  "addition",
  "bitsquatting",
  "vowel-swap",
  "cyrillic",
] as const;
export type PermutationFamily = (typeof PERMUTATION_FAMILIES)[number];

export interface Permutation {
  /** Registrable domain, A-labels. */
  domain: string;
  family: PermutationFamily;
}

/** At most this many permutations per protected domain (after the detector's filter). */
export const MAX_PERMUTATIONS_PER_DOMAIN = 5_000;

/** TLDs lookalikes are most often registered under (plus the protected domain's own). */
export const SWAP_TLDS = [
  "com", "net", "org", "info", "biz", "co", "io", "me", "us", "uk", "co.uk", "de", "fr", "nl", "eu", "ru", "cn", "in", "br", "com.br",
  "au", "com.au", "ca", "jp", "it", "es", "ch", "se", "pl", "cz", "online", "site", "shop", "store", "top", "xyz", "app", "dev", "club",
  "live", "tech", "cloud", "support", "services", "link", "click", "email", "help", "vip", "icu",
];

const LAYOUTS = [
  ["1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm"],
  ["1234567890", "qwertzuiop", "asdfghjkl", "yxcvbnm"],
  ["1234567890", "azertyuiop", "qsdfghjklm", "wxcvbn"],
];
/** Horizontal offset of each row, in keys (the stagger of a standard keyboard). */
const ROW_OFFSET = [0, 0.5, 0.75, 1.25];

/** Keyboard neighbours of each key, over the three layouts. */
const NEIGHBOURS: ReadonlyMap<string, string> = (() => {
  const out = new Map<string, Set<string>>();
  for (const rows of LAYOUTS) {
    rows.forEach((row, r) => {
      [...row].forEach((key, i) => {
        const set = out.get(key) ?? new Set<string>();
        out.set(key, set);
        const x = i + ROW_OFFSET[r];
        for (const rr of [r - 1, r, r + 1]) {
          if (rr < 0 || rr >= rows.length) continue;
          [...rows[rr]].forEach((other, j) => {
            const dx = Math.abs(j + ROW_OFFSET[rr] - x);
            if (other !== key && (rr === r ? dx === 1 : dx < 1)) set.add(other);
          });
        }
      });
    });
  }
  return new Map([...out].map(([k, v]) => [k, [...v].sort().join("")]));
})();

const LDH = "abcdefghijklmnopqrstuvwxyz0123456789";
const VOWELS = "aeiou";
const CYRILLIC = SCRIPT.indexOf("Cyrillic");
/** Homoglyphs used per character: the data holds dozens for some letters; registries accept few. */
const HOMOGLYPHS_PER_CHARACTER = 4;

/**
 * For each skeleton of an ASCII letter or digit ("a", "rn" for "m"): lowercase characters
 * allowed in identifiers whose skeleton it is.
 */
const HOMOGLYPHS: ReadonlyMap<string, string[]> = (() => {
  const out = new Map<string, string[]>();
  for (const table of [CONFUSABLES, CLOSURE]) {
    for (const item of table.split(";")) {
      const cp = parseInt(item.split(":")[0], 16);
      const ch = String.fromCodePoint(cp);
      if (ch.toLowerCase() !== ch || !isAllowedInIdentifier(cp)) continue;
      const sk = skeleton(ch);
      if ([...sk].every((c) => LDH.includes(c)) && sk.length <= 2) {
        const list = out.get(sk) ?? [];
        if (!list.includes(ch)) list.push(ch);
        out.set(sk, list);
      }
    }
  }
  for (const [k, list] of out) out.set(k, list.sort((a, b) => a.codePointAt(0)! - b.codePointAt(0)!));
  // ASCII lookalikes of ASCII: "0" for "o", "1" for "l", "m" for "rn" (skeletons of ASCII characters).
  for (let c = 0; c < 128; c++) {
    const ch = String.fromCharCode(c);
    if (!LDH.includes(ch)) continue;
    const sk = skeleton(ch);
    if (sk !== ch) out.set(sk, [ch, ...(out.get(sk) ?? []).filter((x) => x !== ch)]);
  }
  return out;
})();

/** The lookalikes of one character: homoglyphs with its skeleton, and the skeleton itself when it is other ASCII ("rn" for "m"). */
function lookalikesOf(ch: string): string[] {
  const key = skeleton(ch);
  const out = (HOMOGLYPHS.get(key) ?? []).filter((h) => h !== ch);
  if (key !== ch && [...key].every((c) => LDH.includes(c))) out.unshift(key);
  return out;
}

/** The Cyrillic character that looks like each Latin letter, where the data has one. */
const CYRILLIC_OF: ReadonlyMap<string, string> = new Map(
  [...LDH].flatMap((latin) => {
    const c = lookalikesOf(latin).find((ch) => [...ch].length === 1 && scriptExtensions(ch.codePointAt(0)!).includes(CYRILLIC));
    return c ? [[latin, c] as const] : [];
  }),
);

/** Candidate labels of each family (Unicode), before the detector's filter. */
function* labelsOf(label: string): Generator<[PermutationFamily, string]> {
  const cs = [...label];
  const n = cs.length;
  const at = (i: number, replacement: string, skip = 1) => cs.slice(0, i).join("") + replacement + cs.slice(i + skip).join("");
  for (let i = 0; i < n; i++) {
    for (const h of lookalikesOf(cs[i]).slice(0, HOMOGLYPHS_PER_CHARACTER)) yield ["homoglyph", at(i, h)];
  }
  // "m" for "rn" and the like: a pair of the label that is the skeleton of one character.
  for (const [pair, lookalikes] of HOMOGLYPHS) {
    if (pair.length < 2) continue;
    for (let i = label.indexOf(pair); i >= 0; i = label.indexOf(pair, i + 1)) {
      for (const h of lookalikes.slice(0, HOMOGLYPHS_PER_CHARACTER)) yield ["homoglyph", label.slice(0, i) + h + label.slice(i + pair.length)];
    }
  }
  for (let i = 0; i < n; i++) yield ["omission", at(i, "")];
  for (let i = 0; i + 1 < n; i++) if (cs[i] !== cs[i + 1]) yield ["transposition", at(i, cs[i + 1] + cs[i], 2)];
  for (let i = 0; i < n; i++) yield ["repetition", at(i, cs[i] + cs[i])];
  for (let i = 0; i < n; i++) for (const k of NEIGHBOURS.get(cs[i]) ?? "") yield ["replacement", at(i, k)];
  for (let i = 0; i < n; i++) {
    for (const k of NEIGHBOURS.get(cs[i]) ?? "") {
      yield ["insertion", at(i, k + cs[i])];
      yield ["insertion", at(i, cs[i] + k)];
    }
  }
  for (let i = 1; i < n; i++) if (cs[i - 1] !== "-" && cs[i] !== "-") yield ["hyphenation", at(i, "-" + cs[i])];
  for (const word of AFFIX_KEYWORDS) {
    yield ["dictionary", `${label}-${word}`];
    yield ["dictionary", `${word}-${label}`];
    yield ["dictionary", `${label}${word}`];
    yield ["dictionary", `${word}${label}`];
  }
  for (const c of LDH) yield ["addition", label + c];
  for (let i = 0; i < n; i++) {
    const code = cs[i].charCodeAt(0);
    if (code >= 128) continue;
    for (let bit = 0; bit < 7; bit++) {
      const flipped = String.fromCharCode(code ^ (1 << bit));
      if (LDH.includes(flipped) || flipped === "-") yield ["bitsquatting", at(i, flipped)];
    }
  }
  for (let i = 0; i < n; i++) if (VOWELS.includes(cs[i])) for (const v of VOWELS) if (v !== cs[i]) yield ["vowel-swap", at(i, v)];
  if (cs.every((c) => CYRILLIC_OF.has(c))) yield ["cyrillic", cs.map((c) => CYRILLIC_OF.get(c)!).join("")];
}

/** Whether a label can be registered: LDH (after A-label encoding), 1-63 characters, no hyphen at either end. */
function registrableLabel(a: string): boolean {
  return a.length > 0 && a.length <= 63 && /^[a-z0-9-]+$/.test(a) && !a.startsWith("-") && !a.endsWith("-") && (a.slice(2, 4) !== "--" || a.startsWith("xn--"));
}

/**
 * The permutations of one protected domain the detector flags, ordered by family, at most
 * `max`. Deterministic: the same protected domain always gives the same list (the
 * discovery's schedule walks it by position).
 */
export function permutationsOf(p: PreparedProtected, max = MAX_PERMUTATIONS_PER_DOMAIN): Permutation[] {
  const byFamily = new Map<PermutationFamily, Permutation[]>(PERMUTATION_FAMILIES.map((f) => [f, []]));
  const seen = new Set<string>([p.registrable]);
  const consider = (family: PermutationFamily, labelUnicode: string, suffix: string) => {
    let a: string;
    try {
      a = labelToAscii(labelUnicode);
    } catch {
      return;
    }
    if (!registrableLabel(a)) return;
    const domain = `${a}.${suffix}`;
    if (seen.has(domain)) return;
    seen.add(domain);
    if (detectLookalike(p, domain)) byFamily.get(family)!.push({ domain, family });
  };
  let label = p.label;
  try {
    label = labelToUnicode(p.label);
  } catch {
    /* an undecodable protected label: permutations of its A-label form */
  }
  for (const tld of SWAP_TLDS) if (tld !== p.suffix) consider("tld-swap", label, tld);
  for (const [family, candidate] of labelsOf(label)) consider(family, candidate, p.suffix);
  const out: Permutation[] = [];
  for (const family of PERMUTATION_FAMILIES) {
    for (const perm of byFamily.get(family)!) {
      if (out.length >= max) return out;
      out.push(perm);
    }
  }
  return out;
}
