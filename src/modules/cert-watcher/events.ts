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
import { z } from "zod";
import { CONNECTION_METHODS, LeafCertificate, ScanResult } from "@trust-plane/scan-contract";
import { CollectionEventFieldsSchema, collectionEventHead, eventTypeSchema, NOT_A_COLLECTION_EVENT, type CollectionEventInput } from "../../platform/collection/event";
import { variablesOf } from "../../platform/event-variables";

const result = ScanResult.shape;

/** The leaf as the event shows it: key size and curve stay in the scan details. */
const EventCertificate = LeafCertificate.omit({ key_bits: true, curve: true });

/** The one declaration of the event: its TypeScript type and its CEL variables come from it. */
export const CertScanEventSchema = z.object({
  event_type: eventTypeSchema(["scan_completed"], '"scan_completed" for every accepted scan result'),
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
  if (observed.certificate) {
    const { key_bits: _bits, curve: _curve, ...leaf } = observed.certificate;
    certificate = leaf;
  }
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
  };
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
  };
}
