/**
 * The scheduled check of lookalikes (job ct-log.lookalike_checks, every Cron run): the
 * lookalikes that are due (new ones at once, the others LOOKALIKE_CHECK_INTERVAL_SECONDS
 * after their last check), at most LOOKALIKE_MAX_CHECKS_PER_RUN per run, least recently
 * due first. Each is checked (check.ts), its RDAP registration read once registered (and
 * again monthly), its state and confidence moved (lifecycle.ts), and its events raised:
 *
 *   lookalike_detected       after its first check (so it says what the lookalike is)
 *   lookalike_state_changed  when a later check moves it (e.g. resolving -> mail_capable)
 *   collection_failing / collection_recovered   its checks failing twice in a row / again
 *
 * Events go out before the run's writes: an organization whose alert evaluation failed
 * gets its writes skipped, so the next run finds the same change and raises it again
 * under the same event id (at least once; AlertState drops an id it has seen).
 *
 * Writes: one row per lookalike checked (its last check and next attempt: the collection
 * state the API shows), plus a timeline row per change. Dismissed lookalikes are never
 * checked.
 */
import { emitEvents, organizationsWithRules } from "../../alerting/contract";
import type { Db } from "../../../db/client";
import type { Bindings, Config } from "../../../env";
import { classifyFailure, logSourceFailure, recordAttempt } from "../../../platform/collection";
import { createDohClient, MemoryDnsCache, type DnsResolver } from "../../../platform/dns/doh";
import { checkUrl, egressPolicy, type EgressPolicy } from "../../../platform/egress";
import { fetchDomain, findRdapServers, loadBootstrap, registrarOf, registrationDate } from "../../rdap/contract";
import { buildLookalikeCollectionEvent, buildLookalikeEvent, type CtLogEvent } from "../events";
import { corroborate, prepareProtected, protectedDomainOf, type Corroboration, type Evidence } from "../typosquat/detect";
import { checkLookalike, socketProbe, type CheckResult, type PortProbe } from "./check";
import { eventLookalike, foreignHosting, observationChanges, recentlyRegistered, stateAfterCheck } from "./lifecycle";
import { collectionRecordOf, dueLookalikes, markDetectedEmitted, writeCheckResults, type LookalikeRow, type LookalikeUpdate, type TimelineInsert } from "./store";
import type { LookalikeState } from "./vocabulary";

export interface LookalikeCheckSettings {
  resolverUrls: string[];
  intervalSeconds: number;
  maxPerRun: number;
  concurrency: number;
  timeoutMs: number;
  /** No DoH attempt starts this long after the run started (what is left stays due). */
  runDeadlineMs: number;
  httpsPort: number;
  probeTimeoutMs: number;
  egress: EgressPolicy;
  rdap: { bootstrapUrl: string; baseUrl: string; timeoutMs: number; maxPerRun: number };
}

export function lookalikeCheckSettings(config: Config): LookalikeCheckSettings {
  return {
    resolverUrls: config.dohResolverUrls,
    intervalSeconds: config.lookalikes.checkIntervalSeconds,
    maxPerRun: config.lookalikes.maxChecksPerRun,
    concurrency: config.dns.concurrency,
    timeoutMs: config.dns.timeoutMs,
    runDeadlineMs: 60_000,
    httpsPort: config.lookalikes.httpsPort,
    probeTimeoutMs: 5_000,
    egress: egressPolicy(config),
    rdap: { bootstrapUrl: config.rdapBootstrapUrl, baseUrl: config.rdap.baseUrl, timeoutMs: config.rdap.timeoutMs, maxPerRun: 25 },
  };
}

export interface LookalikeCheckContext {
  db: Db;
  env: Bindings;
  settings: LookalikeCheckSettings;
  now: Date;
  fetch?: typeof fetch;
  probe?: PortProbe;
  /** Replaces the AlertState call (tests read the events). */
  emit?: (organizationId: number, events: { id: string; event: CtLogEvent }[]) => Promise<void>;
}

export interface LookalikeCheckSummary {
  due: number;
  checked: number;
  failed: number;
  changed: number;
  events: number;
  rdap_lookups: number;
  rows_written: number;
}

/** A re-check after a failure comes sooner than the regular interval: 15 minutes, doubling, capped at it. */
function retryDelaySeconds(failures: number, interval: number): number {
  return Math.min(interval, 900 * 2 ** Math.max(0, failures - 1));
}

