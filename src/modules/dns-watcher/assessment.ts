/**
 * What one scheduled run found for one watched domain, decided from the run's answers
 * (run-lookups.ts) and what was stored before. No D1 here: run-writes.ts turns an
 * assessment into statements, and the run emits its event after the commit.
 *
 * Per record set:
 *  - a lookup error (SERVFAIL, REFUSED, timeout, garbage) is recorded as the set's
 *    `last_error`, classified (platform/collection), with its run of failures; its values
 *    stay: an error is never a removal and never a change;
 *  - the first answer ever is the baseline: stored, not a change;
 *  - an answer whose canonical values differ is a change only when the confirmation
 *    query said the same; otherwise nothing happens and the next run looks again.
 * Per domain:
 *  - SPF is analysed again when the apex TXT set changed, when the stored analysis is not
 *    final (temperror: an include did not resolve) or predates `target_records`, and when
 *    an include/redirect target's own v=spf1 record changed (confirmed by a second
 *    query). A weaker policy is written into the history item's verdict, the facts and
 *    the event; a policy first seen allowing every sender is recorded like a first bogus
 *    DNSSEC status (the weekly report must show the posture). A new analysis that fails
 *    on DNS does not replace a final one: the next run tries again.
 *  - DMARC re-parsed when `_dmarc` TXT changed, with its regressions;
 *  - DNSSEC status from the AD bits and the CD probe; the first status is a baseline
 *    (no history, no event) unless it is a validation failure, which the audit must see.
 *    Any later status change is confirmed by a second answer before it counts.
 *  - Collection state: the run is an attempt; it failed when no record set resolved
 *    (status error). The domain enters `failing` at its second failed run in a row and a
 *    collection event (collection_failing, naming each failing record set, then
 *    collection_recovered) goes out once per transition.
 */
import type { DnsCheckStatus, DnsFactKind } from "../../db/schema/dns-watcher";
import { NOT_ASKED_AGAIN, recordAttempt, type CollectionError, type CollectionRecord, type CollectionTransition } from "../../platform/collection";
import { txtText, type WatchedRecordType } from "../../platform/dns/presentation";
import { dmarcRegressions, dmarcVerdict, NO_DMARC, parseDmarc, type DmarcRecord, type DmarcRegression } from "./dmarc";
import { retryAfterFailure } from "./collection";
import type { DueDomain, DueRecordSet } from "./due-domains";
import { buildDnsChangeEvent, buildDnsCollectionEvent, type DnsWatcherEvent } from "./events";
import { classifyDnssec, sameValues, type DnssecStatus, type DnssecVerdict } from "./observation";
import { spfRecordsOfAnswer, spfTargetsOf, type RunAnswers } from "./run-lookups";
import { analyzeSpf, EMPTY_SPF, SpfDnsError, type SpfAnalysis, type SpfDns } from "./spf";
import { assessEmail, emailTxtNames, NOTHING_ASSESSED, selectorsOf, viewOf, type EmailOutcome, type EmailRunContext } from "./email/assess";
import { mxHostsOf, type EmailSecurityView, type EmailState } from "./email/view";

/** A confirmed change of one record set's values. */
export interface RecordSetChange {
  set: DueRecordSet;
  values: string[];
  rcode: string;
}

/**
 * A history item (dns_history) and the facts recorded with it (dns_change_facts).
 * kind: record = a record set's values changed; dnssec = the DNSSEC status changed;
 * spf = the SPF verdict changed without a change of the domain's own TXT record (an
 * include/redirect target changed, an analysis that had failed on DNS completed, or the
 * policy was first seen allowing every sender).
 */
export interface HistoryEntry {
  kind: "record" | "dnssec" | "spf" | "email";
  /** The record set a `record` entry is about (its write is the guard of the entry). */
  setId: number | null;
  name: string;
  type: string | null;
  old: string[];
  new: string[];
  /** The verdict in words. */
  detail: string;
  analysis: unknown;
  facts: DnsFactKind[];
}

/** The domain row after the run. */
export interface DomainState {
  status: DnsCheckStatus;
  detail: string | null;
  dnssecStatus: DnssecStatus;
  dnssecError: string;
  spf: SpfAnalysis | null;
  dmarc: DmarcRecord | null;
  /** What the email checks keep (the MTA-STS policy, the MX hosts' TLSA answers). */
  email: EmailState;
  /** Its collection state after this attempt. */
  collection: CollectionRecord;
}

