/**
 * One scheduled RDAP poll: looks up the DUE monitored domains, stores what changed,
 * and raises change events.
 *
 *  - Due: an enabled monitor never checked, checked longer than
 *    RDAP_CHECK_INTERVAL_SECONDS ago, or whose retry time after a transient failure
 *    has come (politeness.ts). At most `maxDomainsPerRun` distinct domains per run,
 *    least recently checked first; lookups stop starting after `runBudgetMs` of wall
 *    time, and whatever was not reached stays due for the next run.
 *  - A domain watched by many organizations is looked up ONCE and the answer fanned
 *    out to every enabled monitor of it; each monitor compares against its own last
 *    snapshot (a monitor created later, or re-enabled, has another base).
 *  - At most `concurrency` lookups in flight; per RDAP server, a 429 or a run of
 *    5xx/timeouts stops requests to it until its "not before" time (kept in D1), and
 *    its domains are recorded as `rate_limited` (or the failure) meanwhile.
 *  - Storage: the canonical hash (snapshot.ts) decides "changed". An unchanged answer
 *    writes nothing but the monitor's last_checked_at / last_check_status; a changed
 *    one stores its body once (content-addressed, shared across organizations) plus
 *    one history row and one facts row per monitor, in ONE D1 batch with the monitor
 *    update, so nothing is half-saved. A failed lookup (404, HTML, malformed JSON,
 *    redirect loop, timeout...) records its status and leaves the last snapshot as
 *    the comparison base.
 *  - Events: after the write commits, one `rdap_changed` event per changed enabled
 *    monitor (not for a monitor's first snapshot: nothing to differ from), and one
 *    collection event per monitor whose collection state changed (platform/collection:
 *    `collection_failing` at its second check in a row without a snapshot, then
 *    `collection_recovered`).
 *  - Every check without a snapshot carries its failure, classified (the runtime's
 *    opaque texts never reach a monitor); expected failures of a server are logged once
 *    per server and class per interval, faults of this service with their stack.
 *
 * The steps live beside this file: due.ts (which monitors), server-book.ts (server
 * politeness), client.ts (the lookup), record.ts (what is written), facts.ts and
 * events.ts (what the report and the alert rules see).
 */
import type { Db } from "../../db/client";
import type { Bindings } from "../../env";
import { eq } from "drizzle-orm";
import { rdapSnapshots, type RdapCheckStatus } from "../../db/schema/rdap";
import { emitEvent } from "../alerting/contract";
import { findRdapServers, type BootstrapSource } from "./bootstrap";
import { loadBootstrap } from "./bootstrap-store";
import { fetchDomain, type RdapFetchResult } from "./client";
import { checkUrl } from "../../platform/egress";
import { selectDue, type DueMonitor } from "./due";
import { buildRdapCollectionEvent, buildRdapEvent, type RdapEvent } from "./events";
import { deriveFacts } from "./facts";
import { answerWrites, checkWithoutSnapshotWrites, nextCheckAt, type Observation } from "./record";
import { logSourceFailure, logUnexpected, recordAttempt, type CollectionError, type CollectionRecord, type CollectionTransition } from "../../platform/collection";
import { serverKey } from "./politeness";
import { ServerBook } from "./server-book";
import type { RdapSettings } from "./settings";
import { snapshotHash } from "./snapshot";

export interface PollContext {
  db: Db;
  env: Bindings;
  settings: RdapSettings;
  /** The scheduled time: "now" for due selection, timestamps and backoff. */
  now: Date;
  fetch?: typeof fetch;
  /** Where change events go; defaults to emitEvent(env, "rdap", ...). */
  emit?: (organizationId: number, event: RdapEvent) => Promise<unknown>;
}

export interface PollSummary {
  /** Distinct domains selected as due. */
  due_domains: number;
  /** Domains actually looked up. */
  looked_up: number;
  /** Domains skipped because their server is backing off. */
  skipped_backoff: number;
  /** Domains left for the next run (time budget spent). */
  deferred: number;
  /** Monitors updated, by resulting status. */
  statuses: Partial<Record<RdapCheckStatus, number>>;
  /** History rows written with changed = true. */
  changes: number;
  /** Baseline (first) snapshots of monitors. */
  baselines: number;
  /** Rows added to the shared rdap_snapshots table. */
  new_snapshots: number;
  events_emitted: number;
  event_errors: number;
  /** Domains whose processing failed unexpectedly (e.g. a D1 error); they stay due. */
  errors: number;
  bootstrap_source: BootstrapSource | "override";
}

export async function pollRdap(ctx: PollContext): Promise<PollSummary> {
  const run = new PollRun(ctx);
  const due = await selectDue(ctx.db, ctx.now, ctx.settings.checkIntervalSeconds, ctx.settings.maxDomainsPerRun);
  run.summary.due_domains = due.size;
  if (due.size === 0) return run.summary;

  const serversOf = await rdapServers(ctx, run);
  const book = await ServerBook.load(ctx.db);
  await pool([...due.entries()], ctx.settings.concurrency, async ([domain, monitors]) => {
    try {
      await checkDomain(run, book, domain, monitors, serversOf(domain)[0] ?? null);
    } catch (err) {
      run.summary.errors++;
      logUnexpected(`rdap: checking ${domain}`, err);
    }
  });
  await book.save(ctx.db, run.clock());
  return run.summary;
}

