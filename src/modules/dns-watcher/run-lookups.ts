/**
 * The DNS side of one scheduled run: every question the due domains ask, each asked once.
 *
 *  1. First answers: each distinct (name, type) of the due record sets, once however many
 *     domains and organizations watch it, `concurrency` queries in flight, DO set (the AD
 *     bit gives the DNSSEC status without an extra query).
 *  2. Confirmations: a (name, type) whose canonical values differ from what some domain
 *     stored is asked a second time; only an answer that says the same again is a change.
 *     A SERVFAIL of a domain not yet known as bogus is asked again too (a bogus verdict
 *     needs two failures), so a flapping resolver raises nothing.
 *  3. CD probes: for a SERVFAIL, the same question with checking disabled: if it then
 *     resolves, validation is what failed (bogus), not the resolver.
 *
 * Nothing here touches D1; the answers are read by assessment.ts.
 */
import type { DnsResolver, DnsResponse } from "../../platform/dns/doh";
import type { WatchedRecordType } from "../../platform/dns/presentation";
import type { DueDomain, DueRecordSet } from "./due-domains";
import { observe, sameValues, type Observation } from "./observation";
import { SpfDnsError, type SpfDns, type SpfLookupType } from "./spf";

const questionKey = (name: string, type: string) => `${name}|${type}`;

export interface RunAnswers {
  /** The first answer to the set's question this run. */
  first(set: DueRecordSet): Observation;
  /** The confirmation of a difference or SERVFAIL, if one was asked. */
  second(set: DueRecordSet): Observation | undefined;
  /** The answer with CD set, if one was asked. */
  checkingDisabled(set: DueRecordSet): Observation | undefined;
  /** The first record set of the domain whose answer was SERVFAIL (the DNSSEC suspect), if any. */
  servfailOf(domain: DueDomain): DueRecordSet | undefined;
  /** Distinct questions asked first, confirmations asked. */
  readonly distinctQuestions: number;
  readonly confirmations: number;
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
export async function inPool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), items.length) }, worker));
}

export async function askRunQuestions(due: readonly DueDomain[], resolver: DnsResolver, concurrency: number): Promise<RunAnswers> {
  const ask = async (name: string, type: WatchedRecordType, checkingDisabled = false): Promise<Observation> => {
    try {
      return observe(type, await resolver.query(name, type, { dnssecOk: true, checkingDisabled }));
    } catch (err) {
      return observe(type, err);
    }
  };
  const askAll = async (questions: Map<string, [string, WatchedRecordType]>, checkingDisabled = false) => {
    const answers = new Map<string, Observation>();
    await inPool([...questions], concurrency, async ([k, [name, type]]) => void answers.set(k, await ask(name, type, checkingDisabled)));
    return answers;
  };

  const questions = new Map<string, [string, WatchedRecordType]>();
  for (const d of due) for (const s of d.sets) questions.set(questionKey(s.name, s.type), [s.name, s.type]);
  const first = await askAll(questions);
  const firstOf = (s: DueRecordSet) => first.get(questionKey(s.name, s.type))!;
  const servfailOf = (d: DueDomain) => d.sets.find((s) => firstOf(s).kind === "error" && firstOf(s).rcode === "SERVFAIL");

  const toConfirm = new Map<string, [string, WatchedRecordType]>();
  const toProbe = new Map<string, [string, WatchedRecordType]>();
  for (const d of due) {
    for (const s of d.sets) {
      const o = firstOf(s);
      if (o.kind === "resolved" && s.values !== null && !sameValues(o.values, s.values)) toConfirm.set(questionKey(s.name, s.type), [s.name, s.type]);
    }
    const failing = servfailOf(d);
    if (failing) {
      toProbe.set(questionKey(failing.name, failing.type), [failing.name, failing.type]);
      if (d.dnssecStatus !== "bogus") toConfirm.set(questionKey(failing.name, failing.type), [failing.name, failing.type]);
    }
  }
  const second = await askAll(toConfirm);
  const probe = await askAll(toProbe, true);

  return {
    first: firstOf,
    second: (s) => second.get(questionKey(s.name, s.type)),
    checkingDisabled: (s) => probe.get(questionKey(s.name, s.type)),
    servfailOf,
    distinctQuestions: questions.size,
    confirmations: toConfirm.size,
  };
}

/** SPF's view of DNS over the DoH client, memoized per run: an include shared by many domains costs one query. */
export function spfDnsOver(resolver: DnsResolver): SpfDns {
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
      const k = questionKey(name.toLowerCase(), type);
      let p = memo.get(k);
      if (!p) {
        p = resolver.query(name, type).then(
          (r) => valuesOf(type, r),
          (err: unknown) => {
            throw new SpfDnsError((err as Error).message);
          },
        );
        memo.set(k, p);
      }
      return p;
    },
  };
}
