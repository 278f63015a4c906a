/**
 * CT filter patterns: normalization and shape.
 *
 * A pattern names the domain to watch. It is compared case-insensitively,
 * with one trailing dot ignored, and internationalized names are compared as
 * A-labels (UTS #46 via tr46), because certificates carry A-labels only.
 *
 * Three shapes exist (typosquat eligibility names the last two among what it rejects,
 * so they are valid filter patterns):
 *   "domain"       example.com     `exact`: the name itself; `wide`: it and all its subdomains
 *   "wildcard"     *.example.com   `exact`: names exactly one label below; `wide`: every name below
 *   "leading-dot"  .example.com    every name below example.com, not example.com itself (either match type)
 */
import { toASCII } from "tr46";
import { classifyCertificateName } from "../cert/names";

export type MatchType = "wide" | "exact";
export type PatternShape = "domain" | "wildcard" | "leading-dot";

export interface FilterPattern {
  /** Canonical text: lowercase A-labels, prefix ("*." / ".") kept, no trailing dot. */
  pattern: string;
  /** The domain the pattern hangs from (the pattern without its "*." / "." prefix). */
  base: string;
  shape: PatternShape;
}

export type PatternResult = { ok: true; value: FilterPattern } | { ok: false; error: string };

/** Normalizes a user-entered pattern; invalid patterns get a human-readable error. */
export function parseFilterPattern(input: string): PatternResult {
  let s = input.trim();
  if (s.endsWith(".")) s = s.slice(0, -1);
  if (s.length === 0) return { ok: false, error: "pattern is empty" };
  if (/[/:@?#\s]/.test(s)) return { ok: false, error: "pattern must be a domain name, not a URL or address" };
  let shape: PatternShape = "domain";
  if (s.startsWith("*.")) {
    shape = "wildcard";
    s = s.slice(2);
  } else if (s.startsWith(".")) {
    shape = "leading-dot";
    s = s.slice(1);
  }
  if (s.includes("*")) return { ok: false, error: "a wildcard is only allowed as the whole leftmost label (*.example.com)" };
  const ascii = toAsciiDomain(s);
  if (ascii === null) return { ok: false, error: "pattern is not a valid internationalized domain name" };
  const verdict = classifyCertificateName(ascii);
  if (verdict.name === null) return { ok: false, error: `pattern is not a valid domain name: ${verdict.problem}` };
  const base = verdict.name;
  const prefix = shape === "wildcard" ? "*." : shape === "leading-dot" ? "." : "";
  return { ok: true, value: { pattern: prefix + base, base, shape } };
}

/**
 * UTS #46 ToASCII with the options browsers use (nontransitional, hyphen and
 * bidi checks off for pure-ASCII input). Underscores are allowed (they appear in
 * certificates), so STD3 rules are off; the caller checks characters itself.
 */
export function toAsciiDomain(name: string): string | null {
  // Pure ASCII names skip tr46: lowercase is all UTS #46 would do to them, and this is a hot path for index builds.
  if (/^[\x21-\x7e]*$/.test(name) && !/(^|\.)xn--/i.test(name)) return name.toLowerCase();
  const out = toASCII(name, {
    checkBidi: true,
    checkHyphens: false,
    checkJoiners: true,
    transitionalProcessing: false,
    useSTD3ASCIIRules: false,
    verifyDNSLength: true,
  });
  return out === null ? null : out.toLowerCase();
}
