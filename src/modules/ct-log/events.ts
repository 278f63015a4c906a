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
 * Two more event types come from the certificate inventory (src/modules/inventory/),
 * per hostname, once per state change: `renewal_overdue` (the certificate in use entered
 * the last sixth of its lifetime with no successor logged) and `stale_deployment` (a newer
 * certificate was logged more than 24 h ago and a target still serves the previous one).
 * They have kind "lifecycle", `lifecycle.*` names the hostname and its state, and `cert`
 * is the certificate concerned. A rule sees them only when it reads `event_type` or `lifecycle`
 * (ctLogOptInEvents).
 *
 * `event_type` says the kind again ("match", "typosquat") beside the collection events
 * every module has ("collection_failing", "collection_recovered": a CT log the
 * organization relies on could not be read twice in a row / is read again). A collection
 * event has kind "collection", names the log in `log.*`, and carries empty certificate,
 * CAA, rate and typosquat values (`buildCtLogCollectionEvent`).
 */
// zod as @hono/zod-openapi extends it: zod 4 gives each schema its methods when it is built,
// so a schema built before that extension ran has no .openapi(), which the API schemas call
// on these (the ingest Worker's bundle evaluates this file first).
import { z } from "@hono/zod-openapi";
import { CollectionEventFieldsSchema, collectionEventHead, eventTypeSchema, NOT_A_COLLECTION_EVENT, type CollectionEventInput } from "../../platform/collection/event";
import { variablesOf, type SuggestedRule } from "../../platform/event-variables";
import { AUTHORIZATION_VERDICTS } from "../../db/schema/ct-authorization";
import { HOSTNAME_STATES } from "../../db/schema/inventory";
import { CaaEvaluationSchema, CtEventCertSchema, type CaaEvaluation, type CtEventCert } from "../../db/schema/ct-event-cert";
import { CONFIDENCE, EVIDENCE } from "./typosquat/detect";
import { LOOKALIKE_SOURCES, LOOKALIKE_STATES } from "./lookalikes/vocabulary";

// The cert.* and caa.* objects are declared with the tables that store them
// (db/schema/ct-event-cert.ts, so the tables import no module); the module takes them from here.
export { CaaEvaluationSchema, CtEventCertSchema, type CaaEvaluation, type CtEventCert };

/**
 * What the certificate inventory adds to cert.* of an event (docs/modules/inventory.md):
 * whether the issuance was routine, whether it is deployed, what it replaces.
 */
