// One target scan -> the certificate scan event (src/modules/cert-watcher/events.ts) plus
// details and the five framework verdicts. Never throws: every fault becomes has_error/error.
import { isIP } from "node:net";
import {
  cipherSuiteName, judgeTlsConfiguration, namedGroupName,
  type FrameworkVerdict, type WeakSuiteFinding,
} from "@trust-plane/tls-frameworks";
import { ConnectionBudget, type BudgetOptions } from "./budget";
import type { ScanErrorClass, ScanResult } from "@trust-plane/scan-contract";
import { analyseChain, systemAnchors } from "./certificate";
import { enumerate, type EnumerateOptions } from "./enumerate";
import type { FaultKind } from "./tls/probe";
import type { StartTlsProtocol } from "./tls/starttls";

export interface ScanTarget {
  /** Host name or IP address to connect to. */
  host: string;
  port: number;
  /** SNI; default: host when it is a name. */
  sni?: string | null;
  starttls?: StartTlsProtocol | null;
  /** PEM trust anchor(s) replacing the system store. */
  rootCaPem?: string | null;
  monitorCn?: string;
}

export interface ScanOptions extends EnumerateOptions {
  timeoutMs?: number;
  budget?: Partial<BudgetOptions>;
  mozillaVersion?: string;
  now?: () => Date;
}

/**
 * A scan as scanner-node reports it: the contract's scan result (what the API accepts;
 * packages/scan-contract) plus the agent's own judgement (frameworks, weak and legacy
 * suites), which the CLI prints and the API ignores (it judges again).
 */
export type ScanReport = ScanResult & {
  weak_suites: WeakSuiteFinding[];
  legacy_suites: WeakSuiteFinding[];
  frameworks: FrameworkVerdict[];
};

/** The contract's class of a scan that failed on a probe fault (a failed STARTTLS dialogue is not TLS: protocol). */
const SCAN_ERROR_CLASS_OF_FAULT: Record<FaultKind, ScanErrorClass> = { timeout: "timeout", connect: "connect", starttls: "protocol", protocol: "protocol" };

const hex = (c: number) => "0x" + c.toString(16).toUpperCase().padStart(4, "0");

function emptyResult(t: ScanTarget, ip: string, started: number, now: Date): ScanReport {
  return {
    monitor_cn: t.monitorCn ?? t.sni ?? (isIP(t.host) ? "" : t.host), dns_name: sniOf(t), ip_address: ip, port: t.port,
    connection_method: t.starttls ? "starttls" : "direct_tls", starttls: t.starttls ?? null,
    protocol: [], ciphers: [], named_groups: [], certificate: null, validity_days: null, intermediates: [], intermediates_der: [], validation_path: [],
    has_error: false, error: "", error_class: null, cipher_preference: null, protocols_detail: [], named_groups_detail: { tls13: [], tls12: [] },
    dh_bits: null, chain_length: 0, chain_protocol: null, self_signed: null, validation: null, weak_suites: [], legacy_suites: [], frameworks: [],
    scanned_at: now.toISOString(), probes: 0, duration_ms: Date.now() - started,
  };
}

function sniOf(t: ScanTarget): string {
  if (t.sni != null) return t.sni;
  return isIP(t.host) ? "" : t.host;
}

