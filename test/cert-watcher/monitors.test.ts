// Certificate monitors and IP targets through the API: CRUD, validation, paging and
// sorting, uniqueness, quota, cross-organization isolation, security standards.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createToken, expectError, type CallResult } from "../helpers";
import { TEST_LEAF_PEM, TEST_ROOT_CA_PEM } from "./fixtures/pems";
import { createMonitor, newOrg } from "./helpers";

const M = "/api/cert-watcher/monitors";

describe("certificate monitors", () => {
  it("creates with defaults and reads back one monitor with its targets", async () => {
    const org = await newOrg();
    const r = await call("POST", M, { token: org.session, body: { cn: "WWW.Example.com", ip_addresses: ["192.0.2.10", "2001:DB8::1"], root_ca: TEST_ROOT_CA_PEM, notes: "edge" } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(Number), message: expect.any(String), quota_remaining: 9 });
    const g = await call("GET", `${M}/${r.body.id}`, { token: org.session });
    expect(g.status).toBe(200);
    expect(g.body).toMatchObject({
      id: r.body.id, cn: "www.example.com", port: 443, target_dns: null, enabled: true, notes: "edge", starttls: null, connection_method: "direct_tls",
      root_ca: TEST_ROOT_CA_PEM, last_scan_time: null, last_scan: { scan_time: null, targets: [] },
      indicators: { validity_status: "unknown", protocol_status: "unknown", cipher_status: "unknown", validation_status: "unknown", error_count: 0, target_count: 2, min_days_left: null },
    });
    expect(g.body.targets.map((t: any) => [t.ip_address, t.enabled, t.last_scan])).toEqual([["192.0.2.10", true, null], ["2001:db8::1", true, null]]);
    // STARTTLS inferred from a mail port.
    const mail = await createMonitor(org.session, { cn: "mx.example.com", port: 587 });
    expect((await call("GET", `${M}/${mail}`, { token: org.session })).body).toMatchObject({ starttls: "smtp", connection_method: "starttls" });
  });

  it("refuses bad input with 400 and saves nothing", async () => {
    const org = await newOrg();
    const bad: [Record<string, unknown>, string][] = [
      [{}, "cn"],
      [{ cn: "a.example.com", port: 0 }, "port"],
      [{ cn: "a.example.com", port: 65536 }, "port"],
      [{ cn: "a.example.com", port: "443" }, "port"],
      [{ cn: "a.example.com", ip_addresses: ["192.0.2.1", "300.1.1.1"] }, "ip_addresses.1"],
      [{ cn: "a.example.com", ip_addresses: ["010.0.0.1"] }, "ip_addresses.0"],
      [{ cn: "a.example.com", ip_addresses: ["10.0.0.0/8"] }, "ip_addresses.0"],
      [{ cn: "a.example.com", root_ca: "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----" }, "root_ca"],
      [{ cn: "a.example.com", root_ca: TEST_LEAF_PEM }, "root_ca"],
      [{ cn: "a.example.com", root_ca: "garbage" }, "root_ca"],
      [{ cn: "not a host" }, "cn"],
      [{ cn: "a.example.com", target_dns: "bad..name" }, "target_dns"],
      [{ cn: "a.example.com", starttls: "telnet" }, "starttls"],
    ];
    for (const [body, path] of bad) {
      const r = await call("POST", M, { token: org.session, body });
      expectError(r, 400, "validation_error");
      expect(r.body.error.details.map((d: any) => d.path)).toContain(path);
    }
    const leaf = await call("POST", M, { token: org.session, body: { cn: "a.example.com", root_ca: TEST_LEAF_PEM } });
    expect(leaf.body.error.details[0].message).toMatch(/not a CA/);
    expect((await call("GET", M, { token: org.session })).body.total).toBe(0);
  });

  it("(cn, port, target_dns) is unique per organization: 409; other orgs are independent", async () => {
    const org = await newOrg();
    await createMonitor(org.session, { cn: "dup.example.com" });
    expectError(await call("POST", M, { token: org.session, body: { cn: "DUP.example.com." } }), 409, "conflict");
    await createMonitor(org.session, { cn: "dup.example.com", port: 8443 });
    await createMonitor(org.session, { cn: "dup.example.com", target_dns: "origin.example.com" });
    expectError(await call("POST", M, { token: org.session, body: { cn: "dup.example.com", ip_addresses: ["192.0.2.1", "192.0.2.1"], port: 9443 } }), 409, "conflict");
    const other = await newOrg();
    await createMonitor(other.session, { cn: "dup.example.com" });
    // PUT onto another monitor's key is a 409 too.
    const id = await createMonitor(org.session, { cn: "second.example.com" });
    expectError(await call("PUT", `${M}/${id}`, { token: org.session, body: { cn: "dup.example.com" } }), 409, "conflict");
  });

  it("quota: free tier allows 10 monitors, then 403 quota_exceeded; pro raises it", async () => {
    const org = await newOrg();
    for (let i = 0; i < 10; i++) {
      const r = await call("POST", M, { token: org.session, body: { cn: `q${i}.example.com` } });
      expect(r.body.quota_remaining).toBe(9 - i);
    }
    expectError(await call("POST", M, { token: org.session, body: { cn: "q10.example.com" } }), 403, "quota_exceeded");
    expect((await call("PUT", "/api/admin/subscription", { token: org.session, body: { tier: "pro" } })).status).toBe(200);
    const r = await call("POST", M, { token: org.session, body: { cn: "q10.example.com" } });
    expect(r.body.quota_remaining).toBe(189);
  });

  it("PUT replaces every setting, PATCH toggles, DELETE removes monitor and targets", async () => {
    const org = await newOrg();
    const id = await createMonitor(org.session, { cn: "put.example.com", port: 8443, target_dns: "sni.example.com", notes: "n", root_ca: TEST_ROOT_CA_PEM, ip_addresses: ["192.0.2.5"] });
    const put = await call("PUT", `${M}/${id}`, { token: org.session, body: { cn: "put2.example.com", starttls: "imap" } });
    expect(put.status).toBe(200);
    const g = (await call("GET", `${M}/${id}`, { token: org.session })).body;
    expect(g).toMatchObject({ cn: "put2.example.com", port: 443, target_dns: null, notes: "", root_ca: null, starttls: "imap", enabled: true });
    expect(g.targets.length).toBe(1); // targets are kept
    expectError(await call("PUT", `${M}/${id}`, { token: org.session, body: { cn: "put2.example.com", port: 70000 } }), 400, "validation_error");
    expect((await call("PATCH", `${M}/${id}`, { token: org.session, body: { enabled: false } })).status).toBe(200);
    expect((await call("GET", `${M}/${id}`, { token: org.session })).body.enabled).toBe(false);
    expectError(await call("PATCH", `${M}/${id}`, { token: org.session, body: { enabled: "no" } }), 400, "validation_error");
    expect((await call("DELETE", `${M}/${id}`, { token: org.session })).status).toBe(200);
    expectError(await call("GET", `${M}/${id}`, { token: org.session }), 404, "not_found");
    expectError(await call("GET", `${M}/${id}/targets`, { token: org.session }), 404, "not_found");
  });

  it("another organization's monitor is 404 on every endpoint", async () => {
    const a = await newOrg();
    const b = await newOrg();
    const id = await createMonitor(a.session, { cn: "mine.example.com", ip_addresses: ["192.0.2.7"] });
    const targetId = (await call("GET", `${M}/${id}`, { token: a.session })).body.targets[0].id;
    const t = b.session;
    for (const [method, path, body] of [
      ["GET", `${M}/${id}`],
      ["PUT", `${M}/${id}`, { cn: "x.example.com" }],
      ["PATCH", `${M}/${id}`, { enabled: false }],
      ["DELETE", `${M}/${id}`],
      ["GET", `/api/cert-watcher/history/${id}`],
      ["GET", `${M}/${id}/targets`],
      ["POST", `${M}/${id}/targets`, { ip_address: "192.0.2.8" }],
      ["PATCH", `${M}/${id}/targets/${targetId}`, { enabled: false }],
      ["DELETE", `${M}/${id}/targets/${targetId}`],
    ] as [string, string, unknown?][]) {
      expectError(await call(method, path, { token: t, body }), 404, "not_found");
    }
    expect((await call("GET", M, { token: t })).body.total).toBe(0);
    expect((await call("GET", `${M}/${id}`, { token: a.session })).body.enabled).toBe(true);
  });

  it("paging and every sort_by; out-of-range and unknown values are 400", async () => {
    const org = await newOrg();
    const ids: Record<string, number> = {};
    for (const [cn, port, target_dns, enabled] of [
      ["charlie.example.com", 443, "z.example.com", true],
      ["alpha.example.com", 8443, null, false],
      ["bravo.example.com", 25, "a.example.com", true],
    ] as const) {
      ids[cn] = await createMonitor(org.session, { cn, port, target_dns, enabled });
    }
    const list = async (q: string) => {
      const r = await call("GET", `${M}?${q}`, { token: org.session });
      expect(r.status).toBe(200);
      return r.body;
    };
    const d = await list("");
    expect(d).toMatchObject({ total: 3, limit: 10, offset: 0, sort_by: "cn", sort_order: "asc" });
    expect(d.monitors.map((m: any) => m.cn)).toEqual(["alpha.example.com", "bravo.example.com", "charlie.example.com"]);
    expect((await list("sort_order=desc")).monitors[0].cn).toBe("charlie.example.com");
    expect((await list("sort_by=port")).monitors.map((m: any) => m.port)).toEqual([25, 443, 8443]);
    expect((await list("sort_by=enabled")).monitors[0].cn).toBe("alpha.example.com");
    expect((await list("sort_by=target")).monitors.map((m: any) => m.target_dns)).toEqual([null, "a.example.com", "z.example.com"]);
    expect((await list("sort_by=created_at&sort_order=desc")).monitors[0].cn).toBe("bravo.example.com");
    expect((await list("sort_by=last_scan_time")).monitors.length).toBe(3);
    const page = await list("limit=1&offset=1");
    expect(page).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.monitors.map((m: any) => m.cn)).toEqual(["bravo.example.com"]);
    for (const q of ["limit=0", "limit=101", "offset=-1", "sort_by=name", "sort_order=up"]) {
      expectError(await call("GET", `${M}?${q}`, { token: org.session }), 400, "validation_error");
    }
    expect((await list("limit=100")).limit).toBe(100);
    const rs = await call("GET", "/api/cert-watcher/recent-scans", { token: org.session });
    expect(rs.body).toEqual({ scans: [], total: 0, limit: 10, offset: 0, sort_by: "last_scan_time", sort_order: "desc" });
    for (const q of ["limit=101", "sort_by=port", "sort_order=x"]) expectError(await call("GET", `/api/cert-watcher/recent-scans?${q}`, { token: org.session }), 400, "validation_error");
    for (const q of ["page=0", "page_size=101", "page_size=0"]) expectError(await call("GET", `/api/cert-watcher/history/${ids["alpha.example.com"]}?${q}`, { token: org.session }), 400, "validation_error");
    const h = await call("GET", `/api/cert-watcher/history/${ids["alpha.example.com"]}`, { token: org.session });
    expect(h.body).toEqual({ monitor_id: ids["alpha.example.com"], scans: [], total: 0, page: 1, page_size: 20 });
  });

  it("IP targets: list, add, duplicate 409, invalid 400, toggle, delete", async () => {
    const org = await newOrg();
    const id = await createMonitor(org.session, { cn: "targets.example.com", ip_addresses: ["192.0.2.1"] });
    const T = `${M}/${id}/targets`;
    const add = await call("POST", T, { token: org.session, body: { ip_address: "2001:0DB8::0:5" } });
    expect(add.status).toBe(201);
    expect(add.body).toMatchObject({ monitor_id: id, ip_address: "2001:db8::5", enabled: true, last_scan: null });
    expectError(await call("POST", T, { token: org.session, body: { ip_address: "2001:db8::5" } }), 409, "conflict");
    for (const ip of ["999.1.1.1", "example.com", "192.0.2.1/32", ""]) expectError(await call("POST", T, { token: org.session, body: { ip_address: ip } }), 400, "validation_error");
    expect((await call("PATCH", `${T}/${add.body.id}`, { token: org.session, body: { enabled: false } })).status).toBe(200);
    const l = await call("GET", T, { token: org.session });
    expect(l.body.targets.map((t: any) => [t.ip_address, t.enabled])).toEqual([["192.0.2.1", true], ["2001:db8::5", false]]);
    expect((await call("DELETE", `${T}/${add.body.id}`, { token: org.session })).status).toBe(200);
    expectError(await call("DELETE", `${T}/${add.body.id}`, { token: org.session }), 404, "not_found");
    expect((await call("GET", T, { token: org.session })).body.targets.length).toBe(1);
  });

  it("permissions: a view-only token reads but cannot create; security standards list the five frameworks", async () => {
    const org = await newOrg();
    const viewer = await createToken(org.session, ["cert-watcher:view_monitoring"]);
    expect((await call("GET", M, { token: viewer.token })).status).toBe(200);
    expectError(await call("POST", M, { token: viewer.token, body: { cn: "x.example.com" } }), 403, "forbidden");
    expectError(await call("POST", "/api/cert-watcher/agents", { token: viewer.token, body: { name: "a" } }), 403, "forbidden");
    expectError(await call("GET", M), 401, "unauthorized");
    const s = await call("GET", "/api/cert-watcher/security-standards", { token: viewer.token });
    expect(s.status).toBe(200);
    expect(s.body.standards.map((d: any) => d.id)).toEqual(["fips-140", "nist-sp-800-52r2", "pci-dss-4.0.1", "mozilla-intermediate", "mozilla-modern"]);
    const pci = s.body.standards.find((d: any) => d.id === "pci-dss-4.0.1");
    expect(pci.protocols.allowed).not.toContain("TLSv1.0");
    expect(pci.cipherSuites.allowed.length).toBeGreaterThan(10);
  });
});

