/**
 * The inventory's API reads (docs/modules/inventory.md): the hostname list (the rows
 * evaluated by lifecycle.ts, names due for review evaluated first), a hostname's detail
 * (evaluated at request time), one certificate. Every query of the organization's data
 * goes through its Tenant handle.
 */
import { and, asc, count, eq, inArray, or, sql, type SQL } from "drizzle-orm";
import type { Bindings } from "../../env";
import { inventoryCertificateNames, inventoryCertificates, inventoryDeployments, inventoryHostnames, inventoryTargets } from "../../db/schema";
import { notFound } from "../../platform/errors";
import { direction, pageOffset } from "../../platform/paging";
import type { Tenant } from "../../platform/tenant";
import { certProposals, dedupKeyOfFingerprint } from "../ct-log/lifecycle-contract";
import { refreshDue, refreshNames } from "./lifecycle";
import type { HOSTNAME_SORTS } from "./schema";
import { evaluateHostname, lifetimeOf, type HostnameEvaluation, type KnownCertificate } from "./state";
import { certificateOf, loadNames, type CertificateRow, type HostnameRow, type InventoryCertificate } from "./store";

/** Names due for review evaluated before a read answers (more wait for the scheduled job). */
const REVIEW_BEFORE_READ = 200;

const issuedView = (c: Pick<KnownCertificate, "sha256" | "servedSha256" | "issuer" | "notBefore" | "notAfter" | "spkiSha256">) => {
  const l = lifetimeOf(c);
  return {
    sha256: c.sha256,
    served_sha256: c.servedSha256,
    issuer: c.issuer,
    not_before: c.notBefore,
    not_after: c.notAfter,
    spki_sha256: c.spkiSha256,
    lifetime_days: l.lifetime_days,
    exceeds_max_validity: l.exceeds_max_validity,
    maximum_validity_days: l.maximum_validity_days,
    renewal_due_at: l.dueAt,
    renewal_overdue_at: l.overdueAt,
  };
};

function rowView(h: HostnameRow, latest: CertificateRow | null) {
  const never = h.evaluatedAt === "";
  return {
    hostname: h.hostname,
    state: h.state,
    state_reason: h.stateReason,
    state_since: never ? null : h.stateSince,
    previous_state: h.previousState ?? null,
    latest_issued: latest ? issuedView(certificateOf(latest)) : null,
    renewal: { status: h.renewalStatus as "ok", due_at: h.renewalDueAt, overdue_at: h.renewalOverdueAt },
    renewal_interval_days: h.renewalIntervalDays,
    target_count: h.targetCount,
    evaluated_at: never ? null : h.evaluatedAt,
    next_review_at: h.nextReviewAt || null,
  };
}

const SORT_COLUMNS: Record<(typeof HOSTNAME_SORTS)[number], SQL> = {
  hostname: sql`${inventoryHostnames.hostname}`,
  state: sql`${inventoryHostnames.state}`,
  not_after: sql`coalesce(${inventoryHostnames.latestNotAfter}, '9999')`,
  renewal_due_at: sql`coalesce(${inventoryHostnames.renewalDueAt}, '9999')`,
};

