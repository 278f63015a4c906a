/**
 * Certificate names as the matcher sees them.
 *
 * CT logs carry whatever CAs (and attackers testing CAs) put in certificates:
 * NUL bytes, UTF-8 in an IA5String, IP addresses in dNSName, URLs, partial
 * wildcards. We keep every name exactly as reported (it is evidence), and
 * separately decide whether it can take part in matching. A name that cannot is
 * skipped with a reason, never an exception.
 */

export interface NameVerdict {
  /** The normalized name to match with (lowercase, no trailing dot), or null when skipped. */
  name: string | null;
  /** Why the name was skipped; empty when it is matchable. */
  problem: string;
}

const MAX_NAME_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;

/**
 * Decides whether a reported dNSName / CN can be matched, and normalizes it:
 * ASCII lowercase, one trailing dot removed. Accepted characters are letters,
 * digits, '-', '_' (seen in real certificates) and a whole-label '*' in the
 * leftmost position.
 */
export function classifyCertificateName(raw: string): NameVerdict {
  let s = raw;
  if (s.length > 0 && s.charCodeAt(s.length - 1) === 0x2e) s = s.slice(0, -1);
  if (s.length === 0) return { name: null, problem: "empty name" };
  if (s.length > MAX_NAME_LENGTH) return { name: null, problem: "name longer than 253 characters" };
  let labelStart = 0;
  let allDigitsOrDots = true;
  let upper = false;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 0x2e;
    if (c === 0x2e) {
      const len = i - labelStart;
      if (len === 0) return { name: null, problem: "empty label" };
      if (len > MAX_LABEL_LENGTH) return { name: null, problem: "label longer than 63 characters" };
      labelStart = i + 1;
      continue;
    }
    if ((c >= 0x61 && c <= 0x7a) || c === 0x2d || c === 0x5f) {
      allDigitsOrDots = false;
      continue;
    }
    if (c >= 0x30 && c <= 0x39) continue;
    if (c >= 0x41 && c <= 0x5a) {
      upper = true;
      allDigitsOrDots = false;
      continue;
    }
    if (c === 0x2a) {
      // Only "*" as the whole leftmost label is a wildcard (RFC 6125 §6.4.3 as CAs apply it).
      if (i !== 0 || (s.length > 1 && s.charCodeAt(1) !== 0x2e)) return { name: null, problem: "partial or non-leftmost wildcard" };
      if (s.length === 1) return { name: null, problem: "bare wildcard" };
      allDigitsOrDots = false;
      continue;
    }
    return { name: null, problem: describeBadCharacter(c) };
  }
  if (allDigitsOrDots) return { name: null, problem: "IP address or number, not a DNS name" };
  return { name: upper ? s.toLowerCase() : s, problem: "" };
}

function describeBadCharacter(c: number): string {
  if (c === 0) return "contains a NUL character";
  if (c < 0x20 || c === 0x7f) return "contains a control character";
  if (c > 0x7f) return "contains non-ASCII characters (DNS names in certificates must be A-labels)";
  if (c === 0x2f || c === 0x3a || c === 0x40 || c === 0x3f) return "looks like a URL, address or e-mail, not a DNS name";
  if (c === 0x20) return "contains whitespace";
  return `contains the character '${String.fromCharCode(c)}'`;
}

/** The normalized name, or null when the name cannot be matched. */
export function normalizeCertificateName(raw: string): string | null {
  return classifyCertificateName(raw).name;
}

/** True for a wildcard certificate name such as "*.example.com" (already normalized). */
export function isWildcardName(name: string): boolean {
  return name.charCodeAt(0) === 0x2a;
}