/** One poll's shared state: its clock, its summary, its cache of previous snapshot bodies. */
class PollRun {
  readonly summary: PollSummary = {
    due_domains: 0,
    looked_up: 0,
    skipped_backoff: 0,
    deferred: 0,
    statuses: {},
    changes: 0,
    baselines: 0,
    new_snapshots: 0,
    events_emitted: 0,
    event_errors: 0,
    errors: 0,
    bootstrap_source: "override",
  };
  readonly emit: (organizationId: number, event: RdapEvent) => Promise<unknown>;
  private readonly wallStart = Date.now();
  private readonly bodies = new Map<number, Promise<unknown>>();

  constructor(readonly ctx: PollContext) {
    this.emit = ctx.emit ?? ((orgId, event) => emitEvent(ctx.env, "rdap", orgId, event));
  }

  /** The scheduled time, advancing with the wall clock during the run. */
  clock(): number {
    return this.ctx.now.getTime() + (Date.now() - this.wallStart);
  }

  clockIso(): string {
    return new Date(this.clock()).toISOString();
  }

  budgetSpent(): boolean {
    return Date.now() - this.wallStart > this.ctx.settings.runBudgetMs;
  }

  count(status: RdapCheckStatus, n: number): void {
    this.summary.statuses[status] = (this.summary.statuses[status] ?? 0) + n;
  }

  /** A previous snapshot's parsed body; read once per run however many monitors share it. */
  previousBody(id: number): Promise<unknown> {
    let p = this.bodies.get(id);
    if (!p) {
      p = this.ctx.db
        .select({ body: rdapSnapshots.body })
        .from(rdapSnapshots)
        .where(eq(rdapSnapshots.id, id))
        .get()
        .then((row) => (row ? (JSON.parse(row.body) as unknown) : null));
      this.bodies.set(id, p);
    }
    return p;
  }
}

/** Where each domain's RDAP server is: the configured override, or the IANA bootstrap. */
async function rdapServers(ctx: PollContext, run: PollRun): Promise<(domain: string) => string[]> {
  if (ctx.settings.baseUrlOverride) return () => [ctx.settings.baseUrlOverride];
  const lookup = await loadBootstrap(ctx.db, ctx.settings.bootstrapUrl, { fetch: ctx.fetch, now: () => run.clock() });
  run.summary.bootstrap_source = lookup.source;
  if (lookup.failure) logSourceFailure(`rdap bootstrap ${ctx.settings.bootstrapUrl}`, { ...lookup.failure, message: `${lookup.failure.message} (using the ${lookup.source} copy)` }, run.clock());
  return (domain) => findRdapServers(lookup.bootstrap, domain);
}

/** Looks one due domain up (unless its server is backing off) and records the outcome for its monitors. */
async function checkDomain(run: PollRun, book: ServerBook, domain: string, monitors: DueMonitor[], baseUrl: string | null) {
  const { settings } = run.ctx;
  if (run.budgetSpent()) {
    run.summary.deferred++;
    return;
  }
  if (baseUrl === null) {
    // Discovery's answer names no server: the bootstrap registry is the source that cannot serve this TLD.
    const failure: CollectionError = { class: "protocol", message: `RDAP lookup of ${domain}: no RDAP server for .${monitors[0].tld} in the bootstrap registry` };
    return recordCheck(run, domain, monitors, { status: "no_rdap_server", checkedAt: run.clockIso(), failure, serverNotBefore: 0, countsAsFailure: false }, "");
  }
  if (book.blocked(baseUrl, run.clock())) {
    run.summary.skipped_backoff++;
    const state = book.stateOf(baseUrl);
    const status = state.reason ?? "rate_limited";
    const why = status === "rate_limited" ? "after it answered HTTP 429" : status === "timeout" ? "after repeated timeouts" : "after repeated server errors";
    const failure: CollectionError = {
      class: status === "rate_limited" ? "rate_limited" : status === "timeout" ? "timeout" : "http_status",
      message: `RDAP lookup of ${domain}: not asked: ${serverKey(baseUrl)} is backing off until ${new Date(state.notBefore).toISOString()} ${why}`,
    };
    return recordCheck(run, domain, monitors, { status, checkedAt: run.clockIso(), failure, serverNotBefore: state.notBefore, countsAsFailure: false }, baseUrl);
  }
  run.summary.looked_up++;
  const r = await fetchDomain(baseUrl, domain, {
    timeoutMs: settings.timeoutMs,
    fetch: run.ctx.fetch,
    now: () => run.clock(),
    // A registry's redirect is a destination chosen by someone else: the egress policy decides.
    checkRedirect: async (url) => {
      const v = await checkUrl(settings.egress, url, ["http:", "https:"]);
      return v.allowed ? null : v.reason;
    },
  });
  const server = book.observe(baseUrl, r.outcome, run.clock(), r.outcome === "rate_limited" ? r.retryAfterSeconds : null);
  if (r.outcome === "success") return recordAnswer(run, domain, monitors, r);
  logSourceFailure(`rdap ${serverKey(baseUrl)}`, r.failure, run.clock());
  const check = { status: r.outcome, checkedAt: r.fetchedAt, failure: r.failure, serverNotBefore: server.notBefore, countsAsFailure: true, httpStatus: r.httpStatus ?? 0 };
  return recordCheck(run, domain, monitors, check, r.requestUrl ?? baseUrl);
}

