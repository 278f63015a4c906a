/**
 * A certificate monitor's settings and IP targets as given (docs/modules/cert-watcher.md):
 * validated and normalized, every invalid field listed in one 400. Read by the monitor
 * (monitor-service.ts) and target (target-service.ts) endpoints.
 */
import type { StartTlsProtocol } from "@trust-plane/scan-contract";
import { badRequest, conflict, type ErrorDetail } from "../../platform/errors";
import { isUnicastScanTarget } from "../../platform/egress";
import { normalizeHostname, normalizeIp, resolveStartTls, type StartTlsSetting } from "./names";
import { RootCaError, validateRootCaPem } from "./root-ca";

/** Targets one monitor may have. */
export const MAX_TARGETS_PER_MONITOR = 100;

export interface MonitorSettingsInput {
  cn: string;
  port: number;
  target_dns?: string | null;
  enabled: boolean;
  notes: string;
  root_ca?: string | null;
  starttls: StartTlsSetting;
}

export interface MonitorSettings {
  cn: string;
  port: number;
  targetDns: string;
  enabled: boolean;
  notes: string;
  rootCa: string | null;
  starttls: StartTlsProtocol | null;
}

/** Validates and normalizes settings; every invalid field is listed in one 400. */
export function settingsOf(input: MonitorSettingsInput): MonitorSettings {
  const details: ErrorDetail[] = [];
  const cn = normalizeHostname(input.cn);
  if (!cn) details.push({ path: "cn", message: `'${input.cn}' is not a valid hostname` });
  let targetDns = "";
  if (input.target_dns != null && input.target_dns.trim() !== "") {
    targetDns = normalizeHostname(input.target_dns) ?? "";
    if (!targetDns) details.push({ path: "target_dns", message: `'${input.target_dns}' is not a valid hostname` });
  }
  let rootCa: string | null = null;
  if (input.root_ca != null && input.root_ca.trim() !== "") {
    try {
      validateRootCaPem(input.root_ca);
      rootCa = input.root_ca.trim() + "\n";
    } catch (err) {
      if (!(err instanceof RootCaError)) throw err;
      details.push({ path: "root_ca", message: err.message });
    }
  }
  if (details.length) throw badRequest("Invalid certificate monitor settings", details);
  return {
    cn: cn!,
    port: input.port,
    targetDns,
    enabled: input.enabled,
    notes: input.notes,
    rootCa,
    starttls: resolveStartTls(input.starttls, input.port),
  };
}

/** Normalized unicast IPs, or a 400 listing every invalid one (409 for duplicates in the list). */
export function ipsOf(raws: readonly string[], path = "ip_addresses"): string[] {
  const details: ErrorDetail[] = [];
  const out: string[] = [];
  raws.forEach((raw, i) => {
    const ip = normalizeIp(raw);
    if (!ip) details.push({ path: `${path}.${i}`, message: `'${raw}' is not a valid IPv4 or IPv6 address` });
    // A TLS endpoint has a unicast address: 0.0.0.0, broadcast, multicast and reserved ones
    // are never a server. Private addresses are fine: agents scan inside networks.
    else if (!isUnicastScanTarget(ip)) details.push({ path: `${path}.${i}`, message: `'${raw}' is not a unicast address (unspecified, broadcast, multicast or reserved)` });
    else out.push(ip);
  });
  if (details.length) throw badRequest("Invalid IP address", details);
  const seen = new Set<string>();
  const dups = out.filter((ip) => (seen.has(ip) ? true : (seen.add(ip), false)));
  if (dups.length) throw conflict(`Duplicate IP address in the list: ${dups.join(", ")}`);
  return out;
}

export const duplicateMonitor = (s: MonitorSettings) =>
  `A certificate monitor for ${s.cn}:${s.port}${s.targetDns ? ` (target_dns ${s.targetDns})` : ""} already exists`;
