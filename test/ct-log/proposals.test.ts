// Accepting feed proposals (issue 12 item 7): an accepted `certs` proposal becomes a
// certificate monitor of the cert-watcher (hostname:443), within the tier's quota and
// linked to an existing monitor of the same hostname; a `dns` proposal becomes a watched
// domain of the DNS watcher, only for a caller who may create DNS watcher domains, and is
// audited as a DNS domain creation. The proposals are rows the ingest path writes (here
// inserted directly: the ingest path itself is covered by ingest-e2e and ingest-store).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { ctProposals } from "../../src/db/schema";
import { proposeCertMonitors } from "../../src/modules/ct-log/lifecycle-contract";
import { and, eq } from "drizzle-orm";
import { call, createToken, expectError, signup } from "../helpers";
import { uid } from "./ingest-helpers";

const db = createDb((env as any).DB);

async function propose(organizationId: number, filterId: number, kind: "dns" | "certs", hostnames: string[]): Promise<number[]> {
  const rows = await db
    .insert(ctProposals)
    .values(hostnames.map((hostname) => ({ organizationId, kind, hostname, filterId, sourceSha256: "ab".repeat(32), createdAt: new Date().toISOString() })))
    .returning({ id: ctProposals.id })
    .all();
  return rows.map((r) => r.id);
}