/** What a record set's row says of its lookups after the run (written when a lookup failed or the set recovers). */
export interface RecordSetCollection {
  id: number;
  /** The failure in words; null when it resolved. */
  error: string | null;
  errorClass: CollectionError["class"] | null;
  failures: number;
  failingSince: string | null;
  /** The last success before the failures; null when it resolved (its domain's last_checked_at says it) or never did. */
  lastSuccessAt: string | null;
}

/** A record set whose lookup failed this run. */
export interface LookupFailure {
  set: DueRecordSet;
  failure: CollectionError;
  /** A resolver answered (SERVFAIL, REFUSED...): about the name, not about the resolver. */
  answered: boolean;
}

export interface DomainAssessment {
  domain: DueDomain;
  /** Record sets answered for the first time: their values are stored, nothing is a change. */
  baselines: { id: number; values: string[]; rcode: string }[];
  /** Record sets whose lookup failed, or resolved after failing: their `last_error` and collection columns. */
  errorMarks: RecordSetCollection[];
  changes: RecordSetChange[];
  history: HistoryEntry[];
  state: DomainState;
  dnssecChanged: boolean;
  /** Nothing to write but the time of the check: the domain joins the run's one bookkeeping statement. */
  quiet: boolean;
  /** The change event, sent to alerting once the writes are committed (null: nothing happened worth one). */
  event: DnsWatcherEvent | null;
  /** The collection transition of this attempt, and its event (sent once the writes are committed). */
  transition: CollectionTransition;
  collectionEvent: DnsWatcherEvent | null;
  /** The MTA-STS policy fetch entered failing or recovered (email checks): its collection event. */
  policyCollectionEvent: DnsWatcherEvent | null;
  lookupErrors: number;
  /** The record sets whose lookup failed this run, and why. */
  lookupFailures: LookupFailure[];
  /** Differences (record sets, SPF targets, DNSSEC status) the second query did not confirm. */
  unconfirmed: number;
  /** Include/redirect targets whose confirmed change made the SPF policy read again. */
  spfTargetChanges: number;
  /** The email checks' outcome (policy fetch, TLSA answers, regressions). */
  email: EmailOutcome;
}

/** A question of the domain's SPF analysis was never put (run deadline, circuit open): the domain is left for the next run. */
export class DomainNotResolved extends Error {
  override readonly name = "DomainNotResolved";
}

/** Why the SPF policy is read this run. */
type SpfCause = "record_changed" | "baseline" | "recheck" | "targets";

interface TargetChange {
  name: string;
  old: string[];
  new: string[];
}

interface RecordSetOutcome {
  baselines: DomainAssessment["baselines"];
  errorMarks: DomainAssessment["errorMarks"];
  changes: RecordSetChange[];
  errors: LookupFailure[];
  resolved: number;
  unconfirmed: number;
  /** The apex TXT values when the SPF policy must be (re)read, and why. */
  spfSource: { values: string[]; cause: SpfCause } | null;
  /** The `_dmarc` TXT values when the DMARC policy must be (re)read. */
  dmarcSource: { values: string[]; changed: boolean } | null;
  targetChanges: TargetChange[];
  /** Every apex record set answered NXDOMAIN: the domain does not exist. */
  apexNxdomain: boolean;
}

const isApexTxt = (d: DueDomain, s: DueRecordSet) => s.type === "TXT" && s.name === d.name;
const isDmarcTxt = (d: DueDomain, s: DueRecordSet) => s.type === "TXT" && s.name === `_dmarc.${d.name}`;

/** A stored analysis that must be made again even if the TXT record did not change. */
const spfNotFinal = (spf: SpfAnalysis) => spf.status === "temperror" || (spf as Partial<SpfAnalysis>).target_records === undefined;

/** A failed lookup of `s` at `at`: its run of failures grows (the last success before it is kept). */
function failedLookup(d: DueDomain, s: DueRecordSet, failure: CollectionError, at: string): RecordSetCollection {
  const firstFailure = s.failures === 0;
  return {
    id: s.id,
    error: failure.message,
    errorClass: failure.class,
    failures: s.failures + 1,
    failingSince: s.failingSince ?? at,
    // Until now its lookups resolved: the last one was the domain's last check (if it ever resolved).
    lastSuccessAt: firstFailure ? (s.values !== null ? d.collection.lastAttemptAt : null) : s.lastSuccessAt,
  };
}

