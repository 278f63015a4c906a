/**
 * The scan result an agent posts (the fields of the certificate scan event plus details),
 * declared once. The Worker validates with it; the agent's TypeScript types are its
 * output type (`z.output`), so what the agent builds is exactly what the API keeps.
 *
 * Acceptance is liberal, so an agent of another version is not locked out: unknown
 * fields are dropped, over-long strings and lists are cut to their cap (not refused),
 * absent or null fields take an empty value. Wrong types and values outside an enum
 * are refused. `has_error` is the one required field.
 *
 * `frameworks` and `weak_suites`, which scanner-node adds for its own output, are not
 * part of the contract: the Worker re-evaluates both from the observed data.
 */
import { z } from "zod";
import { CIPHER_PREFERENCES, CONNECTION_METHODS, SCAN_ERROR_CLASSES, STARTTLS_PROTOCOLS, TRUST_ANCHORS, type ScanErrorClass } from "./vocabulary";

// ---------------------------------------------------------------------------
// Field kinds: each states its acceptance rule once, and what the field is once
// accepted (its stored form: `text` accepts string, null or nothing and stores a string).

/** The stored form of each accepting schema, set by the field kinds; read by `storedForm`. */
const STORED = new WeakMap<z.ZodType, z.ZodType>();
const kind = <I extends z.ZodType>(accepts: I, stored: z.ZodType): I => (STORED.set(accepts, stored), accepts);

/**
 * The contract's stored form of an object: each field as it is once accepted (the output
 * type, with the same descriptions), for the documents of APIs that return an accepted
 * result (the cert-watcher scan history), so they say `string` where the contract accepts
 * `string | null | undefined`.
 */
export function storedForm<S extends z.ZodRawShape>(schema: z.ZodObject<S>): z.ZodObject<{ [K in keyof S]: z.ZodType<z.output<S[K]>> }> {
  const shape = Object.fromEntries(Object.entries(schema.shape).map(([k, v]) => [k, storedOf(v as z.ZodType)]));
  return z.object(shape) as never;
}
const storedOf = (s: z.ZodType): z.ZodType => STORED.get(s) ?? (s instanceof z.ZodObject ? storedForm(s) : s);

/**
 * Control characters (C0, DEL, C1) of an observed string written visibly as `\xHH`: a
 * certificate's subject is the endpoint owner's to choose, and a CR/LF in it must not
 * reach a mail header, a log line or a table as a line break; what was served stays
 * readable as evidence.
 */
