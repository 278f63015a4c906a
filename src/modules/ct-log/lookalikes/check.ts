/**
 * One check of a lookalike: is it registered, where does it point, does it take mail,
 * does it serve HTTPS. Through the DNS watcher's DoH client (platform/dns/doh.ts) and,
 * for the HTTPS port, a TCP connection to one of its addresses, opened only when the
 * egress policy allows that address (an attacker's name may point at internal ones).
 *
 *   NS    NXDOMAIN: not registered (the lookalike is gone); NOERROR: registered, with its
 *         name servers; anything else (SERVFAIL, REFUSED, no answer): the check failed
 *   A, AAAA, MX   asked only when registered
 *   HTTPS         a connection to the first address on port 443 (LOOKALIKE_HTTPS_PORT):
 *                 accepted = serving. Not a TLS handshake: the runtime's TLS client trusts
 *                 only public roots and sends the address as the server name, so a
 *                 handshake would say more about the certificate than about a site being
 *                 up; the certificates a lookalike gets are seen in CT anyway.
 *
 * A failed lookup never becomes "not registered": the check fails with the cause in
 * words (platform/collection), and what was last seen stays.
 */
import type { CollectionError } from "../../../platform/collection";
import { blockedFailure, classifyFailure } from "../../../platform/collection";
import { checkHost, type EgressPolicy } from "../../../platform/egress";
import type { DnsResolver, DnsResponse } from "../../../platform/dns/doh";
import type { LookalikeDns } from "./vocabulary";

/** Opens a TCP connection to address:port and closes it: whether it was accepted. */
export type PortProbe = (address: string, port: number, timeoutMs: number) => Promise<"open" | "closed" | "timeout">;

export interface CheckPorts {
  resolver: DnsResolver;
  probe: PortProbe;
  egress: EgressPolicy;
  httpsPort: number;
  probeTimeoutMs: number;
}

export type CheckResult =
  | { ok: true; dns: LookalikeDns; serving: boolean | null; servingDetail: string }
  | { ok: false; error: CollectionError };

const names = (r: DnsResponse, type: string) =>
  [...new Set(r.answers.filter((a) => a.type === type).map((a) => String(a.data).toLowerCase().replace(/\.$/, "")))].sort();

function mxOf(r: DnsResponse): string[] {
  return r.answers
    .filter((a) => a.type === "MX")
    .map((a) => a.data as { preference?: number; exchange?: string })
    .map((d) => `${d.preference ?? 0} ${String(d.exchange ?? "").toLowerCase().replace(/\.$/, "")}`)
    .sort();
}

/** The answer as a check outcome: NOERROR and NXDOMAIN are answers; any other rcode is a failure of the lookup. */
function lookupFailure(domain: string, type: string, r: DnsResponse): CollectionError | null {
  if (r.rcode === "NOERROR" || r.rcode === "NXDOMAIN") return null;
  const ede = r.ede.length ? ` (${r.ede.map((e) => e.name).join(", ")})` : "";
  return { class: "dns_resolution", message: `DNS lookup of ${type} ${domain} failed: the resolver answered ${r.rcode}${ede}` };
}

/** Checks one lookalike domain (A-labels). Never throws for outside faults. */
export async function checkLookalike(domain: string, ports: CheckPorts): Promise<CheckResult> {
  const ask = async (type: "NS" | "A" | "AAAA" | "MX"): Promise<DnsResponse | CollectionError> => {
    try {
      const r = await ports.resolver.query(domain, type);
      return lookupFailure(domain, type, r) ?? r;
    } catch (err) {
      return classifyFailure(err, { host: domain, what: `DNS lookup of ${type} ${domain}` });
    }
  };
  const isFailure = (x: DnsResponse | CollectionError): x is CollectionError => "class" in x;
  const ns = await ask("NS");
  if (isFailure(ns)) return { ok: false, error: ns };
  if (ns.rcode === "NXDOMAIN") {
    return { ok: true, dns: { registered: false, ns: [], a: [], aaaa: [], mx: [] }, serving: null, servingDetail: "not checked: not registered" };
  }
  const [a, aaaa, mx] = await Promise.all([ask("A"), ask("AAAA"), ask("MX")]);
  for (const r of [a, aaaa, mx]) if (isFailure(r)) return { ok: false, error: r };
  const dns: LookalikeDns = {
    registered: true,
    ns: names(ns, "NS"),
    a: names(a as DnsResponse, "A"),
    aaaa: names(aaaa as DnsResponse, "AAAA"),
    mx: mxOf(mx as DnsResponse),
  };
  const address = dns.a[0] ?? dns.aaaa[0];
  if (!address) return { ok: true, dns, serving: null, servingDetail: "not checked: no address" };
  const verdict = await checkHost(ports.egress, address, ports.httpsPort);
  if (!verdict.allowed) return { ok: true, dns, serving: null, servingDetail: `not checked: ${blockedFailure(verdict.reason).message}` };
  const shown = `${address.includes(":") ? `[${address}]` : address}:${ports.httpsPort}`;
  const probed = await ports.probe(verdict.host, ports.httpsPort, ports.probeTimeoutMs);
  if (probed === "open") return { ok: true, dns, serving: true, servingDetail: `${shown} accepted a connection` };
  return { ok: true, dns, serving: false, servingDetail: probed === "timeout" ? `${shown} did not answer in time` : `${shown} refused the connection` };
}

/** The runtime's probe: a TCP connection through cloudflare:sockets (imported lazily: it exists only in workerd). */
export const socketProbe: PortProbe = async (address, port, timeoutMs) => {
  const { connect } = await import("cloudflare:sockets");
  const socket = connect({ hostname: address.replace(/^\[|\]$/g, ""), port });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const outcome = await Promise.race([
      socket.opened.then(
        () => "open" as const,
        () => "closed" as const,
      ),
      new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs))),
    ]);
    return outcome;
  } finally {
    clearTimeout(timer);
    socket.close().catch(() => undefined);
  }
};