export const CtEventCertLifecycleSchema = z.object({
  authorization: z
    .enum(["", ...AUTHORIZATION_VERDICTS])
    .describe(
      'Authorized issuance: "authorized" (a known key from an authorized issuer: routine), "unexpected_issuer", "unknown_key" (a key never seen deployed nor declared) or "caa_violation"; "" on typosquat and collection events',
    ),
  authorization_reason: z.string().describe("Why, in words (which issuer, which policy, where the key was seen)"),
  deployed: z.boolean().describe("Seen served by one of the organization's monitored targets when the event was raised"),
  replaces: z.string().describe('SHA-256 of the previous certificate of the same names (the newest issued before it), "" when none is known'),
  lifetime_days: z.number().int().describe("Validity in days (notAfter - notBefore + 1 s, as the CA/Browser Forum counts it); 0 when unknown"),
  exceeds_max_validity: z.boolean().describe("Valid for longer than the maximum in force at its not_before (398 days, 200 from 2026-03-15, 100 from 2027-03-15, 47 from 2029-03-15)"),
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

/** The inventory's view of a hostname, on renewal_overdue and stale_deployment events. */
export const CtEventLifecycleSchema = z.object({
  hostname: z.string().describe("The hostname (a certificate name of the organization; *.example.com for a wildcard)"),
  state: z.enum(["", ...HOSTNAME_STATES]).describe(`Its inventory state after the change: ${HOSTNAME_STATES.join(", ")}`),
  previous_state: z.enum(["", ...HOSTNAME_STATES]).describe("Its state before the change"),
  reason: z.string().describe("The state in words"),
  renewal_status: z.string().describe("Renewal of the certificate in use: ok, due (two thirds of its lifetime passed), overdue (last sixth), renewed, expired"),
  renewal_due_at: z.string().describe("When two thirds of the certificate's lifetime have passed, ISO 8601"),
  renewal_overdue_at: z.string().describe("When its last sixth begins, ISO 8601"),
  targets: z.array(z.string()).describe("The monitored targets concerned, ip:port (stale_deployment: those still serving the previous certificate)"),
});

/**
 * The rules offered to an organization starting out: issuance that is not routine, and
 * renewals that went wrong. A routine renewal (a known key from an authorized issuer)
 * raises nothing.
 */
export const CT_LOG_SUGGESTED_RULES: readonly SuggestedRule[] = [
  {
    name: "Certificate from a CA that may not issue for us",
    expression: 'event_type == "match" && cert.authorization in ["unexpected_issuer", "caa_violation"]',
    severity: "high",
    description: "A logged certificate whose issuer is not among the authorized issuers (issuance policy, filter, or the names' CAA records)",
  },
  {
    name: "Certificate for a key never seen deployed",
    expression: 'event_type == "match" && cert.authorization == "unknown_key"',
    severity: "medium",
    description: "An authorized CA issued for a key not seen on our endpoints nor on a declared key list: a new key, or someone else's request",
  },
  { name: "Renewed certificate not deployed after 24 h", expression: 'event_type == "stale_deployment"', severity: "high", description: "A newer certificate was logged more than a day ago and a target still serves the previous one" },
  { name: "Renewal overdue", expression: 'event_type == "renewal_overdue"', severity: "high", description: "The certificate in use entered the last sixth of its lifetime and no successor was logged" },
];

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
    ["match", "typosquat", "lookalike_detected", "lookalike_state_changed", "renewal_overdue", "stale_deployment"],
    '"match" and "typosquat" as in kind; "lookalike_detected": a lookalike domain was found and checked for the first time; "lookalike_state_changed": a check moved a lookalike to another state (lookalike.previous_state, lookalike.state); "renewal_overdue" and "stale_deployment" for a hostname of the certificate inventory (kind lifecycle, see lifecycle.*)',
  ),
  collection: CollectionEventFieldsSchema,
  kind: z
    .enum(["match", "typosquat", "lookalike", "collection", "lifecycle"])
    .describe(
      '"match": a name matched a filter; "typosquat": a certificate name is a lookalike of a typosquat-protected filter\'s domain; "lookalike": a lookalike domain as an asset (detected, state changed); "collection": a collection event (see event_type); "lifecycle": renewal_overdue or stale_deployment (see event_type)',
    ),
  log: z
    .object({
      name: z.string().describe("The log's description"),
      url: z.string().describe("The log's submission or monitoring URL"),
      log_id: z.string().describe("Log ID (base64)"),
    })
    .describe("The CT log a collection event is about; empty values on match and typosquat events (see cert.log_name)"),
  cert: CtEventCertSchema.extend(CtEventCertLifecycleSchema.shape).describe("The matched certificate or precertificate (lifecycle events: the certificate concerned)"),
  caa: CaaEvaluationSchema.describe("CAA check at observation time against current DNS (typosquat events: not evaluated, caa.error says so)"),
  rate: CtEventRateSchema.describe("Issuance rate for the filter (typosquat events: lookalikes of the protected domain)"),
  typosquat: CtEventTyposquatSchema.describe("The lookalike (typosquat events; empty values for a filter match)"),
  lookalike: CtEventLookalikeSchema.describe("The lookalike domain (lookalike events, and collection events about a lookalike); empty values on other events"),
  filter_id: z.number().int().describe("The matching filter (typosquat events: the protected filter); the same as filter.id"),
  filter: z
    .object({
      id: z.number().int().describe("The filter's id; 0 on collection events"),
      pattern: z.string().describe('The filter\'s pattern, e.g. "example.com"'),
    })
    .describe("The filter that matched (typosquat events: the protected filter; lifecycle events: a filter covering the hostname, if any)"),
  lifecycle: CtEventLifecycleSchema.describe("The hostname concerned (renewal_overdue and stale_deployment; empty values on other events)"),
  matched_at: z.string().describe("When the match became visible (published after verification), ISO 8601"),
});

export type CtLogEvent = z.infer<typeof CtLogEventSchema>;
export type CtEventCertLifecycle = z.infer<typeof CtEventCertLifecycleSchema>;
export type CtEventLifecycle = z.infer<typeof CtEventLifecycleSchema>;
export type CtEventFilter = CtLogEvent["filter"];
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

/** Event types added later, seen only by rules that read `event_type` or the named field (alerting/cel/variables MODULE_OPT_IN_EVENTS). */
export const ctLogOptInEvents: Readonly<Record<string, string>> = {
  ...Object.fromEntries(LOOKALIKE_EVENT_TYPES.map((t) => [t, "lookalike"])),
  // The certificate inventory's events: rules reading `event_type` or `lifecycle`.
  renewal_overdue: "lifecycle",
  stale_deployment: "lifecycle",
};

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

/** cert.* lifecycle fields of an event the inventory did not judge (typosquat and collection events). */
export const NOT_JUDGED: CtEventCertLifecycle = { authorization: "", authorization_reason: "", deployed: false, replaces: "", lifetime_days: 0, exceeds_max_validity: false };

/** lifecycle.* of an event that is not about a hostname. */
export const NO_LIFECYCLE: CtEventLifecycle = { hostname: "", state: "", previous_state: "", reason: "", renewal_status: "", renewal_due_at: "", renewal_overdue_at: "", targets: [] };

/** A stored occurrence's cert.*: occurrences stored before the key hashes were recorded have none ("" then). */
export function withKeyHashes(stored: CtEventCert): CtEventCert {
  return { ...stored, spki_sha256: stored.spki_sha256 ?? "", issuer_spki_sha256: stored.issuer_spki_sha256 ?? "" };
}

