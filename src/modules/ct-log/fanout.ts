/**
 * The CT event fan-out, off the ingest path.
 *
 * Producer (the log cursor, after a verified batch is published in D1): one small
 * queue message per published log range, naming it and the organizations that got
 * something in it; nothing else. The cursor goes on reading while the queue's consumer
 * does the rest. (A message per organization was ~200 messages per batch for 10,000
 * filters of 1,000 organizations, and as many consumer reads of the same range: the
 * consumer reads a range once for all its organizations anyway.)
 *
 * Consumer (this Worker's queue handler): the (match, filter) pairs and typosquatting
 * matches of those ranges whose event was not emitted yet are read back from D1 (one
 * query per range, for all the organizations at once), their rates computed in one
 * query per kind, and each organization's events handed to its AlertState in ONE call
 * (emitEvents); then they are marked emitted. Every step is idempotent: a message delivered twice, or a range
 * published again after a cursor restart, finds nothing left to emit, and an event
 * evaluated but not marked (a crash in between) is recognised by its id.
 */
import { emitEvents, organizationsWithRules } from "../alerting/contract";
import type { Db } from "../../db/client";
import { groupsUnderBudget } from "../../platform/groups";
import type { QueueContext } from "../../platform/queue";
import { applicableIssuers, authorizeIssuance, worstAuthorization, type Authorization } from "./authorization";
import { exceedsMaximumValidity, lifetimeDays } from "./cert/lifetime";
import { buildMatchEvent, buildTyposquatEvent, withKeyHashes, type CtEventCertLifecycle, type CtLogEvent } from "./events";
import { issuanceOf } from "./issuance-policy";
import { issuanceLifecycle, type IssuanceFacts, type IssuedCertificate } from "./lifecycle-contract";
import type { LogRef, ObservedEntry } from "./ingest";
import { dismissedLookalikes } from "./lookalikes/store";
import { filterRates, markMatchesEmitted, markTyposquatsEmitted, publishObservations, typosquatRates, unemittedMatches, unemittedTyposquats } from "./store";

/** "Entries [from, to) of this log were published with something for these organizations." */
export interface CtLogPublished {
  type: "ct-log.published";
  organizationIds: number[];
  logId: string;
  from: number;
  to: number;
}

/** The producer's side of the queue (the Queue binding satisfies it). */
export interface PublishedQueue {
  sendBatch(messages: Iterable<MessageSendRequest<CtLogPublished>>): Promise<unknown>;
}

/** Organizations named by one message: 1,000 ids stay far below a message's 128 KB. */
const ORGANIZATIONS_PER_MESSAGE = 1000;

/**
 * Filter hits and lookalikes written per D1 transaction. A verified batch of a busy log
 * holds hundreds of them; written in one transaction, it held the database for 50-100 ms
 * (bench:ct-e2e, D1's meta.duration: about 0.15 ms per match), and every API request's
 * query waited behind it. A slice of whole entries is one transaction of about 10 ms.
 * Slices become visible one after the other, each at its own publication time: every
 * observation in them is verified, and a replay after a crash rewrites nothing. Each
 * slice is one more D1 batch against the invocation's query limit (1,000 on Workers
 * Paid); a real log's commit of a second holds a few matches (one slice), bench:ct-e2e's
 * synthetic one (every 64th entry matches) about 450 (eight slices).
 */
const OBSERVATIONS_PER_TRANSACTION = 64;

/** The observations in slices of whole entries, each with at most OBSERVATIONS_PER_TRANSACTION hits and lookalikes (or one entry). */
export function publicationSlices(observed: readonly ObservedEntry[]): ObservedEntry[][] {
  return groupsUnderBudget(observed, (o) => o.hits.length + o.typosquats.length, OBSERVATIONS_PER_TRANSACTION);
}

/** Publishes the observations of verified entries [from, to) and announces them to the fan-out. */
export async function publishVerified(db: Db, queue: PublishedQueue, log: LogRef, from: number, to: number, observed: readonly ObservedEntry[]): Promise<void> {
  const published = new Set<number>();
  for (const slice of publicationSlices(observed)) for (const org of await publishObservations(db, log, slice)) published.add(org);
  const orgs = [...published].sort((a, b) => a - b);
  const messages = [];
  for (let i = 0; i < orgs.length; i += ORGANIZATIONS_PER_MESSAGE) {
    messages.push({ body: { type: "ct-log.published" as const, organizationIds: orgs.slice(i, i + ORGANIZATIONS_PER_MESSAGE), logId: log.logId, from, to } });
  }
  if (messages.length) await queue.sendBatch(messages);
}

