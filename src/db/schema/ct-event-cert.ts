/**
 * A logged certificate and its CAA check as the CT event carries them and CT matches store
 * them (`ct_matches.cert`, `ct_matches.caa`, the typosquatting matches' `cert`). The zod
 * objects give the stored type, the `cert.*` and `caa.*` CEL variables and the OpenAPI
 * schemas (`CtCertificate`, `CtCaaResult`) at once; modules/ct-log/events.ts builds the
 * event from them and re-exports them. Declared below the CT module so the tables do not
 * import it. No table here, so it is not in index.ts (drizzle-kit reads that).
 */
// zod as @hono/zod-openapi extends it: zod 4 gives each schema its methods when it is built,
// so a schema built before that extension ran has no .openapi(), which ct-log/schema.ts calls
// on these. Importing the extended z here makes the extension run first whatever loads this
// file first (the ingest Worker's bundle reaches it before any route file).
import { z } from "@hono/zod-openapi";

export const CtSctSchema = z.object({
  log_id: z.string().describe("Log ID (base64)"),
  timestamp: z.number().int().describe("SCT timestamp, milliseconds since the epoch"),
  version: z.number().int().describe("SCT version (0 = v1)"),
  hash_algorithm: z.string().describe("Hash algorithm of the SCT signature"),
  signature_algorithm: z.string().describe("Signature algorithm of the SCT signature"),
});

/** The cert.* fields: the certificate (or precertificate) of one log entry. */
export const CtEventCertSchema = z.object({
  subject: z.string().describe("Subject common name"),
  issuer: z.string().describe("Full issuer distinguished name"),
  dns_names: z.array(z.string()).describe("All subject alternative names"),
  sha256: z.string().describe("SHA-256 fingerprint (hex)"),
  serial: z.string().describe("Serial number (hex)"),
  not_before: z.string().describe("Start of validity, ISO 8601"),
  not_after: z.string().describe("End of validity, ISO 8601"),
  signature_algorithm: z.string().describe("Signature algorithm, e.g. sha256WithRSAEncryption"),
  key_algorithm: z.string().describe("Public key algorithm, e.g. RSA, EC"),
  key_size: z.number().int().optional().describe("Key size in bits (RSA/DSA only; absent otherwise, test with has())"),
  is_precert: z.boolean().describe("True for a precertificate entry"),
  log_name: z.string().describe("CT log of the entry"),
  log_index: z.number().int().describe("Position of the entry in the log"),
  aia_issuing: z.array(z.string()).describe("CA Issuers URLs (Authority Information Access)"),
  ocsp_servers: z.array(z.string()).describe("OCSP responder URLs"),
  scts: z.array(CtSctSchema).describe("Embedded signed certificate timestamps"),
  spki_sha256: z.string().describe("SHA-256 of the certificate's SubjectPublicKeyInfo (hex): its key, the same in every certificate of that key"),
  issuer_spki_sha256: z
    .string()
    .describe("SHA-256 of the issuing CA's SubjectPublicKeyInfo (hex): the precertificate entry's issuer_key_hash, or the issuer in the entry's chain; empty when the entry does not carry it"),
});

/** The caa.* fields: the CAA check (RFC 8659) made when the entry was read. */
export const CaaEvaluationSchema = z.object({
  has_records: z.boolean().describe("Any CAA records exist"),
  authorized: z.boolean().describe("The issuing CA is permitted"),
  records: z.array(z.string()).describe("Issuance values found"),
  error: z.string().describe("Lookup error, empty if none"),
  checked_names: z.array(z.string()).describe("Names whose CAA records were checked"),
  issuer_candidates: z.array(z.string()).describe("CA identifiers derived from the issuer"),
  evaluated_at: z.string().describe("Time of the CAA check, ISO 8601"),
});

export type CtEventCert = z.infer<typeof CtEventCertSchema>;
export type CaaEvaluation = z.infer<typeof CaaEvaluationSchema>;
