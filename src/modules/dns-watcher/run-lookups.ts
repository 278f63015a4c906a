/**
 * The DNS side of one scheduled run: every question the due domains ask, each asked once.
 *
 *  1. First answers: each distinct (name, type) of the due record sets, plus the TXT of
 *     each include/redirect target of the domains' SPF policies (the names their stored
 *     analysis read, spf.ts `target_records`), once however many domains and
 *     organizations watch or include it, `concurrency` queries in flight, DO set (the AD
 *     bit gives the DNSSEC status without an extra query). A target that is also a
 *     watched record set is one question.
 *  2. Confirmations: a (name, type) whose canonical values differ from what some domain
 *     stored, or a target whose v=spf1 record differs from what some domain's analysis
 *     read, is asked a second time; only an answer that says the same again is a change.
 *     A SERVFAIL of a domain not yet known as bogus is asked again too (a bogus verdict
 *     needs two failures), and so is one answer of a domain whose AD bits say its DNSSEC
 *     status changed (the witness), so a flapping resolver raises nothing.
 *  3. CD probes: for a SERVFAIL, the same question with checking disabled: if it then
 *     resolves, validation is what failed (bogus), not the resolver.
 *
 * Nothing here touches D1; the answers are read by assessment.ts.
 */
import type { DnsResolver, DnsResponse } from "../../platform/dns/doh";
import { txtText, type WatchedRecordType } from "../../platform/dns/presentation";
import type { DueDomain, DueRecordSet } from "./due-domains";
import { leftForNextRun, lookupFailure, observe, sameValues, type Observation } from "./observation";
import { SpfDnsError, spfRecordsOf, type SpfDns, type SpfLookupType } from "./spf";
import { mxHostsOf, tlsaName } from "./email/view";

const questionKey = (name: string, type: string) => `${name}|${type}`;

/** The include/redirect targets a domain's stored SPF analysis read, with the v=spf1 records it saw there. */
export const spfTargetsOf = (d: DueDomain): [string, string[]][] => Object.entries(d.spf?.target_records ?? {});

/**
 * The MX hosts whose `_25._tcp` TLSA records a domain's email checks read: those of its
 * stored MX values (a confirmed MX change is followed by the next run), and those it
 * kept TLSA answers for is not enough (a host gone from the MX set is no longer asked).
 */
export function daneHostsOf(d: DueDomain): string[] {
  if (!d.emailChecks) return [];
  const mx = d.sets.find((s) => s.type === "MX" && s.name === d.name);
  return mx?.values ? mxHostsOf(mx.values) : [];
}

/** The v=spf1 records of a target's TXT answer; null when it did not resolve. */
export function spfRecordsOfAnswer(o: Observation | undefined): string[] | null {
  return o?.kind === "resolved" ? spfRecordsOf(o.values.map(txtText)) : null;
}

export interface RunAnswers {
  /** The first answer to the set's question this run. */
  first(set: DueRecordSet): Observation;
  /** The confirmation of a difference or SERVFAIL, if one was asked. */
  second(set: DueRecordSet): Observation | undefined;
  /** The answer with CD set, if one was asked. */
  checkingDisabled(set: DueRecordSet): Observation | undefined;
  /** The first record set of the domain whose answer was SERVFAIL (the DNSSEC suspect), if any. */
  servfailOf(domain: DueDomain): DueRecordSet | undefined;
  /** The set asked again because its AD bit says the domain's DNSSEC status changed (validated <-> insecure, out of bogus). */
  dnssecWitness(domain: DueDomain): DueRecordSet | undefined;
  /** The first answer / the confirmation of any question of the run (record sets and SPF targets). */
  answer(name: string, type: string): Observation | undefined;
  confirmation(name: string, type: string): Observation | undefined;
  /** One of the domain's questions was never put (the run's deadline passed): the domain is left for the next run. */
  notAsked(domain: DueDomain): boolean;
  /** Distinct questions asked first (record sets, SPF targets and MX hosts' TLSA), of which SPF targets only, of which TLSA only; confirmations, of which for SPF targets only. */
  readonly distinctQuestions: number;
  readonly spfTargetQuestions: number;
  readonly tlsaQuestions: number;
  readonly confirmations: number;
  readonly spfTargetConfirmations: number;
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
export async function inPool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), items.length) }, worker));
}