export async function listHostnames(
  env: Bindings,
  t: Tenant,
  q: { page: number; page_size: number; state?: HostnameRow["state"]; readiness?: "ready" | "not_ready" | "unknown"; q?: string; sort_by: (typeof HOSTNAME_SORTS)[number]; sort_order: "asc" | "desc" },
  now: Date,
) {
  await refreshDue(env, t.db, t.organizationId, now, REVIEW_BEFORE_READ);
  const dir = direction(q.sort_order);
  const needle = q.q?.toLowerCase();
  const where = t.where(
    inventoryHostnames,
    q.state ? eq(inventoryHostnames.state, q.state) : undefined,
    q.readiness ? eq(inventoryHostnames.readiness, q.readiness) : undefined,
    needle ? sql`instr(${inventoryHostnames.hostname}, ${needle}) > 0` : undefined,
  );
  const [rows, total, counts] = await Promise.all([
    t.db
      .select({ h: inventoryHostnames, latest: inventoryCertificates })
      .from(inventoryHostnames)
      .leftJoin(inventoryCertificates, eq(inventoryCertificates.id, inventoryHostnames.latestCertificateId))
      .where(where)
      // By name alone when sorting by name: a repeated ORDER BY term keeps SQLite from
      // seeing that the (organization, state, hostname) index gives the order, and it then
      // reads every name of the organization in name order to find one state's first page
      // (bench/inventory.ts, docs/modules/inventory.md).
      .orderBy(...(q.sort_by === "hostname" ? [dir(inventoryHostnames.hostname)] : [dir(SORT_COLUMNS[q.sort_by]), dir(inventoryHostnames.hostname)]))
      .limit(q.page_size)
      .offset(pageOffset(q))
      .all(),
    t.db.select({ n: count() }).from(inventoryHostnames).where(where).get(),
    t.db.select({ state: inventoryHostnames.state, n: count() }).from(inventoryHostnames).where(t.where(inventoryHostnames)).groupBy(inventoryHostnames.state).all(),
  ]);
  return {
    hostnames: rows.map((r) => ({ ...rowView(r.h, r.latest), readiness: { status: r.h.readiness, matters_from: r.h.readinessFrom } })),
    total: total?.n ?? 0,
    page: q.page,
    page_size: q.page_size,
    sort_by: q.sort_by,
    sort_order: q.sort_order,
    state_counts: Object.fromEntries(counts.map((c) => [c.state, c.n])),
  };
}

/** Lower-cased, trailing dot dropped: names are stored so. */
const canonical = (hostname: string) => hostname.trim().toLowerCase().replace(/\.$/, "");

export async function hostnameDetail(env: Bindings, t: Tenant, rawHostname: string, now: Date) {
  const hostname = canonical(rawHostname);
  const stored = await t.first(inventoryHostnames, eq(inventoryHostnames.hostname, hostname));
  if (!stored) throw notFound("Hostname");
  const ref = { organizationId: t.organizationId, hostname };
  let evaluation: HostnameEvaluation;
  let row: HostnameRow = stored;
  let loaded;
  if (stored.nextReviewAt !== null && stored.nextReviewAt <= now.toISOString()) {
    const refreshed = (await refreshNames(env, t.db, [ref], now)).get(`${ref.organizationId}:${ref.hostname}`);
    if (!refreshed) throw notFound("Hostname");
    ({ evaluation, loaded } = refreshed);
    row = { ...refreshed.row, id: stored.id };
  } else {
    loaded = (await loadNames(t.db, [ref])).get(`${ref.organizationId}:${ref.hostname}`)!;
    evaluation = evaluateHostname(loaded.inputs, now);
  }
  const certs = loaded.inputs.certificates as InventoryCertificate[];
  const ids = certs.map((c) => c.id);
  const [deployments, proposals] = await Promise.all([
    ids.length
      ? t.db
          .select()
          .from(inventoryDeployments)
          .where(t.where(inventoryDeployments, inArray(inventoryDeployments.certificateId, ids)))
          .orderBy(asc(inventoryDeployments.firstSeenAt))
          .all()
      : Promise.resolve([]),
    certProposals(t.db, t.organizationId, [hostname]),
  ]);
  const timeline = [...certs]
    .sort((a, b) => (a.notBefore < b.notBefore ? 1 : a.notBefore > b.notBefore ? -1 : b.id - a.id))
    .map((c) => {
      const mine = deployments.filter((d) => d.certificateId === c.id);
      return {
        ...issuedView(c),
        first_seen_ct_at: c.firstSeenCtAt,
        first_deployed_at: mine[0]?.firstSeenAt ?? null,
        last_deployed_at: mine.length ? mine.map((d) => d.lastSeenAt).sort().at(-1)! : null,
        deployments: mine.map((d) => ({ address: `${d.ipAddress}:${d.port}`, target_id: d.targetId, first_seen_at: d.firstSeenAt, last_seen_at: d.lastSeenAt })),
        authorization: c.authorization ?? null,
      };
    });
  const proposal = proposals.get(hostname);
  return {
    ...rowView(row, null),
    latest_issued: evaluation.latestIssued ? issuedView(evaluation.latestIssued) : null,
    state: evaluation.state,
    state_reason: evaluation.reason,
    renewal: { status: evaluation.renewal.status, due_at: evaluation.renewal.dueAt, overdue_at: evaluation.renewal.overdueAt },
    renewal_interval_days: evaluation.renewalIntervalDays,
    readiness: evaluation.readiness,
    deployed: evaluation.targets.map((x) => ({
      target_id: x.targetId,
      monitor_id: x.monitorId,
      address: x.address,
      standing: x.standing,
      note: x.note,
      ct_status: x.ctStatus,
      ct_reason: x.ctReason,
      trust: x.trust,
      scanned_at: x.scannedAt,
      certificate: x.certificate
        ? { sha256: x.certificate.sha256, served_sha256: x.certificate.servedSha256, issuer: x.certificate.issuer, not_before: x.certificate.notBefore, not_after: x.certificate.notAfter, in_ct: x.certificate.firstSeenCtAt !== null }
        : null,
    })),
    timeline,
    watched_since: loaded.inputs.watchedSince,
    filters: loaded.filters.map((f) => ({ id: f.id, pattern: f.pattern })),
    proposal: proposal ? { id: proposal.id, status: proposal.status, cert_monitor_id: proposal.certMonitorId } : null,
  };
}