const resolvedLookup = (s: DueRecordSet): RecordSetCollection => ({ id: s.id, error: null, errorClass: null, failures: 0, failingSince: null, lastSuccessAt: null });

/** Step 1: each record set's answer against its stored values. */
function assessRecordSets(d: DueDomain, answers: RunAnswers, resolvedAt: string): RecordSetOutcome {
  const out: RecordSetOutcome = {
    baselines: [], errorMarks: [], changes: [], errors: [], resolved: 0, unconfirmed: 0, spfSource: null, dmarcSource: null, targetChanges: [], apexNxdomain: false,
  };
  const policySource = (s: DueRecordSet, values: string[], cause: SpfCause) => {
    if (isApexTxt(d, s)) out.spfSource = { values, cause };
    if (isDmarcTxt(d, s)) out.dmarcSource = { values, changed: cause === "record_changed" };
  };
  let apexAnswers = 0;
  let apexNxdomain = 0;
  for (const s of d.sets) {
    const o = answers.first(s);
    if (o.kind === "error") {
      out.errors.push({ set: s, failure: o.failure, answered: o.rcode !== null });
      out.errorMarks.push(failedLookup(d, s, o.failure, resolvedAt));
      continue;
    }
    out.resolved++;
    if (s.lastError !== null || s.failures > 0) out.errorMarks.push(resolvedLookup(s));
    if (s.name === d.name) {
      apexAnswers++;
      if (o.rcode === "NXDOMAIN") apexNxdomain++;
    }
    if (s.values === null) {
      out.baselines.push({ id: s.id, values: o.values, rcode: o.rcode });
      policySource(s, o.values, "baseline");
    } else if (sameValues(o.values, s.values)) {
      if (isApexTxt(d, s) && (d.spf === null || spfNotFinal(d.spf))) policySource(s, o.values, "recheck");
      if (isDmarcTxt(d, s) && d.dmarc === null) policySource(s, o.values, "recheck");
    } else {
      const again = answers.second(s);
      if (again?.kind !== "resolved" || !sameValues(again.values, o.values)) {
        out.unconfirmed++; // the next run looks again
        continue;
      }
      out.changes.push({ set: s, values: o.values, rcode: o.rcode });
      policySource(s, o.values, "record_changed");
    }
  }
  out.apexNxdomain = apexAnswers > 0 && apexNxdomain === apexAnswers;

  // The include/redirect targets: a v=spf1 record that changed there (said twice) re-reads the policy.
  for (const [name, records] of spfTargetsOf(d)) {
    const now = spfRecordsOfAnswer(answers.answer(name, "TXT"));
    if (now === null || sameValues(now, records)) continue;
    const again = spfRecordsOfAnswer(answers.confirmation(name, "TXT"));
    if (again === null || !sameValues(again, now)) {
      out.unconfirmed++;
      continue;
    }
    out.targetChanges.push({ name, old: records, new: now });
  }
  const apexTxt = d.sets.find((s) => isApexTxt(d, s));
  if (out.targetChanges.length > 0 && out.spfSource === null && apexTxt?.values) out.spfSource = { values: apexTxt.values, cause: "targets" };
  return out;
}

interface PolicyOutcome {
  spf: SpfAnalysis | null;
  dmarc: DmarcRecord | null;
  previousSpf: SpfAnalysis;
  previousDmarc: DmarcRecord;
  /** The apex TXT record changed (its history item carries the SPF verdict). */
  spfRecordChanged: boolean;
  /** A new analysis replaced the stored one. */
  spfReplaced: boolean;
  dmarcChanged: boolean;
  becamePermissive: boolean;
  regressions: DmarcRegression[];
}

/** The SPF verdict moved: allows-all, or (between final analyses) the status or the effective `all`. */
function spfVerdictChanged(before: SpfAnalysis, after: SpfAnalysis): boolean {
  if (before.allows_all !== after.allows_all) return true;
  if (before.status === "temperror" || after.status === "temperror") return false;
  return before.status !== after.status || before.all !== after.all;
}

