/**
 * The CT-Log event, declared ONCE: its TypeScript types,
 * the CEL variables rules are type-checked against (and introspection lists), and the
 * shape of the JSON stored per occurrence all come from this zod object.
 *
 * Two kinds share the one schema, so one rule language covers both:
 *   kind "match"      a certificate named a name a filter matches
 *   kind "typosquat"  a certificate named a lookalike of a typosquat-protected filter's
 *                     domain; `typosquat.*` says which and why, `caa` is not evaluated
 * Every field is present in both kinds (a match has empty `typosquat.*` values), so a
 * rule such as `typosquat.evidence.exists(e, e == "confusable")` simply does not match a
 * filter match instead of failing on a missing field.
 *
 * Lookalike domains are assets too (lookalikes/): `event_type` "lookalike_detected" when
 * one is first found (by a certificate or by the registered-permutation discovery) and
 * checked, "lookalike_state_changed" when a later check moves it (registered, resolving,
 * mail_capable, serving, gone), both of kind "lookalike" with `lookalike.*` filled in and
 * `lookalike.previous_state` naming where it came from. A lookalike whose checks fail
 * twice in a row raises collection_failing with `lookalike.*` naming it (`log.*` empty).
 * Rules see lookalike events only when they read `event_type` or `lookalike`, so a rule
 * written for certificates (`filter_id == 3`) does not start firing on them.
 *
 * `event_type` says the kind again ("match", "typosquat") beside the collection events
 * every module has ("collection_failing", "collection_recovered": a CT log the
 * organization relies on could not be read twice in a row / is read again). A collection
 * event has kind "collection", names the log in `log.*`, and carries empty certificate,
 * CAA, rate and typosquat values (`buildCtLogCollectionEvent`).
 */
import { z } from "zod";
import { CollectionEventFieldsSchema, collectionEventHead, eventTypeSchema, NOT_A_COLLECTION_EVENT, type CollectionEventInput } from "../../platform/collection/event";
import { variablesOf } from "../../platform/event-variables";
import { CONFIDENCE, EVIDENCE } from "./typosquat/detect";
import { LOOKALIKE_SOURCES, LOOKALIKE_STATES } from "./lookalikes/vocabulary";

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

export const CtEventRateSchema = z.object({
  count: z.number().int().describe("Matching certificates in the current window"),
  window: z.string().describe("Window, e.g. 1h"),
  precert_count: z.number().int().describe("Precertificates in the window"),
  final_count: z.number().int().describe("Final certificates in the window"),
  total_count: z.number().int().describe("All entries in the window"),
});

export const CtEventTyposquatSchema = z.object({
  candidate_domain: z.string().describe('Registrable domain of the lookalike name, A-labels (e.g. "paypa1.com"); empty for a filter match'),
  protected_domain: z.string().describe('The protected registrable domain: the filter\'s pattern (e.g. "paypal.com"); empty for a filter match'),
  certificate_name: z.string().describe("The certificate name that is the lookalike, as observed; empty for a filter match"),
  evidence: z.array(z.string()).describe(`Why it is a lookalike, in this order: ${EVIDENCE.join(", ")} (docs/lookalikes.md). Empty for a filter match`),
  confidence: z
    .enum(["", ...CONFIDENCE])
    .describe('"low": an edit of a protected label shorter than 5 characters with nothing corroborating it ("ibn.com" for ibm.com); "high" otherwise; "" for a filter match'),
  edit_distance: z
    .number()
    .int()
    .optional()
    .describe("Damerau-Levenshtein distance of the labels' skeletons, when an edit category applies (absent otherwise, test with has())"),
});

export const CtEventLookalikeSchema = z.object({
  id: z.number().int().describe("The lookalike's id (GET /api/ct-log/lookalikes/{id}); 0 on other events"),
  domain: z.string().describe('The lookalike registrable domain, A-labels (e.g. "xn--l1a5a3a.com")'),
  domain_unicode: z.string().describe('The same in Unicode, as a browser shows it (e.g. "іьм.com")'),
  protected_domain: z.string().describe("The protected registrable domain it imitates"),
  source: z.enum(["", ...LOOKALIKE_SOURCES]).describe('"ct": a certificate named it; "permutation": the discovery found it registered'),
  state: z.enum(["", ...LOOKALIKE_STATES]).describe("Its state after this event: new, registered, resolving, mail_capable, serving, gone (docs/lookalikes.md)"),
  previous_state: z.enum(["", ...LOOKALIKE_STATES]).describe('Its state before this event ("" when just detected)'),
  confidence: z.enum(["", ...CONFIDENCE]).describe('"low" or "high", as typosquat.confidence'),
  evidence: z.array(z.string()).describe("Why it is a lookalike, corroboration included (brand_keyword, foreign_hosting, recently_registered)"),
  registered: z.boolean().describe("Registered (NS at the name) at the latest check"),
  resolves: z.boolean().describe("Has an A or AAAA address"),
  has_mx: z.boolean().describe("Has an MX: can receive mail"),
  serving: z.boolean().describe("Accepted a connection on the HTTPS port"),
  registered_at: z.string().describe('RDAP registration date (ISO 8601), "" when not known'),
  registrar: z.string().describe('RDAP registrar name, "" when not known'),
  first_seen_at: z.string().describe("When it was first found, ISO 8601"),
  change: z.string().describe('What the check saw change, in words ("MX 10 mx.ibn.com added"); "" when just detected'),
});