/** One certificate by the fingerprint of any of its forms: its CT entries (precertificate or certificate) or the certificate served. */
export async function certificateDetail(t: Tenant, sha256: string) {
  const fp = sha256.toLowerCase();
  let c = await t.first(inventoryCertificates, or(eq(inventoryCertificates.sha256, fp), eq(inventoryCertificates.servedSha256, fp)));
  if (!c) {
    // Another log entry of a CT match (the final certificate of a precertificate, or the reverse).
    const dedupKey = await dedupKeyOfFingerprint(t.db, t.organizationId, fp);
    if (dedupKey) c = await t.first(inventoryCertificates, eq(inventoryCertificates.dedupKey, dedupKey));
  }
  if (!c) throw notFound("Certificate");
  const [deployments, current, names] = await Promise.all([
    t.db.select().from(inventoryDeployments).where(t.where(inventoryDeployments, eq(inventoryDeployments.certificateId, c.id))).orderBy(asc(inventoryDeployments.firstSeenAt)).all(),
    t.db.select({ targetId: inventoryTargets.targetId }).from(inventoryTargets).where(t.where(inventoryTargets, eq(inventoryTargets.certificateId, c.id))).all(),
    t.db
      .select({ hostname: inventoryCertificateNames.hostname, state: inventoryHostnames.state })
      .from(inventoryCertificateNames)
      .leftJoin(inventoryHostnames, and(eq(inventoryHostnames.organizationId, inventoryCertificateNames.organizationId), eq(inventoryHostnames.hostname, inventoryCertificateNames.hostname)))
      .where(t.where(inventoryCertificateNames, eq(inventoryCertificateNames.certificateId, c.id)))
      .orderBy(asc(inventoryCertificateNames.hostname))
      .all(),
  ]);
  const serving = new Set(current.map((x) => x.targetId));
  const l = lifetimeOf(c);
  return {
    sha256: c.sha256,
    served_sha256: c.servedSha256,
    names: c.names,
    subject: c.subject,
    issuer: c.issuer,
    serial: c.serial,
    spki_sha256: c.spkiSha256,
    issuer_spki_sha256: c.issuerSpkiSha256,
    not_before: c.notBefore,
    not_after: c.notAfter,
    lifetime_days: l.lifetime_days,
    exceeds_max_validity: l.exceeds_max_validity,
    maximum_validity_days: l.maximum_validity_days,
    renewal_due_at: l.dueAt,
    renewal_overdue_at: l.overdueAt,
    first_seen_ct_at: c.firstSeenCtAt,
    ct_match_sha256: c.ctMatchSha256,
    filters: c.filters,
    authorization: c.authorization ?? null,
    deployed: deployments.map((d) => ({
      target_id: d.targetId,
      monitor_id: d.monitorId,
      hostname: d.hostname,
      address: `${d.ipAddress}:${d.port}`,
      first_seen_at: d.firstSeenAt,
      last_seen_at: d.lastSeenAt,
      current: serving.has(d.targetId),
    })),
    hostnames: names.map((n) => ({ hostname: n.hostname, state: n.state ?? null })),
  };
}