type Questions = Map<string, [string, WatchedRecordType]>;

export async function askRunQuestions(due: readonly DueDomain[], resolver: DnsResolver, concurrency: number): Promise<RunAnswers> {
  const ask = async (name: string, type: WatchedRecordType, checkingDisabled = false): Promise<Observation> => {
    try {
      return observe(type, await resolver.query(name, type, { dnssecOk: true, checkingDisabled }));
    } catch (err) {
      return observe(type, err);
    }
  };
  const askAll = async (questions: Questions, checkingDisabled = false) => {
    const answers = new Map<string, Observation>();
    await inPool([...questions], concurrency, async ([k, [name, type]]) => void answers.set(k, await ask(name, type, checkingDisabled)));
    return answers;
  };
  const add = (q: Questions, name: string, type: WatchedRecordType) => q.set(questionKey(name, type), [name, type]);

  const questions: Questions = new Map();
  for (const d of due) for (const s of d.sets) add(questions, s.name, s.type);
  const setQuestions = questions.size;
  for (const d of due) for (const [name] of spfTargetsOf(d)) add(questions, name, "TXT");
  const beforeTlsa = questions.size;
  for (const d of due) for (const host of daneHostsOf(d)) add(questions, tlsaName(host), "TLSA");
  const first = await askAll(questions);
  const firstOf = (s: DueRecordSet) => first.get(questionKey(s.name, s.type))!;
  const servfailOf = (d: DueDomain) => d.sets.find((s) => firstOf(s).kind === "error" && firstOf(s).rcode === "SERVFAIL");

  const witnesses = new Map<number, DueRecordSet>();
  const dnssecWitness = (d: DueDomain): DueRecordSet | undefined => {
    // Only a change between known statuses needs one: the first status is a baseline, and a SERVFAIL is the bogus path.
    if (d.dnssecStatus === "unknown" || servfailOf(d)) return undefined;
    const resolved = d.sets.filter((s) => firstOf(s).kind === "resolved");
    const ad = (s: DueRecordSet) => (firstOf(s) as Extract<Observation, { kind: "resolved" }>).authenticData;
    if (resolved.length === 0) return undefined;
    const validated = resolved.every(ad);
    if ((validated ? "validated" : "insecure") === d.dnssecStatus) return undefined;
    return validated ? resolved[0] : resolved.find((s) => !ad(s));
  };

  const toConfirm: Questions = new Map();
  const toProbe: Questions = new Map();
  for (const d of due) {
    for (const s of d.sets) {
      const o = firstOf(s);
      if (o.kind === "resolved" && s.values !== null && !sameValues(o.values, s.values)) add(toConfirm, s.name, s.type);
    }
    const failing = servfailOf(d);
    if (failing) {
      add(toProbe, failing.name, failing.type);
      if (d.dnssecStatus !== "bogus") add(toConfirm, failing.name, failing.type);
    }
    const witness = dnssecWitness(d);
    if (witness) {
      witnesses.set(d.id, witness);
      add(toConfirm, witness.name, witness.type);
    }
  }
  const setConfirmations = toConfirm.size;
  for (const d of due) {
    for (const [name, records] of spfTargetsOf(d)) {
      const now = spfRecordsOfAnswer(first.get(questionKey(name, "TXT")));
      if (now !== null && !sameValues(now, records)) add(toConfirm, name, "TXT");
    }
  }
  const spfTargetConfirmations = toConfirm.size - setConfirmations;
  // A TLSA answer that differs from what the domain kept (records or AD bit) is asked again, like a record set.
  for (const d of due) {
    for (const host of daneHostsOf(d)) {
      const o = first.get(questionKey(tlsaName(host), "TLSA"));
      const kept = d.email.tlsa[host];
      if (o?.kind !== "resolved" || !kept || kept.collection.last_success_at === null) continue;
      if (kept.validated !== o.authenticData || kept.rcode !== o.rcode || !sameValues(o.values, kept.values)) add(toConfirm, tlsaName(host), "TLSA");
    }
  }
  const second = await askAll(toConfirm);
  const probe = await askAll(toProbe, true);

  const domainNotAsked = (d: DueDomain) => {
    const keys = [
      ...d.sets.map((s) => questionKey(s.name, s.type)),
      ...spfTargetsOf(d).map(([name]) => questionKey(name, "TXT")),
      ...daneHostsOf(d).map((host) => questionKey(tlsaName(host), "TLSA")),
    ];
    const notAsked = (o: Observation | undefined) => o?.kind === "error" && o.notAsked === true;
    return keys.some((k) => notAsked(first.get(k)) || notAsked(second.get(k)) || notAsked(probe.get(k)));
  };

  return {
    first: firstOf,
    second: (s) => second.get(questionKey(s.name, s.type)),
    checkingDisabled: (s) => probe.get(questionKey(s.name, s.type)),
    servfailOf,
    dnssecWitness: (d) => witnesses.get(d.id),
    answer: (name, type) => first.get(questionKey(name, type)),
    confirmation: (name, type) => second.get(questionKey(name, type)),
    notAsked: domainNotAsked,
    distinctQuestions: questions.size,
    spfTargetQuestions: beforeTlsa - setQuestions,
    tlsaQuestions: questions.size - beforeTlsa,
    confirmations: toConfirm.size,
    spfTargetConfirmations,
  };
}

