// Scanner agents and the scan pipeline: registration/list/revoke, the scheduled job
// creating scan jobs, lease (own organization, expiry), idempotent results, indicators
// from real scanner-node results, history with framework verdicts, alerts.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { LeafCertificate, ScanResult, storedForm } from "@trust-plane/scan-contract";
import { LEASE_SECONDS } from "../../src/modules/cert-watcher/agents";
import { call, expectError } from "../helpers";
import { agentCall, createMonitor, fireCron, newOrg, registerAgent, result, scanOnce } from "./helpers";

const M = "/api/cert-watcher/monitors";

async function jobsOf(organizationId: number) {
  const r = await (env as any).DB.prepare("SELECT target_id, status, attempts FROM cert_scan_jobs WHERE organization_id = ? ORDER BY id").bind(organizationId).all();
  return r.results as { target_id: number; status: string; attempts: number }[];
}

describe("scanner agents", () => {
  it("registers with a token shown once, lists without it, revokes at once", async () => {
    const org = await newOrg();
    const reg = await call("POST", "/api/cert-watcher/agents", { token: org.session, body: { name: "dmz-1" } });
    expect(reg.status).toBe(201);
    expect(reg.body).toMatchObject({ id: expect.any(Number), name: "dmz-1", status: "active", revoked_at: null });
    expect(reg.body.token).toMatch(/^tpa_[0-9A-Za-z]{38}$/);
    expect(reg.body.token_prefix).toBe(reg.body.token.slice(0, 12));
    expectError(await call("POST", "/api/cert-watcher/agents", { token: org.session, body: { name: "" } }), 400, "validation_error");

    const list = await call("GET", "/api/cert-watcher/agents", { token: org.session });
    expect(list.body.agents).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(reg.body.token);

    expect((await agentCall("lease", reg.body.token, { max_jobs: 5 })).status).toBe(200);
    expect((await call("GET", "/api/cert-watcher/agents", { token: org.session })).body.agents[0].last_seen_at).not.toBeNull();

    // Another organization cannot see or revoke it.
    const other = await newOrg();
    expect((await call("GET", "/api/cert-watcher/agents", { token: other.session })).body.agents).toEqual([]);
    expectError(await call("DELETE", `/api/cert-watcher/agents/${reg.body.id}`, { token: other.session }), 404, "not_found");

    expect((await call("DELETE", `/api/cert-watcher/agents/${reg.body.id}`, { token: org.session })).status).toBe(200);
    expectError(await agentCall("lease", reg.body.token, { max_jobs: 5 }), 401, "unauthorized");
    expectError(await agentCall("results", reg.body.token, { job_id: 1, result: { has_error: true } }), 401, "unauthorized");
    const after = (await call("GET", "/api/cert-watcher/agents", { token: org.session })).body.agents[0];
    expect(after.status).toBe("revoked");
    expect(after.revoked_at).not.toBeNull();
    expect((await call("DELETE", `/api/cert-watcher/agents/${reg.body.id}`, { token: org.session })).status).toBe(200);
  });

  it("agent endpoints accept agent tokens only (401 before any body validation)", async () => {
    const org = await newOrg();
    expectError(await agentCall("lease", undefined, { max_jobs: 1 }), 401, "unauthorized");
    expectError(await agentCall("lease", org.session, { max_jobs: 1 }), 401, "unauthorized");
    expectError(await agentCall("lease", "tpa_" + "A".repeat(38), { max_jobs: 1 }), 401, "unauthorized");
    expectError(await agentCall("results", org.session, { nonsense: true }), 401, "unauthorized");
    const agent = await registerAgent(org.session);
    expectError(await agentCall("lease", agent.token, { max_jobs: 0 }), 400, "validation_error");
    expectError(await agentCall("results", agent.token, { job_id: 1, result: { has_error: "yes" } }), 400, "validation_error");
    expectError(await agentCall("results", agent.token, { job_id: 999999, result: { has_error: true } }), 404, "not_found");
  });
});

