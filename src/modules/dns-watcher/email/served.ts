/**
 * DANE against what the mail servers serve: the MX hosts' certificate monitors on port 25
 * with STARTTLS (cert-watcher/mail-server-contract.ts) give the chain each address served
 * at its latest scan; email/view.ts matches it against the host's TLSA records.
 *
 * Two things can break the match, so both are watched: the TLSA records change (a DNS run
 * compares its views before and after with the same served chains, email/assess.ts), or
 * the server starts serving another chain (an accepted scan: `daneScanObserver` below
 * compares the domain's view with the target's previous scan and with the new one). A
 * mismatch that appears is a history item of kind `email` (`_25._tcp.<mx>` TLSA) with its
 * `dane_mismatch` fact for the weekly report, and a `dns_changed` event with
 * `dane.regressions` containing `mismatch`.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Bindings } from "../../../env";
import type { Db } from "../../../db/client";
import { dnsChangeFacts, dnsDomains, dnsHistory, dnsRecordSets } from "../../../db/schema";
import { logUnexpected } from "../../../platform/collection/log";
import { emitEvent } from "../../alerting/contract";
import type { AcceptedScan, DeploymentObserver } from "../../cert-watcher/deployment-contract";
import { MAIL_SERVER_PORT, mailServerMonitors, type MailServerMonitor } from "../../cert-watcher/mail-server-contract";
import type { DmarcRecord } from "../dmarc";
import { buildDnsChangeEvent } from "../events";
import type { SpfAnalysis } from "../spf";
import { parseStoredJson } from "../stored-json";
import { historyOfRegressions, selectorsOf, viewOf } from "./assess";
import { emailRegressions, mxHostsOf, NO_EMAIL_STATE, type EmailState, type ServedHost } from "./view";

/** The hosts' served chains as the view reads them: only enabled targets of enabled monitors are evidence. */
export function servedHosts(monitors: ReadonlyMap<string, MailServerMonitor>): Map<string, ServedHost> {
  const out = new Map<string, ServedHost>();
  for (const [host, m] of monitors) {
    out.set(host, {
      monitor_id: m.monitorId,
      targets: m.targets.filter((t) => t.enabled).map((t) => ({ ip_address: t.ipAddress, scanned_at: t.scannedAt, error: t.error, chain: t.chain })),
    });
  }
  return out;
}

/** What the organization's port-25 monitors of these MX hosts serve (see mailServerMonitors for `asBefore`). */
export async function servedOf(db: Db, organizationId: number, hosts: readonly string[], asBefore?: { targetId: number; scanId: number }): Promise<Map<string, ServedHost>> {
  return servedHosts(await mailServerMonitors(db, organizationId, hosts, asBefore));
}

/**
 * After a scan of a mail server (port 25): each of the organization's domains with email
 * checks whose MX set names the host is compared as it stood before this scan and after
 * it; a DANE mismatch that appears is recorded and raised.
 */
async function mailServerScanned(env: Bindings, db: Db, scan: AcceptedScan): Promise<void> {
  if (scan.port !== MAIL_SERVER_PORT) return;
  const host = scan.hostname;
  // Candidate domains: an MX value naming the host (its canonical value ends with "<host>."), confirmed by parsing below.
  const rows = await db
    .select({ domain: dnsDomains, mx: dnsRecordSets.valuesJson })
    .from(dnsDomains)
    .innerJoin(dnsRecordSets, and(eq(dnsRecordSets.domainId, dnsDomains.id), eq(dnsRecordSets.type, "MX"), eq(dnsRecordSets.name, dnsDomains.domainName)))
    .where(and(eq(dnsDomains.organizationId, scan.organizationId), eq(dnsDomains.emailChecks, true), eq(dnsDomains.enabled, true), sql`instr(lower(${dnsRecordSets.valuesJson}), ${` ${host}.`}) > 0`))
    .all();
  for (const { domain: d, mx } of rows) {
    const mxHosts = mxHostsOf(parseStoredJson<string[]>(mx) ?? []);
    if (!mxHosts.includes(host)) continue;
    const sets = await db.select().from(dnsRecordSets).where(eq(dnsRecordSets.domainId, d.id)).all();
    const valuesOf = (name: string, type: string) => parseStoredJson<string[]>(sets.find((s) => s.name === name && s.type === type)?.valuesJson ?? null);
    const state = parseStoredJson<EmailState>(d.emailJson) ?? NO_EMAIL_STATE;
    const dmarc = parseStoredJson<DmarcRecord>(d.dmarcJson);
    const selectors = selectorsOf(d.domainName, sets);
    const [servedBefore, servedAfter] = await Promise.all([
      servedOf(db, scan.organizationId, mxHosts, { targetId: scan.targetId, scanId: scan.scanId }),
      servedOf(db, scan.organizationId, mxHosts),
    ]);
    const domain = { name: d.domainName, emailChecks: true };
    const before = await viewOf(domain, valuesOf, state, dmarc, selectors, servedBefore);
    const after = await viewOf(domain, valuesOf, state, dmarc, selectors, servedAfter);
    const regressions = emailRegressions(before, after, d.domainName).filter((r) => r.mechanism === "dane");
    if (!regressions.length) continue;
    const history = historyOfRegressions(d.domainName, regressions, before, after);
    // One item per scan and record (a result is accepted once per job: no guard beyond that),
    // and the facts the weekly report reads (dns_change_facts), in the same batch.
    const row = (h: (typeof history)[number]) => ({
      organizationId: d.organizationId,
      domainId: d.id,
      observedAt: scan.scannedAt,
      recordName: h.name,
      recordType: h.type,
      oldValues: JSON.stringify(h.old),
      newValues: JSON.stringify(h.new),
      detail: h.detail,
    });
    const facts = history.flatMap((h) => h.facts.map((kind) => ({ ...row(h), domainName: d.domainName, kind })));
    await db.batch([
      db.insert(dnsHistory).values(history.map((h) => ({ ...row(h), kind: "email" as const, analysisJson: JSON.stringify(h.analysis) }))),
      ...(facts.length ? [db.insert(dnsChangeFacts).values(facts)] : []),
    ]);
    const spf = parseStoredJson<SpfAnalysis>(d.spfJson);
    const event = buildDnsChangeEvent({
      domain: d.domainName,
      changedRecords: [],
      dnssec: { status: d.dnssecStatus, previousStatus: d.dnssecStatus, error: d.dnssecError, edeCodes: [] },
      spf: { current: spf, previous: spf, changed: false, becamePermissive: false, changedTargets: [] },
      dmarc: { current: dmarc, previous: dmarc, changed: false, regressions: [] },
      email: { view: after, regressions },
      resolvedAt: scan.scannedAt,
    });
    try {
      await emitEvent(env, "dns-watcher", d.organizationId, event);
    } catch (err) {
      logUnexpected(`dns-watcher: DANE mismatch event for ${d.domainName} (organization ${d.organizationId}) not delivered to alerting`, err);
    }
  }
}

/** Connected to the certificate watcher's accepted scans (dns-watcher routes). */
export const daneScanObserver: DeploymentObserver = {
  name: "DNS watcher (DANE of mail servers)",
  scanAccepted: (env, db, scan) => mailServerScanned(env, db, scan),
  // A new or removed monitor changes no observed state: the next scan (or the view) tells.
  monitorsChanged: async () => {},
};
