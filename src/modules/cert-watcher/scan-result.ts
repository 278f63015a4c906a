/**
 * A scan result posted by an agent: its schema (liberal: unknown fields are dropped,
 * long strings and lists are cut to a cap, absent fields take empty defaults; only
 * wrong types are refused), and what the Worker derives from it:
 *
 *   - the spec's certificate scan event ("Certificate scan event fields"), built from
 *     the monitor and target the job names, not from what the agent claims they were;
 *   - the five framework verdicts, re-evaluated here from the observed protocols,
 *     suites, groups and certificate (the agent's own verdicts are ignored);
 *   - the per-scan statuses (indicators.ts) and the weekly audit's findings.
 *
 * Pure: no database, no Workers APIs.
 */
import { z } from "@hono/zod-openapi";
import {
  cipherSuiteCode,
  evaluateFrameworks,
  weakSuiteFindings,
  type FrameworkVerdict,
  type ObservedConfiguration,
  type WeakSuiteFinding,
} from "./frameworks";
import {
  cipherStatus,
  daysLeft,
  LEGACY_PROTOCOLS,
  protocolStatus,
  validationStatus,
  type CipherStatus,
  type ProtocolStatus,
  type ValidationStatus,
} from "./indicators";

// ---------------------------------------------------------------------------
// Schema of the posted result

/** A string cut to `max` characters (a long value is kept, not refused). */
const text = (max: number) => z.string().transform((s) => s.slice(0, max));
/** An optional string; absent or null becomes "". */
const optText = (max: number) =>
  z
    .string()
    .nullish()
    .transform((s) => (s ?? "").slice(0, max));
/** A list cut to `max` items; absent or null becomes []. */
const list = <T extends z.ZodTypeAny>(item: T, max: number) =>
  z
    .array(item)
    .nullish()
    .transform((a) => (a ?? []).slice(0, max) as z.output<T>[]);
const optInt = z.number().int().nullish().transform((v) => v ?? null);

export const LeafCertificateInput = z.object({
  sha256: optText(128),
  subject: optText(2048),
  issuer: optText(2048),
  serial: optText(128),
  signature_algorithm: optText(128),
  aia: optText(2048),
  ocsp: optText(2048),
  dns_names: list(text(253), 1000),
  not_before: optText(64),
  not_after: optText(64),
  public_key_algorithm: optText(32),
  key_bits: optInt,
  curve: optText(64),
});

const ChainEntryInput = z.object({
  subject: optText(2048),
  issuer: optText(2048),
  not_before: optText(64),
  not_after: optText(64),
  signature_sha256: optText(128),
});
const PathEntryInput = z.object({ certificate_subject: optText(2048), certificate_issuer: optText(2048) });
const ProtocolDetailInput = z.object({
  protocol: optText(16),
  accepted: z.boolean().nullish().transform((v) => v ?? null),
  complete: z.boolean().nullish().transform((v) => v ?? null),
  cipher_preference: z.enum(["server", "client"]).nullish().transform((v) => v ?? null),
  ciphers: list(text(100), 512),
  cipher_codes: list(text(10), 512),
  notes: list(text(500), 20),
});
const ValidationInput = z.object({
  trusted: z.boolean().nullish().transform((v) => v ?? null),
  error: optText(2000),
  hostname_match: z.boolean().nullish().transform((v) => v ?? null),
  anchor: optText(16),
});

export const ScanResultInput = z
  .object({
    monitor_cn: optText(253),
    dns_name: optText(253),
    ip_address: optText(64),
    port: optInt,
    connection_method: z.enum(["direct_tls", "starttls"]).nullish().transform((v) => v ?? null),
    starttls: optText(16),
    protocol: list(text(16), 8),
    ciphers: list(text(100), 512),
    named_groups: list(text(64), 128),
    certificate: LeafCertificateInput.nullish().transform((v) => v ?? null),
    validity_days: optInt,
    intermediates: list(ChainEntryInput, 16),
    validation_path: list(PathEntryInput, 16),
    has_error: z.boolean(),
    error: optText(2000),
    cipher_preference: z.enum(["server", "client"]).nullish().transform((v) => v ?? null),
    protocols_detail: list(ProtocolDetailInput, 8),
    named_groups_detail: z
      .object({ tls13: list(text(64), 128), tls12: list(text(64), 128) })
      .nullish()
      .transform((v) => v ?? null),
    dh_bits: optInt,
    chain_length: optInt,
    chain_protocol: optText(16),
    self_signed: z.boolean().nullish().transform((v) => v ?? null),
    validation: ValidationInput.nullish().transform((v) => v ?? null),
    scanned_at: optText(64),
    probes: optInt,
    duration_ms: z.number().nonnegative().nullish().transform((v) => (v == null ? null : Math.round(v))),
    // `frameworks` and `weak_suites` of the agent are deliberately not read: the Worker
    // recomputes both from the observed data.
  })
  .openapi("ScanResultInput", {
    description:
      "A scan result as produced by scanner-node: the certificate scan event fields plus details. Unknown fields are dropped, " +
      "over-long strings and lists are cut, absent fields default to empty; `frameworks` and `weak_suites` sent by the agent are ignored " +
      "(the Worker re-evaluates them).",
  });

