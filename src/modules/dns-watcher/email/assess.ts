/**
 * The email checks' part of one domain's assessment (assessment.ts): the MX hosts' TLSA
 * answers and the MTA-STS policy collected this run (collect.ts), the email_security view
 * before and after, and each regression as a history item (kind `email`) and event fields.
 *
 * Nothing is compared unless something it is built from moved this run (an email TXT
 * record set, the MX set or DMARC changed or got its baseline, a TLSA answer or the
 * policy changed): an unchanged domain costs no parsing and no write beyond its one row.
 */
import { txtText } from "../../../platform/dns/presentation";
import type { DmarcRecord } from "../dmarc";
import type { DueDomain } from "../due-domains";
import type { RunAnswers } from "../run-lookups";
import { daneHostsOf } from "../run-lookups";
import type { CollectionEventInput } from "../../../platform/collection";
import { collectionRecordOf, policyAfterFetch, policyDue, policyUrl, tlsaAfterLookup, type PolicyFetchResult } from "./collect";
import { parseMtaStsRecord } from "./mta-sts";
import { emailFactsOf, emailNames, emailRegressions, emailSecurityView, mxHostsOf, subjectState, tlsaName, type EmailFactKind, type EmailMechanism, type EmailRegression, type EmailSecurityView, type EmailState, type ServedHost, type StoredTlsa, NEVER_ATTEMPTED } from "./view";

export interface EmailRunContext {
  /** Fetches the domain's MTA-STS policy (collect.ts fetchMtaStsPolicy with the run's settings). */
  fetchPolicy: (domain: string) => Promise<PolicyFetchResult>;
  /** What the organization's port-25 certificate monitors of these MX hosts serve (served.ts servedOf); read only when a view is built. */
  served?: (organizationId: number, hosts: readonly string[]) => Promise<ReadonlyMap<string, ServedHost>>;
  urlTemplate: string;
  now: Date;
}

export interface EmailHistoryEntry {
  name: string;
  type: string | null;
  /** The subject before and after, in short lines (view.ts subjectState). */
  old: string[];
  new: string[];
  detail: string;
  analysis: unknown;
  /** What the weekly report counts of it (dns_change_facts kinds). */
  facts: EmailFactKind[];
}

export interface EmailOutcome {
  /** The email state to store (the same object as before when nothing moved). */
  state: EmailState;
  stateChanged: boolean;
  /** One history item per mechanism and subject that regressed. */
  history: EmailHistoryEntry[];
  regressions: EmailRegression[];
  /** The view after this run; null when nothing moved (build it with `currentEmailView` if an event needs it). */
  view: EmailSecurityView | null;
  policyFetched: boolean;
  policyFetchFailed: boolean;
  tlsaUnconfirmed: number;
  /** The MTA-STS policy fetch entered `failing` (second failure in a row) or recovered: raised as the domain's collection event. */
  policyTransition: CollectionEventInput | null;
}

/** The outcome of a domain whose email checks did nothing this run. */
export const NOTHING_ASSESSED = (state: EmailState): EmailOutcome => ({
  state,
  stateChanged: false,
  history: [],
  regressions: [],
  view: null,
  policyFetched: false,
  policyFetchFailed: false,
  tlsaUnconfirmed: 0,
  policyTransition: null,
});