const RDAP_REFRESH_MS = 30 * 86_400_000;
const RDAP_RETRY_MS = 86_400_000;


/** Runs `work` over `items`, `limit` at a time. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

interface Outcome {
  row: LookalikeRow;
  update: LookalikeUpdate;
  timeline: TimelineInsert[];
  events: { id: string; event: CtLogEvent }[];
  detectedEmitted: boolean;
  changed: boolean;
}

export async function runLookalikeChecks(ctx: LookalikeCheckContext): Promise<LookalikeCheckSummary> {
  const { db, settings, now } = ctx;
  const at = now.toISOString();
  const due = await dueLookalikes(db, now, settings.maxPerRun);
  const summary: LookalikeCheckSummary = { due: due.length, checked: 0, failed: 0, changed: 0, events: 0, rdap_lookups: 0, rows_written: 0 };
  if (!due.length) return summary;
  const resolver = createDohClient({
    resolverUrls: settings.resolverUrls,
    timeoutMs: settings.timeoutMs,
    cache: new MemoryDnsCache({ now: () => now.getTime() }),
    fetch: ctx.fetch,
    deadline: Date.now() + settings.runDeadlineMs,
    breakAfterFailures: 8,
  });
  const ports = { resolver, probe: ctx.probe ?? socketProbe, egress: settings.egress, httpsPort: settings.httpsPort, probeTimeoutMs: settings.probeTimeoutMs };
  const protectedAddresses = new Map<string, Promise<string[]>>();
  const addressesOf = (domain: string) => {
    let p = protectedAddresses.get(domain);
    if (!p) {
      p = addresses(resolver, domain);
      protectedAddresses.set(domain, p);
    }
    return p;
  };
  const rdap = rdapLookup(ctx, summary);

  const outcomes: Outcome[] = [];
  await inParallel(due, settings.concurrency, async (row) => {
    const result = await checkLookalike(row.domain, ports);
    outcomes.push(await outcomeOf(row, result, at, settings, addressesOf, rdap));
  });
  summary.checked = outcomes.filter((o) => o.update.lastSuccessAt === at).length;
  summary.failed = outcomes.length - summary.checked;
  summary.changed = outcomes.filter((o) => o.changed).length;

  // Events first, per organization; an organization whose evaluation failed keeps its writes for the next run.
  const byOrg = new Map<number, Outcome[]>();
  for (const o of outcomes) byOrg.set(o.row.organizationId, [...(byOrg.get(o.row.organizationId) ?? []), o]);
  const withEvents = [...byOrg.entries()].filter(([, os]) => os.some((o) => o.events.length));
  const withRules = ctx.emit ? new Set(withEvents.map(([org]) => org)) : await organizationsWithRules(db, "ct-log", withEvents.map(([org]) => org));
  const failedOrgs = new Set<number>();
  for (const [org, os] of withEvents) {
    if (!withRules.has(org)) continue;
    const events = os.flatMap((o) => o.events);
    try {
      if (ctx.emit) await ctx.emit(org, events);
      else await emitEvents(ctx.env, "ct-log", org, events, now.getTime());
      summary.events += events.length;
    } catch (err) {
      failedOrgs.add(org);
      console.error(`lookalike events of organization ${org} not evaluated (retried next run): ${String(err)}`);
    }
  }
  const written = outcomes.filter((o) => !failedOrgs.has(o.row.organizationId));
  summary.rows_written = await writeCheckResults(db, written.map((o) => ({ id: o.row.id, update: o.update, timeline: o.timeline })));
  await markDetectedEmitted(db, written.filter((o) => o.detectedEmitted).map((o) => o.row.id), at);
  return summary;
}

async function addresses(resolver: DnsResolver, domain: string): Promise<string[]> {
  const out: string[] = [];
  for (const type of ["A", "AAAA"] as const) {
    try {
      const r = await resolver.query(domain, type);
      out.push(...r.answers.filter((a) => a.type === type).map((a) => String(a.data)));
    } catch {
      /* unknown: no foreign-hosting verdict */
    }
  }
  return out;
}

