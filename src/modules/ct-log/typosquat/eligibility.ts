/**
 * Typosquatting eligibility of a CT filter pattern.
 *
 * Lookalike generation (TLD swaps, confusables, omissions...) needs one literal
 * registrable domain: the label directly below a public suffix plus that
 * suffix ("example.com", "example.co.uk"). Anything else is ineligible with a
 * reason a user can act on. Match type does not matter.
 *
 * Public suffixes come from tldts's bundled Public Suffix List, ICANN and
 * private sections both (as the PSL's own test file does: "foo.github.io" is a
 * registrable domain). Names under an unlisted TLD follow the PSL default rule
 * "*" (the TLD is the suffix), which keeps test-only TLDs usable.
 */
import { parse } from "tldts";
import { parseFilterPattern } from "../filters/pattern";

export interface TyposquatEligibility {
  eligible: boolean;
  /** Empty when eligible. */
  reason: string;
}

export function typosquatEligibility(pattern: string): TyposquatEligibility {
  const raw = pattern.trim();
  if (raw.startsWith("*")) return no("wildcard patterns are not eligible: use the registrable domain itself (e.g. example.com)");
  if (raw.startsWith(".")) return no("leading-dot patterns are not eligible: use the registrable domain itself (e.g. example.com)");
  const parsed = parseFilterPattern(raw);
  if (!parsed.ok) return no(parsed.error);
  const host = parsed.value.base;
  const info = parse(host, { allowPrivateDomains: true, extractHostname: false, validateHostname: false });
  if (info.isIp) return no("IP addresses are not eligible");
  if (!host.includes(".")) return no(`${host} is a single label: a registrable domain has a label below a public suffix`);
  if (!info.domain) {
    return no(`${host} is a public suffix, not a registrable domain`);
  }
  if (info.domain !== host) {
    return no(`${host} has extra hostname labels: only the registrable domain ${info.domain} is eligible`);
  }
  return { eligible: true, reason: "" };
}

/**
 * The registrable domain of a host name under the PSL (ICANN + private sections),
 * or null when there is none (a public suffix itself, a leading-dot or empty
 * label name). Case-insensitive. Agrees with the PSL's tests.txt.
 */
export function registrableDomain(host: string): string | null {
  const h = host.toLowerCase();
  if (h.startsWith(".") || h.includes("..")) return null;
  return parse(h, { allowPrivateDomains: true }).domain;
}

function no(reason: string): TyposquatEligibility {
  return { eligible: false, reason };
}
