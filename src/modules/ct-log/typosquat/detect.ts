/**
 * Lookalike-domain detection: is a certificate name a lookalike of a protected registrable domain,
 * and why. Pure: no I/O; the hot path prefilters with TyposquatIndex and calls
 * this only for the few (name, protected domain) pairs that may match.
 *
 * Labels are compared on their confusable skeletons (skeleton.ts), then each
 * category is decided on the skeletons; `confusable` is added whenever the
 * skeletons were needed (the same check on the plain labels fails).
 *
 * Evidence categories (stable snake_case ids, in this order):
 *   tld_change        same label (or lookalike label) under another public suffix
 *   confusable        the candidate's skeleton equals the protected one (or the match below needed skeletons)
 *   affix             the protected label inside a longer label ("paypal-login", "accountpaypal", "paypalcom"),
 *                     or the whole protected domain as labels below another domain ("paypal.com.evil.net")
 *   hyphenation       hyphens inserted into the label ("pay-pal"), or the label split by dots ("pay.pal.com")
 *   omission          one character left out ("paypl")                      protected label >= 3 characters
 *   repetition        one character doubled ("payypal")                     protected label >= 3 characters
 *   transposition     two adjacent characters swapped ("papyal")            protected label >= 3 characters
 *   edit_distance     any other small edit (substitution, insertion, bit flips): optimal string alignment
 *                     (Damerau–Levenshtein) distance <= 1 for protected labels of 3-7 characters,
 *                     <= 2 for 8 or more; never for shorter labels
 * and, for internationalized candidates (a non-ASCII label), extra labels:
 *   script_mixing     the label's characters share no script (UTS #39 resolved script set is empty)
 *   mixed_numbers     decimal digits from more than one number system
 *   unsafe_characters a character that is not Identifier_Status=Allowed (UTS #39), e.g. invisible ones
 *   whole_script      the whole label is in one script, not the protected label's, and looks the same
 *
 * and corroboration, which never makes a lookalike on its own but raises a low confidence:
 *   brand_keyword     another name of the same certificate carries the protected label ("ibm.ibn.com")
 *   foreign_hosting   the lookalike resolves to name servers or addresses the protected domain does not use
 *   recently_registered  registered (RDAP) in the 30 days before it was seen
 *
 * Confidence: an edit (omission, repetition, transposition, edit_distance) of a protected label shorter
 * than 5 characters is `low` ("ibn.com" for ibm.com: many real, unrelated domains are one edit from a
 * three-letter name), unless corroborated; everything else is `high`.
 *
 * Short protected labels (3-4 characters) only get an affix when the extra part is set off by a hyphen,
 * is digits only, is the protected suffix itself or a word phishing names use ("nic-de", "nicde", "nic24",
 * "niclogin"; keywords.ts): "picnic" is no lookalike.
 *
 * Never lookalikes (registry names): a TLD registry's own information site "nic.<tld>" (every registry
 * publishes one), and a short label compounded with the candidate's own country code in front, under that
 * country's TLD, as registries name themselves ("denic.de", "sk-nic.sk", "na-nic.com.na" for nic.de).
 */
import { parse } from "tldts";
import { boundedDamerauLevenshtein, singleEdit } from "./distance";
import { labelToUnicode, PunycodeError } from "./punycode";
import { AFFIX_KEYWORDS } from "./keywords";
import { isAscii, skeleton } from "./skeleton";
import { COMMON, INHERITED, decimalZero, isAllowedInIdentifier, scriptExtensions } from "./unicode-tables";

export const EVIDENCE = [
  "tld_change",
  "confusable",
  "affix",
  "hyphenation",
  "omission",
  "repetition",
  "transposition",
  "edit_distance",
  "script_mixing",
  "mixed_numbers",
  "unsafe_characters",
  "whole_script",
  "brand_keyword",
  "foreign_hosting",
  "recently_registered",
] as const;
export type Evidence = (typeof EVIDENCE)[number];
/** Evidence that corroborates a lookalike found otherwise (never one on its own). */
export const CORROBORATION = ["brand_keyword", "foreign_hosting", "recently_registered"] as const satisfies readonly Evidence[];
export type Corroboration = (typeof CORROBORATION)[number];

