/**
 * The audit catalogue as data, the one place it is written down: the five scoring
 * categories and their weights, the grade table, the framework references, and the
 * eighteen audit rules (docs/modules/reports.md) with the references each
 * maps to. The scoring engine (scoring.ts), the API (schema.ts) and the PDF read it.
 *
 * The references are informational. The mapping is our reading of what each
 * control is about:
 *  - SOC 2 Trust Services Criteria: CC6 logical access and transmission security
 *    (TLS, mail authentication), CC7 system operations (detecting configuration
 *    changes, monitoring, anomalies), CC8 change management (unauthorized changes).
 *  - ISO/IEC 27001:2022 Annex A: A.5.9 inventory of assets, A.8.7 protection against
 *    malware (spoofed mail is its main carrier), A.8.16 monitoring activities, A.8.20
 *    networks security, A.8.32 change management.
 *  - The national framework uses NIST CSF-style category ids: ID.AM asset
 *    management, DE.CM continuous monitoring, PR.DS data security, SC supply chain
 *    risk management (registrars, DNS providers and CAs are suppliers).
 */
import type { MonitoringModule } from "../../platform/permissions";

export const CATEGORIES = [
  { id: "dns", label: "DNS", weight: 30 },
  { id: "ct", label: "CT Log", weight: 20 },
  { id: "certificates", label: "Certificates", weight: 20 },
  { id: "rdap", label: "RDAP", weight: 15 },
  { id: "coverage", label: "Coverage", weight: 15 },
] as const;
export type Category = (typeof CATEGORIES)[number]["id"];
export const CATEGORY_IDS = CATEGORIES.map((c) => c.id) as [Category, ...Category[]];

/** Lowest score of each grade, best first (A 90-100, B 80-89, C 70-79, D 60-69, F below 60). */
export const GRADES = [
  { grade: "A", min: 90 },
  { grade: "B", min: 80 },
  { grade: "C", min: 70 },
  { grade: "D", min: 60 },
  { grade: "F", min: 0 },
] as const;
export type Grade = (typeof GRADES)[number]["grade"];

