/**
 * Collection state of certificate targets (platform/collection): could the service's
 * scanner agents obtain a TLS answer from each target?
 *
 * An attempt is one scan job of the target, ended one of three ways:
 *
 *   answered    the agent posted a result: a success when it obtained a TLS answer, a
 *               failure classified from the agent's error class (or, for agents older than
 *               that field, from its error text) otherwise
 *   abandoned   the job was leased but its lease expired without a result (the agent
 *               stopped, crashed or was revoked): a failed attempt, `timeout`
 *   unleased    no agent took the job within a scan interval (none registered, none
 *               running, or all too busy): a failed attempt, `timeout`, said with the
 *               organization's agents' state
 *
 * Abandoned and unleased jobs are found by `recordUnansweredJobs` (every scheduled run,
 * and before an agent leases); the job goes back to `pending` (abandoned) or stays so, and
 * each is counted once. Two failed attempts in a row make the target `failing`
 * (recordAttempt); the transitions are returned for the collection events.
 */
import { and, eq, inArray, isNull, lte, or, sql } from "drizzle-orm";
import type { ScanErrorClass } from "@trust-plane/scan-contract";
import type { Db } from "../../db/client";
import { certAgents, certMonitors, certScanJobs, certTargets } from "../../db/schema";
import {
  collectionView,
  NEVER_COLLECTED,
  recordAttempt,
  sanitizeFailureMessage,
  type AttemptOutcome,
  type CollectionError,
  type CollectionErrorClass,
  type CollectionRecord,
  type CollectionState,
  type CollectionTransition,
} from "../../platform/collection";
import type { CollectionView } from "../../platform/collection/schema";
import { logUnexpected } from "../../platform/collection/log";
import type { Bindings } from "../../env";
import { emitEvent } from "../alerting/contract";
import { buildCertCollectionEvent } from "./events";

/** Every class an agent may report is a collection class. */
const SCAN_CLASSES: Record<ScanErrorClass, CollectionErrorClass> = {
  dns_resolution: "dns_resolution",
  connect: "connect",
  timeout: "timeout",
  tls: "tls",
  protocol: "protocol",
  internal: "internal",
};

/** An agent is "seen recently" when it asked for work within this long (it polls every few seconds). */
export const AGENT_SEEN_WINDOW_MS = 10 * 60_000;

type TargetRow = typeof certTargets.$inferSelect;
type MonitorRow = typeof certMonitors.$inferSelect;

/** Where a scan went, for messages: "192.0.2.44:443 (www.example.com)". */
export function scanTargetName(ip: string, port: number, sni: string): string {
  const host = ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
  return sni ? `${host} (${sni})` : host;
}

/**
 * The class of a failed scan from the agent's error text: what agents before `error_class`
 * (scanner-node before it, or another implementation) said, in scanner-node's words.
 */
export function classifyScanError(text: string): CollectionErrorClass {
  if (/cannot resolve|ENOTFOUND|EAI_AGAIN|EAI_NONAME|getaddrinfo/i.test(text)) return "dns_resolution";
  if (/timed? ?out|timeout/i.test(text)) return "timeout";
  if (/ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|connect to .* failed|connection (reset|refused|error)/i.test(text)) return "connect";
  if (/STARTTLS|greeting|EHLO|STLS|not a TLS record|oversized|unexpected record|expected ServerHello|malformed|stream error|refused SSL/i.test(text)) return "protocol";
  if (/accepted no SSL\/TLS version|no TLS version|alert|handshake|closed by server/i.test(text)) return "tls";
  return "internal";
}

/** The failure a scan result with `has_error` is: the agent's class when it gave one, its text otherwise. */
export function scanFailure(r: { error: string; error_class?: ScanErrorClass | null }, where: string): CollectionError {
  const text = r.error || "the scan obtained no TLS version and no certificate";
  const cls = r.error_class ? SCAN_CLASSES[r.error_class] : classifyScanError(text);
  return { class: cls, message: sanitizeFailureMessage(`TLS scan of ${where}: ${text}`) };
}

/**
 * The collection record of a target. Targets last scanned before the state was kept have
 * no attempt recorded: their latest scan stands for it (a failed one with its error).
 */