/** Step 2: SPF and DMARC re-read where needed (includes resolved through `spfDns`, memoized per run). */
async function assessPolicies(d: DueDomain, r: RecordSetOutcome, spfDns: SpfDns): Promise<PolicyOutcome> {
  const previousSpf = d.spf ?? { ...EMPTY_SPF };
  const previousDmarc = d.dmarc ?? { ...NO_DMARC };
  let spf = d.spf;
  if (r.spfSource) {
    const fresh = await analyzeSpf(d.name, r.spfSource.values.map(txtText), spfDns);
    // A DNS failure is no verdict: it does not replace a final analysis of the same record.
    const keep = r.spfSource.cause !== "record_changed" && fresh.status === "temperror" && d.spf !== null && d.spf.status !== "temperror";
    if (!keep) spf = fresh;
  }
  const dmarc = r.dmarcSource ? parseDmarc(r.dmarcSource.values.map(txtText)) : d.dmarc;
  const dmarcChanged = r.dmarcSource?.changed ?? false;
  const spfReplaced = spf !== d.spf;
  return {
    spf,
    dmarc,
    previousSpf,
    previousDmarc,
    spfRecordChanged: r.spfSource?.cause === "record_changed",
    spfReplaced,
    dmarcChanged,
    becamePermissive: spfReplaced && spf !== null && spf.allows_all && !previousSpf.allows_all,
    regressions: dmarcChanged && dmarc !== null ? dmarcRegressions(previousDmarc, dmarc) : [],
  };
}

const FACT_OF_TYPE: Partial<Record<WatchedRecordType, DnsFactKind>> = { MX: "mx_changed", NS: "ns_changed" };

function describeChange(type: string, name: string, before: string[], after: string[]): string {
  const added = after.filter((v) => !before.includes(v));
  const removed = before.filter((v) => !after.includes(v));
  if (after.length === 0) return `${name} ${type} removed (confirmed NXDOMAIN/NODATA): was ${before.join(", ")}`;
  if (before.length === 0) return `${name} ${type} added: ${after.join(", ")}`;
  return `${name} ${type} changed:${added.length ? ` added ${added.join(", ")}` : ""}${added.length && removed.length ? ";" : ""}${removed.length ? ` removed ${removed.join(", ")}` : ""}`;
}

/** Step 3: one history item per confirmed change, with the SPF/DMARC verdict and the audit facts it implies. */
function changeHistory(d: DueDomain, change: RecordSetChange, p: PolicyOutcome): HistoryEntry {
  const { set: s, values } = change;
  const entry: HistoryEntry = { kind: "record", setId: s.id, name: s.name, type: s.type, old: s.values ?? [], new: values, detail: describeChange(s.type, s.name, s.values ?? [], values), analysis: null, facts: [] };
  if (isApexTxt(d, s) && p.spf) {
    entry.analysis = { spf: { previous: p.previousSpf, current: p.spf } };
    if (p.becamePermissive) {
      entry.detail = `SPF allows all senders (${p.spf.allows_all_via}): ${p.spf.record}`;
      entry.facts.push("spf_allows_all");
    }
  }
  if (isDmarcTxt(d, s) && p.dmarc) {
    entry.analysis = { dmarc: { previous: p.previousDmarc, current: p.dmarc, regressions: p.regressions } };
    if (p.regressions.length) {
      entry.detail = dmarcVerdict(p.regressions);
      entry.facts.push(p.regressions.some((r) => r.kind === "removed") ? "dmarc_removed" : "dmarc_weakened");
    }
  }
  if (s.name === d.name && (s.type === "A" || s.type === "AAAA" || s.type === "CNAME")) entry.facts.push("apex_changed");
  const byType = FACT_OF_TYPE[s.type];
  if (byType) entry.facts.push(byType);
  return entry;
}

/**
 * Step 3b: the SPF verdict changed although the domain's own TXT record did not: a
 * target changed, an analysis that had failed on DNS completed, or the policy is seen
 * for the first time and allows every sender. Named after the changed target (its v=spf1
 * records before and after), else after the domain (its record).
 */
