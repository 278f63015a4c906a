/**
 * Monitor indicators: their closed sets of values are chosen here and documented in
 * the OpenAPI descriptions (docs/modules/cert-watcher.md#indicators).
 *
 * Per scan:
 *   validity_status   valid | expiring_soon (expires in < 30 days) | expired | not_yet_valid | unknown (no certificate)
 *   protocol_status   modern | legacy | unknown and
 *   cipher_status     strong | legacy | weak | unknown: read from the reference profile's verdict
 *                     (frameworks/judgement.ts: "strong" only when every offered suite is in
 *                     Mozilla's intermediate profile), so they never contradict the frameworks
 *   validation_status trusted | hostname_mismatch (chain trusted, name not on the certificate) | untrusted
 *                     (chain does not validate) | self_signed (subject = issuer, whatever the trust anchor) | unknown
 *
 * docs/tls-judgement.md states each value's meaning for users.
 *
 * Per monitor: the worst value over the latest scans of its enabled targets ("unknown"
 * only when no target has a known value), `error_count` = enabled targets whose latest
 * scan failed, `target_count` = every target, `min_days_left` = the fewest days left
 * over the certificates seen (negative if expired, null when none). Validity is judged
 * at read time from `not_after`, so a certificate expires in the indicators even
 * between scans.
 *
 * Pure: no database, no Workers APIs.
 */
import {
  CIPHER_STATUSES,
  frameworkDefinitions,
  PROTOCOL_STATUSES,
  REFERENCE_PROFILE,
  TLS_VERSIONS,
  VALIDATION_STATUSES,
  type CipherStatus,
  type ProtocolStatus,
  type ValidationStatus,
} from "@trust-plane/tls-frameworks";

// The stored statuses' closed sets live with the judgement (packages/tls-frameworks/src/statuses.ts):
// the cert_scans table declares its columns from them. Validity is judged at read time, never stored.
export const VALIDITY_STATUSES = ["expired", "not_yet_valid", "expiring_soon", "valid", "unknown"] as const;
export type ValidityStatus = (typeof VALIDITY_STATUSES)[number];

/** A certificate expiring within this many days is `expiring_soon`. */
export const EXPIRING_SOON_DAYS = 30;
const DAY_MS = 86_400_000;

/** Versions whose acceptance makes a configuration `legacy` (and a weekly-audit finding): those the reference profile does not allow. */
export const LEGACY_PROTOCOLS: readonly string[] = (() => {
  const allowed: readonly string[] = frameworkDefinitions().find((d) => d.id === REFERENCE_PROFILE)!.protocols.allowed;
  return ["SSLv2", ...TLS_VERSIONS.filter((v) => !allowed.includes(v))];
})();

/** Whole days from `now` until `notAfter`, negative once expired (floor, like the scanner). */
export function daysLeft(notAfter: string, now: Date): number | null {
  const t = Date.parse(notAfter);
  if (Number.isNaN(t)) return null;
  return Math.floor((t - now.getTime()) / DAY_MS);
}

export function validityStatus(notBefore: string | null, notAfter: string | null, now: Date): ValidityStatus {
  if (!notAfter) return "unknown";
  const end = Date.parse(notAfter);
  if (Number.isNaN(end)) return "unknown";
  if (end <= now.getTime()) return "expired";
  const start = notBefore ? Date.parse(notBefore) : NaN;
  if (!Number.isNaN(start) && start > now.getTime()) return "not_yet_valid";
  return end - now.getTime() < EXPIRING_SOON_DAYS * DAY_MS ? "expiring_soon" : "valid";
}

export interface ValidationFacts {
  hasCertificate: boolean;
  selfSigned: boolean;
  /** The agent's chain validation verdict; null when it gave none. */
  trusted: boolean | null;
  hostnameMatch: boolean | null;
}

export function validationStatus(f: ValidationFacts): ValidationStatus {
  if (!f.hasCertificate) return "unknown";
  if (f.selfSigned) return "self_signed";
  if (f.trusted === false) return "untrusted";
  if (f.trusted === null) return "unknown";
  return f.hostnameMatch === false ? "hostname_mismatch" : "trusted";
}

/** The latest scan of one target, as the aggregation needs it. */
export interface TargetScanFacts {
  enabled: boolean;
  /** null: the target was never scanned. */
  scan: {
    hasError: boolean;
    certNotBefore: string | null;
    certNotAfter: string | null;
    protocolStatus: string;
    cipherStatus: string;
    validationStatus: string;
  } | null;
}

export interface Indicators {
  validity_status: ValidityStatus;
  protocol_status: ProtocolStatus;
  cipher_status: CipherStatus;
  validation_status: ValidationStatus;
  error_count: number;
  target_count: number;
  min_days_left: number | null;
}

/** The worst of `values` by the order of `ranking` (first = worst); "unknown" values only win alone. */
function worst<T extends string>(ranking: readonly T[], values: readonly string[]): T {
  let best = ranking.length - 1; // "unknown" is last
  for (const v of values) {
    const i = ranking.indexOf(v as T);
    if (i >= 0 && i < best) best = i;
  }
  return ranking[best];
}

export function monitorIndicators(targets: readonly TargetScanFacts[], now: Date): Indicators {
  const scans = targets.filter((t) => t.enabled && t.scan).map((t) => t.scan!);
  const days = scans.map((s) => (s.certNotAfter ? daysLeft(s.certNotAfter, now) : null)).filter((d): d is number => d !== null);
  return {
    validity_status: worst(VALIDITY_STATUSES, scans.map((s) => validityStatus(s.certNotBefore, s.certNotAfter, now))),
    protocol_status: worst(PROTOCOL_STATUSES, scans.map((s) => s.protocolStatus)),
    cipher_status: worst(CIPHER_STATUSES, scans.map((s) => s.cipherStatus)),
    validation_status: worst(VALIDATION_STATUSES, scans.map((s) => s.validationStatus)),
    error_count: scans.filter((s) => s.hasError).length,
    target_count: targets.length,
    min_days_left: days.length ? Math.min(...days) : null,
  };
}
