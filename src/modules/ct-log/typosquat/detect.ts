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
 *   omission          one character left out ("paypl")                      protected label >= 4 characters
 *   repetition        one character doubled ("payypal")                     protected label >= 4 characters
 *   transposition     two adjacent characters swapped ("papyal")            protected label >= 4 characters
 *   edit_distance     any other small edit (substitution, insertion, bit flips): optimal string alignment
 *                     (Damerau–Levenshtein) distance <= 1 for protected labels of 5-7 characters,
 *                     <= 2 for 8 or more; never for shorter labels (too many real, unrelated domains)
 * and, for internationalized candidates (a non-ASCII label), extra labels:
 *   script_mixing     the label's characters share no script (UTS #39 resolved script set is empty)
 *   mixed_numbers     decimal digits from more than one number system
 *   unsafe_characters a character that is not Identifier_Status=Allowed (UTS #39), e.g. invisible ones
 *   whole_script      the whole label is in one script, not the protected label's, and looks the same
 *
 * Short protected labels (3-4 characters) only get an affix when the extra part is set off by a hyphen,
 * is digits only, or is the protected suffix itself ("nic-de", "nicde", "nic24"): "picnic" is no lookalike.
 */
import { parse } from "tldts";
import { boundedDamerauLevenshtein, singleEdit } from "./distance";
import { labelToUnicode, PunycodeError } from "./punycode";
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
] as const;
export type Evidence = (typeof EVIDENCE)[number];

/** Edit-distance bound for a protected label of this many characters (0: no edit-distance evidence). */
export function maxEditDistance(protectedLabelLength: number): number {
  if (protectedLabelLength >= 8) return 2;
  if (protectedLabelLength >= 5) return 1;
  return 0;
}
/** Omission, repetition and transposition need a protected label at least this long. */
export const MIN_SINGLE_EDIT_LABEL = 4;
/** Free affix containment needs a protected label at least this long (shorter: see affixOfShortLabel). */
export const MIN_FREE_AFFIX_LABEL = 5;

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
}

/** Prepared protected domain: Unicode form and skeleton computed once. */
export interface PreparedProtected extends ProtectedDomain {
  unicode: string;
  skeleton: string;
  scripts: Set<number> | null;
}

export function prepareProtected(p: ProtectedDomain): PreparedProtected {
  let unicode = p.label;
  try {
    unicode = labelToUnicode(p.label);
  } catch (e) {
    if (!(e instanceof PunycodeError)) throw e;
  }
  return { ...p, unicode, skeleton: skeleton(unicode), scripts: resolvedScripts(unicode) };
}

/** The protected domain of a registrable domain ("example.co.uk" -> label "example", suffix "co.uk"); null when not registrable. */
export function protectedDomainOf(registrable: string): ProtectedDomain | null {
  const info = parse(registrable.toLowerCase(), { allowPrivateDomains: true });
  if (!info.domain || info.domain !== registrable.toLowerCase() || !info.publicSuffix) return null;
  return { registrable: info.domain, label: info.domain.slice(0, -(info.publicSuffix.length + 1)), suffix: info.publicSuffix };
}

/**
 * Whether `candidateName` (a certificate name: A-labels, maybe "*."-prefixed)
 * is a lookalike of `protectedDomain`. Never the protected domain itself nor a
 * name below it. Null when not a lookalike or not a registrable name.
 */
