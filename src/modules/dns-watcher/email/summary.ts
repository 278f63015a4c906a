/**
 * A domain's mail transport security as stored, in a few words per mechanism, for readers
 * outside the module (the weekly report's appendix, through email-contract.ts): each
 * mechanism's status and one detail saying what was seen, what it means where it matters,
 * or, for `unknown`, why nothing was seen (the lookup's or the fetch's failure, "not
 * resolved yet"), never "not published". A DANE host whose port-25 scans were not compared
 * says so with the reason (`not_checked`), as does one no monitor scans (`not_scanned`).
 */
import { eq, inArray } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { dnsDomains, dnsRecordSets } from "../../../db/schema/dns-watcher";
import type { Tenant } from "../../../platform/tenant";
import type { DmarcRecord } from "../dmarc";
import { parseStoredJson } from "../stored-json";
import { selectorsOf, viewOf } from "./assess";
import { servedOf } from "./served";
import { emailNames, mxHostsOf, NO_EMAIL_STATE, type EmailMechanism, type EmailSecurityView, type EmailState, type MechanismStatus } from "./view";

type DomainRow = typeof dnsDomains.$inferSelect;
type RecordSetRow = typeof dnsRecordSets.$inferSelect;

/** The view of a domain with its email checks on, from its row and record sets (and what its MX hosts' port-25 monitors served). */
export async function storedEmailView(db: Db, d: DomainRow, sets: readonly RecordSetRow[], dmarc: DmarcRecord | null): Promise<EmailSecurityView> {
  const valuesOf = (name: string, type: string) => parseStoredJson<string[]>(sets.find((s) => s.name === name && s.type === type)?.valuesJson ?? null);
  const state = parseStoredJson<EmailState>(d.emailJson) ?? NO_EMAIL_STATE;
  const served = await servedOf(db, d.organizationId, mxHostsOf(valuesOf(d.domainName, "MX") ?? []));
  return viewOf({ name: d.domainName, emailChecks: true }, valuesOf, state, dmarc, selectorsOf(d.domainName, sets), served);
}

export interface MailMechanismSummary {
  mechanism: EmailMechanism;
  /** "MTA-STS", "TLS reporting", "DANE", "DKIM", "BIMI". */
  label: string;
  status: MechanismStatus;
  /** What was seen, or why nothing was; record text quoted as published (hostile: escape where shown). */
  detail: string;
}

export interface DomainEmailSummary {
  domain: string;
  mechanisms: MailMechanismSummary[];
}

const LABELS: Record<EmailMechanism, string> = { mta_sts: "MTA-STS", tls_rpt: "TLS reporting", dane: "DANE", dkim: "DKIM", bimi: "BIMI" };
const SERVED_WORDS = { matched: "matches its TLSA records", mismatch: "matches none of its TLSA records", not_scanned: "not scanned", not_checked: "not compared" } as const;

/** Why a record set has no values: its last lookup's failure, or not resolved yet. */
function notResolved(name: string, sets: readonly RecordSetRow[]): string {
  const s = sets.find((x) => x.name === name && x.type === "TXT");
  if (!s) return `${name} TXT is not watched.`;
  return s.lastError ? `${name} TXT has not been resolved: ${s.lastError}.` : `${name} TXT has not been resolved yet.`;
}

const sentence = (parts: readonly string[]) => parts.filter(Boolean).join(" ");