export const CONFIDENCE = ["low", "high"] as const;
export type Confidence = (typeof CONFIDENCE)[number];

/** Edit-distance bound for a protected label of this many characters (0: no edit evidence at all). */
export function maxEditDistance(protectedLabelLength: number): number {
  if (protectedLabelLength >= 8) return 2;
  if (protectedLabelLength >= MIN_EDIT_LABEL) return 1;
  return 0;
}
/** Edits (omission, repetition, transposition, edit distance) need a protected label at least this long. */
export const MIN_EDIT_LABEL = 3;
/** Edits of a shorter protected label are low-confidence candidates unless corroborated. */
export const MIN_CONFIDENT_EDIT_LABEL = 5;
/** Free affix containment needs a protected label at least this long (shorter: see affixOfShortLabel). */
export const MIN_FREE_AFFIX_LABEL = 5;
/** Registrable labels that name a TLD registry itself ("nic.fr", "whois.nic.bi"): never a lookalike. */
const REGISTRY_LABELS: ReadonlySet<string> = new Set(["nic"]);
const EDIT_EVIDENCE: ReadonlySet<Evidence> = new Set(["omission", "repetition", "transposition", "edit_distance"]);

export interface ProtectedDomain {
  /** Registrable domain, A-labels ("paypal.com", "xn--80ak6aa92e.com"). */
  registrable: string;
  /** The label directly below the public suffix ("paypal"). */
  label: string;
  /** The public suffix ("com", "co.uk"). */
  suffix: string;
}

export interface LookalikeMatch {
  /** Registrable domain of the candidate name (A-labels). */
  candidate_domain: string;
  evidence: Evidence[];
  /** Edit distance between the skeletons when an edit category applies. */
  edit_distance?: number;
  confidence: Confidence;
}

/** Prepared protected domain: Unicode form and skeleton computed once. */
export interface PreparedProtected extends ProtectedDomain {
  unicode: string;
  skeleton: string;
  scripts: Set<number> | null;
  /** Length of the Unicode label in code points: what the policy's thresholds count. */
  length: number;
}

export function prepareProtected(p: ProtectedDomain): PreparedProtected {
  let unicode = p.label;
  try {
    unicode = labelToUnicode(p.label);
  } catch (e) {
    if (!(e instanceof PunycodeError)) throw e;
  }
  return { ...p, unicode, skeleton: skeleton(unicode), scripts: resolvedScripts(unicode), length: [...unicode].length };
}

/**
 * A certificate name read once for every protected domain it is judged against:
 * normalized (lowercase, no trailing dot, no "*." wildcard), split at its public
 * suffix (tldts, Public Suffix List with its private section), the label below the
 * suffix decoded and skeletonized.
 */
export interface CandidateName {
  /** The normalized name. */
  name: string;
  /** Registrable domain (A-labels). */
  domain: string;
  suffix: string;
  /** The label below the suffix, in Unicode (lowercase). */
  label: string;
  skeleton: string;
}

/** A host name is at most 253 characters (RFC 1035, text form without the final dot). */
export const MAX_NAME = 253;
/** ASCII characters that cannot be part of a host name: such a "name" is not judged at all. */
const NOT_IN_HOST_NAME = new Uint8Array(128);
for (const ch of " \t\n\r\f\v/:@?#%\\") NOT_IN_HOST_NAME[ch.charCodeAt(0)] = 1;

/** Whether a normalized name can be a host name: no empty label, no character a host name cannot hold. */
function hostNameShaped(name: string): boolean {
  let previous = 46; // "."
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 128 && NOT_IN_HOST_NAME[c]) return false;
    if (c === 46 && previous === 46) return false;
    previous = c;
  }
  return true;
}

/** Normalizes a certificate name as the detector reads it ("*.Paypa1.com." -> "paypa1.com"). */
export function normalizeCandidateName(raw: string): string {
  let name = raw.trim().toLowerCase();
  if (name.endsWith(".")) name = name.slice(0, -1);
  if (name.startsWith("*.")) name = name.slice(2);
  return name;
}