function spfHistory(d: DueDomain, r: RecordSetOutcome, p: PolicyOutcome): HistoryEntry | null {
  if (!p.spfReplaced || p.spfRecordChanged || p.spf === null) return null;
  const first = d.spf === null;
  if (first ? !p.spf.allows_all : !spfVerdictChanged(p.previousSpf, p.spf)) return null;
  const target = r.targetChanges[0];
  const cause = target
    ? `${r.targetChanges.map((t) => `${t.name} now has ${t.new.length ? t.new.join(" | ") : "no SPF record"}`).join("; ")}`
    : first
      ? `first seen: ${p.spf.record}`
      : `read again: ${p.spf.record}`;
  const before = p.previousSpf;
  const after = p.spf;
  const verdict = p.becamePermissive
    ? `SPF allows all senders (${after.allows_all_via})`
    : before.allows_all && !after.allows_all
      ? "SPF no longer allows all senders"
      : before.status !== after.status
        ? `SPF ${before.status} -> ${after.status}${after.errors.length ? ` (${after.errors.join("; ")})` : ""}`
        : `SPF effective all ${before.all || "(none)"} -> ${after.all || "(none)"}`;
  return {
    kind: "spf",
    setId: null,
    name: target?.name ?? d.name,
    type: "TXT",
    old: target ? target.old : before.record ? [before.record] : [],
    new: target ? target.new : after.record ? [after.record] : [],
    detail: `${verdict}: ${cause}`,
    analysis: { spf: { previous: first ? null : before, current: after, changed_targets: r.targetChanges } },
    facts: p.becamePermissive ? ["spf_allows_all"] : [],
  };
}

/**
 * Step 4: the DNSSEC status. A new bogus verdict needs the confirmation query to have
 * failed as well; any other change of a known status needs the witness's second answer
 * to carry the same AD bit. "unknown" (nothing resolved, e.g. the resolver is down) keeps
 * the status and the error text last known.
 */
function assessDnssec(d: DueDomain, answers: RunAnswers): { verdict: DnssecVerdict; unconfirmed: boolean } {
  const failing = answers.servfailOf(d);
  const verdict = classifyDnssec(d.sets.map(answers.first), failing ? (answers.checkingDisabled(failing) ?? null) : null);
  const keep = { status: d.dnssecStatus, error: d.dnssecError, ede: [] };
  if (verdict.status === "unknown") return { verdict: keep, unconfirmed: false };
  if (verdict.status === d.dnssecStatus || (d.dnssecStatus === "unknown" && verdict.status !== "bogus")) return { verdict, unconfirmed: false };
  if (verdict.status === "bogus") {
    const again = failing ? answers.second(failing) : undefined;
    if (d.dnssecStatus !== "bogus" && !(again?.kind === "error" && again.rcode === "SERVFAIL")) return { verdict: keep, unconfirmed: true };
    return { verdict, unconfirmed: false };
  }
  const witness = answers.dnssecWitness(d);
  const again = witness ? answers.second(witness) : undefined;
  const confirmed = again?.kind === "resolved" && again.authenticData === (verdict.status === "validated");
  return confirmed ? { verdict, unconfirmed: false } : { verdict: keep, unconfirmed: true };
}

function dnssecHistory(d: DueDomain, verdict: DnssecVerdict): HistoryEntry | null {
  // The first status a domain gets is a baseline, except a failure, which the audit must see.
  if (verdict.status === d.dnssecStatus || (d.dnssecStatus === "unknown" && verdict.status !== "bogus")) return null;
  const detail = verdict.status === "bogus" ? `DNSSEC validation failed: ${verdict.error}` : `DNSSEC status ${d.dnssecStatus} -> ${verdict.status}`;
  return {
    kind: "dnssec",
    setId: null,
    name: d.name,
    type: null,
    old: [d.dnssecStatus],
    new: [verdict.status],
    detail,
    analysis: { ede: verdict.ede },
    facts: verdict.status === "bogus" ? ["dnssec_failed"] : [],
  };
}

/**
 * What the email view reads before and after the run: record set values as stored, and
 * with this run's confirmed changes and baselines applied; `moved` when one of the sets it
 * reads (the mechanisms' TXT, the selectors' keys, the MX set) or DMARC moved.
 */
