/** Request and response schemas of /api/cert-watcher. */
import { z } from "@hono/zod-openapi";
import { orNull } from "../../platform/openapi-document";
import * as contract from "@trust-plane/scan-contract";
import { STARTTLS_PROTOCOLS } from "@trust-plane/scan-contract";
import { limitOffsetQuery, pageQuery, pathId } from "../../platform/paging";
import { CIPHER_STATUSES, PROTOCOL_STATUSES, VALIDATION_STATUSES } from "@trust-plane/tls-frameworks";
import { VALIDITY_STATUSES } from "./indicators";
import { safeMultilineText, safeText } from "../../platform/text";
import { CollectionSchema } from "../../platform/collection/schema";

export const MonitorIdParam = z.object({ monitor_id: pathId("monitor_id") });
export const TargetIdParam = z.object({ monitor_id: pathId("monitor_id"), target_id: pathId("target_id") });
export const AgentIdParam = z.object({ agent_id: pathId("agent_id") });

export const Message = z.object({ message: z.string() });

// ---------------------------------------------------------------------------
// Monitors

export const MONITOR_SORTS = ["cn", "enabled", "target", "port", "last_scan_time", "created_at"] as const;
export const MonitorListQuery = limitOffsetQuery({ defaultLimit: 10, maxLimit: 100, sortBy: MONITOR_SORTS, defaultSort: "cn", defaultOrder: "asc" });
export const RECENT_SCAN_SORTS = ["cn", "validity", "protocol", "cipher", "validation", "last_scan_time"] as const;
export const RecentScansQuery = limitOffsetQuery({ defaultLimit: 10, maxLimit: 100, sortBy: RECENT_SCAN_SORTS, defaultSort: "last_scan_time", defaultOrder: "desc" });
export const HistoryQuery = pageQuery({ defaultPageSize: 20, maxPageSize: 100 });

const StartTlsSetting = z.enum(["auto", "none", ...STARTTLS_PROTOCOLS]).openapi({
  description:
    "How the scanner reaches TLS. `auto` (default): STARTTLS when the port is a well-known plaintext port (25, 587: smtp; 143: imap; " +
    "110: pop3; 21: ftp; 389: ldap; 5222: xmpp; 5432: postgres), direct TLS otherwise. `none`: always direct TLS. A protocol name: that STARTTLS dialect.",
});

const MonitorSettings = z.object({
  cn: z.string().min(1).max(253).openapi({ example: "www.example.com", description: "Hostname expected on the certificate; also the SNI unless target_dns is set. Stored lowercase (IDNs as A-labels)." }),
  port: z.number().int().min(1).max(65535).default(443).openapi({ description: "TCP port (1-65535)" }),
  target_dns: z.string().max(253).nullish().openapi({ description: "Optional DNS name sent as SNI instead of cn" }),
  enabled: z.boolean().default(true),
  notes: safeMultilineText(2000).default(""),
  root_ca: z.string().max(65536).nullish().openapi({
    description: "PEM trust anchor(s) (one or more CA certificates) for chain validation instead of the system store. Parsed on save: anything but CA-capable X.509 certificates is a 400. It does not change self-signed detection.",
  }),
  starttls: StartTlsSetting.default("auto"),
});

export const CreateMonitorRequest = MonitorSettings.extend({
  ip_addresses: z.array(z.string().max(64)).max(100).default([]).openapi({ description: "Initial IP targets (IPv4 or IPv6; at most 100); an invalid one is a 400 and nothing is saved" }),
}).openapi("CreateCertMonitor");
export const ReplaceMonitorRequest = MonitorSettings.openapi("ReplaceCertMonitor", {
  description:
    "Every setting of the monitor (PUT replaces all of them: an omitted optional field takes its default: port 443, target_dns null, enabled true, notes \"\", root_ca null, starttls auto). " +
    "IP targets are not part of it: manage them through /monitors/{monitor_id}/targets.",
});
export const EnabledRequest = z.object({ enabled: z.boolean() }).openapi("EnabledToggle");
export const CreateMonitorResponse = z.object({ id: z.number().int(), message: z.string(), quota_remaining: z.number().int() });

