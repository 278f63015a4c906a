/**
 * Scanner agents (docs/decisions.md#certificate-monitors-and-scanner-agents): registration (a `tpa_` token shown once, only its
 * hash stored), listing, revocation, and the agent side of the protocol:
 *
 *   lease:   hand out up to `max_jobs` open scan jobs of the agent's own organization
 *            (pending, or leased whose lease has passed: a crashed agent's job comes back)
 *   results: accept the first result of a job (a second post is 409 and changes nothing),
 *            store it as a scan, re-evaluate the frameworks, emit the scan event.
 *
 * Agent tokens authenticate only these two endpoints; user tokens are not agents and
 * agent tokens are not users. A revoked agent is refused at once (its leases are
 * released so another agent picks the jobs up).
 */
import { and, asc, eq, inArray, isNull, lte, ne, or, sql } from "drizzle-orm";
import type { ScanResult } from "@trust-plane/scan-contract";
import type { Bindings } from "../../env";
import type { Db } from "../../db/client";
import { certAgents, certMonitors, certScanJobs, certScans, certTargets } from "../../db/schema";
import type { AgentPrincipal } from "../../platform/context";
import { ApiError, notFound, unauthorized } from "../../platform/errors";
import { generateSecret, hashSecret, parseSecret, TOKEN_PREFIX_LENGTH } from "../../platform/secrets";
import type { Tenant } from "../../platform/tenant";
import { emitEvent } from "../alerting/contract";
import { logUnexpected, type AttemptOutcome } from "../../platform/collection";
import { answeredAttempt, emitCollectionEvents, recordColumns, recordUnansweredJobs, scanFailure, scanTargetName, sniOf, targetRecord, transitionOf } from "./collection";
import { tellScanAccepted } from "./deployment-contract";
import { analyseScan, type ScanAnalysis } from "./scan-result";
import { keepsChain } from "./mail-server-contract";

/** How long a leased job stays with its agent before it can be leased again. */
export const LEASE_SECONDS = 300;
/** `last_seen_at` is refreshed at most this often (no write on every call). */
const SEEN_RESOLUTION_MS = 60_000;

type AgentRow = typeof certAgents.$inferSelect;

function agentView(a: AgentRow) {
  return {
    id: a.id,
    name: a.name,
    token_prefix: a.tokenPrefix,
    status: (a.revokedAt ? "revoked" : "active") as "active" | "revoked",
    created_at: a.createdAt,
    created_by: a.createdBy,
    last_seen_at: a.lastSeenAt,
    revoked_at: a.revokedAt,
  };
}

export async function registerAgent(t: Tenant, userId: number | null, name: string, now: Date) {
  const token = generateSecret("agent");
  const [row] = await t
    .insert(certAgents, {
      name,
      tokenHash: await hashSecret(token),
      tokenPrefix: token.slice(0, TOKEN_PREFIX_LENGTH),
      createdBy: userId,
      createdAt: now.toISOString(),
    })
    .returning()
    .all();
  return { ...agentView(row as AgentRow), token, message: "Agent registered; store the token now, it is not shown again" };
}

export async function listAgents(t: Tenant) {
  const rows = await t.select(certAgents).orderBy(asc(certAgents.id)).all();
  return { agents: rows.map(agentView) };
}

/** Revokes an agent: its token stops working at once and its current leases are released. Idempotent. */
export async function revokeAgent(t: Tenant, agentId: number, now: Date) {
  const a = await t.getOr404(certAgents, agentId, "Agent");
  if (a.revokedAt) return { message: "Agent already revoked" };
  const nowIso = now.toISOString();
  await t.db.batch([
    t.update(certAgents, { revokedAt: nowIso }, eq(certAgents.id, a.id)),
    t.update(certScanJobs, { leaseExpiresAt: nowIso }, eq(certScanJobs.agentId, a.id), eq(certScanJobs.status, "leased")),
  ]);
  return { message: "Agent revoked" };
}

/**
 * Resolves `Authorization: Bearer tpa_...` to its agent (registered with the
 * platform's authentication, which calls it for every `tpa_` bearer); an unknown or
 * revoked token is a 401. A system lookup: the token names the organization, so this
 * is the one query here that is not scoped by one.
 */
export async function resolveAgent(db: Db, bearer: string, now: Date): Promise<AgentPrincipal | ApiError> {
  if (parseSecret(bearer) !== "agent") return unauthorized("Not an agent token (Bearer tpa_...)");
  const a = await db.select().from(certAgents).where(eq(certAgents.tokenHash, await hashSecret(bearer))).get();
  if (!a) return unauthorized("Unknown agent token");
  if (a.revokedAt) return unauthorized("Agent token has been revoked");
  if (!a.lastSeenAt || now.getTime() - Date.parse(a.lastSeenAt) > SEEN_RESOLUTION_MS) {
    await db.update(certAgents).set({ lastSeenAt: now.toISOString() }).where(eq(certAgents.id, a.id)).run();
  }
  return { agentId: a.id, organizationId: a.organizationId };
}