export function targetRecord(
  t: Pick<TargetRow, "lastAttemptAt" | "lastSuccessAt" | "collectionFailingSince" | "collectionFailures" | "collectionNextAttemptAt" | "collectionErrorClass" | "collectionError">,
  latestScan?: { scannedAt: string; hasError: boolean; error: string } | null,
  where = "",
): CollectionRecord {
  if (t.lastAttemptAt === null && latestScan) {
    const failed = latestScan.hasError ? scanFailure({ error: latestScan.error }, where) : null;
    return {
      ...NEVER_COLLECTED,
      lastAttemptAt: latestScan.scannedAt,
      lastSuccessAt: t.lastSuccessAt,
      failingSince: failed ? latestScan.scannedAt : null,
      consecutiveFailures: failed ? 1 : 0,
      errorClass: failed?.class ?? null,
      errorMessage: failed?.message ?? null,
    };
  }
  return {
    lastAttemptAt: t.lastAttemptAt,
    lastSuccessAt: t.lastSuccessAt,
    failingSince: t.collectionFailingSince,
    consecutiveFailures: t.collectionFailures,
    nextAttemptAt: t.collectionNextAttemptAt,
    errorClass: t.collectionErrorClass as CollectionErrorClass | null,
    errorMessage: t.collectionError,
  };
}

/** The target columns that store a record. */
export function recordColumns(r: CollectionRecord) {
  return {
    lastAttemptAt: r.lastAttemptAt,
    lastSuccessAt: r.lastSuccessAt,
    collectionFailingSince: r.failingSince,
    collectionFailures: r.consecutiveFailures,
    collectionNextAttemptAt: r.nextAttemptAt,
    collectionErrorClass: r.errorClass,
    collectionError: r.errorMessage,
  };
}

/** When the target is asked again after an attempt at `at`: one scan interval later (at least the next scheduled run). */
export function nextAttemptAfter(at: Date, scanIntervalSeconds: number): string {
  return new Date(at.getTime() + Math.max(60, scanIntervalSeconds) * 1000).toISOString();
}

/** The record after one answered scan of the target. */
export function answeredAttempt(prev: CollectionRecord, outcome: AttemptOutcome, now: Date, scanIntervalSeconds: number) {
  return recordAttempt(prev, outcome, now.toISOString(), nextAttemptAfter(now, scanIntervalSeconds));
}

// ---------------------------------------------------------------------------
// The organization's scanner agents, as the state of collection depends on them

export interface AgentsState {
  registered: number;
  seenRecently: number;
  lastSeenAt: string | null;
}

export async function agentsState(db: Db, organizationIds: readonly number[], now: Date): Promise<Map<number, AgentsState>> {
  const out = new Map<number, AgentsState>(organizationIds.map((id) => [id, { registered: 0, seenRecently: 0, lastSeenAt: null }]));
  if (!organizationIds.length) return out;
  const seenAfter = new Date(now.getTime() - AGENT_SEEN_WINDOW_MS).toISOString();
  const rows = await db
    .select({
      organizationId: certAgents.organizationId,
      registered: sql<number>`count(*)`,
      seenRecently: sql<number>`coalesce(sum(${certAgents.lastSeenAt} >= ${seenAfter}), 0)`,
      lastSeenAt: sql<string | null>`max(${certAgents.lastSeenAt})`,
    })
    .from(certAgents)
    .where(and(inArray(certAgents.organizationId, [...organizationIds]), isNull(certAgents.revokedAt)))
    .groupBy(certAgents.organizationId)
    .all();
  for (const r of rows) out.set(r.organizationId, { registered: Number(r.registered), seenRecently: Number(r.seenRecently), lastSeenAt: r.lastSeenAt });
  return out;
}

/** What the organization's agents mean for scanning, in words; null when an agent is at work. */
export function agentsNote(a: AgentsState): string | null {
  if (a.registered === 0) return "No scanner agent is registered for this organization: targets are not scanned until one is registered and running (Scanner agents).";
  if (a.seenRecently === 0) {
    return a.lastSeenAt
      ? `No scanner agent has asked for work since ${a.lastSeenAt}: targets are not scanned while no agent runs.`
      : "No registered scanner agent has ever asked for work: start one with its token (scanner-node agent).";
  }
  return null;
}

// ---------------------------------------------------------------------------
// Jobs that ended without a result

export interface TargetTransition {
  organizationId: number;
  monitor: MonitorRow;
  target: TargetRow;
  /** The record after the attempt, and before it (a recovery's failing_since). */
  record: CollectionRecord;
  previous: CollectionRecord;
  transition: Exclude<CollectionTransition, null>;
}

/** The transition an attempt caused, if any, as raised by the collection events. */
export function transitionOf(
  organizationId: number,
  monitor: MonitorRow,
  target: TargetRow,
  previous: CollectionRecord,
  after: { record: CollectionRecord; transition: CollectionTransition },
): TargetTransition[] {
  return after.transition ? [{ organizationId, monitor, target, previous, record: after.record, transition: after.transition }] : [];
}