export const CtLogEventSchema = z.object({
  event_type: eventTypeSchema(
    ["match", "typosquat", "lookalike_detected", "lookalike_state_changed"],
    '"match" and "typosquat" as in kind; "lookalike_detected": a lookalike domain was found and checked for the first time; "lookalike_state_changed": a check moved a lookalike to another state (lookalike.previous_state, lookalike.state)',
  ),
  collection: CollectionEventFieldsSchema,
  kind: z
    .enum(["match", "typosquat", "lookalike", "collection"])
    .describe(
      '"match": a name matched a filter; "typosquat": a certificate name is a lookalike of a typosquat-protected filter\'s domain; "lookalike": a lookalike domain as an asset (detected, state changed); "collection": a collection event (see event_type)',
    ),
  log: z
    .object({
      name: z.string().describe("The log's description"),
      url: z.string().describe("The log's submission or monitoring URL"),
      log_id: z.string().describe("Log ID (base64)"),
    })
    .describe("The CT log a collection event is about; empty values on match and typosquat events (see cert.log_name)"),
  cert: CtEventCertSchema.describe("The matched certificate or precertificate"),
  caa: CaaEvaluationSchema.describe("CAA check at observation time against current DNS (typosquat events: not evaluated, caa.error says so)"),
  rate: CtEventRateSchema.describe("Issuance rate for the filter (typosquat events: lookalikes of the protected domain)"),
  typosquat: CtEventTyposquatSchema.describe("The lookalike (typosquat events; empty values for a filter match)"),
  lookalike: CtEventLookalikeSchema.describe("The lookalike domain (lookalike events, and collection events about a lookalike); empty values on other events"),
  filter_id: z.number().int().describe("The matching filter (typosquat events: the protected filter)"),
  matched_at: z.string().describe("When the match became visible (published after verification), ISO 8601"),
});

export type CtLogEvent = z.infer<typeof CtLogEventSchema>;
export type CtEventCert = z.infer<typeof CtEventCertSchema>;
export type CaaEvaluation = z.infer<typeof CaaEvaluationSchema>;
export type CtEventRate = z.infer<typeof CtEventRateSchema>;
export type CtEventTyposquat = z.infer<typeof CtEventTyposquatSchema>;
export type CtEventLog = CtLogEvent["log"];
export type CtEventLookalike = z.infer<typeof CtEventLookalikeSchema>;

/** The CEL variable schema of CT-Log events (introspection, type checking). */
export const ctLogVariables = variablesOf(CtLogEventSchema);

/** `log` of a match or typosquat event. */
export const NO_LOG: CtEventLog = { name: "", url: "", log_id: "" };

/** `lookalike` of events that are not about a lookalike: every field empty. */
export const NO_LOOKALIKE: CtEventLookalike = {
  id: 0, domain: "", domain_unicode: "", protected_domain: "", source: "", state: "", previous_state: "", confidence: "", evidence: [],
  registered: false, resolves: false, has_mx: false, serving: false, registered_at: "", registrar: "", first_seen_at: "", change: "",
};

/** The event types of the lookalike lifecycle. */
export const LOOKALIKE_EVENT_TYPES = ["lookalike_detected", "lookalike_state_changed"] as const;

/** Seen only by rules that read `event_type` or `lookalike` (alerting/cel/variables MODULE_OPT_IN_EVENTS). */
export const ctLogOptInEvents: Readonly<Record<string, string>> = Object.fromEntries(LOOKALIKE_EVENT_TYPES.map((t) => [t, "lookalike"]));

/** `typosquat` of a filter match: every field empty. */
export const NO_TYPOSQUAT: CtEventTyposquat = { candidate_domain: "", protected_domain: "", certificate_name: "", evidence: [], confidence: "" };

