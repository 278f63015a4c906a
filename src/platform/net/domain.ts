/**
 * Domain names of `domain` rule lists (docs/decisions.md#rule-lists): the stored form
 * is the lowercase A-label (Punycode) name without trailing dot, obtained with UTS #46
 * non-transitional processing (`faß.de` stays distinct from `fass.de`, as browsers do),
 * STD3 (letters, digits, hyphen) and DNS length rules.
 */
import { toASCII } from "tr46";

export type DomainParseResult = { ok: true; value: string } | { ok: false; message: string };

const UTS46_OPTIONS = {
  checkBidi: true,
  checkHyphens: true,
  checkJoiners: true,
  useSTD3ASCIIRules: true,
  transitionalProcessing: false,
  verifyDNSLength: true,
} as const;

// Full stops that UTS #46 maps to "." (ideographic, fullwidth, halfwidth ideographic).
const TRAILING_DOT = /[.\u3002\uff0e\uff61]$/;

/** Normalizes a list entry; the message says why a value is refused. */
export function normalizeDomain(raw: string): DomainParseResult {
  const text = raw.trim();
  if (text === "") return { ok: false, message: "empty value is not a domain name" };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || /[/?#@]/.test(text)) {
    return { ok: false, message: `'${raw}' looks like a URL; enter the domain name only` };
  }
  if (text.includes("*")) {
    return { ok: false, message: `'${raw}' contains a wildcard; list entries match exact names only` };
  }
  if (text.includes(":")) return { ok: false, message: `'${raw}' is not a domain name (ports are not allowed)` };
  const withoutDot = text.replace(TRAILING_DOT, "");
  const ascii = toASCII(withoutDot, UTS46_OPTIONS);
  if (ascii === null || ascii === "") {
    return {
      ok: false,
      message: `'${raw}' is not a valid domain name (labels of letters, digits and inner hyphens, 1-63 characters each, 253 in total)`,
    };
  }
  const labels = ascii.split(".");
  if (labels.length < 2) {
    return { ok: false, message: `'${raw}' is not a fully-qualified domain name (it needs at least two labels)` };
  }
  if (/^\d+$/.test(labels[labels.length - 1])) {
    return { ok: false, message: `'${raw}' is not a domain name (the top-level label is numeric)` };
  }
  return { ok: true, value: ascii };
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * The key an event value is looked up with in a domain list, or null when the value is not
 * a domain. Fast path: an ASCII value is only lowercased and loses its trailing dot; an ASCII
 * string that is not a valid name cannot equal a stored (valid) entry, so validating it
 * would only cost time. Non-ASCII values go through UTS #46 to their A-label form.
 */
export function domainLookupKey(value: string): string | null {
  if (ASCII_ONLY.test(value)) {
    const lower = value.toLowerCase();
    return lower.endsWith(".") ? lower.slice(0, -1) : lower;
  }
  const r = normalizeDomain(value);
  return r.ok ? r.value : null;
}