/**
 * One collection_failing / collection_recovered event per transition, to the target's
 * organization (its alert rules decide who is told). The attempt is recorded either way:
 * a failing alert pipeline is logged, never a reason to lose the state.
 */
export async function emitCollectionEvents(env: Bindings, transitions: readonly TargetTransition[]): Promise<void> {
  for (const t of transitions) {
    const subject = { monitorId: t.monitor.id, monitorCn: t.monitor.cn, port: t.monitor.port, sni: sniOf(t.monitor), ipAddress: t.target.ipAddress, starttls: t.monitor.starttls ?? null };
    try {
      await emitEvent(env, "cert-watcher", t.organizationId, buildCertCollectionEvent(subject, { transition: t.transition, record: t.record, previous: t.previous }));
    } catch (err) {
      logUnexpected(`cert-watcher: collection event of target ${t.target.id}`, err);
    }
  }
}

interface Unanswered {
  job: typeof certScanJobs.$inferSelect;
  target: TargetRow;
  monitor: MonitorRow;
  agentName: string | null;
  agentRevokedAt: string | null;
}

/** The server name a monitor's scans send: target_dns overrides cn. */
export const sniOf = (m: MonitorRow) => m.targetDns || m.cn;
const whereOf = (u: { target: TargetRow; monitor: MonitorRow }) => scanTargetName(u.target.ipAddress, u.monitor.port, sniOf(u.monitor));

function abandonedFailure(u: Unanswered, leaseSeconds: number): CollectionError {
  const by = u.agentName ? `agent "${u.agentName}"` : "an agent";
  const why = u.agentRevokedAt ? "the agent was revoked before it answered" : "the agent stopped or lost its connection";
  return {
    class: "timeout",
    message: sanitizeFailureMessage(`TLS scan of ${whereOf(u)}: the scan job leased by ${by} at ${u.job.leasedAt} was not answered within ${leaseSeconds} s (${why})`),
  };
}

function unleasedFailure(u: Unanswered, agents: AgentsState, waitSeconds: number): CollectionError {
  const note = agentsNote(agents) ?? `scanner agents are running but none took the job within ${Math.round(waitSeconds / 60)} min (add an agent or raise its --concurrency)`;
  return { class: "timeout", message: sanitizeFailureMessage(`TLS scan of ${whereOf(u)} did not happen: ${note}`) };
}

/**
 * Counts the scan jobs that ended without a result as failed attempts of their targets,
 * once each: leases expired at `now` (the job is handed out again), and jobs no agent took
 * within `max(scan interval, lease)`. Scoped to one organization when given (before a
 * lease), every organization otherwise (the scheduled run).
 */