/** What one check did to one lookalike: its update, timeline entries and events. */
async function outcomeOf(
  row: LookalikeRow,
  result: CheckResult,
  at: string,
  settings: LookalikeCheckSettings,
  addressesOf: (domain: string) => Promise<string[]>,
  rdap: (domain: string) => Promise<RdapFacts | null>,
): Promise<Outcome> {
  const previous = collectionRecordOf(row);
  const retry = new Date(Date.parse(at) + retryDelaySeconds(previous.consecutiveFailures + 1, settings.intervalSeconds) * 1000).toISOString();
  const next = new Date(Date.parse(at) + settings.intervalSeconds * 1000).toISOString();
  const { record, transition } = recordAttempt(previous, result.ok ? { ok: true } : { ok: false, error: result.error }, at, result.ok ? next : retry);
  const update: LookalikeUpdate = {
    lastCheckedAt: record.lastAttemptAt,
    lastSuccessAt: record.lastSuccessAt,
    collectionFailingSince: record.failingSince,
    collectionFailures: record.consecutiveFailures,
    collectionNextAttemptAt: record.nextAttemptAt,
    collectionErrorClass: record.errorClass,
    collectionError: record.errorMessage,
  };
  const timeline: TimelineInsert[] = [];
  /** Entries that come after the state change of the same check (what RDAP and corroboration added). */
  const afterwards: TimelineInsert[] = [];
  const events: { id: string; event: CtLogEvent }[] = [];
  const after: LookalikeRow = { ...row, ...update } as LookalikeRow;
  let changed = false;

  if (result.ok) {
    const state = stateAfterCheck(result.dns, result.serving);
    const changes = row.dns ? observationChanges({ dns: row.dns, serving: row.serving }, result) : [];
    Object.assign(update, { dns: result.dns, serving: result.serving, servingDetail: result.servingDetail });
    // RDAP: once registered, the registration date and registrar (monthly after a success, daily after a failure).
    const rdapDue = result.dns.registered && (!row.rdapCheckedAt || Date.parse(at) - Date.parse(row.rdapCheckedAt) >= (row.rdapError ? RDAP_RETRY_MS : RDAP_REFRESH_MS));
    if (rdapDue) {
      const facts = await rdap(row.domain);
      if (facts) {
        Object.assign(update, { rdapCheckedAt: at, rdapError: facts.error, ...(facts.error ? {} : { registeredAt: facts.registeredAt, registrar: facts.registrar }) });
        if (!facts.error && (facts.registeredAt !== row.registeredAt || facts.registrar !== row.registrar)) {
          afterwards.push({ organizationId: row.organizationId, lookalikeId: row.id, at, kind: "registration", detail: `registered ${facts.registeredAt ?? "(date not published)"} through ${facts.registrar ?? "(registrar not published)"}` });
        }
      }
    }
    // Corroboration from the check: a low candidate becomes high when it points elsewhere or is newly registered.
    const more: Corroboration[] = [];
    if (result.dns.registered && foreignHosting(result.dns, await addressesOf(row.protectedDomain))) more.push("foreign_hosting");
    if (recentlyRegistered((update.registeredAt as string | null | undefined) ?? row.registeredAt, row.firstSeenAt)) more.push("recently_registered");
    const fresh = more.filter((e) => !row.evidence.includes(e));
    if (fresh.length) {
      // The protected label's length decides the confidence, not the lookalike's.
      const corroborated = corroborate({ candidate_domain: row.domain, evidence: row.evidence as Evidence[], confidence: row.confidence }, protectedLength(row.protectedDomain), fresh);
      update.evidence = corroborated.evidence;
      update.confidence = corroborated.confidence;
      if (corroborated.confidence !== row.confidence) {
        afterwards.push({ organizationId: row.organizationId, lookalikeId: row.id, at, kind: "confidence_raised", detail: `confidence high: ${fresh.join(", ").replaceAll("_", " ")}` });
      }
    }
    if (state !== row.state) {
      changed = true;
      Object.assign(update, { state, stateChangedAt: at });
      const detail = row.state === "new" ? changesWhenFirstSeen(result.dns, result.serving) : changes.join("; ");
      timeline.push({ organizationId: row.organizationId, lookalikeId: row.id, at, kind: "state_changed", fromState: row.state, toState: state, detail });
    }
    timeline.push(...afterwards);
    Object.assign(after, update);
    if (row.detectedEventAt === null) {
      events.push({ id: `ct-log:lookalike:${row.id}:detected`, event: buildLookalikeEvent({ eventType: "lookalike_detected", lookalike: eventLookalike(after, "", ""), filterId: row.filterId, at }) });
    } else if (state !== row.state) {
      const change = changes.join("; ");
      events.push({
        id: `ct-log:lookalike:${row.id}:${row.state}>${state}:${row.stateChangedAt}`,
        event: buildLookalikeEvent({ eventType: "lookalike_state_changed", lookalike: eventLookalike(after, row.state as LookalikeState, change), filterId: row.filterId, at }),
      });
    }
  } else {
    logSourceFailure(`lookalike checks (${settings.resolverUrls.join(", ")})`, result.error, Date.parse(at));
    Object.assign(after, update);
  }
  if (transition) {
    events.push({
      id: `ct-log:lookalike:${row.id}:collection:${transition}:${record.failingSince ?? previous.failingSince ?? at}`,
      event: buildLookalikeCollectionEvent({ transition, record, previous, lookalike: eventLookalike(after, "", ""), filterId: row.filterId, attemptedAt: at }),
    });
  }
  return { row, update, timeline, events, detectedEmitted: result.ok && row.detectedEventAt === null, changed };
}