/** A job with its target and monitor, of the organization. */
function jobsWithTargets(t: Tenant, ...conditions: Parameters<Tenant["where"]>[1][]) {
  return t.db
    .select({ job: certScanJobs, target: certTargets, monitor: certMonitors })
    .from(certScanJobs)
    .innerJoin(certTargets, eq(certTargets.id, certScanJobs.targetId))
    .innerJoin(certMonitors, eq(certMonitors.id, certScanJobs.monitorId))
    .where(t.where(certScanJobs, ...conditions));
}


/**
 * Leases up to `maxJobs` open jobs of the agent's organization whose monitor and target
 * are enabled, oldest first. One UPDATE ... WHERE id IN (SELECT ... LIMIT n) statement,
 * so two agents leasing at once never receive the same job.
 */
export async function leaseJobs(env: Bindings, t: Tenant, agentId: number, maxJobs: number, now: Date, opts: { scanIntervalSeconds: number; leaseSeconds?: number }) {
  const leaseSeconds = opts.leaseSeconds ?? LEASE_SECONDS;
  const nowIso = now.toISOString();
  // Expired leases are handed out again below: each is first counted as its target's failed attempt.
  await emitCollectionEvents(env, await recordUnansweredJobs(t.db, now, { scanIntervalSeconds: opts.scanIntervalSeconds, leaseSeconds: LEASE_SECONDS, organizationId: t.organizationId }));
  const leasable = t.db
    .select({ id: certScanJobs.id })
    .from(certScanJobs)
    .innerJoin(certTargets, and(eq(certTargets.id, certScanJobs.targetId), eq(certTargets.enabled, true)))
    .innerJoin(certMonitors, and(eq(certMonitors.id, certScanJobs.monitorId), eq(certMonitors.enabled, true)))
    .where(t.where(certScanJobs, or(eq(certScanJobs.status, "pending"), and(eq(certScanJobs.status, "leased"), lte(certScanJobs.leaseExpiresAt, nowIso)))))
    .orderBy(asc(certScanJobs.createdAt), asc(certScanJobs.id))
    .limit(maxJobs);
  const leased = await t
    .update(
      certScanJobs,
      {
        status: "leased",
        leasedAt: nowIso,
        leaseExpiresAt: new Date(now.getTime() + leaseSeconds * 1000).toISOString(),
        agentId,
        attempts: sql`${certScanJobs.attempts} + 1` as unknown as number,
      },
      inArray(certScanJobs.id, leasable),
    )
    .returning({ id: certScanJobs.id })
    .all();
  if (!leased.length) return { jobs: [], lease_seconds: leaseSeconds };
  const rows = await jobsWithTargets(t, inArray(certScanJobs.id, leased.map((l) => l.id))).orderBy(asc(certScanJobs.id)).all();
  return {
    jobs: rows.map(({ job, target, monitor }) => ({
      job_id: job.id,
      monitor_id: monitor.id,
      target_id: target.id,
      monitor_cn: monitor.cn,
      ip_address: target.ipAddress,
      port: monitor.port,
      sni: sniOf(monitor),
      starttls: monitor.starttls ?? null,
      root_ca: monitor.rootCa,
      attempt: job.attempts,
    })),
    lease_seconds: leaseSeconds,
  };
}

type JobRow = Awaited<ReturnType<ReturnType<typeof jobsWithTargets>["get"]>> & {};

/** The scan row of an accepted result: the event's fields, the statuses and findings as columns. */
function scanValues(row: JobRow, agentId: number, result: ScanResult, a: ScanAnalysis, nowIso: string) {
  const { job, target, monitor } = row;
  const cert = a.event.certificate;
  return {
    monitorId: monitor.id,
    targetId: target.id,
    jobId: job.id,
    agentId,
    scannedAt: nowIso,
    ipAddress: target.ipAddress,
    connectionMethod: a.event.connection_method,
    hasError: a.event.has_error,
    error: a.event.error,
    protocols: a.event.protocol,
    ciphers: a.event.ciphers,
    namedGroups: a.event.named_groups,
    certSha256: cert?.sha256 || null,
    certSubject: cert?.subject ?? null,
    certIssuer: cert?.issuer ?? null,
    certNotBefore: cert?.not_before || null,
    certNotAfter: cert?.not_after || null,
    validityDays: a.event.validity_days,
    chainLength: result.chain_length ?? (cert ? 1 + result.intermediates.length : null),
    protocolStatus: a.protocolStatus,
    cipherStatus: a.cipherStatus,
    validationStatus: a.validationStatus,
    expired: a.findings.expired,
    legacyProtocol: a.findings.legacyProtocol,
    weakCipher: a.findings.weakCipher,
    selfSigned: a.findings.selfSigned,
    weakSuites: a.weakSuites,
    frameworks: a.frameworks,
    // The identity fields are the job's, not what the agent claimed. The leaf's DER is not
    // kept with every scan (the inventory keeps what it derives from it), except a mail
    // server's chain: the DNS watcher matches it against the host's DANE TLSA records
    // whenever either changes (mail-server-contract.ts).
    result: {
      ...result,
      certificate: result.certificate && { ...result.certificate, der: keepsChain(monitor) ? result.certificate.der : null },
      intermediates_der: keepsChain(monitor) ? result.intermediates_der : [],
      dns_name: a.event.dns_name,
      ip_address: target.ipAddress,
      monitor_cn: monitor.cn,
      protocol: a.event.protocol,
    },
  };
}