describe("CT feed proposals", () => {
  it("an accepted certs proposal becomes a certificate monitor; an existing one is linked; the quota holds under parallel accepts; dns proposals become watched domains", async () => {
    const id = uid();
    const org = await signup("Proposals");
    const other = await signup("Proposals other");
    const f = await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: `p${id}.example`, match_type: "wide", feed_certs_enabled: true, feed_dns_enabled: true } });
    expect(f.status).toBe(201);

    // One proposal: a monitor of the hostname on 443, with the proposal's provenance in its notes.
    const [first] = await propose(org.organizationId, f.body.id, "certs", [`www.p${id}.example`]);
    const a = await call("POST", `/api/ct-log/proposals/${first}/accept`, { token: org.session });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.cert_monitor_id).toEqual(expect.any(Number));
    const m = await call("GET", `/api/cert-watcher/monitors/${a.body.cert_monitor_id}`, { token: org.session });
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({ cn: `www.p${id}.example`, port: 443, enabled: true });
    const listed = await call("GET", "/api/ct-log/proposals?status=accepted", { token: org.session });
    expect(listed.body.proposals.map((p: any) => [p.id, p.cert_monitor_id])).toEqual([[first, a.body.cert_monitor_id]]);
    // Accepting again links the same monitor (no second one); another organization gets 404.
    expect((await call("POST", `/api/ct-log/proposals/${first}/accept`, { token: org.session })).body.cert_monitor_id).toBe(a.body.cert_monitor_id);
    await expectError(await call("POST", `/api/ct-log/proposals/${first}/accept`, { token: other.session }), 404, "not_found");

    // A monitor that already exists for a hostname is linked, not duplicated.
    const own = await call("POST", "/api/cert-watcher/monitors", { token: org.session, body: { cn: `api.p${id}.example` } });
    expect(own.status).toBe(201);
    const [existing] = await propose(org.organizationId, f.body.id, "certs", [`api.p${id}.example`]);
    expect((await call("POST", `/api/ct-log/proposals/${existing}/accept`, { token: org.session })).body.cert_monitor_id).toBe(own.body.id);

    // The free tier allows 10 monitors (2 exist): 12 proposals accepted at once create exactly 8; the rest are 403 and stay proposed.
    const many = await propose(org.organizationId, f.body.id, "certs", Array.from({ length: 12 }, (_, i) => `h${i}.p${id}.example`));
    const results = await Promise.all(many.map((pid) => call("POST", `/api/ct-log/proposals/${pid}/accept`, { token: org.session })));
    expect(results.map((r) => r.status).sort()).toEqual([...Array(8).fill(200), ...Array(4).fill(403)]);
    for (const r of results.filter((x) => x.status === 403)) expectError(r, 403, "quota_exceeded");
    expect((await call("GET", "/api/cert-watcher/monitors?limit=100", { token: org.session })).body.total).toBe(10);
    expect((await call("GET", "/api/ct-log/proposals?status=proposed&kind=certs", { token: org.session })).body.total).toBe(4);

    // A dns proposal is handed to the DNS watcher, by a caller who may create DNS watcher domains.
    const [dns, sub] = await propose(org.organizationId, f.body.id, "dns", [`mail.p${id}.example`, `www.mail.p${id}.example`]);
    const ctOnly = await createToken(org.session, ["ct-log:view_monitoring", "ct-log:update_monitoring", "dns-watcher:update_monitoring"]);
    const denied = await call("POST", `/api/ct-log/proposals/${dns}/accept`, { token: ctOnly.token });
    expectError(denied, 403, "forbidden");
    expect(denied.body.error.message).toMatch(/dns-watcher:create_monitoring/);
    // Nothing changed: the proposal is still proposed, no domain exists.
    expect((await call("GET", "/api/ct-log/proposals?status=proposed&kind=dns", { token: org.session })).body.total).toBe(2);
    expect((await call("GET", "/api/dns-watcher/domains?limit=100", { token: org.session })).body.total).toBe(0);

    const d = await call("POST", `/api/ct-log/proposals/${dns}/accept`, { token: org.session });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    expect(d.body.cert_monitor_id).toBeUndefined();
    expect(d.body.dns_domain_id).toEqual(expect.any(Number));
    const domain = await call("GET", `/api/dns-watcher/domains/${d.body.dns_domain_id}`, { token: org.session });
    expect(domain.status).toBe(200);
    expect(domain.body.domain_name).toBe(`mail.p${id}.example`);
    // A name inside that domain is added to it: the same domain id, no new domain.
    const inside = await call("POST", `/api/ct-log/proposals/${sub}/accept`, { token: org.session });
    expect(inside.status, JSON.stringify(inside.body)).toBe(200);
    expect(inside.body.dns_domain_id).toBe(d.body.dns_domain_id);
    expect((await call("GET", "/api/dns-watcher/domains?limit=100", { token: org.session })).body.total).toBe(1);
    // The audit log records the domain's creation as the DNS watcher's own endpoint would, once.
    const log = (await call("GET", "/api/admin/audit-logs?limit=100", { token: org.session })).body.audit_logs as any[];
    const created = log.filter((e) => e.action === "dns_domain.create");
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ user_id: org.userId, token_id: null, target_type: "dns_domain", target_id: String(d.body.dns_domain_id), client_ip: "192.0.2.1" });
    expect(log.filter((e) => e.action === "ct_proposal.accept" && [String(dns), String(sub)].includes(e.target_id))).toHaveLength(2);
    // The refused call left no audit entry.
    expect(log.filter((e) => e.token_id === ctOnly.id)).toHaveLength(0);
  }, 60_000);

  it("the inventory's certificate-monitor proposals of a busy batch are all written (one JSON parameter, not 7 bound values a name), once, and a dismissed one stays dismissed", async () => {
    const id = uid();
    const org = await signup("Proposals many");
    const f = await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: `q${id}.example`, match_type: "wide" } });
    expect(f.status).toBe(201);
    // 40 names: as VALUES rows these were 280 bound parameters, over D1's 100 per statement.
    const names = Array.from({ length: 40 }, (_, i) => `h${i}.q${id}.example`);
    const rows = names.map((hostname) => ({ organizationId: org.organizationId, hostname, filterId: f.body.id, sha256: "cd".repeat(32) }));
    await proposeCertMonitors(db, rows, new Date());
    const ofOrg = and(eq(ctProposals.organizationId, org.organizationId), eq(ctProposals.kind, "certs"));
    const stored = await db.select().from(ctProposals).where(ofOrg).all();
    expect(stored.map((r) => r.hostname).sort()).toEqual([...names].sort());
    expect(stored.every((r) => r.status === "proposed" && r.filterId === f.body.id && r.sourceSha256 === "cd".repeat(32))).toBe(true);

    await db.update(ctProposals).set({ status: "dismissed" }).where(and(ofOrg, eq(ctProposals.hostname, names[0]))).run();
    await proposeCertMonitors(db, rows, new Date());
    const again = await db.select().from(ctProposals).where(ofOrg).all();
    expect(again).toHaveLength(40);
    expect(again.find((r) => r.hostname === names[0])!.status).toBe("dismissed");
  });
});