/** The candidate form of a certificate name, or null when it is no registrable host name. */
export function candidateName(raw: string): CandidateName | null {
  const name = normalizeCandidateName(raw);
  if (name === "" || name.length > MAX_NAME || !hostNameShaped(name)) return null;
  const info = parse(name, { allowPrivateDomains: true, extractHostname: false });
  if (info.isIp || !info.domain || !info.publicSuffix) return null;
  const domain = info.domain;
  const suffix = info.publicSuffix;
  let label: string;
  try {
    label = labelToUnicode(domain.slice(0, -(suffix.length + 1)));
  } catch (e) {
    if (e instanceof PunycodeError) return null;
    throw e;
  }
  return { name, domain, suffix, label, skeleton: skeleton(label) };
}

/** The protected domain of a registrable domain ("example.co.uk" -> label "example", suffix "co.uk"); null when not registrable. */
export function protectedDomainOf(registrable: string): ProtectedDomain | null {
  const info = parse(registrable.toLowerCase(), { allowPrivateDomains: true });
  if (!info.domain || info.domain !== registrable.toLowerCase() || !info.publicSuffix) return null;
  return { registrable: info.domain, label: info.domain.slice(0, -(info.publicSuffix.length + 1)), suffix: info.publicSuffix };
}

/**
 * Whether `name` (a certificate name: A-labels, maybe "*."-prefixed) is a
 * lookalike of `protectedDomain`. Never the protected domain itself nor a name
 * below it. Null when not a lookalike or not a registrable name.
 */
export function detectLookalike(protectedDomain: ProtectedDomain | PreparedProtected, name: string): LookalikeMatch | null {
  const c = candidateName(name);
  return c ? judgeCandidate("skeleton" in protectedDomain ? protectedDomain : prepareProtected(protectedDomain), c) : null;
}

/** detectLookalike for a name already read (the hot path reads each name once for all protected domains). */
export function judgeCandidate(p: PreparedProtected, c: CandidateName): LookalikeMatch | null {
  const { name, domain, suffix, label } = c;
  if (name === p.registrable || name.endsWith("." + p.registrable)) return null;
  if (isRegistryName(c)) return null;
  const found = new Set<Evidence>();
  let distance: number | undefined;
  const sk = c.skeleton;
  const tldChanged = suffix !== p.suffix;
  const tld = suffix.slice(suffix.lastIndexOf(".") + 1);

  const judge = (cand: string, prot: string): { ev: Evidence[]; d?: number } | null => {
    if (cand === prot) return { ev: [] };
    const ev: Evidence[] = [];
    const len = p.length;
    const stripped = cand.includes("-") ? cand.replaceAll("-", "") : null;
    if (stripped !== null && stripped === prot) return { ev: ["hyphenation"], d: cand.length - stripped.length };
    if (len >= MIN_EDIT_LABEL) {
      const edit = singleEdit(prot, cand);
      if (edit === "omission" || edit === "repetition" || edit === "transposition") return { ev: [edit], d: 1 };
    }
    if (isAffix(cand, prot, len, p.suffix, tld)) ev.push("affix");
    else if (stripped !== null && isAffix(stripped, prot, len, p.suffix, tld)) ev.push("affix", "hyphenation");
    const max = maxEditDistance(len);
    if (max > 0) {
      const d = boundedDamerauLevenshtein(cand, prot, max);
      if (d <= max) return { ev: [...ev, "edit_distance"], d };
    }
    return ev.length ? { ev } : null;
  };

  // The plain labels first; the skeletons when they say more (an exact or single-edit lookalike
  // where the plain labels only differ by a confusable character), which is what `confusable` records.
  const direct = judge(label, p.unicode);
  const viaSkeleton = judge(sk, p.skeleton);
  let verdict = direct;
  if (viaSkeleton && (!direct || closeness(viaSkeleton) < closeness(direct))) {
    verdict = viaSkeleton;
    found.add("confusable");
  }
  if (!verdict) {
    // Split by dots ("pay.pal.com", dnstwist "subdomain"): the labels below the suffix, joined.
    const below = name.slice(0, -(suffix.length + 1)).split(".");
    if (below.length >= 2) {
      for (let k = 2; k <= below.length && !verdict; k++) {
        let joined: string;
        try {
          joined = below.slice(below.length - k).map(labelToUnicode).join("");
        } catch {
          break;
        }
        if (skeleton(joined) === p.skeleton) {
          verdict = { ev: ["hyphenation"] };
          if (joined !== p.unicode) found.add("confusable");
        }
      }
    }
  }
  if (!verdict && containsProtectedLabels(name, domain, p.registrable)) {
    // "paypal.com.evil.net": the whole protected domain as labels of another domain
    // (a combosquat by subdomain). The candidate's own TLD is no evidence here.
    return { candidate_domain: domain, evidence: ["affix"], confidence: "high" };
  }
  if (!verdict) return null;
  if (tldChanged) found.add("tld_change");
  else if (verdict.ev.length === 0 && !found.has("confusable")) return null; // same label, same suffix: the domain itself
  for (const e of verdict.ev) found.add(e);
  if (verdict.ev.some((e) => e !== "affix" && e !== "hyphenation") || (verdict.ev.includes("hyphenation") && verdict.d !== undefined)) distance = verdict.d;
  if (!isAscii(label)) for (const e of idnEvidence(label, sk, p)) found.add(e);
  const evidence = EVIDENCE.filter((e) => found.has(e));
  const out: LookalikeMatch = { candidate_domain: domain, evidence, confidence: confidenceOf(evidence, p.length) };
  if (distance !== undefined && (found.has("edit_distance") || found.has("omission") || found.has("repetition") || found.has("transposition"))) out.edit_distance = distance;
  return out;
}