/** The values SPF evaluation reads from a canonical answer: TXT strings glued (RFC 7208 §3.3), "pref exchange" for MX, addresses. */
function spfValues(type: SpfLookupType, o: Observation): string[] {
  if (o.kind === "error") throw new SpfDnsError(o.error, o.notAsked === true);
  return type === "TXT" ? o.values.map(txtText) : o.values;
}

/**
 * SPF's view of DNS over the DoH client, memoized per run: an include shared by many
 * domains costs one query. Names the run already asked (its record sets and the SPF
 * targets, `answers`) are read from their answers (the confirmation when there is one)
 * instead of being asked again.
 */
export function spfDnsOver(resolver: DnsResolver, answers?: RunAnswers): SpfDns {
  const memo = new Map<string, Promise<string[]>>();
  const valuesOf = (type: SpfLookupType, r: DnsResponse): string[] => {
    if (r.rcode === "NXDOMAIN") return [];
    if (r.rcode !== "NOERROR") throw new SpfDnsError(r.rcode);
    return r.answers
      .filter((a) => a.type === type)
      .map((a) => {
        const d = a.data as unknown;
        // A TXT record's strings are glued (RFC 7208 §3.3).
        if (type === "TXT") return (d as Uint8Array[]).map((b) => String.fromCharCode(...b)).join("");
        if (type === "MX") return `${(d as { preference: number }).preference} ${(d as { exchange: string }).exchange}`;
        return String(d);
      });
  };
  return {
    lookup(name, type) {
      const n = name.toLowerCase();
      const k = questionKey(n, type);
      let p = memo.get(k);
      if (!p) {
        const known = type === "PTR" ? undefined : (answers?.confirmation(n, type) ?? answers?.answer(n, type));
        p = known
          ? Promise.resolve().then(() => spfValues(type, known))
          : resolver.query(name, type).then(
              (r) => valuesOf(type, r),
              (err: unknown) => {
                throw new SpfDnsError(lookupFailure(err).message, leftForNextRun(err));
              },
            );
        memo.set(k, p);
      }
      return p;
    },
  };
}