export const visibleControls = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}`);

/** A string cut to `max` characters, control characters made visible; absent or null: "". */
const text = (max: number, description: string) =>
  kind(
    z
      .string()
      .nullish()
      .transform((s) => visibleControls(s ?? "").slice(0, max))
      .describe(description),
    z.string().describe(description),
  );

/** A string cut to `max` characters, control characters made visible, or null (absent: null). */
const nullableText = (max: number, description: string) =>
  kind(
    z
      .string()
      .nullish()
      .transform((s) => (s == null ? null : visibleControls(s).slice(0, max)))
      .describe(description),
    z.string().nullable().describe(description),
  );

/** A list cut to `max` items; absent or null: []. */
const list = <T extends z.ZodType>(item: T, max: number, description: string) =>
  kind(
    z
      .array(item)
      .nullish()
      .transform((a) => (a ?? []).slice(0, max) as z.output<T>[])
      .describe(description),
    z.array(storedOf(item)).describe(description),
  );

/** A string list item cut to `max` characters, control characters made visible. */
const item = (max: number) =>
  kind(
    z.string().transform((s) => visibleControls(s).slice(0, max)),
    z.string(),
  );

/** An integer, or null (absent: null). */
const int = (description: string) =>
  kind(
    z
      .number()
      .int()
      .nullish()
      .transform((v) => v ?? null)
      .describe(description),
    z.number().int().nullable().describe(description),
  );

/** A boolean, or null when unknown (absent: null). */
const flag = (description: string) =>
  kind(
    z
      .boolean()
      .nullish()
      .transform((v) => v ?? null)
      .describe(description),
    z.boolean().nullable().describe(description),
  );

/** One of a closed set, or null (absent: null); another value is refused. */
const oneOf = <const V extends readonly [string, ...string[]]>(values: V, description: string) =>
  kind(
    z
      .enum(values)
      .nullish()
      .transform((v) => v ?? null)
      .describe(description),
    z.enum(values).nullable().describe(description),
  );

/** An object, or null (absent: null). */
const nullable = <S extends z.ZodRawShape>(schema: z.ZodObject<S>, description: string) =>
  kind(
    schema
      .nullish()
      .transform((v) => (v ?? null) as z.output<z.ZodObject<S>> | null)
      .describe(description),
    storedForm(schema).nullable().describe(description),
  );

// ---------------------------------------------------------------------------
// Pieces

const DN = 2048;
/** Base64 of a leaf of up to 48 KB: far above any real TLS certificate. */
const LEAF_DER_MAX = 65_536;
const URL_MAX = 2048;

export const LeafCertificate = z.object({
  sha256: text(128, "SHA-256 fingerprint (hex)"),
  subject: text(DN, "Subject distinguished name"),
  issuer: text(DN, "Issuer distinguished name"),
  serial: text(128, "Serial number (hex)"),
  signature_algorithm: text(128, "Signature algorithm (OpenSSL name, e.g. sha256WithRSAEncryption)"),
  aia: text(URL_MAX, "CA Issuers URL"),
  ocsp: text(URL_MAX, "OCSP responder URL"),
  dns_names: list(item(253), 1000, "Subject alternative names"),
  not_before: text(64, "Start of validity, RFC 3339"),
  not_after: text(64, "End of validity, RFC 3339"),
  public_key_algorithm: text(32, "RSA, ECDSA, Ed25519 or Ed448"),
  key_bits: int("Key size in bits"),
  curve: nullableText(64, "OpenSSL curve name of an EC key (prime256v1, secp384r1, ...)"),
  spki_sha256: nullableText(64, "SHA-256 of the leaf's SubjectPublicKeyInfo (hex): its key, the same in every certificate of that key; null from agents that do not send it"),
  der: nullableText(
    LEAF_DER_MAX,
    "The leaf as served, DER in base64: the Worker derives from it what ties the deployment to the certificate's Certificate Transparency entries " +
      "(a precertificate has another fingerprint than the certificate served). Null from agents that do not send it; a longer value is cut and then ignored",
  ),
});

export const ChainEntry = z.object({
  subject: text(DN, "Subject distinguished name"),
  issuer: text(DN, "Issuer distinguished name"),
  not_before: text(64, "Start of validity, RFC 3339"),
  not_after: text(64, "End of validity, RFC 3339"),
  signature_sha256: text(128, "SHA-256 fingerprint (hex)"),
});

export const PathEntry = z.object({
  certificate_subject: text(DN, "Subject of this path element"),
  certificate_issuer: text(DN, "Issuer of this path element"),
});

export const ProtocolDetail = z.object({
  protocol: text(16, "SSL/TLS version (TLSv1.2 ...)"),
  accepted: flag("The server accepted this version; null when the probes could not tell"),
  complete: flag("Every suite of this version was probed"),
  cipher_preference: oneOf(CIPHER_PREFERENCES, "Whose suite order the server follows for this version"),
  ciphers: list(item(100), 512, "Accepted IANA cipher suite names"),
  cipher_codes: list(item(10), 512, "Accepted suites as IANA code points (0xC02F)"),
  notes: list(item(500), 20, "What the probes met (incomplete enumeration, odd answers)"),
});

export const Validation = z.object({
  trusted: flag("The chain validates to the trust anchor"),
  error: text(2000, "Why it does not validate; empty when trusted"),
  hostname_match: flag("The leaf is valid for the SNI name; null without one"),
  anchor: oneOf(TRUST_ANCHORS, "The trust anchor used: the system store or the monitor's root_ca"),
});

const ERROR_CLASS =
  `Why the scan failed (${SCAN_ERROR_CLASSES.join(", ")}); null on success. Agents before this field omit it (the service then reads the error text); ` +
  "a value this version does not know is taken as null, so a newer agent is never refused for it";

export const ScanResult = z.object({
  monitor_cn: text(253, "Common name of the certificate monitor"),
  dns_name: text(253, "SNI hostname, may be empty"),
  ip_address: text(64, "Scanned address"),
  port: int("TCP port"),
  connection_method: oneOf(CONNECTION_METHODS, "direct_tls or starttls"),
  starttls: oneOf(STARTTLS_PROTOCOLS, "STARTTLS dialect spoken before the handshake, or null"),
  protocol: list(item(16), 8, "Accepted TLS versions, e.g. TLSv1.2"),
  ciphers: list(item(100), 512, "Accepted IANA cipher suite names"),
  named_groups: list(item(64), 128, "Accepted key exchange groups"),
  certificate: nullable(LeafCertificate, "The leaf certificate served"),
  validity_days: int("Days until expiry, negative if expired"),
  intermediates: list(ChainEntry, 16, "Intermediate certificates served"),
  intermediates_der: list(
    item(LEAF_DER_MAX),
    16,
    "The intermediates as served, DER in base64, in the order of `intermediates`: the Worker matches a mail server's chain against its DANE TLSA records (DANE-TA). Empty from agents that do not send them",
  ),
  validation_path: list(PathEntry, 16, "Validation path, leaf to trust anchor"),
  has_error: z.boolean().describe("True if the scan failed entirely"),
  error: text(2000, "Error message, empty on success"),
  error_class: kind(
    z
      .string()
      .nullish()
      .transform((v) => ((SCAN_ERROR_CLASSES as readonly string[]).includes(v ?? "") ? (v as ScanErrorClass) : null))
      .describe(ERROR_CLASS),
    z.enum(SCAN_ERROR_CLASSES).nullable().describe(ERROR_CLASS),
  ),
  // Details beyond the event fields
  cipher_preference: oneOf(CIPHER_PREFERENCES, "Whose suite order the server follows (highest version that tells)"),
  protocols_detail: list(ProtocolDetail, 8, "Per SSL/TLS version: accepted or not, its suites, notes"),
  named_groups_detail: nullable(
    z.object({ tls13: list(item(64), 128, "Groups accepted in TLS 1.3"), tls12: list(item(64), 128, "Groups accepted in TLS 1.2 ECDHE") }),
    "Accepted groups per version",
  ),
  dh_bits: int("Smallest finite-field DH size seen in a DHE key exchange"),
  chain_length: int("Certificates in the served chain"),
  chain_protocol: nullableText(16, "Version of the handshake the chain was read from"),
  self_signed: flag("The leaf's subject equals its issuer"),
  validation: nullable(Validation, "Chain validation by the agent"),
  scanned_at: text(64, "When the agent scanned, ISO 8601 (the API records its own time of acceptance)"),
  probes: int("Connections the scan opened"),
  duration_ms: kind(
    z
      .number()
      .nonnegative()
      .nullish()
      .transform((v) => (v == null ? null : Math.round(v)))
      .describe("Wall time of the scan in milliseconds"),
    z.number().int().nullable().describe("Wall time of the scan in milliseconds"),
  ),
});

export type LeafCertificate = z.output<typeof LeafCertificate>;
export type ChainEntry = z.output<typeof ChainEntry>;
export type PathEntry = z.output<typeof PathEntry>;
export type ProtocolDetail = z.output<typeof ProtocolDetail>;
export type Validation = z.output<typeof Validation>;
export type ScanResult = z.output<typeof ScanResult>;
