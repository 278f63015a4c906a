/**
 * What one scheduled run found for one watched domain, decided from the run's answers
 * (run-lookups.ts) and what was stored before. No D1 here: run-writes.ts turns an
 * assessment into statements, and the run emits its event after the commit.
 *
 * Per record set:
 *  - a lookup error (SERVFAIL, REFUSED, timeout, garbage) is recorded as the set's
 *    `last_error`; its values stay: an error is never a removal and never a change;
 *  - the first answer ever is the baseline: stored, not a change;
 *  - an answer whose canonical values differ is a change only when the confirmation
 *    query said the same; otherwise nothing happens and the next run looks again.
 * Per domain:
 *  - SPF is re-analysed when the apex TXT set changed (or was never analysed), DMARC
 *    re-parsed when `_dmarc` TXT changed; a weaker policy is written into the history
 *    item's verdict, the facts and the event;
 *  - DNSSEC status from the AD bits and the CD probe; the first status is a baseline
 *    (no history, no event) unless it is a validation failure, which the audit must see.
 */
import type { DnsCheckStatus, DnsFactKind } from "../../db/schema/dns-watcher";
import { txtText, type WatchedRecordType } from "../../platform/dns/presentation";
import { dmarcRegressions, dmarcVerdict, NO_DMARC, parseDmarc, type DmarcRecord, type DmarcRegression } from "./dmarc";
import type { DueDomain, DueRecordSet } from "./due-domains";
import { DnsChangeEventSchema, type DnsChangeEvent } from "./events";
import { classifyDnssec, sameValues, type DnssecStatus, type DnssecVerdict } from "./observation";
import type { RunAnswers } from "./run-lookups";
import { analyzeSpf, EMPTY_SPF, type SpfAnalysis, type SpfDns } from "./spf";

/** A confirmed change of one record set's values. */
export interface RecordSetChange {
  set: DueRecordSet;
  values: string[];
  rcode: string;
}

/** A history item (dns_history) and the facts recorded with it (dns_change_facts). */
export interface HistoryEntry {
  kind: "record" | "dnssec";
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
}

export interface DomainAssessment {
  domain: DueDomain;
  /** Record sets answered for the first time: their values are stored, nothing is a change. */
  baselines: { id: number; values: string[]; rcode: string }[];
  /** Record sets whose `last_error` changes (null clears it). */
  errorMarks: { id: number; error: string | null }[];
  changes: RecordSetChange[];
  history: HistoryEntry[];
  state: DomainState;
  dnssecChanged: boolean;
  /** Nothing to write but the time of the check: the domain joins the run's one bookkeeping statement. */
  quiet: boolean;
  /** The change event, sent to alerting once the writes are committed (null: nothing happened worth one). */
  event: DnsChangeEvent | null;
  lookupErrors: number;
  unconfirmed: number;
}

interface RecordSetOutcome {
  baselines: DomainAssessment["baselines"];
  errorMarks: DomainAssessment["errorMarks"];
  changes: RecordSetChange[];
  errors: string[];
  resolved: number;
  unconfirmed: number;
  /** The apex TXT / `_dmarc` TXT values when the policy they carry must be (re)read. */
  spfSource: { values: string[]; changed: boolean } | null;
  dmarcSource: { values: string[]; changed: boolean } | null;
  /** Every apex record set answered NXDOMAIN: the domain does not exist. */
  apexNxdomain: boolean;
}

const isApexTxt = (d: DueDomain, s: DueRecordSet) => s.type === "TXT" && s.name === d.name;
const isDmarcTxt = (d: DueDomain, s: DueRecordSet) => s.type === "TXT" && s.name === `_dmarc.${d.name}`;

/** Step 1: each record set's answer against its stored values. */
function assessRecordSets(d: DueDomain, answers: RunAnswers): RecordSetOutcome {
  const out: RecordSetOutcome = { baselines: [], errorMarks: [], changes: [], errors: [], resolved: 0, unconfirmed: 0, spfSource: null, dmarcSource: null, apexNxdomain: false };
  const policySource = (s: DueRecordSet, values: string[], changed: boolean) => {
    if (isApexTxt(d, s)) out.spfSource = { values, changed };
    if (isDmarcTxt(d, s)) out.dmarcSource = { values, changed };
  };
  let apexAnswers = 0;
  let apexNxdomain = 0;
  for (const s of d.sets) {
    const o = answers.first(s);
    if (o.kind === "error") {
      out.errors.push(`${s.name} ${s.type}: ${o.error}`);
      if (s.lastError !== o.error) out.errorMarks.push({ id: s.id, error: o.error });
      continue;
    }
    out.resolved++;
    if (s.name === d.name) {
      apexAnswers++;
      if (o.rcode === "NXDOMAIN") apexNxdomain++;
    }
    if (s.values === null) {
      out.baselines.push({ id: s.id, values: o.values, rcode: o.rcode });
      policySource(s, o.values, false);
    } else if (sameValues(o.values, s.values)) {
      if (s.lastError !== null) out.errorMarks.push({ id: s.id, error: null });
      if ((isApexTxt(d, s) && d.spf === null) || (isDmarcTxt(d, s) && d.dmarc === null)) policySource(s, o.values, false);
    } else {
      const again = answers.second(s);
      if (again?.kind !== "resolved" || !sameValues(again.values, o.values)) {
        out.unconfirmed++; // the next run looks again
        continue;
      }
      out.changes.push({ set: s, values: o.values, rcode: o.rcode });
      policySource(s, o.values, true);
    }
  }
  out.apexNxdomain = apexAnswers > 0 && apexNxdomain === apexAnswers;
  return out;
}