/** The first check's words: what the lookalike is. */
function changesWhenFirstSeen(dns: { registered: boolean; ns: string[]; a: string[]; aaaa: string[]; mx: string[] }, serving: boolean | null): string {
  if (!dns.registered) return "not registered (NXDOMAIN)";
  const parts = [`NS ${dns.ns.join(", ") || "none"}`];
  if (dns.a.length || dns.aaaa.length) parts.push(`addresses ${[...dns.a, ...dns.aaaa].join(", ")}`);
  if (dns.mx.length) parts.push(`MX ${dns.mx.join(", ")}`);
  if (serving) parts.push("accepts connections on the HTTPS port");
  return parts.join("; ");
}

/** The protected label's length in code points (what the confidence policy counts). */
function protectedLength(protectedDomain: string): number {
  const p = protectedDomainOf(protectedDomain);
  return p ? prepareProtected(p).length : protectedDomain.length;
}

export interface RdapFacts {
  registeredAt: string | null;
  registrar: string | null;
  /** Why it could not be read, in words; null on success. */
  error: string | null;
}

/** The RDAP reader of a run: bootstrap once, at most maxPerRun lookups (the rest wait for the next run). */
function rdapLookup(ctx: LookalikeCheckContext, summary: LookalikeCheckSummary): (domain: string) => Promise<RdapFacts | null> {
  const { settings, db } = ctx;
  let servers: Promise<(domain: string) => string[]> | null = null;
  return async (domain) => {
    if (summary.rdap_lookups >= settings.rdap.maxPerRun) return null;
    summary.rdap_lookups++;
    servers ??= settings.rdap.baseUrl
      ? Promise.resolve(() => [settings.rdap.baseUrl])
      : loadBootstrap(db, settings.rdap.bootstrapUrl, { fetch: ctx.fetch, now: () => ctx.now.getTime() }).then((l) => (d: string) => findRdapServers(l.bootstrap, d));
    let base: string | undefined;
    try {
      base = (await servers)(domain)[0];
    } catch (err) {
      return { registeredAt: null, registrar: null, error: classifyFailure(err, { url: settings.rdap.bootstrapUrl, what: "RDAP bootstrap" }).message };
    }
    const r = await fetchDomain(base, domain, {
      timeoutMs: settings.rdap.timeoutMs,
      fetch: ctx.fetch,
      now: () => ctx.now.getTime(),
      checkRedirect: async (url) => {
        const v = await checkUrl(settings.egress, url, ["http:", "https:"]);
        return v.allowed ? null : v.reason;
      },
    });
    if (r.outcome !== "success") {
      const why = "message" in r ? r.message : r.outcome === "not_found" ? "the registry has no such domain" : r.outcome.replaceAll("_", " ");
      return { registeredAt: null, registrar: null, error: `RDAP lookup of ${domain}${r.requestUrl ? ` at ${new URL(r.requestUrl).host}` : ""} failed: ${why}` };
    }
    return { registeredAt: registrationDate(r.domain), registrar: registrarOf(r.domain)?.name ?? null, error: null };
  };
}

