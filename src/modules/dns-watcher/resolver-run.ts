/**
 * One scheduled DNS resolution (`dns-watcher.resolve`, every Cron run), in five steps:
 *
 *  1. the due domains and their record sets (due-domains.ts: two queries);
 *  2. the run's DNS questions, each distinct (name, type) asked once however many
 *     organizations watch it, with the TXT of the SPF policies' include/redirect
 *     targets, then the confirmations and CD probes (run-lookups.ts);
 *  3. per domain, what changed: baselines, lookup errors, confirmed changes, SPF/DMARC
 *     verdicts, DNSSEC status, the event (assessment.ts);
 *  4. the writes: one bookkeeping statement for every domain where nothing happened, a
 *     few bulk statements for state, guarded batches for changes (run-writes.ts);
 *  5. the change events to alerting, for the changes this run's writes applied, and the
 *     collection events (a domain entering `failing` or recovering) of the domains
 *     whose writes went through.
 *
 * An unchanged domain therefore costs one DoH query per record set (plus its SPF
 * include/redirect targets, each shared by every domain that uses it) and one row written.
 *
 * Bounds: the DNS work of a run stops at `runDeadlineMs` after its start, and a resolver
 * that failed `breakAfterFailures` times in a row (timeouts, refused connections, 5xx)
 * is not asked again during the run (the next one is; doh.ts). A domain with a question
 * left unasked by the deadline is left alone: nothing is written for it, so it stays
 * due and the next run resolves it. A question refused because every resolver's circuit
 * is open is a failed lookup (the resolvers are down: that is what the domain's
 * collection state must say), never a change.
 *
 * Logs stay quiet: a resolver that fails is said once per source and class per interval
 * (logSourceFailure), faults of this service with their stack (logUnexpected).
 */
import type { Db } from "../../db/client";
import { loadConfig, MTA_STS_POLICY_URL_DEFAULT, type Bindings } from "../../env";
import { egressPolicy, type EgressPolicy } from "../../platform/egress";
import { fetchMtaStsPolicy } from "./email/collect";
import { servedOf } from "./email/served";
import { logSourceFailure, logUnexpected } from "../../platform/collection";
import { createDohClient } from "../../platform/dns/doh";
import { emitEvent } from "../alerting/contract";
import { assessDomain, DomainNotResolved, type DomainAssessment } from "./assessment";
import { selectDueDomains } from "./due-domains";
import type { DnsWatcherEvent } from "./events";
import { askRunQuestions, inPool, spfDnsOver } from "./run-lookups";
import { commitAssessments } from "./run-writes";

export interface DnsWatchSettings {
  resolverUrls: string[];
  intervalSeconds: number;
  concurrency: number;
  maxDomainsPerRun: number;
  timeoutMs: number;
  /** The DNS work of a run (questions, confirmations, SPF lookups) ends this long after its start. */
  runDeadlineMs: number;
  /** Consecutive transport failures after which a resolver is not asked again during the run. */
  breakAfterFailures: number;
  /** MTA_STS_POLICY_URL (default: RFC 8461's https://mta-sts.{domain}/.well-known/mta-sts.txt). */
  mtaStsPolicyUrl?: string;
  /** The egress policy policy fetches go through (default: the one of the run's configuration). */
  egress?: EgressPolicy | null;
}

export interface DnsRunContext {
  db: Db;
  env: Bindings;
  settings: DnsWatchSettings;
  /** The scheduled time. */
  now: Date;
  fetch?: typeof fetch;
  /** Where change events go; defaults to emitEvent(env, "dns-watcher", ...). */
  emit?: (organizationId: number, event: DnsWatcherEvent) => Promise<unknown>;
}