interface PendingEvent {
  organizationId: number;
  id: string;
  event: CtLogEvent;
}

type MatchRow = Awaited<ReturnType<typeof unemittedMatches>>[number];
type JudgedMatch = MatchRow & { authorization: Authorization };

/**
 * The certificates of the rows, one per (organization, match), as the inventory is told
 * of them: the names every filter matched, the filters with their patterns.
 */
function issuedCertificates(rows: readonly MatchRow[]): (IssuedCertificate & { organizationId: number })[] {
  const byMatch = new Map<number, IssuedCertificate & { organizationId: number }>();
  for (const r of rows) {
    let c = byMatch.get(r.matchId);
    if (!c) byMatch.set(r.matchId, (c = { organizationId: r.organizationId, matchId: r.matchId, dedupKey: r.dedupKey, cert: r.cert, names: r.matchedNames, filters: [], firstMatchedAt: r.firstMatchedAt }));
    c.filters.push({ id: r.filterId, pattern: r.pattern });
  }
  return [...byMatch.values()];
}

const NOTHING_KNOWN: IssuanceFacts = { deployed: false, replaces: "", key: { known: false, source: "" } };

/**
 * Judges each (match, filter) pair: the applicable issuers (the filter's, else the
 * organization's policy, else CAA), the key (declared in a policy list, or seen deployed:
 * the inventory's facts), and the cert.* lifecycle fields of its event.
 */
async function judgeMatches(db: Db, rows: readonly MatchRow[]) {
  const lifecycle = issuanceLifecycle();
  const certs = issuedCertificates(rows);
  const [facts, policies] = await Promise.all([
    lifecycle && certs.length ? lifecycle.describe(db, certs) : Promise.resolve(new Map<string, IssuanceFacts>()),
    issuanceOf(db, [...new Set(rows.map((r) => r.organizationId))]),
  ]);
  const judged: (JudgedMatch & { judgedFields: CtEventCertLifecycle })[] = rows.map((r) => {
    const known = facts.get(`${r.organizationId}:${r.dedupKey}`) ?? NOTHING_KNOWN;
    const policy = policies.get(r.organizationId)!;
    const cert = withKeyHashes(r.cert);
    const declaredIn = cert.spki_sha256 ? policy.declaredKeys.get(cert.spki_sha256) : undefined;
    const key = known.key.known ? known.key : declaredIn ? { known: true, source: `declared in rule list ${declaredIn}` } : known.key;
    const authorization = authorizeIssuance({ cert, caa: r.caa, issuers: applicableIssuers(r.filterIssuers, policy.issuers), key });
    const validity = cert.not_before && cert.not_after ? exceedsMaximumValidity(cert.not_before, cert.not_after) : null;
    return {
      ...r,
      authorization,
      judgedFields: {
        authorization: authorization.verdict,
        authorization_reason: authorization.reason,
        deployed: known.deployed,
        replaces: known.replaces,
        lifetime_days: cert.not_before && cert.not_after ? lifetimeDays(cert.not_before, cert.not_after) : 0,
        exceeds_max_validity: validity?.exceeds ?? false,
      },
    };
  });
  return { judged, certs };
}

/**
 * The events of the published ranges that were not emitted yet, for the organizations
 * the messages name, and the rows to mark once they are. One query per log range and
 * kind, one rate query per kind and publication time, one policy and one inventory read
 * for the whole batch: not per organization.
 */