/** The event's cert.*: a stored occurrence's fields with what the inventory knows of it. */
export function eventCert(stored: CtEventCert, lifecycle: CtEventCertLifecycle = NOT_JUDGED): CtLogEvent["cert"] {
  return { ...withKeyHashes(stored), ...lifecycle };
}

export function buildMatchEvent(input: { cert: CtEventCert; caa: CaaEvaluation; rate: CtEventRate; filter: CtEventFilter; matchedAt: string; lifecycle?: CtEventCertLifecycle }): CtLogEvent {
  return {
    event_type: "match",
    collection: NOT_A_COLLECTION_EVENT,
    kind: "match",
    log: NO_LOG,
    cert: eventCert(input.cert, input.lifecycle),
    caa: input.caa,
    rate: input.rate,
    typosquat: NO_TYPOSQUAT,
    lookalike: NO_LOOKALIKE,
    filter_id: input.filter.id,
    filter: input.filter,
    lifecycle: NO_LIFECYCLE,
    matched_at: input.matchedAt,
  };
}

export function buildTyposquatEvent(input: {
  cert: CtEventCert;
  caa?: CaaEvaluation;
  rate: CtEventRate;
  filter: CtEventFilter;
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
  return {
    event_type: "typosquat",
    collection: NOT_A_COLLECTION_EVENT,
    kind: "typosquat",
    log: NO_LOG,
    cert: eventCert(input.cert),
    caa: input.caa ?? CAA_NOT_EVALUATED,
    rate: input.rate,
    typosquat,
    lookalike: NO_LOOKALIKE,
    filter_id: input.filter.id,
    filter: input.filter,
    lifecycle: NO_LIFECYCLE,
    matched_at: input.matchedAt,
  };
}

const NO_RATE: CtEventRate = { count: 0, window: "", precert_count: 0, final_count: 0, total_count: 0 };

/**
 * A hostname of the inventory changed state (renewal_overdue, stale_deployment): `cert`
 * is the certificate concerned (the one in use, or the newer one not yet deployed),
 * `at` the time of the evaluation that saw the change.
 */
export function buildLifecycleEvent(input: {
  type: "renewal_overdue" | "stale_deployment";
  cert: CtEventCert;
  judged: CtEventCertLifecycle;
  filter: CtEventFilter;
  lifecycle: CtEventLifecycle;
  at: string;
}): CtLogEvent {
  return {
    event_type: input.type,
    collection: NOT_A_COLLECTION_EVENT,
    kind: "lifecycle",
    log: NO_LOG,
    cert: eventCert(input.cert, input.judged),
    caa: { ...CAA_NOT_EVALUATED, error: "not evaluated: lifecycle event" },
    rate: NO_RATE,
    typosquat: NO_TYPOSQUAT,
    lookalike: NO_LOOKALIKE,
    filter_id: input.filter.id,
    filter: input.filter,
    lifecycle: input.lifecycle,
    matched_at: input.at,
  };
}

/** Every cert.* field empty but the log's name. */
const noCertificate = (logName: string): CtEventCert => ({
  subject: "", issuer: "", dns_names: [], sha256: "", serial: "", not_before: "", not_after: "", signature_algorithm: "", key_algorithm: "",
  is_precert: false, log_name: logName, log_index: 0, aia_issuing: [], ocsp_servers: [], scts: [], spki_sha256: "", issuer_spki_sha256: "",
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
    cert: eventCert(noCertificate(input.log.name)),
    caa: { ...CAA_NOT_EVALUATED, error: "not evaluated: collection event" },
    rate: NO_RATE,
    typosquat: NO_TYPOSQUAT,
    lookalike: NO_LOOKALIKE,
    filter_id: 0,
    filter: { id: 0, pattern: "" },
    lifecycle: NO_LIFECYCLE,
    matched_at: input.attemptedAt,
  };
}

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
    ...lookalikeEventBody(input.lookalike, input.filterId, "lookalike event"),
    matched_at: input.at,
  };
}

/** A lookalike whose checks entered `failing` or recovered: `lookalike.*` names it, `log.*` is empty. */
export function buildLookalikeCollectionEvent(input: CollectionEventInput & { lookalike: CtEventLookalike; filterId: number | null; attemptedAt: string }): CtLogEvent {
  return {
    ...collectionEventHead(input),
    kind: "collection",
    ...lookalikeEventBody(input.lookalike, input.filterId, "collection event"),
    matched_at: input.attemptedAt,
  };
}

/** What every lookalike event carries: the lookalike and its filter; no log, certificate, CAA, rate or lifecycle. */
function lookalikeEventBody(lookalike: CtEventLookalike, filterId: number | null, what: string) {
  return {
    log: NO_LOG,
    cert: eventCert(noCertificate("")),
    caa: { ...CAA_NOT_EVALUATED, error: `not evaluated: ${what}` },
    rate: NO_RATE,
    typosquat: NO_TYPOSQUAT,
    lookalike,
    filter_id: filterId ?? 0,
    filter: { id: filterId ?? 0, pattern: lookalike.protected_domain },
    lifecycle: NO_LIFECYCLE,
  };
}