export interface DnsRunSummary {
  due_domains: number;
  record_sets: number;
  /** Distinct (name, type) resolved, SPF include/redirect targets included. */
  distinct_queries: number;
  /** Of those, SPF include/redirect targets (their TXT), asked once for every domain that uses them. */
  spf_target_queries: number;
  /** Of those, `_25._tcp` TLSA of the MX hosts of domains with email checks. */
  tlsa_queries: number;
  /** MTA-STS policies fetched (the id changed, the daily re-read, a retry), and of those, fetches that failed at transport level. */
  policy_fetches: number;
  policy_fetch_failures: number;
  /** Email transport security regressions recorded (history items of kind email). */
  email_regressions: number;
  /** HTTP requests sent to resolvers (first queries, confirmations, CD probes, SPF includes, retries). */
  requests: number;
  confirmations: number;
  /** Of those, for SPF targets whose v=spf1 record differed. */
  spf_target_confirmations: number;
  /** Confirmed changes of SPF targets, per domain using them (each re-reads that domain's SPF). */
  spf_target_changes: number;
  /** Confirmed record set changes (history rows of kind record). */
  changes: number;
  /** A difference the second query did not confirm. */
  unconfirmed: number;
  lookup_errors: number;
  dnssec_changes: number;
  facts: number;
  events_emitted: number;
  event_errors: number;
  /** Domains whose processing failed unexpectedly (they stay due). */
  failed_domains: number;
  /** Domains left unresolved by the deadline or an open circuit (nothing written: they stay due). */
  unresolved_domains: number;
  /** D1 statements executed for the writes, and D1's count of rows they wrote. */
  write_statements: number;
  rows_written: number;
  duration_ms: number;
  /** Where the time went: selecting, asking DNS (with confirmations), assessing, writing, emitting. */
  phases_ms: { select: number; lookups: number; assess: number; write: number; events: number };
}

const emptySummary = (): DnsRunSummary => ({
  due_domains: 0, record_sets: 0, distinct_queries: 0, spf_target_queries: 0, tlsa_queries: 0, policy_fetches: 0, policy_fetch_failures: 0, email_regressions: 0, requests: 0, confirmations: 0, spf_target_confirmations: 0, spf_target_changes: 0,
  changes: 0, unconfirmed: 0, lookup_errors: 0, dnssec_changes: 0, facts: 0, events_emitted: 0, event_errors: 0, failed_domains: 0, unresolved_domains: 0,
  write_statements: 0, rows_written: 0, duration_ms: 0,
  phases_ms: { select: 0, lookups: 0, assess: 0, write: 0, events: 0 },
});

/** Domains assessed at once: assessment is CPU work plus SPF include lookups (memoized per run). */
const ASSESSMENT_CONCURRENCY = 8;