/**
 * The confidence of a lookalike with this evidence of a protected label this long: an edit
 * of a short label is `low` unless something corroborates it.
 */
export function confidenceOf(evidence: readonly string[], protectedLabelLength: number): Confidence {
  if (protectedLabelLength >= MIN_CONFIDENT_EDIT_LABEL) return "high";
  // An affix or hyphens of a short label are only reported when set off (affixOfShortLabel): deliberate.
  if (evidence.some((e) => e === "affix" || e === "hyphenation" || (CORROBORATION as readonly string[]).includes(e))) return "high";
  return evidence.some((e) => EDIT_EVIDENCE.has(e as Evidence)) ? "low" : "high";
}

/**
 * A match with corroborating evidence added (once each, in EVIDENCE order) and its
 * confidence recomputed.
 */
export function corroborate(match: LookalikeMatch, protectedLabelLength: number, more: readonly Corroboration[]): LookalikeMatch {
  const all = new Set<string>([...match.evidence, ...more]);
  const evidence = EVIDENCE.filter((e) => all.has(e));
  return { ...match, evidence, confidence: confidenceOf(evidence, protectedLabelLength) };
}

/**
 * Whether a certificate's names carry the protected label as a label of its own, or set off
 * as a short label's affix is ("ibm.ibn.com", "ibm-login.ibn.com" for ibm.com): the brand
 * keyword that corroborates a low-confidence lookalike in the same certificate. The
 * lookalike's own label (`lookalikeLabel`, Unicode) is not one.
 */
export function namesBrandKeyword(p: PreparedProtected, names: readonly string[], lookalikeLabel: string): boolean {
  for (const raw of names) {
    const name = normalizeCandidateName(raw);
    for (const a of name.split(".")) {
      let label: string;
      try {
        label = labelToUnicode(a);
      } catch {
        continue;
      }
      if (label === lookalikeLabel) continue;
      const sk = skeleton(label);
      if (sk === p.skeleton) return true;
      if (isAffix(sk, p.skeleton, p.length, p.suffix, "")) return true;
    }
  }
  return false;
}

/** A TLD registry's own information site ("nic.fr", "whois.nic.bi"). */
function isRegistryName(c: CandidateName): boolean {
  return REGISTRY_LABELS.has(c.label);
}

