/**
 * The lookalike lifecycle, pure: the state a check's observation puts a lookalike in,
 * what changed in words (the timeline and the event's `change`), the corroboration a
 * check brings (foreign hosting, a recent registration) and the event's `lookalike.*`.
 */
import { labelToUnicode } from "../typosquat/punycode";
import type { CtEventLookalike } from "../events";
import type { LookalikeRow } from "./store";
import type { LookalikeDns, LookalikeState } from "./vocabulary";

/** A registration this long before the lookalike was first found corroborates it. */
export const RECENT_REGISTRATION_DAYS = 30;

/** The state a successful check puts a (not dismissed) lookalike in. */
export function stateAfterCheck(dns: LookalikeDns, serving: boolean | null): LookalikeState {
  if (!dns.registered) return "gone";
  if (serving) return "serving";
  if (dns.mx.length) return "mail_capable";
  if (dns.a.length || dns.aaaa.length) return "resolving";
  return "registered";
}

/** What differs between two observations, in words ("MX 10 mx.ibn.com added", "no longer registered"). */
export function observationChanges(prev: { dns: LookalikeDns | null; serving: boolean | null }, next: { dns: LookalikeDns; serving: boolean | null }): string[] {
  const out: string[] = [];
  const before = prev.dns;
  if (!before) {
    if (!next.dns.registered) return ["not registered (NXDOMAIN)"];
  } else if (before.registered && !next.dns.registered) return ["no longer registered (NXDOMAIN)"];
  else if (!before.registered && next.dns.registered) out.push("registered again");
  const sets: [string, keyof Omit<LookalikeDns, "registered">][] = [["NS", "ns"], ["A", "a"], ["AAAA", "aaaa"], ["MX", "mx"]];
  for (const [label, key] of sets) {
    const old = new Set(before?.[key] ?? []);
    const now = new Set(next.dns[key]);
    const added = [...now].filter((x) => !old.has(x));
    const removed = [...old].filter((x) => !now.has(x));
    if (added.length) out.push(`${label} ${added.join(", ")} added`);
    if (removed.length) out.push(`${label} ${removed.join(", ")} removed`);
  }
  if (next.serving === true && prev.serving !== true) out.push("accepts connections on the HTTPS port");
  if (next.serving === false && prev.serving === true) out.push("no longer accepts connections on the HTTPS port");
  return out;
}

/** The network prefix an address is compared by: /24 of IPv4, /48 of IPv6. */
function networkOf(address: string): string {
  if (address.includes(":")) {
    const groups = expandIpv6(address);
    return groups ? groups.slice(0, 3).join(":") : address;
  }
  return address.split(".").slice(0, 3).join(".");
}

function expandIpv6(address: string): string[] | null {
  const [head, tail] = address.split("::");
  const h = head ? head.split(":") : [];
  const t = tail !== undefined && tail !== "" ? tail.split(":") : [];
  if (address.includes("::")) {
    const missing = 8 - h.length - t.length;
    if (missing < 0) return null;
    return [...h, ...Array(missing).fill("0"), ...t].map((g) => g.toLowerCase().replace(/^0+(?=.)/, ""));
  }
  return h.length === 8 ? h.map((g) => g.toLowerCase().replace(/^0+(?=.)/, "")) : null;
}

/**
 * Whether the lookalike resolves to hosting the organization does not use: it has
 * addresses and none shares a network (/24, /48) with the protected domain's. Unknown
 * (false) when either side has no address.
 */
export function foreignHosting(lookalike: LookalikeDns, protectedAddresses: readonly string[]): boolean {
  const own = [...lookalike.a, ...lookalike.aaaa];
  if (!own.length || !protectedAddresses.length) return false;
  const theirs = new Set(protectedAddresses.map(networkOf));
  return own.every((a) => !theirs.has(networkOf(a)));
}

/** Whether the registration date is within RECENT_REGISTRATION_DAYS before the lookalike was first found (or after it). */
export function recentlyRegistered(registeredAt: string | null, firstSeenAt: string): boolean {
  if (!registeredAt) return false;
  const registered = Date.parse(registeredAt);
  const seen = Date.parse(firstSeenAt);
  return Number.isFinite(registered) && Number.isFinite(seen) && registered >= seen - RECENT_REGISTRATION_DAYS * 86_400_000;
}

/** A domain's Unicode form (each "xn--" label decoded; one that does not decode stays as it is). */
export function domainUnicode(domain: string): string {
  return domain
    .split(".")
    .map((l) => {
      try {
        return labelToUnicode(l);
      } catch {
        return l;
      }
    })
    .join(".");
}

/** The event's `lookalike.*` of a lookalike row (after the check), with where it came from. */
export function eventLookalike(row: LookalikeRow, previousState: LookalikeState | "", change: string): CtEventLookalike {
  const dns = row.dns;
  return {
    id: row.id,
    domain: row.domain,
    domain_unicode: domainUnicode(row.domain),
    protected_domain: row.protectedDomain,
    source: row.source,
    state: row.state,
    previous_state: previousState,
    confidence: row.confidence,
    evidence: row.evidence,
    registered: dns?.registered ?? false,
    resolves: !!dns && (dns.a.length > 0 || dns.aaaa.length > 0),
    has_mx: !!dns && dns.mx.length > 0,
    serving: row.serving === true,
    registered_at: row.registeredAt ?? "",
    registrar: row.registrar ?? "",
    first_seen_at: row.firstSeenAt,
    change,
  };
}