export async function runDnsWatch(ctx: DnsRunContext): Promise<DnsRunSummary> {
  const { settings } = ctx;
  const started = Date.now();
  const summary = emptySummary();
  let mark = started;
  const phaseDone = (phase: keyof DnsRunSummary["phases_ms"]) => {
    const now = Date.now();
    summary.phases_ms[phase] = now - mark;
    mark = now;
  };
  const resolvedAt = ctx.now.toISOString();
  // Due again after the interval; the Cron runs every minute.
  const nextAttemptAt = new Date(ctx.now.getTime() + Math.max(settings.intervalSeconds, 60) * 1000).toISOString();

  const due = await selectDueDomains(ctx.db, ctx.now, settings.intervalSeconds, settings.maxDomainsPerRun);
  summary.due_domains = due.length;
  phaseDone("select");
  if (due.length === 0) return summary;
  summary.record_sets = due.reduce((n, d) => n + d.sets.length, 0);

  const resolver = createDohClient({
    resolverUrls: settings.resolverUrls,
    timeoutMs: settings.timeoutMs,
    fetch: ctx.fetch,
    onRequest: () => void summary.requests++,
    deadline: started + settings.runDeadlineMs,
    breakAfterFailures: settings.breakAfterFailures,
  });
  const answers = await askRunQuestions(due, resolver, settings.concurrency);
  summary.distinct_queries = answers.distinctQuestions;
  summary.spf_target_queries = answers.spfTargetQuestions;
  summary.tlsa_queries = answers.tlsaQuestions;
  summary.confirmations = answers.confirmations;
  summary.spf_target_confirmations = answers.spfTargetConfirmations;
  phaseDone("lookups");

  const spfDns = spfDnsOver(resolver, answers);
  const urlTemplate = settings.mtaStsPolicyUrl ?? MTA_STS_POLICY_URL_DEFAULT;
  const egress = settings.egress === undefined ? egressPolicy(loadConfig(ctx.env)) : settings.egress;
  const emailRun = {
    urlTemplate,
    now: ctx.now,
    fetchPolicy: (domain: string) => fetchMtaStsPolicy(domain, { urlTemplate, timeoutMs: settings.timeoutMs, egress, fetch: ctx.fetch }),
    served: (organizationId: number, hosts: readonly string[]) => servedOf(ctx.db, organizationId, hosts),
  };
  const assessments: DomainAssessment[] = [];
  await inPool(due, ASSESSMENT_CONCURRENCY, async (d) => {
    try {
      assessments.push(await assessDomain(d, answers, spfDns, resolvedAt, nextAttemptAt, emailRun));
    } catch (err) {
      if (err instanceof DomainNotResolved) {
        summary.unresolved_domains++;
        return;
      }
      summary.failed_domains++;
      logUnexpected(`dns-watcher: assessing ${d.name}`, err);
    }
  });
  logResolverFailures(assessments, ctx.now.getTime());

  phaseDone("assess");
  const commit = await commitAssessments(ctx.env.DB, assessments, resolvedAt, nextAttemptAt);
  summary.rows_written = commit.rowsWritten;
  summary.write_statements = commit.statements;
  summary.failed_domains += commit.failed.size;
  for (const [id, reason] of commit.failed) logUnexpected(`dns-watcher: writing the results of domain ${id} (it stays due)`, reason);
  phaseDone("write");

  const emit = ctx.emit ?? ((organizationId: number, event: DnsWatcherEvent) => emitEvent(ctx.env, "dns-watcher", organizationId, event));
  const send = async (organizationId: number, event: DnsWatcherEvent, domain: string) => {
    try {
      await emit(organizationId, event);
      summary.events_emitted++;
    } catch (err) {
      summary.event_errors++;
      logUnexpected(`dns-watcher: ${event.event_type} event for ${domain} (organization ${organizationId}) not delivered to alerting`, err);
    }
  };
  for (const a of assessments) {
    summary.lookup_errors += a.lookupErrors;
    summary.unconfirmed += a.unconfirmed;
    if (a.email.policyFetched) summary.policy_fetches++;
    if (a.email.policyFetchFailed) summary.policy_fetch_failures++;
    if (commit.failed.has(a.domain.id)) continue;
    if (a.collectionEvent) await send(a.domain.organizationId, a.collectionEvent, a.domain.name);
    if (a.policyCollectionEvent) await send(a.domain.organizationId, a.policyCollectionEvent, a.domain.name);
    summary.changes += a.changes.length;
    summary.spf_target_changes += a.spfTargetChanges;
    summary.facts += a.history.reduce((n, h) => n + h.facts.length, 0);
    summary.email_regressions += a.history.filter((h) => h.kind === "email").length;
    if (a.dnssecChanged) summary.dnssec_changes++;
    if (!a.event || !commit.applied.has(a.domain.id)) continue;
    await send(a.domain.organizationId, a.event, a.domain.name);
  }
  phaseDone("events");
  summary.duration_ms = Date.now() - started;
  return summary;
}

/**
 * The run's failed lookups, one log line per failure class and message per interval
 * (logSourceFailure): a resolver that is down fails every question of every domain, and
 * says so once. Answers that are findings (SERVFAIL of a bogus zone, NXDOMAIN) are data,
 * recorded on the record sets, not logged.
 */
function logResolverFailures(assessments: readonly DomainAssessment[], nowMs: number): void {
  for (const a of assessments) {
    for (const f of a.lookupFailures) if (!f.answered) logSourceFailure("dns-watcher: DoH resolvers", f.failure, nowMs);
  }
}