/** Statuses of parallel calls, counted: { 201: 1, 409: 19 }. */
function tally(results: CallResult[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

async function targetRows(organizationId: number): Promise<number> {
  const r = await (env as any).DB.prepare("SELECT count(*) AS n FROM cert_targets WHERE organization_id = ?").bind(organizationId).first();
  return r.n as number;
}

describe("certificate monitors under concurrency", () => {
  it("20 parallel identical creates: one 201, the rest 409, never 500; the targets are saved once", async () => {
    const org = await newOrg();
    const body = { cn: "race.example.com", port: 8443, ip_addresses: ["192.0.2.40", "192.0.2.41"] };
    const results = await Promise.all(Array.from({ length: 20 }, () => call("POST", M, { token: org.session, body })));
    expect(tally(results)).toEqual({ 201: 1, 409: 19 });
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.error.code).toBe("conflict");
    expect((await call("GET", M, { token: org.session })).body.total).toBe(1);
    expect(await targetRows(org.organizationId)).toBe(2);
  });

  it("20 parallel distinct creates on the free tier (10): exactly 10 are 201, the rest 403, nothing half-saved", async () => {
    const org = await newOrg();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call("POST", M, { token: org.session, body: { cn: `p${i}.example.com`, ip_addresses: [`192.0.2.${100 + i}`] } })),
    );
    expect(tally(results)).toEqual({ 201: 10, 403: 10 });
    for (const r of results.filter((r) => r.status === 403)) expect(r.body.error.code).toBe("quota_exceeded");
    // quota_remaining counts what exists after each insert: the ten answers are 0..9 in some order.
    expect(results.filter((r) => r.status === 201).map((r) => r.body.quota_remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect((await call("GET", M, { token: org.session })).body.total).toBe(10);
    // A refused monitor left no target behind.
    expect(await targetRows(org.organizationId)).toBe(10);
  });

  it("parallel target adds: the per-monitor cap (100) and the unique address hold", async () => {
    const org = await newOrg();
    const ips = Array.from({ length: 99 }, (_, i) => `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`);
    const id = await createMonitor(org.session, { cn: "cap.example.com", ip_addresses: ips });
    const T = `${M}/${id}/targets`;
    const same = await Promise.all(Array.from({ length: 8 }, () => call("POST", T, { token: org.session, body: { ip_address: "192.0.2.200" } })));
    expect(tally(same)).toEqual({ 201: 1, 409: 7 });
    // The monitor now has 100 targets: every further add is refused, however many run at once.
    const more = await Promise.all(Array.from({ length: 5 }, (_, i) => call("POST", T, { token: org.session, body: { ip_address: `192.0.2.${210 + i}` } })));
    expect(tally(more)).toEqual({ 403: 5 });
    for (const r of more) expect(r.body.error.code).toBe("quota_exceeded");
    expect((await call("GET", T, { token: org.session })).body.targets).toHaveLength(100);
  });

  it("parallel adds at 98 targets: exactly two of five get in", async () => {
    const org = await newOrg();
    const ips = Array.from({ length: 98 }, (_, i) => `10.1.0.${i + 1}`);
    const id = await createMonitor(org.session, { cn: "cap2.example.com", ip_addresses: ips });
    const T = `${M}/${id}/targets`;
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => call("POST", T, { token: org.session, body: { ip_address: `192.0.2.${220 + i}` } })));
    expect(tally(results)).toEqual({ 201: 2, 403: 3 });
    expect((await call("GET", T, { token: org.session })).body.targets).toHaveLength(100);
  });
});