/** caa.* of an entry that only matched as a lookalike: no filter names it, so no CAA lookup is made. */
export const CAA_NOT_EVALUATED: CaaEvaluation = {
  has_records: false,
  authorized: true,
  records: [],
  error: "not evaluated: typosquatting match only",
  checked_names: [],
  issuer_candidates: [],
  evaluated_at: "",
};

export function buildMatchEvent(input: { cert: CtEventCert; caa: CaaEvaluation; rate: CtEventRate; filterId: number; matchedAt: string }): CtLogEvent {
  return { event_type: "match", collection: NOT_A_COLLECTION_EVENT, kind: "match", log: NO_LOG, cert: input.cert, caa: input.caa, rate: input.rate, typosquat: NO_TYPOSQUAT, lookalike: NO_LOOKALIKE, filter_id: input.filterId, matched_at: input.matchedAt };
}

export function buildTyposquatEvent(input: {
  cert: CtEventCert;
  caa?: CaaEvaluation;
  rate: CtEventRate;
  filterId: number;
  matchedAt: string;
  typosquat: CtEventTyposquat;
}): CtLogEvent {
  const typosquat: CtEventTyposquat = {
    candidate_domain: input.typosquat.candidate_domain,
    protected_domain: input.typosquat.protected_domain,
    certificate_name: input.typosquat.certificate_name,
    evidence: input.typosquat.evidence,
    confidence: input.typosquat.confidence,
  };
  if (input.typosquat.edit_distance !== undefined) typosquat.edit_distance = input.typosquat.edit_distance;
  return { event_type: "typosquat", collection: NOT_A_COLLECTION_EVENT, kind: "typosquat", log: NO_LOG, cert: input.cert, caa: input.caa ?? CAA_NOT_EVALUATED, rate: input.rate, typosquat, lookalike: NO_LOOKALIKE, filter_id: input.filterId, matched_at: input.matchedAt };
}

/** Every cert.* field empty but the log's name. */
const noCertificate = (logName: string): CtEventCert => ({
  subject: "", issuer: "", dns_names: [], sha256: "", serial: "", not_before: "", not_after: "", signature_algorithm: "", key_algorithm: "",
  is_precert: false, log_name: logName, log_index: 0, aia_issuing: [], ocsp_servers: [], scts: [],
});

/**
 * A CT log the organization relies on whose reading entered `failing` or recovered.
 * `matched_at` is the time of the attempt; `filter_id` 0.
 */
export function buildCtLogCollectionEvent(input: CollectionEventInput & { log: CtEventLog; attemptedAt: string }): CtLogEvent {
  return {
    ...collectionEventHead(input),
    kind: "collection",
    log: { name: input.log.name, url: input.log.url, log_id: input.log.log_id },
    cert: noCertificate(input.log.name),
    caa: { ...CAA_NOT_EVALUATED, error: "not evaluated: collection event" },
    rate: NO_RATE,
    typosquat: NO_TYPOSQUAT,
    lookalike: NO_LOOKALIKE,
    filter_id: 0,
    matched_at: input.attemptedAt,
  };
}

const NO_RATE: CtEventRate = { count: 0, window: "", precert_count: 0, final_count: 0, total_count: 0 };

/** A lookalike detected (first check done) or moved to another state by a check; `at` is the check's time. */
export function buildLookalikeEvent(input: {
  eventType: (typeof LOOKALIKE_EVENT_TYPES)[number];
  lookalike: CtEventLookalike;
  filterId: number | null;
  at: string;
}): CtLogEvent {
  return {
    event_type: input.eventType,
    collection: NOT_A_COLLECTION_EVENT,
    kind: "lookalike",
    log: NO_LOG,
    cert: noCertificate(""),
    caa: { ...CAA_NOT_EVALUATED, error: "not evaluated: lookalike event" },
    rate: NO_RATE,
    typosquat: NO_TYPOSQUAT,
    lookalike: input.lookalike,
    filter_id: input.filterId ?? 0,
    matched_at: input.at,
  };
}

/** A lookalike whose checks entered `failing` or recovered: `lookalike.*` names it, `log.*` is empty. */
export function buildLookalikeCollectionEvent(input: CollectionEventInput & { lookalike: CtEventLookalike; filterId: number | null; attemptedAt: string }): CtLogEvent {
  return {
    ...collectionEventHead(input),
    kind: "collection",
    log: NO_LOG,
    cert: noCertificate(""),
    caa: { ...CAA_NOT_EVALUATED, error: "not evaluated: collection event" },
    rate: NO_RATE,
    typosquat: NO_TYPOSQUAT,
    lookalike: input.lookalike,
    filter_id: input.filterId ?? 0,
    matched_at: input.attemptedAt,
  };
}