function emailInputs(d: DueDomain, r: RecordSetOutcome, p: PolicyOutcome) {
  const key = (name: string, type: string) => `${name}|${type}`;
  const stored = new Map(d.sets.map((s) => [key(s.name, s.type), s.values]));
  const now = new Map(stored);
  for (const b of r.baselines) {
    const s = d.sets.find((x) => x.id === b.id);
    if (s) now.set(key(s.name, s.type), b.values);
  }
  for (const c of r.changes) now.set(key(c.set.name, c.set.type), c.values);
  const read = [...emailTxtNames(d.name, selectorsOf(d.name, d.sets)).map((n) => key(n, "TXT")), key(d.name, "MX")];
  const setMoved = read.some((k) => stored.get(k) !== now.get(k));
  return {
    valuesBefore: (name: string, type: string) => stored.get(key(name, type)) ?? null,
    valuesAfter: (name: string, type: string) => now.get(key(name, type)) ?? null,
    moved: setMoved || r.dmarcSource !== null,
    dmarcBefore: d.dmarc,
    dmarcAfter: p.dmarc,
  };
}

/** The SPF view the analysis reads, noting a question the client never put (then the domain is not resolved this run). */
function trackingNotAsked(dns: SpfDns): SpfDns & { notAsked: boolean } {
  const tracked = {
    notAsked: false,
    lookup: (name: string, type: Parameters<SpfDns["lookup"]>[1]) =>
      dns.lookup(name, type).catch((err: unknown) => {
        if (err instanceof SpfDnsError && err.notAsked) tracked.notAsked = true;
        throw err;
      }),
  };
  return tracked;
}

/**
 * Why a run collected nothing of the domain: the failure shared by its record sets, or the
 * first one. A record set not asked because the resolver had already failed repeatedly
 * shares the failure that stopped the questions.
 */
function domainFailure(d: DueDomain, errors: LookupFailure[]): CollectionError {
  const rootOf = (message: string) => (message.endsWith(NOT_ASKED_AGAIN) ? message.slice(0, -NOT_ASKED_AGAIN.length) : message);
  const distinct = new Set(errors.map((e) => rootOf(e.failure.message)));
  const [first] = errors;
  if (distinct.size === 1) {
    const someNotAsked = errors.some((e) => e.failure.message.endsWith(NOT_ASKED_AGAIN));
    const rest = someNotAsked ? " (after repeated failures the rest were not asked again during this run)" : "";
    return { class: first.failure.class, message: `no record set of ${d.name} resolved: ${rootOf(first.failure.message)}${rest}` };
  }
  const others = errors.length - 1;
  return { class: first.failure.class, message: `no record set of ${d.name} resolved: ${first.set.name} ${first.set.type}: ${first.failure.message} (and ${others} other${others === 1 ? "" : "s"})` };
}

/**
 * Throws DomainNotResolved when a question of the domain was never put (it stays due, nothing is written).
 * `nextAttemptAt`: when the domain is due again (its collection state says it).
 */