type CheckOutcome = { status: RdapCheckStatus; checkedAt: string; failure: CollectionError; serverNotBefore: number; countsAsFailure: boolean; httpStatus?: number };

/** A check that produced no snapshot: status, failure and retry time, the last snapshot stays the base; then the collection events. */
async function recordCheck(run: PollRun, domain: string, monitors: DueMonitor[], check: CheckOutcome, rdapServer: string) {
  const { statements, attempts } = checkWithoutSnapshotWrites(run.ctx.db, monitors, { ...check, intervalSeconds: run.ctx.settings.checkIntervalSeconds });
  if (statements.length) await run.ctx.db.batch(statements as [(typeof statements)[number], ...(typeof statements)[number][]]);
  run.count(check.status, monitors.length);
  for (const a of attempts) await collectionEvent(run, domain, a.monitor, a, { attemptedAt: check.checkedAt, rdapServer, httpStatus: check.httpStatus ?? 0 });
}

/** The collection event of a monitor whose state changed with this check (none otherwise). */
async function collectionEvent(
  run: PollRun,
  domain: string,
  m: DueMonitor,
  after: { record: CollectionRecord; transition: CollectionTransition },
  attempt: { attemptedAt: string; rdapServer: string; httpStatus: number },
) {
  if (!after.transition) return;
  const lastSnapshot = m.lastSnapshotId === null ? null : await run.previousBody(m.lastSnapshotId);
  const event = buildRdapCollectionEvent({ transition: after.transition, record: after.record, previous: m.collection, domain, tld: m.tld, lastSnapshot, ...attempt });
  await emitTo(run, m.organizationId, event, domain);
}

async function emitTo(run: PollRun, organizationId: number, event: RdapEvent, domain: string) {
  try {
    await run.emit(organizationId, event);
    run.summary.events_emitted++;
  } catch (err) {
    run.summary.event_errors++;
    logUnexpected(`rdap: ${event.event_type} event for ${domain} (organization ${organizationId}) not delivered to alerting`, err);
  }
}

/** A successful answer: compare with each monitor's base, record in one batch, then raise the change events. */
async function recordAnswer(run: PollRun, domain: string, monitors: DueMonitor[], r: Extract<RdapFetchResult, { outcome: "success" }>) {
  const hash = await snapshotHash(r.domain);
  const rdapServer = r.requestUrl ?? "";
  const differing = monitors.filter((m) => m.lastHash !== hash);
  const observations: (Observation & { event: RdapEvent | null })[] = [];
  for (const m of differing) {
    const previous = m.lastSnapshotId === null ? null : await run.previousBody(m.lastSnapshotId);
    const isChange = m.lastSnapshotId !== null;
    observations.push({
      monitor: m,
      facts: deriveFacts(previous, r.domain),
      isChange,
      event: isChange ? buildRdapEvent({ domain, tld: m.tld, current: r.domain, previous, fetchedAt: r.fetchedAt, rdapServer, httpStatus: r.httpStatus }) : null,
    });
  }
  const nextAttemptAt = nextCheckAt(r.fetchedAt, run.ctx.settings.checkIntervalSeconds);
  const answer = { domain, hash, bodyText: r.bodyText, fetchedAt: r.fetchedAt, rdapServer, httpStatus: r.httpStatus, nextAttemptAt };
  const writes = answerWrites(run.ctx.db, answer, observations, monitors.filter((m) => m.lastHash === hash));
  const results = (await run.ctx.db.batch(writes.statements as [never, ...never[]])) as unknown[];
  if (writes.snapshotAt !== null) run.summary.new_snapshots += (results[writes.snapshotAt] as unknown[]).length;
  run.count("success", monitors.length);

  // Monitors that were failing see again (a monitor whose guarded write lost to another run is told by that run).
  for (const [i, m] of monitors.entries()) {
    const o = observations.findIndex((x) => x.monitor === m);
    if (o >= 0 && (results[writes.recordedAt[o]] as unknown[]).length === 0) continue;
    const after = recordAttempt(m.collection, { ok: true }, r.fetchedAt, nextAttemptAt);
    await collectionEvent(run, domain, monitors[i], after, { attemptedAt: r.fetchedAt, rdapServer, httpStatus: r.httpStatus });
  }

  for (const [i, o] of observations.entries()) {
    const recorded = (results[writes.recordedAt[i]] as unknown[]).length > 0;
    if (!recorded) continue; // another run recorded it first
    if (o.event === null) {
      run.summary.baselines++;
      continue;
    }
    run.summary.changes++;
    await emitTo(run, o.monitor.organizationId, o.event, domain);
  }
}

async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
