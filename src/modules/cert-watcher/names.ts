/**
 * Input normalization for monitors and targets: hostnames (cn, target_dns), IP
 * addresses, and the STARTTLS setting. Pure; invalid input yields null / an error
 * string, never an exception.
 */
import { STARTTLS_BY_PORT, type StartTlsProtocol } from "@trust-plane/scan-contract/vocabulary";
import { formatAddress, parseIpAddress } from "../../platform/net/ip";

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/**
 * A hostname as sent in SNI: lowercase, no trailing dot, IDNs as A-labels (via the
 * WHATWG URL parser, which applies UTS #46). IP literals and wildcards are refused:
 * SNI carries neither.
 */
export function normalizeHostname(raw: string): string | null {
  let host = raw.trim().replace(/\.$/, "").toLowerCase();
  if (host === "" || host.includes("*")) return null;
  if (/[^\x21-\x7e]/.test(host)) {
    try {
      host = new URL(`http://${host}/`).hostname;
    } catch {
      return null;
    }
  }
  if (host.length > 253) return null;
  if (parseIpAddress(host) || /^\d+(\.\d+){3}$/.test(host) || host.startsWith("[")) return null;
  return host.split(".").every((l) => LABEL.test(l)) ? host : null;
}

/** An IP address in canonical form (RFC 5952 for IPv6), or null. No CIDR, no zone id, no leading zeros. */
export function normalizeIp(raw: string): string | null {
  const parsed = parseIpAddress(raw.trim());
  return parsed ? formatAddress(parsed.family, parsed.address) : null;
}

export type StartTlsSetting = "auto" | "none" | StartTlsProtocol;

export function resolveStartTls(setting: StartTlsSetting, port: number): StartTlsProtocol | null {
  if (setting === "none") return null;
  if (setting === "auto") return STARTTLS_BY_PORT[port] ?? null;
  return setting;
}