/** Whether the labels of `name` below its registrable domain `domain` contain the labels of `protectedRegistrable` in a row. */
export function containsProtectedLabels(name: string, domain: string, protectedRegistrable: string): boolean {
  if (name.length <= domain.length + 1) return false;
  const below = "." + name.slice(0, -(domain.length + 1)) + ".";
  return below.includes("." + protectedRegistrable + ".");
}

/**
 * How close a verdict says the labels are: identical (0), else the edit distance or number of
 * hyphens, an affix alone the farthest. The skeletons' verdict is taken (and `confusable`
 * added) only when it is closer than the plain labels' one: "ibn" for "ibm" is one
 * substitution, not "confusable" because the skeleton of "ibm" is "ibrn".
 */
function closeness(v: { ev: Evidence[]; d?: number }): number {
  if (v.ev.length === 0) return 0;
  return v.d ?? Infinity;
}

function isAffix(cand: string, prot: string, protLength: number, protSuffix: string, candTld: string): boolean {
  if (cand.length <= prot.length) return false;
  const at = cand.indexOf(prot);
  if (at < 0) return false;
  if (protLength >= MIN_FREE_AFFIX_LABEL) return true;
  return affixOfShortLabel(cand, prot, at, protSuffix, candTld);
}

/**
 * Short labels: the extra part must be set off by a hyphen, be digits, the protected suffix or a keyword.
 * Not when the only extra part is the candidate's own TLD in front ("denic.de", "sk-nic.sk" for
 * nic.de): that is how a country's own counterpart is named under its TLD, not an imitation.
 */
function affixOfShortLabel(cand: string, prot: string, at: number, protSuffix: string, candTld: string): boolean {
  for (let i = at; i >= 0; i = cand.indexOf(prot, i + 1)) {
    const before = cand.slice(0, i);
    const after = cand.slice(i + prot.length);
    if (after === "" && candTld !== "" && (before === candTld || before === candTld + "-")) {
      if (i + 1 >= cand.length) break;
      continue;
    }
    const ok = (extra: string, hyphenSide: boolean) =>
      extra === "" ||
      hyphenSide ||
      /^[0-9]+$/.test(extra) ||
      extra === protSuffix.replaceAll(".", "") ||
      extra === protSuffix.replaceAll(".", "-") ||
      AFFIX_KEYWORDS.has(extra);
    const beforeOk = ok(before, before.endsWith("-"));
    const afterOk = ok(after.startsWith("-") ? after.slice(1) : after, after.startsWith("-"));
    if (beforeOk && afterOk) return true;
    if (i + 1 >= cand.length) break;
  }
  return false;
}

/** UTS #39 resolved script set of a string (Common/Inherited ignored); null when every character is Common/Inherited. */
export function resolvedScripts(s: string): Set<number> | null {
  let set: Set<number> | null = null;
  for (const ch of s) {
    const ext = scriptExtensions(ch.codePointAt(0)!);
    if (ext.length === 1 && (ext[0] === COMMON || ext[0] === INHERITED)) continue;
    if (set === null) set = new Set(ext);
    else for (const x of [...set]) if (!ext.includes(x)) set.delete(x);
  }
  return set;
}

function idnEvidence(label: string, sk: string, p: PreparedProtected): Evidence[] {
  const out: Evidence[] = [];
  const scripts = resolvedScripts(label);
  if (scripts !== null && scripts.size === 0) out.push("script_mixing");
  const zeros = new Set<number>();
  let unsafe = false;
  for (const ch of label) {
    const cp = ch.codePointAt(0)!;
    const z = decimalZero(cp);
    if (z >= 0) zeros.add(z);
    if (!isAllowedInIdentifier(cp)) unsafe = true;
  }
  if (zeros.size > 1) out.push("mixed_numbers");
  if (unsafe) out.push("unsafe_characters");
  if (scripts !== null && scripts.size > 0 && sk === p.skeleton && p.scripts !== null && ![...scripts].some((x) => p.scripts!.has(x))) out.push("whole_script");
  return out;
}