const alreadyAccepted = (jobId: number) => `A result for job ${jobId} was already accepted`;

/**
 * Accepts the first result of a job of the agent's organization (any agent of it may
 * answer: a late answer to an expired lease still counts if it is the first). The scan
 * row, the job's completion and the target's/monitor's latest-scan pointers are written
 * in one batch; the unique `job_id` of the scan makes a concurrent second post fail as
 * a whole (409). The event goes to the alert rules after the commit.
 */
export async function acceptResult(
  env: Bindings,
  t: Tenant,
  agentId: number,
  jobId: number,
  result: ScanResult,
  now: Date,
  opts: { scanIntervalSeconds: number; mozillaVersion?: string },
) {
  const row = await jobsWithTargets(t, eq(certScanJobs.id, jobId)).get();
  if (!row) throw notFound("Scan job");
  if (row.job.status === "done") throw new ApiError("conflict", alreadyAccepted(jobId));
  const { job, target, monitor } = row;
  const a = analyseScan(result, {
    monitorId: monitor.id,
    monitorCn: monitor.cn,
    port: monitor.port,
    sni: sniOf(monitor),
    ipAddress: target.ipAddress,
    starttls: monitor.starttls ?? null,
    now,
    mozillaVersion: opts.mozillaVersion,
  });
  const nowIso = now.toISOString();
  const scanIdOfJob = sql`(SELECT id FROM cert_scans WHERE job_id = ${job.id})`;
  // The attempt this job was: a scan that obtained a TLS answer, or a classified failure.
  const where = scanTargetName(target.ipAddress, monitor.port, sniOf(monitor));
  const outcome: AttemptOutcome = a.event.has_error ? { ok: false, error: scanFailure({ error: a.event.error, error_class: result.error_class }, where) } : { ok: true };
  const previous = targetRecord(target);
  const collected = answeredAttempt(previous, outcome, now, opts.scanIntervalSeconds);
  const [inserted] = await t.run(
    () =>
      t.db.batch([
        t.insert(certScans, scanValues(row, agentId, result, a, nowIso)).returning({ id: certScans.id }),
        t.update(certScanJobs, { status: "done", completedAt: nowIso }, eq(certScanJobs.id, job.id), ne(certScanJobs.status, "done")),
        t.update(
          certTargets,
          { lastScanAt: nowIso, lastScanId: scanIdOfJob as unknown as number, ...recordColumns(collected.record) },
          eq(certTargets.id, target.id),
          or(isNull(certTargets.lastScanAt), lte(certTargets.lastScanAt, nowIso)),
        ),
        t.update(certMonitors, { lastScanTime: nowIso }, eq(certMonitors.id, monitor.id), or(isNull(certMonitors.lastScanTime), lte(certMonitors.lastScanTime, nowIso))),
      ]),
    { duplicate: alreadyAccepted(jobId) },
  );
  const scanId = inserted[0].id;
  await emitCollectionEvents(env, transitionOf(t.organizationId, monitor, target, previous, collected));
  await tellScanAccepted(
    env,
    t.db,
    {
      organizationId: t.organizationId,
      monitorId: monitor.id,
      targetId: target.id,
      hostname: monitor.cn,
      ipAddress: target.ipAddress,
      port: monitor.port,
      scanId,
      scannedAt: nowIso,
      hasError: a.event.has_error,
      certificate: a.event.certificate ? result.certificate : null,
      validation: result.validation,
      selfSigned: a.findings.selfSigned,
      event: a.event,
    },
    now,
  );
  return { accepted: true as const, job_id: job.id, scan_id: scanId, alerts_fired: await alertOn(env, t.organizationId, scanId, a) };
}

/** Sends the scan's event to the alert rules; the number of rules that fired. */
async function alertOn(env: Bindings, organizationId: number, scanId: number, a: ScanAnalysis): Promise<number> {
  try {
    return (await emitEvent(env, "cert-watcher", organizationId, a.event)).fired.length;
  } catch (err) {
    // The scan is stored; a failing alert pipeline must not make the agent resend it.
    logUnexpected(`cert-watcher: alert processing of scan ${scanId}`, err);
    return 0;
  }
}
