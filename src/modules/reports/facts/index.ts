/**
 * Reads one organization's audit facts from what the modules record, in ONE D1 batch
 * (one round trip): DNS 3 statements (domains, the newest changes of each rule, their
 * counts), CT 4 (the newest CAA violations, their counts, filters, the log cursors'
 * progress), certificates 1 live or 2 for a report (targets with their latest scan,
 * the period's flagged scans), RDAP 3 (the newest changes with their snapshots, their
 * counts, monitors with their expiry); the appendix adds one CT aggregate. So 11
 * statements live, 13 for a report. Never a scan of every observation: change facts
 * are read by (organization_id, observed_at) or (monitor_id, observed_at) ranges,
 * endpoint state through each target's pointer to its latest scan, and evidence is
 * cut to `evidenceLimit` items per rule in SQL (with exact counts beside it).
 * A report (assets asked for) also reads each DNS domain's mail transport security at
 * generation beside the batch (facts/email.ts: a few reads, the certificate watcher's
 * served chains among them), for its appendix.
 */
import type { BatchItem } from "drizzle-orm/batch";
import type { MonitoredAsset } from "../document";
import { readCertificates } from "./certificates";
import { readCt } from "./ct";
import { readDns } from "./dns";
import { readEmailStates } from "./email";
import { readRdap } from "./rdap";
import { iso, type AuditScope } from "./scope";
import type { AuditFacts } from "./types";

export interface AuditReading {
  facts: AuditFacts;
  /** Every monitored asset with its state (when the scope asks for them). */
  assets: MonitoredAsset[];
  /** The shared sources the assets rely on (the CT logs), each with its state (when the scope asks for assets). */
  shared_sources: MonitoredAsset[];
  /** D1 statements the reading sent (in one batch). */
  statements: number;
}

export async function readAudit(scope: AuditScope): Promise<AuditReading> {
  const dnsPlan = readDns(scope);
  const ctPlan = readCt(scope);
  const certificatesPlan = readCertificates(scope);
  const rdapPlan = readRdap(scope);
  const plans = [dnsPlan, ctPlan, certificatesPlan, rdapPlan];
  const all = plans.flatMap((p) => p.statements);
  const [results, emailStates] = await Promise.all([scope.t.db.batch(all as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]) as Promise<unknown[]>, readEmailStates(scope)]);
  let at = 0;
  const slice = (n: number) => results.slice(at, (at += n));
  const dns = dnsPlan.read(slice(dnsPlan.statements.length));
  const ct = ctPlan.read(slice(ctPlan.statements.length));
  const certificates = certificatesPlan.read(slice(certificatesPlan.statements.length));
  const rdap = rdapPlan.read(slice(rdapPlan.statements.length));
  const readings = [dns, ct, certificates, rdap];
  return {
    facts: {
      as_of: iso(scope.asOf),
      window: { start: iso(scope.window.start), end: iso(scope.window.end) },
      dns: dns.facts.dns,
      caa_violations: ct.facts.caa_violations,
      endpoint_scans: certificates.facts.endpoint_scans,
      rdap_changes: rdap.facts.rdap_changes,
      expiring_domains: rdap.facts.expiring_domains,
      coverage: readings.map((r) => r.coverage),
      counts: Object.assign({}, ...readings.map((r) => r.counts ?? {})),
    },
    assets: readings.flatMap((r) => r.assets).map((a) => (a.module === "dns-watcher" && emailStates.has(a.asset) ? { ...a, email: emailStates.get(a.asset) } : a)),
    shared_sources: readings.flatMap((r) => r.sources ?? []),
    statements: all.length,
  };
}

export type { AuditScope } from "./scope";