describe("scan scheduling and leasing", () => {
  it("the Cron Trigger creates one job per due target, never two open ones, and again after the interval", async () => {
    const org = await newOrg();
    const id = await createMonitor(org.session, { cn: "sched.example.com", ip_addresses: ["192.0.2.1", "192.0.2.2", "192.0.2.3"] });
    const targets = (await call("GET", `${M}/${id}`, { token: org.session })).body.targets;
    await call("PATCH", `${M}/${id}/targets/${targets[2].id}`, { token: org.session, body: { enabled: false } });
    await createMonitor(org.session, { cn: "paused.example.com", enabled: false, ip_addresses: ["192.0.2.9"] });
    expect(await jobsOf(org.organizationId)).toEqual([]);

    await fireCron();
    expect((await jobsOf(org.organizationId)).map((j) => [j.target_id, j.status])).toEqual([[targets[0].id, "pending"], [targets[1].id, "pending"]]);
    await fireCron();
    expect(await jobsOf(org.organizationId)).toHaveLength(2);

    const agent = await registerAgent(org.session);
    const { posted } = await scanOnce(agent.token, { "192.0.2.1": result("ecdsaTrusted", { daysLeft: 100 }), "192.0.2.2": result("refused") });
    expect(posted).toHaveLength(2);
    expect((await jobsOf(org.organizationId)).every((j) => j.status === "done")).toBe(true);

    // Within SCAN_INTERVAL_SECONDS (3600 in wrangler.toml): nothing new; after it: due again.
    await fireCron(new Date(Date.now() + 30 * 60_000));
    expect(await jobsOf(org.organizationId)).toHaveLength(2);
    await fireCron(new Date(Date.now() + 2 * 3600_000));
    const jobs = await jobsOf(org.organizationId);
    expect(jobs.filter((j) => j.status === "pending").map((j) => j.target_id)).toEqual([targets[0].id, targets[1].id]);
  });

  it("SCAN_INTERVAL_SECONDS=0 makes every target without an open job due at every run", async () => {
    const org = await newOrg();
    await createMonitor(org.session, { cn: "zero.example.com", ip_addresses: ["192.0.2.50"] });
    const agent = await registerAgent(org.session);
    await scanOnce(agent.token, { "192.0.2.50": result("rsaSelfSigned", { daysLeft: 50 }) });
    await fireCron(new Date(), { SCAN_INTERVAL_SECONDS: "0" });
    expect((await jobsOf(org.organizationId)).map((j) => j.status)).toEqual(["done", "pending"]);
  });

  it("agents lease their own organization's jobs only, with the job's connection details", async () => {
    const a = await newOrg();
    const b = await newOrg();
    const ma = await createMonitor(a.session, { cn: "a.example.com", port: 8443, target_dns: "sni-a.example.com", ip_addresses: ["192.0.2.11"] });
    await createMonitor(b.session, { cn: "b.example.com", ip_addresses: ["192.0.2.12"] });
    await fireCron();
    const agentA = await registerAgent(a.session);
    const agentB = await registerAgent(b.session);
    const la = await agentCall("lease", agentA.token, { max_jobs: 10 });
    expect(la.body.lease_seconds).toBe(LEASE_SECONDS);
    expect(la.body.jobs).toEqual([
      { job_id: expect.any(Number), monitor_id: ma, target_id: expect.any(Number), monitor_cn: "a.example.com", ip_address: "192.0.2.11", port: 8443, sni: "sni-a.example.com", starttls: null, root_ca: null, attempt: 1 },
    ]);
    const lb = await agentCall("lease", agentB.token, { max_jobs: 10 });
    expect(lb.body.jobs.map((j: any) => j.ip_address)).toEqual(["192.0.2.12"]);
    // A result for another organization's job: 404, and it stays open.
    expectError(await agentCall("results", agentA.token, { job_id: lb.body.jobs[0].job_id, result: result("refused") }), 404, "not_found");
    expect((await jobsOf(b.organizationId))[0].status).toBe("leased");
  });

  it("a leased job is not handed out twice until its lease expires (moved clock), then it is re-leased", async () => {
    const org = await newOrg();
    await createMonitor(org.session, { cn: "lease.example.com", ip_addresses: ["192.0.2.21", "192.0.2.22"] });
    await fireCron();
    const crashed = await registerAgent(org.session, "crashed");
    const second = await registerAgent(org.session, "second");
    const first = await agentCall("lease", crashed.token, { max_jobs: 1 });
    expect(first.body.jobs).toHaveLength(1);
    const rest = await agentCall("lease", second.token, { max_jobs: 10 });
    expect(rest.body.jobs.map((j: any) => j.job_id)).not.toContain(first.body.jobs[0].job_id);
    expect((await agentCall("lease", second.token, { max_jobs: 10 })).body.jobs).toEqual([]);

    // The request clock moves past the lease (X-Trust-Plane-Now, test configuration only).
    const at = (seconds: number) => ({ "x-trust-plane-now": new Date(Date.now() + seconds * 1000).toISOString() });
    const early = await agentCall("lease", second.token, { max_jobs: 10 }, at(LEASE_SECONDS - 30));
    expect(early.body.jobs).toEqual([]);
    const late = (await agentCall("lease", second.token, { max_jobs: 10 }, at(LEASE_SECONDS + 30))).body;
    expect(late.jobs.map((j: any) => [j.job_id, j.attempt]).sort()).toEqual(
      [[first.body.jobs[0].job_id, 2], [rest.body.jobs[0].job_id, 2]].sort(),
    );
    // Revoking an agent releases its leases at once.
    const third = await registerAgent(org.session, "third");
    await fireCron(); // nothing new: both jobs still open
    expect(await jobsOf(org.organizationId)).toHaveLength(2);
    await call("DELETE", `/api/cert-watcher/agents/${second.id}`, { token: org.session });
    expect((await agentCall("lease", third.token, { max_jobs: 10 })).body.jobs).toHaveLength(2);
  });

  it("a result is accepted once per job: the second post is 409 and changes nothing", async () => {
    const org = await newOrg();
    const id = await createMonitor(org.session, { cn: "idem.example.com", ip_addresses: ["192.0.2.31"] });
    await fireCron();
    const agent = await registerAgent(org.session);
    const job = (await agentCall("lease", agent.token, { max_jobs: 1 })).body.jobs[0];
    const ok = await agentCall("results", agent.token, { job_id: job.job_id, result: result("ecdsaTrusted", { daysLeft: 120 }) });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ accepted: true, job_id: job.job_id, scan_id: expect.any(Number) });
    const again = await agentCall("results", agent.token, { job_id: String(job.job_id), result: result("refused") });
    expectError(again, 409, "conflict");
    const h = await call("GET", `/api/cert-watcher/history/${id}`, { token: org.session });
    expect(h.body.total).toBe(1);
    expect(h.body.scans[0].has_error).toBe(false);
    // The details as documented (CertScan): the leaf, chain and validation in the contract's stored form.
    expect(storedForm(LeafCertificate).parse(h.body.scans[0].certificate).subject).not.toBe("");
    expect(storedForm(ScanResult).pick({ intermediates: true, validation_path: true, validation: true, protocols_detail: true }).safeParse(h.body.scans[0]).success).toBe(true);
    // A result stored before the contract had a field reads as if the agent had left it out, so it still is the documented form.
    await ((env as any).DB as D1Database)
      .prepare("UPDATE cert_scans SET result = json_remove(result, '$.certificate.spki_sha256', '$.certificate.der', '$.validation.anchor') WHERE organization_id = ?")
      .bind(org.organizationId)
      .run();
    const old = (await call("GET", `/api/cert-watcher/history/${id}`, { token: org.session })).body.scans[0];
    expect(old.certificate).toMatchObject({ spki_sha256: null, der: null, subject: h.body.scans[0].certificate.subject });
    expect(old.validation).toMatchObject({ anchor: null });
    expect(storedForm(LeafCertificate).safeParse(old.certificate).success).toBe(true);
    // Concurrent duplicates: exactly one wins.
    await fireCron(new Date(), { SCAN_INTERVAL_SECONDS: "0" });
    const job2 = (await agentCall("lease", agent.token, { max_jobs: 1 })).body.jobs[0];
    const both = await Promise.all([1, 2].map(() => agentCall("results", agent.token, { job_id: job2.job_id, result: result("refused") })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await call("GET", `/api/cert-watcher/history/${id}`, { token: org.session })).body.total).toBe(2);
  });
});

