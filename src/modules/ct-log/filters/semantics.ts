/**
 * The meaning of one filter against one certificate name, written plainly.
 * This is the reference the label index (label-index.ts) must agree with;
 * the index tests compare both on random inputs. Do not use it per log entry.
 *
 * Certificate names are normalized first (cert/names.ts). A wildcard
 * certificate name "*.P" stands for every name exactly one label below P:
 * it matches a filter when any name it covers would.
 */
import type { FilterPattern, MatchType } from "./pattern";

/** True when `name` equals `domain` or lies below it ("a.example.com" below "example.com"; never "notexample.com"). */
export function isAtOrBelow(name: string, domain: string): boolean {
  return name === domain || (name.length > domain.length && name.endsWith(domain) && name.charCodeAt(name.length - domain.length - 1) === 0x2e);
}

/** True when `name` lies strictly below `domain`. */
export function isBelow(name: string, domain: string): boolean {
  return name !== domain && isAtOrBelow(name, domain);
}

function parentOf(name: string): string | null {
  const i = name.indexOf(".");
  return i < 0 ? null : name.slice(i + 1);
}

/** Does a concrete (non-wildcard) normalized name match the filter? */
function concreteMatches(filter: FilterPattern, matchType: MatchType, name: string): boolean {
  switch (filter.shape) {
    case "domain":
      return matchType === "exact" ? name === filter.base : isAtOrBelow(name, filter.base);
    case "wildcard":
      return matchType === "exact" ? parentOf(name) === filter.base : isBelow(name, filter.base);
    case "leading-dot":
      return isBelow(name, filter.base);
  }
}

/** Does a normalized certificate name (possibly "*.P") match the filter? */
export function filterMatchesName(filter: FilterPattern, matchType: MatchType, name: string): boolean {
  if (!name.startsWith("*.")) return concreteMatches(filter, matchType, name);
  const p = name.slice(2);
  // The literal name "*.P" is below P, and one label below it.
  switch (filter.shape) {
    case "domain":
      // Covered names are x.P: the filter's own name is one of them when base = x.P;
      // a wide filter also matches when P is at or below its base.
      if (parentOf(filter.base) === p) return true;
      return matchType === "wide" && isAtOrBelow(p, filter.base);
    case "wildcard":
      return matchType === "exact" ? p === filter.base : isAtOrBelow(p, filter.base);
    case "leading-dot":
      return isAtOrBelow(p, filter.base);
  }
}