export const SEVERITIES = ["critical", "high", "medium"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const FRAMEWORKS = [
  { id: "soc2", label: "SOC 2" },
  { id: "iso27001", label: "ISO 27001 Annex A" },
  { id: "national", label: "National framework" },
] as const;
export type FrameworkId = (typeof FRAMEWORKS)[number]["id"];

export const REFERENCES = {
  CC6: { framework: "soc2", title: "Logical and physical access controls" },
  CC7: { framework: "soc2", title: "System operations" },
  CC8: { framework: "soc2", title: "Change management" },
  "A.5.9": { framework: "iso27001", title: "Inventory of information and other associated assets" },
  "A.8.7": { framework: "iso27001", title: "Protection against malware" },
  "A.8.16": { framework: "iso27001", title: "Monitoring activities" },
  "A.8.20": { framework: "iso27001", title: "Networks security" },
  "A.8.32": { framework: "iso27001", title: "Change management" },
  "ID.AM": { framework: "national", title: "Asset management" },
  "DE.CM": { framework: "national", title: "Continuous monitoring" },
  "PR.DS": { framework: "national", title: "Data security" },
  SC: { framework: "national", title: "Supply chain risk management" },
} as const satisfies Record<string, { framework: FrameworkId; title: string }>;
export type ReferenceId = keyof typeof REFERENCES;

export interface AuditRule {
  /** Stable identifier; also the finding's `id`. */
  id: string;
  category: Category;
  title: string;
  severity: Severity;
  /** Points subtracted from the category when the rule fires. */
  impact: number;
  /** When it fires (spec wording), shown in the PDF. */
  condition: string;
  references: readonly ReferenceId[];
}

export const AUDIT_RULES = [
  {
    id: "dns.dmarc_weakened", category: "dns", title: "DMARC policy weakened", severity: "critical", impact: 30,
    condition: "DMARC policy regression or removal on a monitored domain",
    references: ["CC6", "CC8", "A.8.7", "A.8.32", "PR.DS", "DE.CM"],
  },
  {
    id: "dns.spf_overly_permissive", category: "dns", title: "SPF overly permissive", severity: "critical", impact: 25,
    condition: "a domain introduced an SPF record allowing all senders",
    references: ["CC6", "CC8", "A.8.7", "A.8.20", "PR.DS"],
  },
  {
    id: "dns.apex_records_changed", category: "dns", title: "Critical apex records changed", severity: "high", impact: 15,
    condition: "root-domain A, AAAA or CNAME changed",
    references: ["CC7", "CC8", "A.8.20", "A.8.32", "DE.CM"],
  },
  {
    id: "dns.mail_or_nameserver_changed", category: "dns", title: "Mail or nameserver records changed", severity: "high", impact: 12,
    condition: "MX or NS changed",
    references: ["CC7", "CC8", "A.8.20", "A.8.32", "DE.CM", "SC"],
  },
  {
    id: "dns.dnssec_regression", category: "dns", title: "DNSSEC validation regression", severity: "high", impact: 20,
    condition: "at least one domain failed DNSSEC validation",
    references: ["CC6", "CC7", "A.8.20", "PR.DS", "DE.CM"],
  },
  {
    id: "dns.dane_mismatch", category: "dns", title: "DANE mismatch on a mail server", severity: "critical", impact: 25,
    condition: "an MX host served a certificate chain that none of its DNSSEC-validated TLSA records matches (senders that enforce DANE stop delivering to it)",
    references: ["CC6", "CC7", "A.8.20", "PR.DS", "DE.CM"],
  },
  {
    id: "dns.email_transport_weakened", category: "dns", title: "Mail transport security weakened", severity: "high", impact: 15,
    condition:
      "MTA-STS was lowered, removed or made unusable, TLS reporting was removed or broken, an MX host's TLSA records were removed or made unusable, or a DKIM key was removed, revoked, weakened or set to testing",
    references: ["CC6", "CC8", "A.8.7", "A.8.20", "A.8.32", "PR.DS", "DE.CM"],
  },
  {
    id: "ct.caa_violations", category: "ct", title: "Recent CAA violations", severity: "high", impact: 20,
    condition: "a recently observed certificate appears inconsistent with CAA policy",
    references: ["CC6", "CC7", "A.8.16", "A.8.20", "DE.CM", "SC"],
  },
  {
    id: "certificates.expired", category: "certificates", title: "Expired certificates", severity: "critical", impact: 30,
    condition: "an endpoint presented an expired certificate",
    references: ["CC6", "CC7", "A.8.20", "PR.DS"],
  },
  {
    id: "certificates.scan_failures", category: "certificates", title: "Scan failures", severity: "high", impact: 15,
    condition: "scans failed or could not connect",
    references: ["CC7", "A.8.16", "DE.CM"],
  },
  {
    id: "certificates.deprecated_tls", category: "certificates", title: "Deprecated TLS versions", severity: "high", impact: 18,
    condition: "TLSv1.0 or TLSv1.1 accepted",
    references: ["CC6", "A.8.20", "PR.DS"],
  },
  {
    id: "certificates.weak_ciphers", category: "certificates", title: "Weak cipher suites", severity: "high", impact: 18,
    condition: "RC4, DES, 3DES, NULL, EXPORT or anonymous suites offered",
    references: ["CC6", "A.8.20", "PR.DS"],
  },
  {
    id: "certificates.self_signed", category: "certificates", title: "Self-signed certificates", severity: "high", impact: 12,
    condition: "a self-signed certificate presented",
    references: ["CC6", "A.8.20", "PR.DS"],
  },
  {
    id: "rdap.ownership_or_registrar_change", category: "rdap", title: "Ownership or registrar change", severity: "critical", impact: 25,
    condition: "registrant or registrar metadata changed",
    references: ["CC6", "CC8", "A.5.9", "A.8.32", "ID.AM", "SC"],
  },
  {
    id: "rdap.expiry_approaching", category: "rdap", title: "Domain expiry approaching", severity: "high", impact: 15,
    condition: "a monitored domain expires within 30 days",
    references: ["CC7", "A.5.9", "ID.AM", "SC"],
  },
  {
    id: "rdap.nameserver_or_status_change", category: "rdap", title: "Nameserver or status change", severity: "medium", impact: 10,
    condition: "RDAP nameserver or status attributes changed",
    references: ["CC7", "CC8", "A.8.32", "DE.CM", "SC"],
  },
  {
    id: "coverage.modules_without_assets", category: "coverage", title: "Modules without assets", severity: "medium", impact: 12,
    condition: "an enabled module has no configured assets",
    references: ["CC7", "A.5.9", "A.8.16", "ID.AM", "DE.CM"],
  },
  {
    id: "coverage.monitoring_data_stale", category: "coverage", title: "Monitoring data stale", severity: "high", impact: 18,
    condition: "a module has data outside the expected collection window",
    references: ["CC7", "A.8.16", "DE.CM"],
  },
] as const satisfies readonly AuditRule[];

export type RuleId = (typeof AUDIT_RULES)[number]["id"];

const byId = new Map<string, AuditRule>(AUDIT_RULES.map((r) => [r.id, r]));
export function auditRule(id: RuleId): AuditRule {
  return byId.get(id)!;
}

/** A rule's references grouped by framework, in the FRAMEWORKS order (for the PDF and the API). */
export function referencesByFramework(rule: AuditRule): { framework: string; ids: ReferenceId[] }[] {
  return FRAMEWORKS.map((f) => ({
    framework: f.label,
    ids: rule.references.filter((r) => REFERENCES[r].framework === f.id),
  })).filter((g) => g.ids.length > 0);
}

/** Days before a domain's registration expiry from which rdap.expiry_approaching fires. */
export const EXPIRY_WARNING_DAYS = 30;

/** How the report names each monitoring module. */
export const MODULE_LABELS: Record<MonitoringModule, string> = {
  "ct-log": "CT Log",
  "dns-watcher": "DNS watcher",
  rdap: "RDAP",
  "cert-watcher": "Certificate deployments",
};
