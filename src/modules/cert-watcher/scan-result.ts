/**
 * What the Worker derives from a scan result posted by an agent (the result's schema is
 * the agent contract, packages/scan-contract):
 *
 *   - the certificate scan event (events.ts), built from the monitor and target the job
 *     names, not from what the agent claims they were;
 *   - the five framework verdicts, re-evaluated here from the observed protocols,
 *     suites, groups and certificate (the agent's own verdicts are not even read), and
 *     the protocol and cipher statuses read from the same judgement
 *     (frameworks/judgement.ts), so an indicator never contradicts a verdict;
 *   - the validation status (indicators.ts) and the weekly audit's findings.
 *
 * Pure: no database, no Workers APIs.
 */
import type { LeafCertificate, ScanResult } from "@trust-plane/scan-contract";
import {
  cipherSuiteCode,
  judgeTlsConfiguration,
  type CipherStatus,
  type FrameworkVerdict,
  type ObservedConfiguration,
  type ProtocolStatus,
  type ValidationStatus,
  type WeakSuiteFinding,
} from "@trust-plane/tls-frameworks";
import { daysLeft, validationStatus } from "./indicators";
import { buildCertScanEvent, type CertScanEvent, type ScanSubject } from "./events";

export interface ScanAnalysis {
  event: CertScanEvent;
  frameworks: FrameworkVerdict[];
  weakSuites: WeakSuiteFinding[];
  legacySuites: WeakSuiteFinding[];
  cipherCodes: number[];
  protocolStatus: ProtocolStatus;
  cipherStatus: CipherStatus;
  validationStatus: ValidationStatus;
  /** Weekly audit findings. */
  findings: { expired: boolean; legacyProtocol: boolean; weakCipher: boolean; selfSigned: boolean; scanFailed: boolean };
}

export interface ScanContext extends ScanSubject {
  /** When the result was accepted: the reference time for expiry and verdicts. */
  now: Date;
  mozillaVersion?: string;
}

const PROTOCOL_SPELLINGS: Record<string, string> = {
  TLSv1: "TLSv1.0", "TLS1.0": "TLSv1.0", "TLS1.1": "TLSv1.1", "TLS1.2": "TLSv1.2", "TLS1.3": "TLSv1.3",
  "TLS 1.0": "TLSv1.0", "TLS 1.1": "TLSv1.1", "TLS 1.2": "TLSv1.2", "TLS 1.3": "TLSv1.3", "SSLv3.0": "SSLv3",
};
/** One spelling, the API's (TLSv1.2); other spellings seen in tools are mapped, unknown ones kept. */
export function normalizeProtocol(p: string): string {
  return PROTOCOL_SPELLINGS[p] ?? p;
}

/** IANA code points of the accepted suites: from the names, and from `protocols_detail[].cipher_codes` ("0xC02F"). */
export function cipherCodesOf(r: Pick<ScanResult, "ciphers" | "protocols_detail">): number[] {
  const codes = new Set<number>();
  const add = (s: string) => {
    const hex = /^0x([0-9a-f]{1,4})$/i.exec(s);
    const code = hex ? parseInt(hex[1], 16) : cipherSuiteCode(s);
    if (code !== undefined) codes.add(code);
  };
  r.ciphers.forEach(add);
  for (const d of r.protocols_detail) if (d.accepted !== false) d.cipher_codes.forEach(add);
  return [...codes];
}

/** What the frameworks judge: the observed configuration, in the evaluator's terms. */
function observedConfiguration(r: ScanResult, protocols: string[], codes: number[], cert: LeafCertificate | null, selfSigned: boolean): ObservedConfiguration {
  return {
    protocols,
    cipherCodes: codes,
    groups: r.named_groups,
    dhBits: r.dh_bits,
    certificate: cert && {
      keyAlgorithm: cert.public_key_algorithm,
      keyBits: cert.key_bits,
      curve: cert.curve || null,
      signatureAlgorithm: cert.signature_algorithm,
      notBefore: cert.not_before || null,
      notAfter: cert.not_after || null,
      trusted: r.validation?.trusted ?? null,
      selfSigned,
    },
  };
}

export function analyseScan(r: ScanResult, ctx: ScanContext): ScanAnalysis {
  const protocols = [...new Set(r.protocol.map(normalizeProtocol))];
  const cert = r.certificate && (r.certificate.sha256 || r.certificate.subject || r.certificate.not_after) ? r.certificate : null;
  // A scan that obtained nothing at all failed, whatever the agent says.
  const hasError = r.has_error || (protocols.length === 0 && cert === null);
  const error = hasError ? r.error || "scan obtained no TLS version and no certificate" : "";
  const codes = cipherCodesOf(r);
  // Self-signed means subject equal to issuer, also under a custom root CA (docs/decisions.md#events).
  const selfSigned = cert !== null && cert.subject !== "" && cert.subject === cert.issuer;
  const validityDays = cert?.not_after ? daysLeft(cert.not_after, ctx.now) : null;
  const judgement = judgeTlsConfiguration(observedConfiguration(r, protocols, codes, cert, selfSigned), { mozillaVersion: ctx.mozillaVersion, now: ctx.now });
  return {
    event: buildCertScanEvent(ctx, { result: r, protocols, certificate: cert, validityDays, hasError, error }),
    frameworks: judgement.frameworks,
    weakSuites: judgement.weakSuites,
    legacySuites: judgement.legacySuites,
    cipherCodes: codes,
    protocolStatus: judgement.protocolStatus,
    cipherStatus: judgement.cipherStatus,
    validationStatus: validationStatus({
      hasCertificate: cert !== null,
      selfSigned,
      trusted: r.validation?.trusted ?? null,
      hostnameMatch: r.validation?.hostname_match ?? null,
    }),
    findings: {
      expired: validityDays !== null && cert !== null && Date.parse(cert.not_after) <= ctx.now.getTime(),
      legacyProtocol: judgement.protocolStatus === "legacy",
      weakCipher: judgement.cipherStatus === "weak",
      selfSigned,
      scanFailed: hasError,
    },
  };
}
