/**
 * Reads one organization's audit facts from what the modules record: a few indexed
 * D1 queries per module, run concurrently (CT 3, certificates 1 live or 2 for a
 * report, RDAP 2, DNS 2; the appendix adds one CT aggregate). Never a scan of every
 * observation: change facts are read by (organization_id, observed_at) ranges,
 * endpoint state through each target's pointer to its latest scan.
 */
import type { MonitoredAsset } from "../document";
import { readCertificates } from "./certificates";
import { readCt } from "./ct";
import { readDns } from "./dns";
import { readRdap } from "./rdap";
import { iso, type AuditScope } from "./scope";
import type { AuditFacts } from "./types";

export interface AuditReading {
  facts: AuditFacts;
  /** Every monitored asset with its state (when the scope asks for them). */
  assets: MonitoredAsset[];
}

export async function readAudit(scope: AuditScope): Promise<AuditReading> {
  const [dns, ct, certificates, rdap] = await Promise.all([readDns(scope), readCt(scope), readCertificates(scope), readRdap(scope)]);
  const readings = [dns, ct, certificates, rdap];
  return {
    facts: {
      as_of: iso(scope.now),
      window: { start: iso(scope.window.start), end: iso(scope.window.end) },
      dns: dns.facts.dns,
      caa_violations: ct.facts.caa_violations,
      endpoint_scans: certificates.facts.endpoint_scans,
      rdap_changes: rdap.facts.rdap_changes,
      expiring_domains: rdap.facts.expiring_domains,
      coverage: readings.map((r) => r.coverage),
      counts: Object.assign({}, ...readings.map((r) => r.counts ?? {})),
    },
    assets: readings.flatMap((r) => r.assets),
  };
}

export type { AuditScope } from "./scope";