interface PolicyOutcome {
  spf: SpfAnalysis | null;
  dmarc: DmarcRecord | null;
  previousSpf: SpfAnalysis;
  previousDmarc: DmarcRecord;
  spfChanged: boolean;
  dmarcChanged: boolean;
  becamePermissive: boolean;
  regressions: DmarcRegression[];
}

/** Step 2: SPF and DMARC re-read where their record changed (includes resolved through `spfDns`, memoized per run). */
async function assessPolicies(d: DueDomain, r: RecordSetOutcome, spfDns: SpfDns): Promise<PolicyOutcome> {
  const previousSpf = d.spf ?? { ...EMPTY_SPF };
  const previousDmarc = d.dmarc ?? { ...NO_DMARC };
  const spf = r.spfSource ? await analyzeSpf(d.name, r.spfSource.values.map(txtText), spfDns) : d.spf;
  const dmarc = r.dmarcSource ? parseDmarc(r.dmarcSource.values.map(txtText)) : d.dmarc;
  const spfChanged = r.spfSource?.changed ?? false;
  const dmarcChanged = r.dmarcSource?.changed ?? false;
  return {
    spf,
    dmarc,
    previousSpf,
    previousDmarc,
    spfChanged,
    dmarcChanged,
    becamePermissive: spfChanged && spf !== null && spf.allows_all && !previousSpf.allows_all,
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
 * Step 4: the DNSSEC status. A new bogus verdict needs the confirmation query to have
 * failed as well; "unknown" (nothing resolved, e.g. the resolver is down) keeps the status
 * and the error text last known.
 */
function assessDnssec(d: DueDomain, answers: RunAnswers): DnssecVerdict {
  const failing = answers.servfailOf(d);
  const verdict = classifyDnssec(d.sets.map(answers.first), failing ? (answers.checkingDisabled(failing) ?? null) : null);
  if (verdict.status === "unknown") return { status: d.dnssecStatus, error: d.dnssecError, ede: [] };
  if (verdict.status === "bogus" && d.dnssecStatus !== "bogus") {
    const again = failing ? answers.second(failing) : undefined;
    if (!(again?.kind === "error" && again.rcode === "SERVFAIL")) return { status: d.dnssecStatus, error: d.dnssecError, ede: [] };
  }
  return verdict;
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

const spfSide = (a: SpfAnalysis) => ({ record: a.record, all: a.all, mechanisms: a.mechanisms, includes: a.includes, lookup_count: a.lookup_count, allows_all: a.allows_all });
const dmarcSide = (d: DmarcRecord) => ({ record: d.record, p: d.p, sp: d.sp, np: d.np, pct: d.pct, t: d.t, adkim: d.adkim, aspf: d.aspf, rua: d.rua, ruf: d.ruf });

/** Step 5: the event of ADDENDUM 8 (events.ts), parsed so that it always matches its declared shape. */
function changeEvent(d: DueDomain, changes: RecordSetChange[], p: PolicyOutcome, verdict: DnssecVerdict, resolvedAt: string): DnsChangeEvent {
  const spf = p.spf ?? { ...EMPTY_SPF };
  const dmarc = p.dmarc ?? { ...NO_DMARC };
  return DnsChangeEventSchema.parse({
    domain: d.name,
    changed_records: changes.map((c) => ({ name: c.set.name, type: c.set.type, old_values: c.set.values ?? [], new_values: c.values })),
    dnssec: { validated: verdict.status === "validated", status: verdict.status, previous_status: d.dnssecStatus, error: verdict.status === "bogus" ? verdict.error : "", ede_codes: verdict.ede.map((e) => e.code) },
    spf: { current: spfSide(spf), previous: spfSide(p.spfChanged ? p.previousSpf : spf), allows_all: spf.allows_all, became_permissive: p.becamePermissive },
    dmarc: {
      current: dmarcSide(dmarc),
      previous: dmarcSide(p.dmarcChanged ? p.previousDmarc : dmarc),
      // What got worse, each kind once (the history item lists every tag).
      regressions: [...new Set(p.regressions.map((r) => r.kind))],
      verdict: dmarcVerdict(p.regressions),
    },
    resolved_at: resolvedAt,
  });
}

export async function assessDomain(d: DueDomain, answers: RunAnswers, spfDns: SpfDns, resolvedAt: string): Promise<DomainAssessment> {
  const records = assessRecordSets(d, answers);
  const policies = await assessPolicies(d, records, spfDns);
  const verdict = assessDnssec(d, answers);
  const history = records.changes.map((c) => changeHistory(d, c, policies));
  const dnssec = dnssecHistory(d, verdict);
  if (dnssec) history.push(dnssec);

  const status: DnsCheckStatus = records.errors.length === 0 ? "ok" : records.resolved === 0 ? "error" : "partial";
  const detail = records.errors.length ? records.errors.join("; ").slice(0, 2000) : records.apexNxdomain ? `${d.name} does not exist (NXDOMAIN)` : null;
  const dnssecChanged = verdict.status !== d.dnssecStatus;
  const state: DomainState = { status, detail, dnssecStatus: verdict.status, dnssecError: verdict.status === "bogus" ? verdict.error : "", spf: policies.spf, dmarc: policies.dmarc };
  const quiet =
    records.baselines.length === 0 && records.errorMarks.length === 0 && history.length === 0 && !dnssecChanged &&
    records.spfSource === null && records.dmarcSource === null && status === "ok" && detail === null;
  return {
    domain: d,
    baselines: records.baselines,
    errorMarks: records.errorMarks,
    changes: records.changes,
    history,
    state,
    dnssecChanged,
    quiet,
    event: records.changes.length > 0 || dnssec !== null ? changeEvent(d, records.changes, policies, verdict, resolvedAt) : null,
    lookupErrors: records.errors.length,
    unconfirmed: records.unconfirmed,
  };
}