/** FNV-1a, 32 bits, hex: telling two input sets apart, not a security measure. */
function digest(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** The DKIM selectors a domain declares: its watched `<selector>._domainkey` TXT record sets. */
export function selectorsOf(domain: string, sets: readonly { name: string; type: string }[]): string[] {
  const suffix = `._domainkey.${domain}`;
  return sets.filter((s) => s.type === "TXT" && s.name.endsWith(suffix)).map((s) => s.name.slice(0, -suffix.length)).sort();
}

/** Names whose TXT values the view reads (the mechanisms' records and the selectors' keys). */
export function emailTxtNames(domain: string, selectors: readonly string[]): string[] {
  const n = emailNames(domain);
  return [n.mtaSts, n.tlsRpt, n.bimi, ...selectors.map(n.dkim)];
}

/** The view from record set values (null: never resolved), the email state and DMARC. */
export function viewOf(
  d: { name: string; emailChecks: boolean },
  valuesOf: (name: string, type: string) => string[] | null,
  state: EmailState,
  dmarc: DmarcRecord | null,
  selectors: readonly string[],
  served?: ReadonlyMap<string, ServedHost>,
) {
  return emailSecurityView({
    domain: d.name,
    txt: (name) => valuesOf(name, "TXT")?.map(txtText) ?? null,
    mx: valuesOf(d.name, "MX"),
    dmarc,
    selectors,
    state,
    served,
  });
}

const subjectName = (domain: string, r: EmailRegression): { name: string; type: string | null } => {
  const n = emailNames(domain);
  switch (r.mechanism) {
    case "mta_sts":
      return { name: n.mtaSts, type: "TXT" };
    case "tls_rpt":
      return { name: n.tlsRpt, type: "TXT" };
    case "bimi":
      return { name: n.bimi, type: "TXT" };
    case "dkim":
      return { name: n.dkim(r.subject), type: "TXT" };
    case "dane":
      return { name: tlsaName(r.subject), type: "TLSA" };
  }
};

/** One history item per mechanism and subject that regressed (the guard of a history item is (time, name, type, kind)). */
export function historyOfRegressions(domain: string, regressions: readonly EmailRegression[], before: EmailSecurityView, after: EmailSecurityView): EmailHistoryEntry[] {
  const groups = new Map<string, EmailRegression[]>();
  for (const r of regressions) groups.set(`${r.mechanism}|${r.subject}`, [...(groups.get(`${r.mechanism}|${r.subject}`) ?? []), r]);
  return [...groups.values()].map((rs): EmailHistoryEntry => {
    const mechanism: EmailMechanism = rs[0].mechanism;
    return {
      ...subjectName(domain, rs[0]),
      old: subjectState(before, mechanism, rs[0].subject),
      new: subjectState(after, mechanism, rs[0].subject),
      facts: emailFactsOf(rs),
      detail: rs.map((r) => r.text).join("; "),
      analysis: { email: { mechanism, subject: rs[0].subject, regressions: rs.map((r) => r.kind), previous: before[mechanism], current: after[mechanism] } },
    };
  });
}

/**
 * `valuesBefore` / `valuesAfter`: a record set's values as stored before the run and as
 * they stand after it (a confirmed change or a baseline applied). `moved`: some record set
 * the view reads changed or got its baseline this run, or DMARC was read again.
 */
export async function assessEmail(
  d: DueDomain,
  answers: RunAnswers,
  ctx: EmailRunContext,
  at: string,
  io: { valuesBefore: (name: string, type: string) => string[] | null; valuesAfter: (name: string, type: string) => string[] | null; moved: boolean; dmarcBefore: DmarcRecord | null; dmarcAfter: DmarcRecord | null },
): Promise<EmailOutcome> {
  const none: EmailOutcome = NOTHING_ASSESSED(d.email);
  if (!d.emailChecks) return none;

  // TLSA of the MX hosts (hosts no longer in the MX set are dropped).
  const tlsa: Record<string, StoredTlsa> = {};
  let tlsaUnconfirmed = 0;
  for (const host of daneHostsOf(d)) {
    const first = answers.answer(tlsaName(host), "TLSA");
    if (!first) continue;
    const r = tlsaAfterLookup(d.email.tlsa[host], first, answers.confirmation(tlsaName(host), "TLSA"), at);
    tlsa[host] = r.tlsa;
    if (r.unconfirmed) tlsaUnconfirmed++;
  }

  // The MTA-STS policy: read when the record's id changed, else once a day.
  let policy = d.email.policy;
  let policyFetched = false;
  let policyFetchFailed = false;
  let policyTransition: CollectionEventInput | null = null;
  const record = parseMtaStsRecord(io.valuesAfter(emailNames(d.name).mtaSts, "TXT")?.map(txtText) ?? []);
  if (record.id && policyDue(policy, record.id, ctx.now)) {
    const result = await ctx.fetchPolicy(d.name);
    const fetched = policyAfterFetch(policy, record.id, policyUrl(ctx.urlTemplate, d.name), result, ctx.now);
    if (fetched.transition) policyTransition = { transition: fetched.transition, record: collectionRecordOf(fetched.policy.collection), previous: collectionRecordOf(policy?.collection ?? NEVER_ATTEMPTED) };
    policy = fetched.policy;
    policyFetched = true;
    policyFetchFailed = result.kind === "failed";
  }

  // What the view was built from, as a digest: a run that moved any of it changes email_json,
  // which is what guards its history items against an overlapping run (run-writes.ts).
  const selectors = selectorsOf(d.name, d.sets);
  const inputs = digest(JSON.stringify([...emailTxtNames(d.name, selectors).map((n) => io.valuesAfter(n, "TXT")), io.valuesAfter(d.name, "MX"), io.dmarcAfter?.record ?? null]));
  const state: EmailState = { policy, tlsa, inputs };
  const stateChanged = JSON.stringify(state) !== JSON.stringify(d.email);
  if (!stateChanged && !io.moved) return { ...none, tlsaUnconfirmed, policyFetched, policyFetchFailed, policyTransition };

  // The same served chains on both sides: a change of the TLSA records is what moved (a new chain is the scan observer's, served.ts).
  const hosts = [...new Set([...mxHostsOf(io.valuesBefore(d.name, "MX") ?? []), ...mxHostsOf(io.valuesAfter(d.name, "MX") ?? [])])];
  const served = ctx.served && hosts.length ? await ctx.served(d.organizationId, hosts) : undefined;
  const before = await viewOf(d, io.valuesBefore, d.email, io.dmarcBefore, selectors, served);
  const after = await viewOf(d, io.valuesAfter, state, io.dmarcAfter, selectors, served);
  const regressions = emailRegressions(before, after, d.name);
  const history = historyOfRegressions(d.name, regressions, before, after);
  return { state, stateChanged, history, regressions, view: after, policyFetched, policyFetchFailed, tlsaUnconfirmed, policyTransition };
}