export async function unemittedEvents(db: Db, messages: readonly CtLogPublished[]) {
  const ranges = new Map<string, { logId: string; from: number; to: number; orgs: Set<number> }>();
  for (const m of messages) {
    const key = `${m.logId} ${m.from} ${m.to}`;
    const r = ranges.get(key) ?? { logId: m.logId, from: m.from, to: m.to, orgs: new Set<number>() };
    for (const org of m.organizationIds) r.orgs.add(org);
    ranges.set(key, r);
  }
  // One range after the other, not all at once: a queue batch names up to 50 ranges, and
  // issued together their reads would run as one chain that the background handle's turns
  // cannot split, holding the thread in one go (see src/db/background.ts).
  const matchRows = [];
  const lookalikeRows = [];
  for (const r of ranges.values()) {
    matchRows.push(...(await unemittedMatches(db, r.logId, r.from, r.to, [...r.orgs])));
    lookalikeRows.push(...(await unemittedTyposquats(db, r.logId, r.from, r.to, [...r.orgs])));
  }
  // The same row may come from two ranges (a certificate in two logs): once is enough.
  const { judged: matches, certs } = await judgeMatches(db, [...new Map(matchRows.map((m) => [`${m.matchId}:${m.filterId}`, m])).values()]);
  const lookalikes = [...new Map(lookalikeRows.map((t) => [t.id, t])).values()];

  const events: PendingEvent[] = [];
  for (const at of new Set(matches.map((m) => m.createdAt))) {
    const rows = matches.filter((m) => m.createdAt === at);
    const rates = await filterRates(db, rows.map((r) => r.filterId), at);
    for (const r of rows) {
      events.push({
        organizationId: r.organizationId,
        id: `ct-log:match:${r.matchId}:${r.filterId}`,
        event: buildMatchEvent({ cert: r.cert, caa: r.caa, rate: rates.get(r.filterId)!, filter: { id: r.filterId, pattern: r.pattern }, matchedAt: r.createdAt, lifecycle: r.judgedFields }),
      });
    }
  }
  // A dismissed lookalike never alerts again: its certificates are marked emitted, without an event.
  const dismissed = await dismissedLookalikes(db, lookalikes.map((t) => ({ organizationId: t.organizationId, domain: t.candidateDomain })));
  const alerting = lookalikes.filter((t) => !dismissed.has(`${t.organizationId} ${t.candidateDomain}`));
  for (const at of new Set(alerting.map((t) => t.detectedAt))) {
    const rows = alerting.filter((t) => t.detectedAt === at);
    const rates = await typosquatRates(db, rows.map((r) => r.filterId), at);
    for (const r of rows) {
      events.push({
        organizationId: r.organizationId,
        id: `ct-log:typosquat:${r.id}`,
        event: buildTyposquatEvent({
          cert: r.cert,
          rate: rates.get(r.filterId)!,
          filter: { id: r.filterId, pattern: r.protectedDomain },
          matchedAt: r.detectedAt,
          typosquat: {
            candidate_domain: r.candidateDomain,
            protected_domain: r.protectedDomain,
            certificate_name: r.certificateName,
            evidence: r.evidence,
            confidence: r.confidence,
            edit_distance: r.editDistance ?? undefined,
          },
        }),
      });
    }
  }
  // Each certificate with its worst verdict over the filters that matched it, for the inventory.
  const verdicts = new Map<number, Authorization[]>();
  for (const m of matches) verdicts.set(m.matchId, [...(verdicts.get(m.matchId) ?? []), m.authorization]);
  const recorded = certs.map((c) => ({ ...c, authorization: worstAuthorization(verdicts.get(c.matchId) ?? [])! }));
  return { events, matches, lookalikes, certificates: recorded };
}

/** Organizations whose AlertState is called at once by one consumer invocation. */
const ORGANIZATIONS_AT_ONCE = 4;

/**
 * The queue handler of "ct-log.published": ONE alert-evaluation call per organization
 * for everything the batch of messages published for it. Organizations without an
 * enabled CT-Log rule are not called (nothing could fire). The certificates are then
 * recorded in the inventory (every organization, rules or not; it raises the lifecycle
 * events), and every organization done is marked emitted with its verdicts; if one
 * failed, the batch is retried and finds only what is left (the inventory's recording
 * is idempotent, and AlertState drops an event id it has seen).
 */
export async function fanOutPublished(messages: CtLogPublished[], { env, db, now }: QueueContext): Promise<void> {
  const { events, matches, lookalikes, certificates } = await unemittedEvents(db, messages);
  if (events.length === 0) return;
  const byOrg = new Map<number, PendingEvent[]>();
  for (const e of events) byOrg.set(e.organizationId, [...(byOrg.get(e.organizationId) ?? []), e]);
  const withRules = await organizationsWithRules(db, "ct-log", [...byOrg.keys()]);
  const done = new Set([...byOrg.keys()].filter((org) => !withRules.has(org)));
  const queue = [...withRules];
  const failures: unknown[] = [];
  const worker = async () => {
    for (let org = queue.shift(); org !== undefined; org = queue.shift()) {
      try {
        await emitEvents(env, "ct-log", org, byOrg.get(org)!.map(({ id, event }) => ({ id, event })), now.getTime());
        done.add(org);
      } catch (err) {
        failures.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(ORGANIZATIONS_AT_ONCE, queue.length) }, worker));
  const lifecycle = issuanceLifecycle();
  if (lifecycle && certificates.length) await lifecycle.record(env, db, certificates, now);
  const at = now.toISOString();
  await markMatchesEmitted(db, matches.filter((m) => done.has(m.organizationId)), at);
  await markTyposquatsEmitted(db, lookalikes.filter((t) => done.has(t.organizationId)).map((t) => t.id), at);
  if (failures.length) throw failures[0];
}