export const IndicatorsSchema = z
  .object({
    validity_status: z.enum(VALIDITY_STATUSES),
    protocol_status: z.enum(PROTOCOL_STATUSES),
    cipher_status: z.enum(CIPHER_STATUSES),
    validation_status: z.enum(VALIDATION_STATUSES),
    error_count: z.number().int(),
    target_count: z.number().int(),
    min_days_left: z.number().int().nullable(),
  })
  .openapi("CertMonitorIndicators", {
    description:
      "Computed from the latest scan of each enabled target; each status is the worst over those targets (`unknown` only when none is known). " +
      "validity_status: valid | expiring_soon (expires within 30 days) | expired | not_yet_valid | unknown (no certificate seen). " +
      "protocol_status and cipher_status are read from the scan's Mozilla intermediate verdict (one of the five framework verdicts), so they never contradict it: " +
      "protocol_status: modern (every accepted version is allowed by that profile: TLS 1.2, 1.3) | legacy (SSLv3, TLS 1.0 or 1.1 accepted) | unknown (nothing accepted). " +
      "cipher_status: strong (every offered suite is one of that profile's suites) | legacy (some offered suite is not, but none is broken: CBC mode, no forward secrecy, ...) | " +
      "weak (a broken suite is offered: RC4, DES, 3DES, NULL, EXPORT or anonymous) | unknown (no suite seen); the scan's weak_suites and legacy_suites list each suite and why. " +
      "validation_status: trusted | hostname_mismatch | untrusted (chain does not validate to the trust anchor) | self_signed (subject equals issuer) | unknown. " +
      "error_count: enabled targets whose latest scan failed; target_count: all targets; min_days_left: fewest days until expiry (negative if expired, null if no certificate). " +
      "Validity is judged at read time from the certificate's not_after.",
  });

export const TargetScanSummary = z
  .object({
    scan_id: z.number().int(),
    target_id: z.number().int(),
    ip_address: z.string(),
    scan_time: z.string(),
    has_error: z.boolean(),
    error: z.string(),
    subject: z.string().nullable(),
    issuer: z.string().nullable(),
    not_before: z.string().nullable(),
    not_after: z.string().nullable(),
    days_left: z.number().int().nullable().openapi({ description: "Days until expiry now (negative if expired)" }),
    protocol: z.array(z.string()),
    cipher_count: z.number().int(),
    validity_status: z.enum(VALIDITY_STATUSES),
    protocol_status: z.enum(PROTOCOL_STATUSES),
    cipher_status: z.enum(CIPHER_STATUSES),
    validation_status: z.enum(VALIDATION_STATUSES),
  })
  .openapi("CertTargetScanSummary");

export const LastScan = z.object({
  scan_time: z.string().nullable(),
  targets: z.array(TargetScanSummary).openapi({ description: "The latest scan of each target that has been scanned" }),
});

export const TargetSchema = z
  .object({
    id: z.number().int(),
    monitor_id: z.number().int(),
    ip_address: z.string(),
    enabled: z.boolean(),
    created_at: z.string(),
    last_scan_time: z.string().nullable(),
    last_scan: orNull(TargetScanSummary),
    collection: CollectionSchema.openapi({
      description:
        "Whether the organization's scanner agents could scan this target. An attempt is one scan job: a result that obtained a TLS answer is a success; " +
        "a failed scan is classified (dns_resolution, connect, timeout, tls, protocol) with a message naming the address, port and what failed; " +
        "a job whose lease expired without a result, or that no agent took within a scan interval, is a failed attempt (timeout) saying why. " +
        "Two failed attempts in a row: failing. Never scanned: pending. Disabled target or monitor: paused.",
    }),
  })
  .openapi("CertTarget");