/** Each mechanism of `view` in a few words (see the header). */
export function summarizeEmailSecurity(domain: string, view: EmailSecurityView, sets: readonly RecordSetRow[]): MailMechanismSummary[] {
  const n = emailNames(domain);
  const out: MailMechanismSummary[] = [];
  const add = (mechanism: EmailMechanism, status: MechanismStatus, detail: string) => out.push({ mechanism, label: LABELS[mechanism], status, detail });

  const sts = view.mta_sts;
  const p = sts.policy;
  const policy = p.status === "ok" ? `Policy mode ${p.mode}, max_age ${p.max_age ?? "?"} s, mx ${p.mx.join(", ") || "none"}.` : "";
  if (sts.status === "missing") add("mta_sts", "missing", "No _mta-sts TXT record: senders deliver without MTA-STS.");
  else if (sts.status === "unknown" && sts.findings.length === 0) add("mta_sts", "unknown", notResolved(n.mtaSts, sets));
  else add("mta_sts", sts.status, sentence([policy, ...sts.findings]));

  const rpt = view.tls_rpt;
  if (rpt.status === "unknown") add("tls_rpt", "unknown", notResolved(n.tlsRpt, sets));
  else if (rpt.status === "missing") add("tls_rpt", "missing", "No _smtp._tls TXT record: TLS delivery failures are not reported.");
  else add("tls_rpt", rpt.status, sentence([rpt.rua.length ? `Reports to ${rpt.rua.join(", ")}.` : "", ...rpt.errors.map((e) => `${e}.`)]));

  const dane = view.dane;
  const hosts = dane.hosts.map((h) => {
    const tlsa = h.status === "unknown" ? `TLSA not read yet${h.collection.error ? ` (${h.collection.error})` : ""}` : `TLSA ${h.status}${h.problem ? ` (${h.problem})` : ""}`;
    const served = `port 25 ${SERVED_WORDS[h.served.status]}${h.served.status === "matched" ? "" : `: ${h.served.text}`}`;
    return `${h.host}: ${tlsa}; ${served}`;
  });
  const mxUnknown = dane.status === "unknown" && dane.hosts.length === 0;
  add("dane", dane.status, mxUnknown ? "The MX record set has not been resolved yet: no MX host to check." : sentence([...dane.findings.filter((f) => !dane.hosts.some((h) => h.served.text === f)), hosts.join(" · ")]));

  const dkim = view.dkim;
  const keys = dkim.selectors.map((k) => {
    if (k.status === "unknown") return `${k.selector}: ${notResolved(n.dkim(k.selector), sets)}`;
    if (k.record === "") return `${k.selector}: no key record`;
    if (k.revoked) return `${k.selector}: revoked (empty p=)`;
    return `${k.selector}: ${k.key_type || "unreadable key"}${k.bits ? ` ${k.bits} bits` : ""}${k.strength ? ` (${k.strength})` : ""}${k.testing ? ", testing (t=y)" : ""}`;
  });
  add("dkim", dkim.status, sentence([keys.length ? `${keys.join(" · ")}.` : "", ...dkim.findings]));

  const bimi = view.bimi;
  if (bimi.status === "unknown") add("bimi", "unknown", notResolved(n.bimi, sets));
  else if (bimi.status === "missing") add("bimi", "missing", "No default._bimi TXT record (optional: it shows a logo, it protects no mail).");
  else add("bimi", bimi.status, sentence([bimi.location ? `Logo ${bimi.location}${bimi.authority ? `, evidence ${bimi.authority}` : ""}.` : "", ...bimi.errors.map((e) => `${e}.`), ...bimi.findings]));
  return out;
}

/**
 * The organization's enabled domains with the email checks on, each mechanism in a few
 * words, by domain name. A few reads (domains, their record sets, each domain's port-25
 * monitors): the report's appendix asks once per report.
 */
export async function emailSummaries(t: Tenant): Promise<DomainEmailSummary[]> {
  const domains = await t.select(dnsDomains, eq(dnsDomains.emailChecks, true), eq(dnsDomains.enabled, true)).orderBy(dnsDomains.domainName).all();
  if (domains.length === 0) return [];
  const sets = await t.select(dnsRecordSets, inArray(dnsRecordSets.domainId, domains.map((d) => d.id))).all();
  return Promise.all(
    domains.map(async (d) => {
      const own = sets.filter((s) => s.domainId === d.id);
      const dmarc = own.some((s) => s.type === "TXT" && s.name === `_dmarc.${d.domainName}`) ? parseStoredJson<DmarcRecord>(d.dmarcJson) : null;
      const view = await storedEmailView(t.db, d, own, dmarc);
      return { domain: d.domainName, mechanisms: summarizeEmailSecurity(d.domainName, view, own) };
    }),
  );
}