export async function scanTarget(t: ScanTarget, opts: ScanOptions = {}): Promise<ScanReport> {
  const started = Date.now();
  const now = opts.now?.() ?? new Date();
  let ip = t.host;
  const r = emptyResult(t, ip, started, now);
  try {
    // node:dns is loaded only for a name (a scheduled job always names an address).
    if (!isIP(t.host)) ip = (await (await import("node:dns/promises")).lookup(t.host)).address;
    r.ip_address = ip;
    const budget = new ConnectionBudget({
      maxConcurrent: opts.budget?.maxConcurrent ?? (t.starttls ? 4 : 16),
      minIntervalMs: opts.budget?.minIntervalMs ?? (t.starttls ? 20 : 0),
    });
    // Prepare the system trust store while the first probes wait on the network.
    if (!t.rootCaPem) setImmediate(systemAnchors);
    const e = await enumerate({ host: ip, port: t.port, serverName: r.dns_name, starttls: t.starttls ?? null, timeoutMs: opts.timeoutMs ?? 5000 }, budget, opts);
    r.probes = e.probes;
    const accepted = e.protocols.filter((p) => p.accepted);
    r.protocol = accepted.map((p) => p.protocol);
    const codes = [...new Set(accepted.flatMap((p) => p.suites))];
    r.ciphers = codes.map(cipherSuiteName);
    const groupCodes = [...new Set([...e.groups.tls13, ...e.groups.tls12])];
    r.named_groups = groupCodes.map(namedGroupName);
    r.named_groups_detail = { tls13: e.groups.tls13.map(namedGroupName), tls12: e.groups.tls12.map(namedGroupName) };
    r.protocols_detail = e.protocols.map((p) => ({
      protocol: p.protocol, accepted: p.accepted, complete: p.complete, cipher_preference: p.cipherPreference,
      ciphers: p.suites.map(cipherSuiteName), cipher_codes: p.suites.map(hex), notes: p.notes,
    }));
    r.cipher_preference = [...accepted].reverse().find((p) => p.cipherPreference)?.cipherPreference ?? null;
    r.dh_bits = e.dhBits;
    if (e.fatal || !accepted.length) {
      r.has_error = true;
      r.error = e.fatal ?? "server accepted no SSL/TLS version";
      r.error_class = e.fatalFault ? SCAN_ERROR_CLASS_OF_FAULT[e.fatalFault] : "tls";
    }
    if (e.chain) {
      try {
        const c = analyseChain(e.chain, { rootCaPem: t.rootCaPem ?? null, hostname: r.dns_name, now });
        Object.assign(r, {
          certificate: c.certificate, validity_days: c.validity_days, intermediates: c.intermediates, intermediates_der: c.intermediates_der, validation_path: c.validation_path,
          chain_length: c.chain_length, self_signed: c.self_signed, validation: c.validation, chain_protocol: e.chainProtocol,
        });
      } catch (err) {
        r.validation = { trusted: false, error: (err as Error).message, hostname_match: null, anchor: t.rootCaPem ? "root_ca" : "system" };
      }
    } else if (!r.has_error) {
      r.validation = { trusted: false, error: "no certificate obtained from the server", hostname_match: null, anchor: t.rootCaPem ? "root_ca" : "system" };
    }
    // The same judgement the Worker makes of the posted result (the API ignores these two fields).
    const judgement = judgeTlsConfiguration({
      protocols: r.protocol, cipherCodes: codes, groups: groupCodes, dhBits: e.dhBits,
      certificate: r.certificate && {
        keyAlgorithm: r.certificate.public_key_algorithm, keyBits: r.certificate.key_bits, curve: r.certificate.curve,
        signatureAlgorithm: r.certificate.signature_algorithm, notBefore: r.certificate.not_before, notAfter: r.certificate.not_after,
        trusted: r.validation?.trusted ?? null, selfSigned: r.self_signed,
      },
    }, { mozillaVersion: opts.mozillaVersion, now });
    r.frameworks = judgement.frameworks;
    r.weak_suites = judgement.weakSuites;
    r.legacy_suites = judgement.legacySuites;
  } catch (err) {
    r.has_error = true;
    const unresolved = ["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME"].includes((err as NodeJS.ErrnoException).code ?? "");
    r.error = unresolved ? `cannot resolve ${t.host}` : `scan failed: ${(err as Error).message}`;
    r.error_class = unresolved ? "dns_resolution" : "internal";
  }
  r.duration_ms = Date.now() - started;
  return r;
}
