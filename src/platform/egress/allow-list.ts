/**
 * The operator's egress allow-list (EGRESS_ALLOWLIST): destinations the policy would
 * refuse but this installation must reach, e.g. a self-hosted SIEM on the internal
 * network. Comma-separated entries, each `HOST[:PORT]` where HOST is
 *   - an IPv4 address or CIDR: `10.20.0.5`, `10.20.0.0/16`
 *   - an IPv6 address or CIDR in brackets: `[fd00::5]`, `[fd00::/8]`
 *   - a DNS name, matched exactly: `siem.corp.internal`
 * Without a port every port of the host is allowed. An entry allows exactly what it
 * names; everything else stays under the policy.
 */
import ipaddr from "ipaddr.js";
import { parseHost, type ParsedHost } from "./address";

interface Entry {
  text: string;
  port: number | null;
  match: { kind: "name"; name: string } | { kind: "cidr"; network: [ipaddr.IPv4 | ipaddr.IPv6, number] };
}

export class AllowList {
  private constructor(
    readonly entries: readonly Entry[],
    /** Entries that could not be read (reported by `loadConfig` users, never silently widened). */
    readonly invalid: readonly string[],
  ) {}

  static parse(config: string | undefined): AllowList {
    const entries: Entry[] = [];
    const invalid: string[] = [];
    for (const text of (config ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
      const e = parseEntry(text);
      if (e) entries.push(e);
      else invalid.push(text);
    }
    return new AllowList(entries, invalid);
  }

  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  /** True when an entry names this host (an IP, or a name exactly) and port. */
  allows(host: ParsedHost, port: number): boolean {
    return this.entries.some((e) => {
      if (e.port !== null && e.port !== port) return false;
      if (e.match.kind === "name") return host.kind === "name" && host.name === e.match.name;
      return (host.kind === "ipv4" || host.kind === "ipv6") && inNetwork(host, e.match.network);
    });
  }
}

function inNetwork(host: ParsedHost & { kind: "ipv4" | "ipv6" }, network: [ipaddr.IPv4 | ipaddr.IPv6, number]): boolean {
  const addr = ipaddr.fromByteArray(host.bytes);
  if (addr.kind() !== network[0].kind()) return false;
  return (addr as ipaddr.IPv4).match(network as [ipaddr.IPv4, number]);
}

function parseEntry(text: string): Entry | null {
  let hostPart = text;
  let portPart: string | undefined;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0) return null;
    hostPart = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== "" && !rest.startsWith(":")) return null;
    portPart = rest ? rest.slice(1) : undefined;
  } else {
    const colon = text.lastIndexOf(":");
    if (colon >= 0) {
      hostPart = text.slice(0, colon);
      portPart = text.slice(colon + 1);
    }
    if (hostPart.includes(":")) return null; // IPv6 must be bracketed
  }
  let port: number | null = null;
  if (portPart !== undefined) {
    if (!/^\d{1,5}$/.test(portPart) || Number(portPart) < 1 || Number(portPart) > 65535) return null;
    port = Number(portPart);
  }
  const slash = hostPart.indexOf("/");
  const addressText = slash < 0 ? hostPart : hostPart.slice(0, slash);
  const host = parseHost(addressText);
  if (host.kind === "invalid") return null;
  if (host.kind === "name") return slash < 0 ? { text, port, match: { kind: "name", name: host.name } } : null;
  const bits = host.kind === "ipv4" ? 32 : 128;
  const prefix = slash < 0 ? bits : Number(hostPart.slice(slash + 1));
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return null;
  return { text, port, match: { kind: "cidr", network: [ipaddr.fromByteArray(host.bytes), prefix] } };
}