export function detectLookalike(protectedDomain: ProtectedDomain | PreparedProtected, candidateName: string): LookalikeMatch | null {
  const p = "skeleton" in protectedDomain ? protectedDomain : prepareProtected(protectedDomain);
  let name = candidateName.trim().toLowerCase();
  if (name.endsWith(".")) name = name.slice(0, -1);
  if (name.startsWith("*.")) name = name.slice(2);
  if (name === p.registrable || name.endsWith("." + p.registrable)) return null;
  const info = parse(name, { allowPrivateDomains: true });
  if (info.isIp || !info.domain || !info.publicSuffix) return null;
  const domain = info.domain;
  const suffix = info.publicSuffix;
  const labelA = domain.slice(0, -(suffix.length + 1));
  let label: string;
  try {
    label = labelToUnicode(labelA);
  } catch (e) {
    if (e instanceof PunycodeError) return null;
    throw e;
  }
  const found = new Set<Evidence>();
  let distance: number | undefined;
  const sk = skeleton(label);
  const tldChanged = suffix !== p.suffix;
  const plain = label; // the label as written (lowercase Unicode)

  const judge = (cand: string, prot: string): { ev: Evidence[]; d?: number } | null => {
    if (cand === prot) return { ev: [] };
    const ev: Evidence[] = [];
    const len = [...p.unicode].length;
    const stripped = cand.includes("-") ? cand.replaceAll("-", "") : null;
    if (stripped !== null && stripped === prot) return { ev: ["hyphenation"], d: cand.length - stripped.length };
    if (len >= MIN_SINGLE_EDIT_LABEL) {
      const edit = singleEdit(prot, cand);
      if (edit === "omission" || edit === "repetition" || edit === "transposition") return { ev: [edit], d: 1 };
    }
    if (isAffix(cand, prot, len, p.suffix)) ev.push("affix");
    else if (stripped !== null && isAffix(stripped, prot, len, p.suffix)) ev.push("affix", "hyphenation");
    const max = maxEditDistance(len);
    if (max > 0) {
      const d = boundedDamerauLevenshtein(cand, prot, max);
      if (d <= max) return { ev: [...ev, "edit_distance"], d };
    }
    return ev.length ? { ev } : null;
  };

  // The plain labels first; the skeletons when they say more (an exact or single-edit lookalike
  // where the plain labels only differ by a confusable character), which is what `confusable` records.
  const direct = judge(plain, p.unicode);
  const viaSkeleton = judge(sk, p.skeleton);
  let verdict = direct;
  if (viaSkeleton && (!direct || strength(viaSkeleton) > strength(direct))) {
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
    return { candidate_domain: domain, evidence: ["affix"] };
  }
  if (!verdict) return null;
  if (tldChanged) found.add("tld_change");
  else if (verdict.ev.length === 0 && !found.has("confusable")) return null; // same label, same suffix: the domain itself
  for (const e of verdict.ev) found.add(e);
  if (verdict.ev.some((e) => e !== "affix" && e !== "hyphenation") || (verdict.ev.includes("hyphenation") && verdict.d !== undefined)) distance = verdict.d;
  if (!isAscii(label)) for (const e of idnEvidence(label, sk, p)) found.add(e);
  const out: LookalikeMatch = { candidate_domain: domain, evidence: EVIDENCE.filter((e) => found.has(e)) };
  if (distance !== undefined && (found.has("edit_distance") || found.has("omission") || found.has("repetition") || found.has("transposition"))) out.edit_distance = distance;
  return out;
}

/** Whether the labels of `name` below its registrable domain `domain` contain the labels of `protectedRegistrable` in a row. */
export function containsProtectedLabels(name: string, domain: string, protectedRegistrable: string): boolean {
  if (name.length <= domain.length + 1) return false;
  const below = "." + name.slice(0, -(domain.length + 1)) + ".";
  return below.includes("." + protectedRegistrable + ".");
}

/** How specific a verdict is: identical > hyphenation/single edit > edit distance > affix only. */
function strength(v: { ev: Evidence[]; d?: number }): number {
  if (v.ev.length === 0) return 4;
  if (v.ev.some((e) => e === "hyphenation" || e === "omission" || e === "repetition" || e === "transposition")) return 3;
  if (v.ev.includes("edit_distance")) return 3 - (v.d ?? 2) / 10;
  return 1;
}

function isAffix(cand: string, prot: string, protLength: number, protSuffix: string): boolean {
  if (cand.length <= prot.length) return false;
  const at = cand.indexOf(prot);
  if (at < 0) return false;
  if (protLength >= MIN_FREE_AFFIX_LABEL) return true;
  return affixOfShortLabel(cand, prot, at, protSuffix);
}

/** Short labels: the extra part must be set off by a hyphen, be digits, or be the protected suffix. */
function affixOfShortLabel(cand: string, prot: string, at: number, protSuffix: string): boolean {
  for (let i = at; i >= 0; i = cand.indexOf(prot, i + 1)) {
    const before = cand.slice(0, i);
    const after = cand.slice(i + prot.length);
    const ok = (extra: string, hyphenSide: boolean) =>
      extra === "" || hyphenSide || /^[0-9]+$/.test(extra) || extra === protSuffix.replaceAll(".", "") || extra === protSuffix.replaceAll(".", "-");
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