export const MonitorSchema = z
  .object({
    id: z.number().int(),
    cn: z.string(),
    port: z.number().int(),
    target_dns: z.string().nullable(),
    starttls: z.enum(STARTTLS_PROTOCOLS).nullable().openapi({ description: "STARTTLS dialect used (resolved from the setting), or null for direct TLS" }),
    connection_method: z.enum(["direct_tls", "starttls"]),
    enabled: z.boolean(),
    notes: z.string(),
    root_ca: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    last_scan_time: z.string().nullable(),
    last_scan: LastScan,
    indicators: IndicatorsSchema,
    collection: CollectionSchema.openapi({
      description:
        "Summary of the enabled targets' collection: the worst state (failing, then pending, then ok), the oldest of their last successes " +
        "(null while one was never scanned), the earliest failing_since, the next attempt due and the error of a target in the worst state. Paused when disabled.",
    }),
  })
  .openapi("CertMonitor");

export const ScanningSchema = z
  .object({
    agents_registered: z.number().int().openapi({ description: "Scanner agents of the organization that are not revoked" }),
    agents_seen_recently: z.number().int().openapi({ description: "Of those, agents that asked for work in the last 10 minutes" }),
    last_agent_seen_at: z.string().nullable(),
    note: z.string().nullable().openapi({ description: "Why targets are not being scanned (no agent registered, none running), null while an agent is at work" }),
  })
  .openapi("CertScanning");

export const MonitorDetail = MonitorSchema.extend({ targets: z.array(TargetSchema), scanning: ScanningSchema }).openapi("CertMonitorDetail");

export const MonitorList = z.object({
  scanning: ScanningSchema,
  monitors: z.array(MonitorSchema),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  sort_by: z.enum(MONITOR_SORTS),
  sort_order: z.enum(["asc", "desc"]),
});

export const RecentScan = TargetScanSummary.extend({
  monitor_id: z.number().int(),
  cn: z.string(),
  port: z.number().int(),
  target_dns: z.string().nullable(),
}).openapi("CertRecentScan");
export const RecentScanList = z.object({
  scans: z.array(RecentScan),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  sort_by: z.enum(RECENT_SCAN_SORTS),
  sort_order: z.enum(["asc", "desc"]),
});

// ---------------------------------------------------------------------------
// Targets

export const CreateTargetRequest = z.object({ ip_address: z.string().max(64).openapi({ example: "192.0.2.10" }) }).openapi("CreateCertTarget");
export const CreateTargetResponse = TargetSchema.extend({ message: z.string() });
export const TargetList = z.object({ targets: z.array(TargetSchema) });

// ---------------------------------------------------------------------------
// History

const Verdict = z
  .object({
    id: z.string(),
    name: z.string(),
    version: z.string(),
    status: z.enum(["pass", "fail", "unknown"]),
    compliant: z.boolean(),
    reasons: z.array(z.object({ category: z.string(), item: z.string(), code: z.number().int().optional(), message: z.string() })),
  })
  .openapi("FrameworkVerdict");

const SuiteFinding = z.object({ code: z.number().int(), name: z.string(), weaknesses: z.array(z.string()) }).openapi("CertSuiteFinding");

// What the agent observed, as accepted (the contract's stored form: every field present).
const ScannedCertificate = contract.storedForm(contract.LeafCertificate).openapi("ScannedCertificate", { description: "The leaf certificate served" });
const ScannedChainEntry = contract.storedForm(contract.ChainEntry).openapi("ScannedChainEntry", { description: "An intermediate certificate served" });
const ScannedPathEntry = contract.storedForm(contract.PathEntry).openapi("ScannedPathEntry", { description: "An element of the validation path, leaf to trust anchor" });
const ScanValidation = contract.storedForm(contract.Validation).openapi("ScanValidation", { description: "Chain validation by the agent" });
const ScannedProtocol = contract.storedForm(contract.ProtocolDetail).openapi("ScannedProtocol", { description: "One SSL/TLS version: accepted or not, its suites, what the probes met" });

