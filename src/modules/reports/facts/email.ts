/**
 * Mail transport security (MTA-STS, TLS reporting, DANE, DKIM, BIMI), read from the DNS
 * watcher's email checks.
 *
 *  - Regressions are change facts like every DNS change (facts/dns.ts reads them): the
 *    watcher writes a `dns_change_facts` row of kind `email_weakened` or `dane_mismatch`
 *    with each regression's history item (dns-watcher/email/view.ts EMAIL_REGRESSION_FACTS),
 *    so "Mail transport security weakened" and "DANE mismatch on a mail server" count what
 *    was observed inside the window, as the other DNS rules do.
 *  - The state is the appendix's: each enabled domain with the email checks on, each
 *    mechanism's status and detail at generation (what the appendix shows of every asset).
 *    `unknown` says why it was not observed and is never shown as a pass or "not published".
 *    It is read only for a report (scope.withAssets), in a few reads of its own beside the
 *    audit's one batch (the served chains come from the certificate watcher).
 */
import { emailSummaries } from "../../dns-watcher/email-contract";
import type { MailMechanismState } from "../document";
import type { AuditScope } from "./scope";

/** Each domain's mechanisms at generation, by domain name; empty unless the scope asks for assets. */
export async function readEmailStates(scope: Pick<AuditScope, "t" | "withAssets">): Promise<Map<string, MailMechanismState[]>> {
  if (!scope.withAssets) return new Map();
  const domains = await emailSummaries(scope.t);
  return new Map(domains.map((d) => [d.domain, d.mechanisms.map((m) => ({ label: m.label, status: m.status, detail: m.detail }))]));
}
