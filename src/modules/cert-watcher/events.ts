/**
 * The certificate scan event: the variables
 * alert rules (CEL) see for every accepted scan. Declared once, from the same field
 * declarations as the agent contract's scan result (packages/scan-contract), so the
 * event, the API validation and the agent's types cannot drift apart.
 *
 * The event is built from the monitor and target the job names (monitor_cn, dns_name,
 * ip_address, connection_method), never from what the agent claims they were, and from
 * the observed data as the Worker normalized it (protocol spellings, failure).
 */
// zod as @hono/zod-openapi extends it: zod 4 gives each schema its methods when it is built,
// so a schema built before that extension ran has no .openapi(), which the API schemas call
// on these (the ingest Worker's bundle evaluates this file first).
import { z } from "@hono/zod-openapi";
import { CONNECTION_METHODS, LeafCertificate, ScanResult } from "@trust-plane/scan-contract";
import { CollectionEventFieldsSchema, collectionEventHead, eventTypeSchema, NOT_A_COLLECTION_EVENT, type CollectionEventInput } from "../../platform/collection/event";
import { variablesOf, type SuggestedRule } from "../../platform/event-variables";
import { CT_STATUSES } from "../../db/schema/inventory";

const result = ScanResult.shape;

/** The leaf as the event shows it: key size, curve and the DER stay in the scan details. */
const EventCertificate = LeafCertificate.omit({ key_bits: true, curve: true, der: true });

export { CT_STATUSES, type CtStatus } from "../../db/schema/inventory";

export const CertCtFieldsSchema = z
  .object({
    status: z.enum(["", ...CT_STATUSES]).describe(`The served certificate and CT (event not_in_ct): ${CT_STATUSES.join(", ")}; "" on other events`),
    reason: z.string().describe('Why, in words (which CA, since when CT monitoring of the name runs); "" on other events'),
    hostname: z.string().describe('The inventory hostname the target serves (the monitor\'s name); "" on other events'),
  })
  .describe("Certificate Transparency of the served certificate (event not_in_ct; empty values on other events)");
export type CertCtFields = z.infer<typeof CertCtFieldsSchema>;
export const NO_CT_FIELDS: CertCtFields = { status: "", reason: "", hostname: "" };

/** not_in_ct, added after rules were written, is seen only by rules that read `event_type` or `ct` (alerting/cel/variables MODULE_OPT_IN_EVENTS). */
export const certWatcherOptInEvents: Readonly<Record<string, string>> = { not_in_ct: "ct" };

/** The rules offered to an organization starting out. */
export const CERT_WATCHER_SUGGESTED_RULES: readonly SuggestedRule[] = [
  {
    name: "Served certificate never logged in CT",
    expression: 'event_type == "not_in_ct" && ct.status == "not_logged"',
    severity: "high",
    description: "A target serves a publicly trusted certificate issued since CT monitoring of its name started and never seen in the logs: issued outside the organization's view",
  },
];

/** The one declaration of the event: its TypeScript type and its CEL variables come from it. */
export const CertScanEventSchema = z.object({
  event_type: eventTypeSchema(
    ["scan_completed", "not_in_ct"],
    '"scan_completed" for every accepted scan result; "not_in_ct" when a target starts serving a certificate never seen in the CT logs read, or one of a private CA (see ct.*; once per certificate and target)',
  ),
  collection: CollectionEventFieldsSchema,
  monitor_id: z.number().int().describe("The id of the certificate monitor the scan belongs to (two monitors of one endpoint are two assets)"),
  monitor_cn: result.monitor_cn,
  dns_name: result.dns_name,
  ip_address: result.ip_address,
  port: z.number().int().describe("TCP port scanned"),
  connection_method: z.enum(CONNECTION_METHODS).describe("direct_tls or starttls"),
  protocol: result.protocol,
  ciphers: result.ciphers,
  named_groups: result.named_groups,
  certificate: EventCertificate.nullable().describe("The leaf certificate served"),
  validity_days: result.validity_days,
  intermediates: result.intermediates,
  validation_path: result.validation_path,
  has_error: result.has_error,
  error: result.error,
  ct: CertCtFieldsSchema,
});

export type CertScanEvent = z.output<typeof CertScanEventSchema>;

/** The CEL variable schema of certificate scan events (introspection, type checking). */
export const certWatcherVariables = variablesOf(CertScanEventSchema);

/** Whose scan it is: from the job's monitor and target. */
export interface ScanSubject {
  monitorId: number;
  monitorCn: string;
  port: number;
  sni: string;
  ipAddress: string;
  starttls: string | null;
}

/** What the Worker concluded from the accepted result (scan-result.ts). */
export interface ObservedScan {
  result: ScanResult;
  /** Accepted versions, spelled as TLS tools do (TLSv1.2). */
  protocols: string[];
  certificate: LeafCertificate | null;
  validityDays: number | null;
  hasError: boolean;
  error: string;
}

export function buildCertScanEvent(subject: ScanSubject, observed: ObservedScan): CertScanEvent {
  const r = observed.result;
  let certificate: CertScanEvent["certificate"] = null;
  if (observed.certificate) certificate = eventCertificate(observed.certificate);
  return {
    event_type: "scan_completed",
    collection: NOT_A_COLLECTION_EVENT,
    monitor_id: subject.monitorId,
    monitor_cn: subject.monitorCn,
    dns_name: subject.sni,
    ip_address: subject.ipAddress,
    port: subject.port,
    connection_method: subject.starttls ? "starttls" : "direct_tls",
    protocol: observed.protocols,
    ciphers: r.ciphers,
    named_groups: r.named_groups,
    certificate,
    validity_days: observed.validityDays,
    intermediates: r.intermediates,
    validation_path: r.validation_path,
    has_error: observed.hasError,
    error: observed.error,
    ct: NO_CT_FIELDS,
  };
}

/** The leaf as events show it. */
export function eventCertificate(leaf: LeafCertificate): NonNullable<CertScanEvent["certificate"]> {
  const { key_bits: _bits, curve: _curve, der: _der, ...shown } = leaf;
  return shown;
}

/**
 * A target that started serving a certificate not seen in CT (or of a private CA): the
 * scan's event, retyped `not_in_ct`, with `ct.*` saying which. Raised by the inventory
 * once per (target, certificate).
 */
export function buildNotInCtEvent(scan: CertScanEvent, ct: CertCtFields): CertScanEvent {
  return { ...scan, event_type: "not_in_ct", ct };
}

/**
 * A certificate target whose collection entered `failing` or recovered: the target's
 * identity, no observed data (empty lists, no certificate, `has_error` false: the
 * failure is in `collection.*`).
 */
export function buildCertCollectionEvent(subject: ScanSubject, input: CollectionEventInput): CertScanEvent {
  return {
    ...collectionEventHead(input),
    monitor_id: subject.monitorId,
    monitor_cn: subject.monitorCn,
    dns_name: subject.sni,
    ip_address: subject.ipAddress,
    port: subject.port,
    connection_method: subject.starttls ? "starttls" : "direct_tls",
    protocol: [],
    ciphers: [],
    named_groups: [],
    certificate: null,
    validity_days: null,
    intermediates: [],
    validation_path: [],
    has_error: false,
    error: "",
    ct: NO_CT_FIELDS,
  };
}
