/**
 * Filter-feed proposals: a filter with a feed enabled proposes the hostnames of its
 * matches; an accepted certificate proposal becomes a certificate monitor, an accepted
 * DNS proposal a watched domain of the DNS watcher.
 */
import { desc, eq } from "drizzle-orm";
import { certMonitors, ctProposals } from "../../db/schema";
import { ApiError, forbidden } from "../../platform/errors";
import { pageOffset, readPage } from "../../platform/paging";
import type { Tenant } from "../../platform/tenant";
import { createMonitor } from "../cert-watcher/contract";
import { watchProposedName } from "../dns-watcher/contract";

export async function listProposals(t: Tenant, q: { page: number; page_size: number; status?: "proposed" | "accepted" | "dismissed"; kind?: "dns" | "certs" }) {
  const conds = [q.status ? eq(ctProposals.status, q.status) : undefined, q.kind ? eq(ctProposals.kind, q.kind) : undefined];
  const { rows, total } = await readPage(
    t
      .select(ctProposals, ...conds)
      .orderBy(desc(ctProposals.createdAt), desc(ctProposals.id))
      .limit(q.page_size)
      .offset(pageOffset(q)),
    t.countQuery(ctProposals, ...conds),
  );
  return {
    proposals: rows.map((p) => ({
      id: p.id,
      kind: p.kind,
      hostname: p.hostname,
      filter_id: p.filterId,
      source_sha256: p.sourceSha256,
      status: p.status,
      cert_monitor_id: p.certMonitorId,
      created_at: p.createdAt,
      decided_at: p.decidedAt,
    })),
    total,
    page: q.page,
    page_size: q.page_size,
  };
}

/** What the caller may do beyond accepting a proposal (ct-log:update_monitoring). */
export interface ProposalGrants {
  /** dns-watcher:create_monitoring: a `dns` proposal may create a watched DNS domain. */
  createDnsDomains: boolean;
}

/**
 * Accepting a `certs` proposal creates a certificate monitor for the hostname on port
 * 443 (within the tier's cert_monitors quota: 403 otherwise, and the proposal stays
 * proposed); a monitor that already exists for it is linked instead. A `dns` proposal
 * becomes a watched record set (or domain) of the DNS watcher (quota `dns_domains`);
 * it needs dns-watcher:create_monitoring (403 otherwise, nothing changed).
 * `createdDnsDomainId`: the DNS domain this call created (its creation is audited as
 * such by the route), null when none was.
 */
export async function acceptProposal(t: Tenant, proposalId: number, now: Date, grants: ProposalGrants) {
  const p = await t.getOr404(ctProposals, proposalId, "Proposal");
  if (p.kind === "dns") {
    if (!grants.createDnsDomains) throw forbidden("Accepting a dns proposal creates DNS watcher domains: it requires dns-watcher:create_monitoring");
    // It may be over quota (403): the proposal then stays proposed.
    const watched = await watchProposedName(t, p.hostname, now);
    await t.update(ctProposals, { status: "accepted", decidedAt: now.toISOString() }, eq(ctProposals.id, p.id)).run();
    return {
      body: { message: `Proposal accepted: ${watched.message}`, dns_domain_id: watched.domain_id },
      createdDnsDomainId: watched.created ? watched.domain_id : null,
    };
  }
  const monitorId = p.certMonitorId ?? (await monitorFor(t, p, now));
  await t.update(ctProposals, { status: "accepted", decidedAt: now.toISOString(), certMonitorId: monitorId }, eq(ctProposals.id, p.id)).run();
  return {
    body: { message: `Proposal accepted: certificate monitor ${monitorId} watches ${p.hostname}:443`, cert_monitor_id: monitorId },
    createdDnsDomainId: null,
  };
}

/** The organization's certificate monitor of the proposal's hostname on 443: the existing one, or a new one (quota: 403). */
async function monitorFor(t: Tenant, p: typeof ctProposals.$inferSelect, now: Date): Promise<number> {
  const existing = async () => (await t.first(certMonitors, eq(certMonitors.cn, p.hostname), eq(certMonitors.port, 443), eq(certMonitors.targetDns, "")))?.id;
  const found = await existing();
  if (found !== undefined) return found;
  try {
    const created = await createMonitor(
      t,
      { cn: p.hostname, port: 443, enabled: true, notes: `Proposed by CT filter ${p.filterId} (certificate ${p.sourceSha256})`, starttls: "auto", ip_addresses: [] },
      now,
    );
    return created.id;
  } catch (err) {
    // Created meanwhile by someone else: link that one.
    if (!(err instanceof ApiError && err.code === "conflict")) throw err;
    const meanwhile = await existing();
    if (meanwhile === undefined) throw err;
    return meanwhile;
  }
}

export async function dismissProposal(t: Tenant, proposalId: number, now: Date) {
  const p = await t.getOr404(ctProposals, proposalId, "Proposal");
  await t.update(ctProposals, { status: "dismissed", decidedAt: now.toISOString() }, eq(ctProposals.id, p.id)).run();
  return { message: "Proposal dismissed" };
}