export async function recordUnansweredJobs(
  db: Db,
  now: Date,
  opts: { scanIntervalSeconds: number; leaseSeconds: number; organizationId?: number },
): Promise<TargetTransition[]> {
  const nowIso = now.toISOString();
  const waitSeconds = Math.max(opts.scanIntervalSeconds, opts.leaseSeconds);
  const unleasedBefore = new Date(now.getTime() - waitSeconds * 1000).toISOString();
  const ofOrg = opts.organizationId === undefined ? undefined : eq(certScanJobs.organizationId, opts.organizationId);
  const expired = and(eq(certScanJobs.status, "leased"), lte(certScanJobs.leaseExpiresAt, nowIso));
  const unleased = and(
    eq(certScanJobs.status, "pending"),
    sql`coalesce(${certScanJobs.unleasedRecordedAt}, ${certScanJobs.createdAt}) <= ${unleasedBefore}`,
    eq(certTargets.enabled, true),
    eq(certMonitors.enabled, true),
  );
  const rows: Unanswered[] = await db
    .select({ job: certScanJobs, target: certTargets, monitor: certMonitors, agentName: certAgents.name, agentRevokedAt: certAgents.revokedAt })
    .from(certScanJobs)
    .innerJoin(certTargets, eq(certTargets.id, certScanJobs.targetId))
    .innerJoin(certMonitors, eq(certMonitors.id, certScanJobs.monitorId))
    .leftJoin(certAgents, eq(certAgents.id, certScanJobs.agentId))
    .where(and(ofOrg, or(expired, unleased)))
    .all();
  if (!rows.length) return [];

  // Claim them first (the job's own state decides, so a concurrent run counts none twice),
  // then record the failures of the claimed ones.
  const abandoned = rows.filter((r) => r.job.status === "leased").map((r) => r.job.id);
  const waiting = rows.filter((r) => r.job.status === "pending").map((r) => r.job.id);
  const claimed = new Set<number>();
  if (abandoned.length) {
    const back = await db
      .update(certScanJobs)
      .set({ status: "pending", agentId: null, leasedAt: null, leaseExpiresAt: null })
      .where(and(inArray(certScanJobs.id, abandoned), expired))
      .returning({ id: certScanJobs.id })
      .all();
    back.forEach((r) => claimed.add(r.id));
  }
  if (waiting.length) {
    const counted = await db
      .update(certScanJobs)
      .set({ unleasedRecordedAt: nowIso })
      .where(and(inArray(certScanJobs.id, waiting), eq(certScanJobs.status, "pending"), sql`coalesce(${certScanJobs.unleasedRecordedAt}, ${certScanJobs.createdAt}) <= ${unleasedBefore}`))
      .returning({ id: certScanJobs.id })
      .all();
    counted.forEach((r) => claimed.add(r.id));
  }
  const mine = rows.filter((r) => claimed.has(r.job.id));
  if (!mine.length) return [];
  const agents = await agentsState(db, [...new Set(mine.map((r) => r.job.organizationId))], now);
  const next = nextAttemptAfter(now, opts.scanIntervalSeconds);
  const transitions: TargetTransition[] = [];
  const updates = mine.map((u) => {
    const failure = u.job.status === "leased" ? abandonedFailure(u, opts.leaseSeconds) : unleasedFailure(u, agents.get(u.job.organizationId)!, waitSeconds);
    const previous = targetRecord(u.target);
    const after = recordAttempt(previous, { ok: false, error: failure }, nowIso, next);
    transitions.push(...transitionOf(u.job.organizationId, u.monitor, u.target, previous, after));
    return db.update(certTargets).set(recordColumns(after.record)).where(eq(certTargets.id, u.target.id));
  });
  await db.batch(updates as [(typeof updates)[number], ...typeof updates]);
  return transitions;
}

// ---------------------------------------------------------------------------
// Views

/** A target's `collection`: never attempted and no agent running, its next attempt is not known. */
export function targetCollection(record: CollectionRecord, enabled: boolean, agents: AgentsState, now: Date): CollectionView {
  const view = collectionView(record, enabled);
  if (enabled && view.next_attempt_at === null && agents.seenRecently > 0) {
    // Due at once: the next scheduled run (each minute) queues the job, a running agent takes it.
    view.next_attempt_at = new Date(Math.ceil((now.getTime() + 1) / 60_000) * 60_000).toISOString();
  }
  return view;
}

const STATE_RANK: Record<CollectionState, number> = { failing: 0, pending: 1, ok: 2, paused: 3 };

/**
 * A monitor's `collection`: the summary of its enabled targets. The worst state wins
 * (failing, then pending, then ok); `last_success_at` is the OLDEST of their last
 * successes (null while one was never collected): every target was collected since then.
 * Paused when the monitor or all its targets are disabled.
 */
export function monitorCollection(monitorEnabled: boolean, targets: readonly { enabled: boolean; collection: CollectionView }[]): CollectionView {
  const live = monitorEnabled ? targets.filter((t) => t.enabled).map((t) => t.collection) : [];
  if (!live.length) {
    return { state: monitorEnabled && targets.length === 0 ? "pending" : "paused", last_attempt_at: null, last_success_at: null, failing_since: null, consecutive_failures: 0, next_attempt_at: null, error: null };
  }
  const worst = [...live].sort((a, b) => STATE_RANK[a.state] - STATE_RANK[b.state] || b.consecutive_failures - a.consecutive_failures)[0];
  const max = (xs: (string | null)[]) => xs.reduce<string | null>((m, x) => (x !== null && (m === null || x > m) ? x : m), null);
  const min = (xs: (string | null)[]) => xs.reduce<string | null>((m, x) => (x !== null && (m === null || x < m) ? x : m), null);
  const successes = live.map((c) => c.last_success_at);
  return {
    state: worst.state,
    last_attempt_at: max(live.map((c) => c.last_attempt_at)),
    last_success_at: successes.includes(null) ? null : min(successes),
    failing_since: min(live.map((c) => c.failing_since)),
    consecutive_failures: Math.max(...live.map((c) => c.consecutive_failures)),
    next_attempt_at: min(live.map((c) => c.next_attempt_at)),
    error: live.find((c) => c.state === worst.state && c.error)?.error ?? live.find((c) => c.error)?.error ?? null,
  };
}