describe("indicators, recent scans and history from real scanner results", () => {
  it("valid, expired, expiring self-signed, legacy + weak, failed, mixed", async () => {
    const org = await newOrg();
    const t = org.session;
    const mon = {
      valid: await createMonitor(t, { cn: "valid.example.test", ip_addresses: ["192.0.2.101"] }),
      expired: await createMonitor(t, { cn: "expired.example.test", ip_addresses: ["192.0.2.102"] }),
      selfSigned: await createMonitor(t, { cn: "self.example.test", ip_addresses: ["192.0.2.103"] }),
      legacy: await createMonitor(t, { cn: "legacy.example.test", ip_addresses: ["192.0.2.104"] }),
      failed: await createMonitor(t, { cn: "failed.example.test", ip_addresses: ["192.0.2.105"] }),
      mixed: await createMonitor(t, { cn: "mixed.example.test", ip_addresses: ["192.0.2.106", "192.0.2.107"] }),
    };
    const agent = await registerAgent(t);
    await scanOnce(agent.token, {
      "192.0.2.101": result("ecdsaIntermediate", { daysLeft: 150 }),
      "192.0.2.102": result("ecdsaTrusted", { daysLeft: -3 }),
      "192.0.2.103": result("rsaSelfSigned", { daysLeft: 10 }),
      "192.0.2.104": result("legacyWeak", { daysLeft: 60 }),
      "192.0.2.105": result("refused"),
      "192.0.2.106": result("ecdsaTrusted", { daysLeft: 80 }),
      "192.0.2.107": result("refused"),
    });
    const ind = async (id: number) => (await call("GET", `${M}/${id}`, { token: t })).body.indicators;
    expect(await ind(mon.valid)).toEqual({ validity_status: "valid", protocol_status: "modern", cipher_status: "strong", validation_status: "trusted", error_count: 0, target_count: 1, min_days_left: 150 });
    // OpenSSL's default suites (CBC ones among them) are outside Mozilla's intermediate profile: legacy.
    expect(await ind(mon.expired)).toMatchObject({ validity_status: "expired", min_days_left: -3, error_count: 0, cipher_status: "legacy" });
    expect(await ind(mon.selfSigned)).toMatchObject({ validity_status: "expiring_soon", validation_status: "self_signed", protocol_status: "modern", min_days_left: 10 });
    expect(await ind(mon.legacy)).toMatchObject({ validity_status: "valid", protocol_status: "legacy", cipher_status: "weak", validation_status: "self_signed" });
    expect(await ind(mon.failed)).toEqual({ validity_status: "unknown", protocol_status: "unknown", cipher_status: "unknown", validation_status: "unknown", error_count: 1, target_count: 1, min_days_left: null });
    expect(await ind(mon.mixed)).toMatchObject({ validity_status: "valid", validation_status: "trusted", error_count: 1, target_count: 2, min_days_left: 80 });

    const detail = (await call("GET", `${M}/${mon.mixed}`, { token: t })).body;
    expect(detail.last_scan.scan_time).not.toBeNull();
    expect(detail.last_scan.targets.map((s: any) => [s.ip_address, s.has_error])).toEqual([["192.0.2.106", false], ["192.0.2.107", true]]);
    expect(detail.targets[1].last_scan.error).toMatch(/ECONNREFUSED/);

    // The monitor list carries the same indicators; sort by last_scan_time works with scans.
    const list = (await call("GET", `${M}?sort_by=cn&limit=100`, { token: t })).body;
    expect(list.monitors.find((m: any) => m.id === mon.legacy).indicators.protocol_status).toBe("legacy");

    // Recent scans: one per target; sorts by validity (soonest expiry first) and statuses (worst first).
    const rs = async (q: string) => (await call("GET", `/api/cert-watcher/recent-scans?${q}`, { token: t })).body;
    const all = await rs("limit=100");
    expect(all.total).toBe(7);
    expect((await rs("sort_by=validity&sort_order=asc&limit=3")).scans.map((s: any) => s.cn)).toEqual(["expired.example.test", "self.example.test", "legacy.example.test"]);
    expect((await rs("sort_by=protocol&sort_order=asc&limit=1")).scans[0].cn).toBe("legacy.example.test");
    expect((await rs("sort_by=cipher&sort_order=asc&limit=1")).scans[0].cipher_status).toBe("weak");
    expect((await rs("sort_by=validation&sort_order=asc&limit=2")).scans.map((s: any) => s.validation_status)).toEqual(["self_signed", "self_signed"]);
    expect((await rs("sort_by=cn&sort_order=desc&limit=1")).scans[0].cn).toBe("valid.example.test");
    expect((await rs("limit=2&offset=6")).scans).toHaveLength(1);

    // History: the five verdicts re-evaluated by the Worker, findings for the weekly audit.
    const forged = result("legacyWeak", { daysLeft: 60 });
    forged.frameworks = forged.frameworks.map((f: any) => ({ ...f, status: "pass", compliant: true, reasons: [] }));
    await fireCron(new Date(), { SCAN_INTERVAL_SECONDS: "0" });
    await scanOnce(agent.token, { "192.0.2.104": forged });
    const h = (await call("GET", `/api/cert-watcher/history/${mon.legacy}?page_size=1`, { token: t })).body;
    expect(h).toMatchObject({ total: 2, page: 1, page_size: 1 });
    const scan = h.scans[0];
    expect(scan).toMatchObject({
      protocol: ["TLSv1.0"], ciphers: ["TLS_RSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_NULL_SHA", "TLS_ECDH_anon_WITH_AES_128_CBC_SHA"],
      protocol_status: "legacy", cipher_status: "weak", validation_status: "self_signed",
      findings: { expired: false, scan_failed: false, legacy_protocol: true, weak_cipher: true, self_signed: true },
      compliance: { "fips-140": "fail", "nist-sp-800-52r2": "fail", "pci-dss-4.0.1": "fail", "mozilla-intermediate": "fail", "mozilla-modern": "fail" },
      certificate: { subject: "CN=localhost", issuer: "CN=localhost" },
    });
    expect(scan.frameworks).toHaveLength(5);
    expect(scan.frameworks.find((f: any) => f.id === "pci-dss-4.0.1").reasons.some((r: any) => r.item === "TLSv1.0")).toBe(true);
    expect(scan.weak_suites.map((w: any) => w.weaknesses[0]).sort()).toEqual(["NULL", "anon"]);
    expect(scan.legacy_suites).toEqual([{ code: 0x002f, name: "TLS_RSA_WITH_AES_128_CBC_SHA", weaknesses: ["CBC", "no_forward_secrecy"] }]);
    const page2 = (await call("GET", `/api/cert-watcher/history/${mon.legacy}?page=2&page_size=1`, { token: t })).body;
    expect(page2.scans[0].id).toBeLessThan(scan.id);
    const trusted = (await call("GET", `/api/cert-watcher/history/${mon.valid}`, { token: t })).body.scans[0];
    expect(trusted.compliance["pci-dss-4.0.1"]).toBe("pass");
    expect(trusted.certificate).toMatchObject({ public_key_algorithm: "ECDSA", ocsp: "http://ocsp.scan.test" });
    expect(trusted).toMatchObject({ cipher_status: "strong", weak_suites: [], legacy_suites: [], compliance: { "mozilla-intermediate": "pass" } });

    // The weekly audit's findings are plain columns.
    const findings = await (env as any).DB.prepare(
      "SELECT SUM(expired) AS expired, SUM(has_error) AS failed, SUM(legacy_protocol) AS legacy, SUM(weak_cipher) AS weak, SUM(self_signed) AS self FROM cert_scans WHERE organization_id = ?",
    ).bind(org.organizationId).first();
    expect(findings).toEqual({ expired: 1, failed: 2, legacy: 2, weak: 2, self: 3 });

    // Deleting a monitor removes its history.
    await call("DELETE", `${M}/${mon.legacy}`, { token: t });
    const left = await (env as any).DB.prepare("SELECT COUNT(*) AS n FROM cert_scans WHERE monitor_id = ?").bind(mon.legacy).first();
    expect(left.n).toBe(0);
  });

  it("scans stored before the one judgement said 'strong' for legacy suites: the migration reads their own reference verdict", async () => {
    const org = await newOrg();
    const t = org.session;
    const legacy = await createMonitor(t, { cn: "old-legacy.example.test", ip_addresses: ["192.0.2.111"] });
    const strong = await createMonitor(t, { cn: "old-strong.example.test", ip_addresses: ["192.0.2.112"] });
    const agent = await registerAgent(t);
    await scanOnce(agent.token, { "192.0.2.111": result("ecdsaTrusted", { daysLeft: 90 }), "192.0.2.112": result("ecdsaIntermediate", { daysLeft: 90 }) });
    const db = (env as any).DB as D1Database;
    // As the earlier rule stored them: no broken suite, so "strong".
    await db.prepare("UPDATE cert_scans SET cipher_status = 'strong' WHERE organization_id = ?").bind(org.organizationId).run();
    const migration = ((env as any).TEST_MIGRATIONS as { name: string; queries: string[] }[]).find((m) => m.name.includes("cipher_status_from_reference_profile"))!;
    for (const q of migration.queries) await db.prepare(q).run();
    const ind = async (id: number) => (await call("GET", `${M}/${id}`, { token: t })).body.indicators.cipher_status;
    expect([await ind(legacy), await ind(strong)]).toEqual(["legacy", "strong"]);
  });

  it("the scan event reaches the alert rules (alert history)", async () => {
    const org = await newOrg();
    const t = org.session;
    const rule = await call("POST", "/api/cert-watcher/alert-rules", {
      token: t,
      body: { name: "legacy TLS", expression: 'protocol.exists(p, p == "TLSv1.0") && monitor_cn == "alert.example.test" && certificate.subject == "CN=localhost"', severity: "high" },
    });
    expect(rule.status).toBe(201);
    const expiring = await call("POST", "/api/cert-watcher/alert-rules", { token: t, body: { name: "expiring", expression: "validity_days < 30", severity: "medium" } });
    expect(expiring.status).toBe(201);
    await createMonitor(t, { cn: "alert.example.test", ip_addresses: ["192.0.2.201", "192.0.2.202"] });
    const agent = await registerAgent(t);
    const { posted, jobs } = await scanOnce(agent.token, { "192.0.2.201": result("legacyWeak", { daysLeft: 90 }), "192.0.2.202": result("refused") });
    expect(jobs).toHaveLength(2);
    expect(posted.map((p) => p.alerts_fired).sort()).toEqual([0, 1]);
    const hist = await call("GET", "/api/cert-watcher/alert-history", { token: t });
    expect(hist.status).toBe(200);
    expect(hist.body.alerts.map((a: any) => a.rule_name)).toEqual(["legacy TLS"]);
    expect(hist.body.alerts[0].severity).toBe("high");
  });
});