export const ScanDetail = z
  .object({
    id: z.number().int(),
    monitor_id: z.number().int(),
    target_id: z.number().int(),
    job_id: z.number().int().nullable(),
    agent_id: z.number().int().nullable(),
    scan_time: z.string(),
    ip_address: z.string(),
    dns_name: z.string(),
    connection_method: z.string(),
    has_error: z.boolean(),
    error: z.string(),
    protocol: z.array(z.string()),
    ciphers: z.array(z.string()),
    named_groups: z.array(z.string()),
    certificate: orNull(ScannedCertificate),
    validity_days: z.number().int().nullable().openapi({ description: "Days until expiry at scan time" }),
    chain_length: z.number().int().nullable(),
    intermediates: z.array(ScannedChainEntry),
    validation_path: z.array(ScannedPathEntry),
    validation: orNull(ScanValidation),
    protocols_detail: z.array(ScannedProtocol),
    cipher_preference: z.string().nullable(),
    dh_bits: z.number().int().nullable(),
    duration_ms: z.number().int().nullable(),
    protocol_status: z.enum(PROTOCOL_STATUSES),
    cipher_status: z.enum(CIPHER_STATUSES),
    validation_status: z.enum(VALIDATION_STATUSES),
    weak_suites: z.array(SuiteFinding).openapi({ description: "Broken suites offered (what makes cipher_status weak): RC4, DES, 3DES, NULL, EXPORT or anonymous, with every concern about each" }),
    legacy_suites: z.array(SuiteFinding).openapi({
      description:
        "Suites offered outside Mozilla's intermediate profile that are not broken (what makes cipher_status legacy), each with what keeps it out: " +
        "CBC, no_forward_secrecy, MD5, or outside_profile when none of these applies. The same suites as the cipher_suite reasons of the mozilla-intermediate verdict, minus the weak ones",
    }),
    findings: z.object({ expired: z.boolean(), scan_failed: z.boolean(), legacy_protocol: z.boolean(), weak_cipher: z.boolean(), self_signed: z.boolean() }),
    compliance: z.record(z.string(), z.enum(["pass", "fail", "unknown"])).openapi({ description: "Verdict per framework id (fips-140, nist-sp-800-52r2, pci-dss-4.0.1, mozilla-intermediate, mozilla-modern)" }),
    frameworks: z.array(Verdict).openapi({ description: "The five verdicts with reasons, evaluated by the service from the observed configuration at scan time" }),
  })
  .openapi("CertScan");
export const HistoryResponse = z.object({
  monitor_id: z.number().int(),
  scans: z.array(ScanDetail),
  total: z.number().int(),
  page: z.number().int(),
  page_size: z.number().int(),
});

export const SecurityStandards = z
  .object({ standards: z.array(z.record(z.string(), z.unknown())) })
  .openapi("SecurityStandards", { description: "Full definitions of the five frameworks: allowed versions, cipher suites and groups (IANA code points and names), DH minimum, certificate rules" });

// ---------------------------------------------------------------------------
// Agents

export const RegisterAgentRequest = z.object({ name: safeText(100).openapi({ example: "dmz-scanner-1" }) }).openapi("RegisterAgent");
export const AgentSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    token_prefix: z.string(),
    status: z.enum(["active", "revoked"]),
    created_at: z.string(),
    created_by: z.number().int().nullable(),
    last_seen_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .openapi("ScannerAgent");
export const RegisterAgentResponse = AgentSchema.extend({
  token: z.string().openapi({ description: "The agent token (`tpa_...`), shown only in this response; only its hash is stored" }),
  message: z.string(),
});
export const AgentList = z.object({ agents: z.array(AgentSchema) });

// The agent/API contract (packages/scan-contract), named for the OpenAPI document.
// The nested schemas are swapped for their named forms so the document refers to them.

export const ScanResultInput = contract.ScanResult.openapi("ScanResultInput", {
  description:
    "A scan result as produced by scanner-node: the certificate scan event fields plus details. Unknown fields are dropped, " +
    "over-long strings and lists are cut, absent fields default to empty (\"\", [], null); wrong types and values outside an enum are refused. " +
    "`frameworks` and `weak_suites` sent by the agent are ignored (the Worker re-evaluates them).",
});
export const LeaseRequest = contract.LeaseRequest.openapi("LeaseJobs");
export const LeasedJob = contract.LeasedJob.openapi("LeasedScanJob");
export const LeaseResponse = contract.LeaseResponse.extend({ jobs: z.array(LeasedJob) });
export const PostResultRequest = contract.PostResultRequest.extend({ result: ScanResultInput }).openapi("PostScanResult");
export const PostResultResponse = contract.PostResultResponse;