export type ScanResult = z.output<typeof ScanResultInput>;

// ---------------------------------------------------------------------------
// What the Worker derives

/** The certificate scan event (spec table), as sent to the alert rules. */
export interface CertScanEvent {
  monitor_cn: string;
  dns_name: string;
  ip_address: string;
  connection_method: "direct_tls" | "starttls";
  protocol: string[];
  ciphers: string[];
  named_groups: string[];
  certificate: {
    sha256: string;
    subject: string;
    issuer: string;
    serial: string;
    signature_algorithm: string;
    aia: string;
    ocsp: string;
    dns_names: string[];
    not_before: string;
    not_after: string;
    public_key_algorithm: string;
  } | null;
  validity_days: number | null;
  intermediates: { subject: string; issuer: string; not_before: string; not_after: string; signature_sha256: string }[];
  validation_path: { certificate_subject: string; certificate_issuer: string }[];
  has_error: boolean;
  error: string;
}

export interface ScanAnalysis {
  event: CertScanEvent;
  frameworks: FrameworkVerdict[];
  weakSuites: WeakSuiteFinding[];
  cipherCodes: number[];
  protocolStatus: ProtocolStatus;
  cipherStatus: CipherStatus;
  validationStatus: ValidationStatus;
  /** Weekly audit findings. */
  findings: { expired: boolean; legacyProtocol: boolean; weakCipher: boolean; selfSigned: boolean; scanFailed: boolean };
}

export interface ScanContext {
  /** From the monitor/target the job was created for. */
  monitorCn: string;
  sni: string;
  ipAddress: string;
  starttls: string | null;
  /** When the result was accepted: the reference time for expiry and verdicts. */
  now: Date;
  mozillaVersion?: string;
}

const PROTOCOL_SPELLINGS: Record<string, string> = {
  TLSv1: "TLSv1.0", "TLS1.0": "TLSv1.0", "TLS1.1": "TLSv1.1", "TLS1.2": "TLSv1.2", "TLS1.3": "TLSv1.3",
  "TLS 1.0": "TLSv1.0", "TLS 1.1": "TLSv1.1", "TLS 1.2": "TLSv1.2", "TLS 1.3": "TLSv1.3", "SSLv3.0": "SSLv3",
};
/** The spec's spelling (TLSv1.2); other spellings seen in tools are mapped, unknown ones kept. */
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

export function analyseScan(r: ScanResult, ctx: ScanContext): ScanAnalysis {
  const protocols = [...new Set(r.protocol.map(normalizeProtocol))];
  const cert = r.certificate && (r.certificate.sha256 || r.certificate.subject || r.certificate.not_after) ? r.certificate : null;
  // A scan that obtained nothing at all failed, whatever the agent says.
  const hasError = r.has_error || (protocols.length === 0 && cert === null);
  const error = hasError ? r.error || "scan obtained no TLS version and no certificate" : "";
  const codes = cipherCodesOf(r);
  const weakSuites = weakSuiteFindings(codes);
  // Self-signed by the spec's rule (subject equal to issuer), also under a custom root CA.
  const selfSigned = cert !== null && cert.subject !== "" && cert.subject === cert.issuer;
  const validityDays = cert?.not_after ? daysLeft(cert.not_after, ctx.now) : null;

  let frameworks: FrameworkVerdict[] = [];
  const observed: ObservedConfiguration = {
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
  frameworks = evaluateFrameworks(observed, { mozillaVersion: ctx.mozillaVersion, now: ctx.now });

  const event: CertScanEvent = {
    monitor_cn: ctx.monitorCn,
    dns_name: ctx.sni,
    ip_address: ctx.ipAddress,
    connection_method: ctx.starttls ? "starttls" : "direct_tls",
    protocol: protocols,
    ciphers: r.ciphers,
    named_groups: r.named_groups,
    certificate: cert && {
      sha256: cert.sha256,
      subject: cert.subject,
      issuer: cert.issuer,
      serial: cert.serial,
      signature_algorithm: cert.signature_algorithm,
      aia: cert.aia,
      ocsp: cert.ocsp,
      dns_names: cert.dns_names,
      not_before: cert.not_before,
      not_after: cert.not_after,
      public_key_algorithm: cert.public_key_algorithm,
    },
    validity_days: validityDays,
    intermediates: r.intermediates,
    validation_path: r.validation_path,
    has_error: hasError,
    error,
  };
  const pStatus = protocolStatus(protocols);
  const cStatus = cipherStatus(r.ciphers.length ? r.ciphers : codes.map(String), weakSuites.length);
  return {
    event,
    frameworks,
    weakSuites,
    cipherCodes: codes,
    protocolStatus: pStatus,
    cipherStatus: cStatus,
    validationStatus: validationStatus({
      hasCertificate: cert !== null,
      selfSigned,
      trusted: r.validation?.trusted ?? null,
      hostnameMatch: r.validation?.hostname_match ?? null,
    }),
    findings: {
      expired: validityDays !== null && cert !== null && Date.parse(cert.not_after) <= ctx.now.getTime(),
      legacyProtocol: protocols.some((p) => LEGACY_PROTOCOLS.includes(p)),
      weakCipher: weakSuites.length > 0,
      selfSigned,
      scanFailed: hasError,
    },
  };
}