export async function assessDomain(
  d: DueDomain,
  answers: RunAnswers,
  spfDns: SpfDns,
  resolvedAt: string,
  nextAttemptAt: string | null = null,
  emailRun: EmailRunContext | null = null,
): Promise<DomainAssessment> {
  if (answers.notAsked(d)) throw new DomainNotResolved(`${d.name}: not every question was asked before the run's deadline`);
  const records = assessRecordSets(d, answers, resolvedAt);
  const dns = trackingNotAsked(spfDns);
  const policies = await assessPolicies(d, records, dns);
  if (dns.notAsked) throw new DomainNotResolved(`${d.name}: an SPF lookup was not asked before the run's deadline`);
  const { verdict, unconfirmed: dnssecUnconfirmed } = assessDnssec(d, answers);
  const history = records.changes.map((c) => changeHistory(d, c, policies));
  const spf = spfHistory(d, records, policies);
  if (spf) history.push(spf);
  const dnssec = dnssecHistory(d, verdict);
  if (dnssec) history.push(dnssec);
  const emailIo = emailInputs(d, records, policies);
  const email = emailRun
    ? await assessEmail(d, answers, emailRun, resolvedAt, emailIo)
    : NOTHING_ASSESSED(d.email);
  for (const h of email.history) history.push({ kind: "email", setId: null, name: h.name, type: h.type, old: h.old, new: h.new, detail: h.detail, analysis: h.analysis, facts: h.facts });
  // The email view an event carries: built only when one goes out.
  const emailView = async (): Promise<EmailSecurityView | null> =>
    !d.emailChecks
      ? null
      : (email.view ??
        (await viewOf(d, emailIo.valuesAfter, email.state, policies.dmarc, selectorsOf(d.name, d.sets), await emailRun?.served?.(d.organizationId, mxHostsOf(emailIo.valuesAfter(d.name, "MX") ?? [])))));

  const status: DnsCheckStatus = records.errors.length === 0 ? "ok" : records.resolved === 0 ? "error" : "partial";
  const detail = records.errors.length
    ? records.errors.map((e) => `${e.set.name} ${e.set.type}: ${e.failure.message}`).join("; ").slice(0, 2000)
    : records.apexNxdomain
      ? `${d.name} does not exist (NXDOMAIN)`
      : null;
  const dnssecChanged = verdict.status !== d.dnssecStatus;
  // A run that resolved nothing is retried sooner than the regular interval (backoff).
  const attempt =
    status === "error"
      ? recordAttempt(d.collection, { ok: false, error: domainFailure(d, records.errors) }, resolvedAt, retryAfterFailure(resolvedAt, d.collection.consecutiveFailures + 1, nextAttemptAt))
      : recordAttempt(d.collection, { ok: true }, resolvedAt, nextAttemptAt);
  const state: DomainState = {
    status, detail, dnssecStatus: verdict.status, dnssecError: verdict.status === "bogus" ? verdict.error : "", spf: policies.spf, dmarc: policies.dmarc, email: email.state, collection: attempt.record,
  };
  const quiet =
    records.baselines.length === 0 && records.errorMarks.length === 0 && history.length === 0 && !dnssecChanged &&
    records.spfSource === null && records.dmarcSource === null && status === "ok" && detail === null && !email.stateChanged;
  const event =
    records.changes.length > 0 || dnssec !== null || spf !== null || email.history.length > 0
      ? buildDnsChangeEvent({
          domain: d.name,
          changedRecords: records.changes.map((c) => ({ name: c.set.name, type: c.set.type, oldValues: c.set.values ?? [], newValues: c.values })),
          dnssec: { status: verdict.status, previousStatus: d.dnssecStatus, error: verdict.status === "bogus" ? verdict.error : "", edeCodes: verdict.ede.map((e) => e.code) },
          // The policies before as stored: null when never read (the event says so), not the empty defaults compared against.
          spf: { current: policies.spf, previous: d.spf, changed: policies.spfReplaced, becamePermissive: policies.becamePermissive, changedTargets: records.targetChanges.map((t) => t.name) },
          dmarc: { current: policies.dmarc, previous: d.dmarc, changed: policies.dmarcChanged, regressions: policies.regressions },
          email: { view: await emailView(), regressions: email.regressions },
          resolvedAt,
        })
      : null;
  const collectionEvent = attempt.transition
    ? buildDnsCollectionEvent({
        transition: attempt.transition,
        record: attempt.record,
        previous: d.collection,
        domain: d.name,
        dnssec: { status: state.dnssecStatus, error: state.dnssecError },
        spf: policies.spf,
        dmarc: policies.dmarc,
        failingRecordSets: records.errors.map((e) => ({ name: e.set.name, type: e.set.type, error: e.failure })),
        email: await emailView(),
        attemptedAt: resolvedAt,
      })
    : null;
  // The MTA-STS policy that cannot be fetched while the TXT record advertises it: the same collection events, saying the fetch's reason.
  const policyCollectionEvent = email.policyTransition
    ? buildDnsCollectionEvent({
        ...email.policyTransition,
        domain: d.name,
        dnssec: { status: state.dnssecStatus, error: state.dnssecError },
        spf: policies.spf,
        dmarc: policies.dmarc,
        failingRecordSets: [],
        email: await emailView(),
        attemptedAt: resolvedAt,
      })
    : null;
  return {
    domain: d,
    baselines: records.baselines,
    errorMarks: records.errorMarks,
    changes: records.changes,
    history,
    state,
    dnssecChanged,
    quiet,
    event,
    transition: attempt.transition,
    collectionEvent,
    policyCollectionEvent,
    lookupErrors: records.errors.length,
    lookupFailures: records.errors,
    unconfirmed: records.unconfirmed + (dnssecUnconfirmed ? 1 : 0) + email.tlsaUnconfirmed,
    spfTargetChanges: records.targetChanges.length,
    email,
  };
}
