/**
 * The egress policy: every connection the service opens on a user's behalf (webhook,
 * Slack and SMTP channels, RDAP redirects a registry answer points to) is checked
 * here, when the destination is saved (400 naming the field) and again right before
 * each connection (a stored destination may have been saved under another policy, a
 * name may resolve elsewhere today).
 *
 * Refused: loopback, private, link-local (cloud metadata), CGNAT, unique-local,
 * multicast, unspecified, broadcast and reserved addresses in every spelling
 * (address.ts), IPv6 forms embedding such an IPv4 address, `localhost`, single-label
 * names and internal suffixes (`.internal`, `.local`, ...), and names whose DNS
 * answer (through the configured DoH resolvers) holds such an address. The last
 * check is best effort against DNS rebinding: the runtime resolves again when it
 * connects, so a name that changes its answer in between is not caught; a resolver
 * failure does not block (the address checks still hold for literals).
 *
 * The operator's allow-list (allow-list.ts) opens exactly the destinations it names.
 */
import type { Config } from "../../env";
import { invalidField } from "../errors";
import { forbiddenAddressReason, forbiddenNameReason, parseHost, type ParsedHost } from "./address";
import { AllowList } from "./allow-list";
import { createDohClient, MemoryDnsCache, type DnsResolver } from "../dns/doh";

export interface EgressPolicy {
  allowList: AllowList;
  /** DoH resolver for the rebinding check; null skips it. */
  resolver: DnsResolver | null;
}

export type EgressVerdict =
  /** `host`: what to connect to (an IP literal in canonical form, or the name). */
  | { allowed: true; host: string; port: number }
  | { allowed: false; reason: string };

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443, "smtp:": 587, "smtps:": 465 };
const DNS_TIMEOUT_MS = 2_000;
const dnsCache = new MemoryDnsCache({ maxEntries: 2_000 });
const policies = new Map<string, EgressPolicy>();

/** The policy of this configuration (memoized per configuration). */
export function egressPolicy(config: Pick<Config, "egressAllowlist" | "dohResolverUrls">): EgressPolicy {
  const key = `${config.egressAllowlist}\u0000${config.dohResolverUrls.join(",")}`;
  let p = policies.get(key);
  if (!p) {
    p = {
      allowList: AllowList.parse(config.egressAllowlist),
      resolver: config.dohResolverUrls.length ? createDohClient({ resolverUrls: config.dohResolverUrls, timeoutMs: DNS_TIMEOUT_MS, cache: dnsCache }) : null,
    };
    policies.set(key, p);
  }
  return p;
}

/** The addresses a name resolves to (A and AAAA), or [] when DNS cannot tell. */
async function resolveAll(resolver: DnsResolver, name: string): Promise<string[]> {
  const answers = await Promise.all(
    (["A", "AAAA"] as const).map((type) =>
      resolver.query(name, type).then(
        (r) => r.answers.filter((a) => a.type === type).map((a) => String(a.data)),
        () => [] as string[],
      ),
    ),
  );
  return answers.flat();
}

/** Judges one destination host and port. */
export async function checkHost(policy: EgressPolicy, rawHost: string, port: number): Promise<EgressVerdict> {
  const host = parseHost(rawHost);
  const shown = rawHost.replace(/^\[|\]$/g, "");
  if (host.kind === "invalid") return { allowed: false, reason: `${shown} is ${host.reason}` };
  const target = host.kind === "name" ? host.name : host.address;
  if (policy.allowList.allows(host, port)) return { allowed: true, host: hostForConnect(host), port };
  if (host.kind !== "name") {
    const why = forbiddenAddressReason(host);
    return why ? { allowed: false, reason: `${shown} is ${why}` } : { allowed: true, host: hostForConnect(host), port };
  }
  const why = forbiddenNameReason(host.name);
  if (why) return { allowed: false, reason: `${target} is ${why}` };
  if (policy.resolver) {
    for (const ip of await resolveAll(policy.resolver, host.name)) {
      const resolved = parseHost(ip);
      if (resolved.kind !== "ipv4" && resolved.kind !== "ipv6") continue;
      if (policy.allowList.allows(resolved, port)) continue;
      const bad = forbiddenAddressReason(resolved);
      if (bad) return { allowed: false, reason: `${target} resolves to ${ip}, ${bad}` };
    }
  }
  return { allowed: true, host: target, port };
}

function hostForConnect(host: ParsedHost): string {
  if (host.kind === "name") return host.name;
  if (host.kind === "ipv6") return `[${host.address}]`;
  return host.kind === "ipv4" ? host.address : "";
}

/**
 * Judges a URL: its scheme must be one of `schemes`, its host and port pass the policy.
 * `host` of an allowed verdict is the canonical host to connect to.
 */
export async function checkUrl(policy: EgressPolicy, url: string, schemes: readonly string[]): Promise<EgressVerdict> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { allowed: false, reason: "not an absolute URL" };
  }
  if (!schemes.includes(u.protocol)) return { allowed: false, reason: `the scheme must be ${schemes.map((s) => s.replace(/:$/, "")).join(" or ")}` };
  if (!u.hostname) return { allowed: false, reason: "the URL has no host" };
  const port = u.port ? Number(u.port) : (DEFAULT_PORTS[u.protocol] ?? 0);
  return checkHost(policy, u.hostname, port);
}

/** Save-time check: a refused destination is a 400 naming the field and the reason. */
export async function assertUrlAllowed(policy: EgressPolicy, field: string, url: string, schemes: readonly string[]): Promise<void> {
  const v = await checkUrl(policy, url, schemes);
  if (!v.allowed) throw invalidField(field, `destination refused: ${v.reason}`, "Destination not allowed");
}
