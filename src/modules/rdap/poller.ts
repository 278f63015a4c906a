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
 *  - Events: after the write commits, one `rdap` event per changed enabled monitor
 *    (not for a monitor's first snapshot: nothing to differ from).
 */
import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { Bindings } from "../../env";
import { rdapMonitors, rdapServerBackoff, rdapSnapshots, type RdapCheckStatus } from "../../db/schema/rdap";
import { emitEvent } from "../alerting/emit";
import { findRdapServers, type BootstrapSource } from "./bootstrap";
import { loadBootstrap } from "./bootstrap-store";
import { fetchDomain, type RdapFetchResult } from "./client";
import { buildRdapEvent, type RdapChangeEvent } from "./events";
import { deriveFacts } from "./facts";
import { FRESH_SERVER, monitorRetryAt, nextServerState, serverBlocked, serverKey, TRANSIENT_STATUSES, type ServerState } from "./politeness";
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
  emit?: (organizationId: number, event: RdapChangeEvent) => Promise<unknown>;
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

interface DueMonitor {
  id: number;
  organizationId: number;
  domainName: string;
  tld: string;
  lastSnapshotId: number | null;
  failureCount: number;
  lastHash: string | null;
}

/** D1 binds at most 100 parameters per statement. */
const IN_CHUNK = 90;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** Enabled monitors of the due domains (all of a due domain's monitors share the lookup). */
export async function selectDue(db: Db, now: Date, intervalSeconds: number, maxDomains: number): Promise<Map<string, DueMonitor[]>> {
  const nowIso = now.toISOString();
  const cutoff = new Date(now.getTime() - intervalSeconds * 1000).toISOString();
  const rows = await db.all<{
    id: number;
    organization_id: number;
    domain_name: string;
    tld: string;
    last_snapshot_id: number | null;
    failure_count: number;
    hash: string | null;
  }>(sql`
    SELECT m.id, m.organization_id, m.domain_name, m.tld, m.last_snapshot_id, m.failure_count, s.hash
    FROM rdap_monitors m LEFT JOIN rdap_snapshots s ON s.id = m.last_snapshot_id
    WHERE m.enabled = 1 AND m.domain_name IN (
      SELECT domain_name FROM rdap_monitors
      WHERE enabled = 1
        AND (last_checked_at IS NULL OR last_checked_at <= ${cutoff} OR (retry_at IS NOT NULL AND retry_at <= ${nowIso}))
      GROUP BY domain_name
      ORDER BY MIN(COALESCE(last_checked_at, '')), domain_name
      LIMIT ${maxDomains})
    ORDER BY COALESCE(m.last_checked_at, ''), m.domain_name, m.id`);
  const byDomain = new Map<string, DueMonitor[]>();
  for (const r of rows) {
    const list = byDomain.get(r.domain_name) ?? [];
    list.push({
      id: r.id,
      organizationId: r.organization_id,
      domainName: r.domain_name,
      tld: r.tld,
      lastSnapshotId: r.last_snapshot_id,
      failureCount: r.failure_count,
      lastHash: r.hash,
    });
    byDomain.set(r.domain_name, list);
  }
  return byDomain;
}

function detailOf(r: RdapFetchResult): string | null {
  switch (r.outcome) {
    case "success":
      return null;
    case "not_found":
      return `HTTP ${r.httpStatus}`;
    case "rate_limited":
      return `HTTP 429${r.retryAfterSeconds !== null ? `, Retry-After ${r.retryAfterSeconds} s` : ""}`;
    case "invalid_response":
      return `${r.reason}: ${r.message}`;
    default:
      return r.message;
  }
}

export async function pollRdap(ctx: PollContext): Promise<PollSummary> {
  const { db, settings } = ctx;
  const wallStart = Date.now();
  /** The scheduled time, advancing with the wall clock during the run. */
  const clock = () => ctx.now.getTime() + (Date.now() - wallStart);
  const emit = ctx.emit ?? ((orgId: number, event: RdapChangeEvent) => emitEvent(ctx.env, "rdap", orgId, event as unknown as Record<string, unknown>));

  const summary: PollSummary = {
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

  const due = await selectDue(db, ctx.now, settings.checkIntervalSeconds, settings.maxDomainsPerRun);
  summary.due_domains = due.size;
  if (due.size === 0) return summary;

  let serversOf: (domain: string) => string[];
  if (settings.baseUrlOverride) {
    serversOf = () => [settings.baseUrlOverride];
  } else {
    const lookup = await loadBootstrap(db, settings.bootstrapUrl, { fetch: ctx.fetch, now: clock });
    summary.bootstrap_source = lookup.source;
    if (lookup.error) console.warn(`rdap: ${lookup.error} (using the ${lookup.source} bootstrap)`);
    serversOf = (domain) => findRdapServers(lookup.bootstrap, domain);
  }

  const servers = new Map<string, ServerState>();
  for (const row of await db.select().from(rdapServerBackoff).all()) {
    servers.set(row.server, {
      notBefore: Date.parse(row.notBefore) || 0,
      reason: row.reason as RdapCheckStatus,
      consecutiveFailures: row.consecutiveFailures,
    });
  }
  const dirtyServers = new Set<string>();

  /** Parsed previous snapshot bodies by id, shared by the monitors of a run. */
  const previousBodies = new Map<number, Promise<unknown>>();
  const previousBody = (id: number) => {
    let p = previousBodies.get(id);
    if (!p) {
      p = db
        .select({ body: rdapSnapshots.body })
        .from(rdapSnapshots)
        .where(eq(rdapSnapshots.id, id))
        .get()
        .then((row) => (row ? (JSON.parse(row.body) as unknown) : null));
      previousBodies.set(id, p);
    }
    return p;
  };

  const count = (status: RdapCheckStatus, n: number) => (summary.statuses[status] = (summary.statuses[status] ?? 0) + n);

  /** Records a check that produced no snapshot (failure or skip): status, and when to retry. */
  async function recordWithoutSnapshot(monitors: DueMonitor[], status: RdapCheckStatus, checkedAt: string, detail: string | null, serverNotBefore: number, countsAsFailure: boolean) {
    const transient = TRANSIENT_STATUSES.has(status);
    const stmts = monitors.map((m) => {
      const failures = transient ? m.failureCount + (countsAsFailure ? 1 : 0) : 0;
      const retry = monitorRetryAt(status, Math.max(1, failures), Date.parse(checkedAt), settings.checkIntervalSeconds, serverNotBefore);
      return db
        .update(rdapMonitors)
        .set({
          lastCheckedAt: checkedAt,
          lastCheckStatus: status,
          lastCheckDetail: detail,
          retryAt: retry === null ? null : new Date(retry).toISOString(),
          failureCount: failures,
        })
        .where(eq(rdapMonitors.id, m.id));
    });
    if (stmts.length) await db.batch(stmts as [(typeof stmts)[number], ...typeof stmts]);
    count(status, monitors.length);
  }

  /**
   * Stores a successful answer for the monitors of one domain in ONE batch. Writes for a
   * changed monitor are guarded by its comparison base (`last_snapshot_id IS <the base we
   * compared with>`): should two Cron runs overlap on a domain, only the first records the
   * change (and only it emits the event); the other's guarded statements change nothing.
   */
  async function recordSuccess(domain: string, monitors: DueMonitor[], r: Extract<RdapFetchResult, { outcome: "success" }>) {
    const hash = await snapshotHash(r.domain);
    const changedMonitors = monitors.filter((m) => m.lastHash !== hash);
    // Plain D1 statements: the guarded INSERT ... SELECT ... WHERE below has no query-builder form.
    const d1 = ctx.env.DB;
    const stmts: D1PreparedStatement[] = [];
    /** Index in `stmts` of each changed monitor's history insert, and its event if it is a change. */
    const guarded: { index: number; organizationId: number; event: RdapChangeEvent | null }[] = [];
    const server = r.requestUrl ?? "";
    const SNAPSHOT_ID = "(SELECT id FROM rdap_snapshots WHERE hash = ?)";
    if (changedMonitors.length) {
      stmts.push(
        d1
          .prepare("INSERT INTO rdap_snapshots (hash, body, size_bytes, domain_name, first_seen_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING")
          .bind(hash, r.bodyText, new TextEncoder().encode(r.bodyText).byteLength, domain, r.fetchedAt),
      );
      for (const m of changedMonitors) {
        const previous = m.lastSnapshotId === null ? null : await previousBody(m.lastSnapshotId);
        const facts = deriveFacts(previous, r.domain);
        const isChange = m.lastSnapshotId !== null;
        guarded.push({
          index: stmts.length,
          organizationId: m.organizationId,
          event: isChange
            ? buildRdapEvent({ domain, tld: m.tld, current: r.domain, previous, fetchedAt: r.fetchedAt, rdapServer: server, httpStatus: r.httpStatus })
            : null,
        });
        // The guard: the monitor still has the base we compared with.
        const BASE = "EXISTS (SELECT 1 FROM rdap_monitors WHERE id = ? AND last_snapshot_id IS ?)";
        stmts.push(
          d1
            .prepare(
              `INSERT INTO rdap_history (organization_id, monitor_id, snapshot_id, previous_snapshot_id, observed_at, changed, rdap_server, http_status)
               SELECT ?, ?, ${SNAPSHOT_ID}, ?, ?, ?, ?, ? WHERE ${BASE}`,
            )
            .bind(m.organizationId, m.id, hash, m.lastSnapshotId, r.fetchedAt, isChange ? 1 : 0, server, r.httpStatus, m.id, m.lastSnapshotId),
          // Facts of the row just inserted: the newest history row of this monitor, same transaction.
          d1
            .prepare(
              `INSERT INTO rdap_change_facts (history_id, organization_id, monitor_id, domain_name, observed_at, registrar_changed,
                 registrant_changed, nameservers_changed, status_changed, expiration_date, previous_expiration_date)
               SELECT (SELECT MAX(id) FROM rdap_history WHERE monitor_id = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${BASE}`,
            )
            .bind(
              m.id, m.organizationId, m.id, domain, r.fetchedAt,
              facts.registrar_changed ? 1 : 0, facts.registrant_changed ? 1 : 0, facts.nameservers_changed ? 1 : 0, facts.status_changed ? 1 : 0,
              facts.expiration_date, facts.previous_expiration_date, m.id, m.lastSnapshotId,
            ),
          d1
            .prepare(
              `UPDATE rdap_monitors SET last_snapshot_id = ${SNAPSHOT_ID}, last_checked_at = ?, last_check_status = 'success',
                 last_check_detail = NULL, retry_at = NULL, failure_count = 0
               WHERE id = ? AND last_snapshot_id IS ?`,
            )
            .bind(hash, r.fetchedAt, m.id, m.lastSnapshotId),
        );
      }
    }
    const unchangedIds = monitors.filter((m) => m.lastHash === hash).map((m) => m.id);
    for (const ids of chunks(unchangedIds, IN_CHUNK)) {
      stmts.push(
        d1
          .prepare(
            `UPDATE rdap_monitors SET last_checked_at = ?, last_check_status = 'success', last_check_detail = NULL, retry_at = NULL, failure_count = 0
             WHERE id IN (${ids.map(() => "?").join(", ")})`,
          )
          .bind(r.fetchedAt, ...ids),
      );
    }
    const results = await d1.batch(stmts);
    if (changedMonitors.length) summary.new_snapshots += results[0]?.meta?.changes ?? 0;
    count("success", monitors.length);

    for (const g of guarded) {
      if ((results[g.index]?.meta?.changes ?? 0) === 0) continue; // another run recorded it first
      if (g.event === null) {
        summary.baselines++;
        continue;
      }
      summary.changes++;
      try {
        await emit(g.organizationId, g.event);
        summary.events_emitted++;
      } catch (err) {
        summary.event_errors++;
        console.error(`rdap: change event for ${domain} (organization ${g.organizationId}) not delivered to alerting: ${String(err)}`);
      }
    }
  }

  async function checkDomain(domain: string, monitors: DueMonitor[]) {
    if (Date.now() - wallStart > settings.runBudgetMs) {
      summary.deferred++;
      return;
    }
    const baseUrl = serversOf(domain)[0] ?? null;
    if (baseUrl === null) {
      await recordWithoutSnapshot(monitors, "no_rdap_server", new Date(clock()).toISOString(), `no RDAP server for .${monitors[0].tld} in the bootstrap registry`, 0, false);
      return;
    }
    const key = serverKey(baseUrl);
    const before = servers.get(key) ?? FRESH_SERVER;
    if (serverBlocked(before, clock())) {
      summary.skipped_backoff++;
      const until = new Date(before.notBefore).toISOString();
      await recordWithoutSnapshot(monitors, before.reason ?? "rate_limited", new Date(clock()).toISOString(), `not asked: ${key} is backing off until ${until}`, before.notBefore, false);
      return;
    }
    summary.looked_up++;
    const r = await fetchDomain(baseUrl, domain, { timeoutMs: settings.timeoutMs, fetch: ctx.fetch, now: clock });
    const current = servers.get(key) ?? FRESH_SERVER;
    const after = nextServerState(current, r.outcome, clock(), r.outcome === "rate_limited" ? r.retryAfterSeconds : null);
    if (after !== current) {
      servers.set(key, after);
      dirtyServers.add(key);
    }
    if (r.outcome === "success") await recordSuccess(domain, monitors, r);
    else await recordWithoutSnapshot(monitors, r.outcome, r.fetchedAt, detailOf(r), after.notBefore, true);
  }

  await pool([...due.entries()], settings.concurrency, async ([domain, monitors]) => {
    try {
      await checkDomain(domain, monitors);
    } catch (err) {
      summary.errors++;
      console.error(`rdap: checking ${domain} failed: ${err instanceof Error ? err.stack : String(err)}`);
    }
  });

  if (dirtyServers.size) {
    const at = clock();
    const updatedAt = new Date(at).toISOString();
    const stmts = [...dirtyServers].map((server) => {
      const s = servers.get(server)!;
      // A server that answers again and owes no wait needs no row.
      if (s.consecutiveFailures === 0 && s.notBefore <= at) return db.delete(rdapServerBackoff).where(eq(rdapServerBackoff.server, server));
      const values = {
        notBefore: new Date(s.notBefore).toISOString(),
        reason: s.reason ?? "server_error",
        consecutiveFailures: s.consecutiveFailures,
        updatedAt,
      };
      return db
        .insert(rdapServerBackoff)
        .values({ server, ...values })
        .onConflictDoUpdate({ target: rdapServerBackoff.server, set: values });
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    await db.batch(stmts as [any, ...any[]]);
  }
  return summary;
}
