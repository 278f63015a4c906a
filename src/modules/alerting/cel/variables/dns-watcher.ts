/**
 * DNS watcher change event (ADDENDUM 8). `spf` and `dmarc` carry the parsed policy now
 * and before the change; a side without a record has `record` "" and empty fields, so
 * rules compare without has() checks (e.g. `spf.previous.all == "-all" && spf.current.all != "-all"`).
 */
import type { VariableSpec } from "./types";

const spf = (side: "current" | "previous"): VariableSpec[] => [
  { path: `spf.${side}`, type: "object", description: `SPF policy ${side === "current" ? "now" : "before the change"}` },
  { path: `spf.${side}.record`, type: "string", description: "The v=spf1 TXT record, empty if none" },
  { path: `spf.${side}.all`, type: "string", description: 'The "all" mechanism with its qualifier (-all, ~all, +all, ?all), empty if absent' },
  { path: `spf.${side}.mechanisms`, type: "list<string>", description: "Mechanisms and modifiers in order, e.g. include:_spf.example.net, ip4:192.0.2.0/24" },
  { path: `spf.${side}.includes`, type: "list<string>", description: "Domains of include: mechanisms" },
];

const dmarc = (side: "current" | "previous"): VariableSpec[] => [
  { path: `dmarc.${side}`, type: "object", description: `DMARC policy ${side === "current" ? "now" : "before the change"}` },
  { path: `dmarc.${side}.record`, type: "string", description: "The v=DMARC1 TXT record at _dmarc, empty if none" },
  { path: `dmarc.${side}.p`, type: "string", description: "Policy: none, quarantine or reject; empty if no record" },
  { path: `dmarc.${side}.sp`, type: "string", description: "Subdomain policy, empty if not given" },
  { path: `dmarc.${side}.pct`, type: "int", description: "Percentage of mail the policy applies to (default 100)" },
  { path: `dmarc.${side}.rua`, type: "list<string>", description: "Aggregate report URIs" },
  { path: `dmarc.${side}.ruf`, type: "list<string>", description: "Failure report URIs" },
];

export const dnsWatcherVariables: readonly VariableSpec[] = [
  { path: "domain", type: "string", description: "The watched domain" },
  { path: "changed_records", type: "list<object>", description: "Record sets that changed" },
  { path: "changed_records[].name", type: "string", description: "Owner name of the record set" },
  { path: "changed_records[].type", type: "string", description: "Record type: A, AAAA, CNAME, MX, NS, TXT, CAA, SOA, DS, DNSKEY" },
  { path: "changed_records[].old_values", type: "list<string>", description: "Values before the change (presentation format)" },
  { path: "changed_records[].new_values", type: "list<string>", description: "Values after the change (presentation format)" },
  { path: "dnssec", type: "object", description: "DNSSEC validation of the answers" },
  { path: "dnssec.validated", type: "bool", description: "The resolver validated the answers (AD bit)" },
  { path: "dnssec.error", type: "string", description: "Validation error, empty if none" },
  { path: "spf", type: "object", description: "Parsed SPF policy of the domain" },
  ...spf("current"),
  ...spf("previous"),
  { path: "dmarc", type: "object", description: "Parsed DMARC policy of the domain" },
  ...dmarc("current"),
  ...dmarc("previous"),
  { path: "resolved_at", type: "string", description: "Resolution time, ISO 8601" },
];
