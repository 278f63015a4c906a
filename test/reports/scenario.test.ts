/**
 * The audit end to end, with data made by the modules themselves, each through its own
 * ingestion path against its real local counterpart:
 *  - DNS: a watched zone of the DNS lab (BIND + Unbound + dnsdist) whose DMARC policy
 *    goes from reject to none between two scheduled resolutions;
 *  - CT: a fixture CT log growing by real navigli2025h2 entries, read by the Cron's
 *    cursor, CAA checked through the local DoH resolver (chixbbq.org forbids every CA);
 *  - certificates: scanner-agent results posted through the agent API (an expired
 *    certificate; an endpoint accepting TLS 1.0);
 *  - RDAP: the Cron's poll of the local RDAP server, whose answer changes registrar;
 *    the monitor is then paused, which leaves the RDAP module without enabled assets.
 * Then the exact findings, category scores, overall score and grade of the live
 * overview, the same findings in a report, whose PDF is read back with pdftotext and
 * rendered with pdftoppm; and a healthy organization that gets an A.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, signup, type Org } from "../helpers";
import { FIXTURES, createMonitor as createCertMonitor, agentCall, registerAgent, result } from "../cert-watcher/helpers";
import { control } from "../rdap/data";
import { copyEntries, createLog, dohZone, logKey, publishLogList, uid, waitForPosition } from "../ct-log/ingest-helpers";
import { labDohUrl, putZone, uniqueZone } from "../dns-watcher/lab";
import { createDb } from "../../src/db/client";
import { loadConfig } from "../../src/env";
import { generateWeeklyReport } from "../../src/modules/reports/generation-service";
import { E, NOT_DNS, callAt, clock, cron, download, findingIds, overview, rdapAnswer, rdapCron, watchRdap } from "./helpers";
import { inspectPdf, renderPdfPages, squash } from "./poppler";

const DAY = 86_400_000;
const started = new Date(Date.now() - 60_000);

// ------------------------------------------------------------------ module drivers

const DNS_ZONE = (dmarc: string) =>
  `@ IN A 192.0.2.10\n@ IN MX 10 mx1\n@ IN TXT "v=spf1 ip4:192.0.2.0/24 -all"\n_dmarc IN TXT "${dmarc}"\nmx1 IN A 192.0.2.25\n`;
const DMARC_BEFORE = "v=DMARC1; p=reject; rua=mailto:dmarc@example.test";
const DMARC_AFTER = "v=DMARC1; p=none; rua=mailto:dmarc@example.test";

const dnsCron = async () => cron({ DOH_RESOLVER_URLS: await labDohUrl(), DNS_CHECK_INTERVAL_SECONDS: "0", DNS_TIMEOUT_MS: "2000" });

async function watchDomain(org: Org, domain: string) {
  const r = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: domain } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

/** One Cron run enqueues the scan jobs; the agent leases them and posts `byIp[ip]` as scanner-node would. */
async function scan(agentToken: string, byIp: Record<string, unknown>) {
  await cron(NOT_DNS);
  const lease = await agentCall("lease", agentToken, { max_jobs: 100 });
  expect(lease.status, JSON.stringify(lease.body)).toBe(200);
  const leased = lease.body.jobs.filter((j: any) => byIp[j.ip_address]);
  expect(leased.map((j: any) => j.ip_address).sort()).toEqual(Object.keys(byIp).sort());
  for (const job of leased) {
    const res = await agentCall("results", agentToken, { job_id: job.job_id, result: byIp[job.ip_address] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
}

/** A TLS 1.0 endpoint: the trusted ECDSA scan, with TLS 1.0 accepted besides TLS 1.2/1.3. */
function tls10Result() {
  const r = result("ecdsaTrusted", { daysLeft: 200 });
  r.protocol = ["TLSv1.0", ...r.protocol];
  return r;
}

// ------------------------------------------------------------------ the two organizations

let scenario: Org;
let healthy: Org;
let zone: string;
let rdapName: string;
const expiredSha = FIXTURES.ecdsaTrusted.certificate.sha256;

beforeAll(async () => {
  scenario = await signup("Scenario");
  healthy = await signup("Healthy");

  // DNS: both watch a zone of the lab; the scenario's DMARC is weakened between two runs.
  zone = uniqueZone("r");
  const healthyZone = uniqueZone("h");
  await putZone(zone, DNS_ZONE(DMARC_BEFORE));
  await putZone(healthyZone, DNS_ZONE(DMARC_BEFORE));
  await watchDomain(scenario, zone);
  await watchDomain(healthy, healthyZone);
  await dnsCron();
  await putZone(zone, DNS_ZONE(DMARC_AFTER));
  await dnsCron();

  // RDAP: baseline, then the registrar changes hands; the scenario's monitor is then paused.
  rdapName = `reports-${uid()}.com`;
  const healthyRdap = `reports-h-${uid()}.com`;
  await control(`domain/${rdapName}`, { body: await rdapAnswer(rdapName) });
  await control(`domain/${healthyRdap}`, { body: await rdapAnswer(healthyRdap) });
  const monitorId = await watchRdap(scenario, rdapName);
  await watchRdap(healthy, healthyRdap);
  await rdapCron();
  await control(`domain/${rdapName}`, { body: await rdapAnswer(rdapName, { registrar: { handle: "146", name: "GoDaddy.com, LLC" } }) });
  await rdapCron();
  const paused = await call("PATCH", `/api/rdap/domains/${monitorId}`, { token: scenario.session, body: { enabled: false } });
  expect(paused.status).toBe(200);

  // Certificates: an expired certificate and a TLS 1.0 endpoint; the healthy one is fine.
  await createCertMonitor(scenario.session, { cn: "shop.example.test", ip_addresses: ["192.0.2.20"] });
  await createCertMonitor(scenario.session, { cn: "legacy.example.test", port: 8443, ip_addresses: ["192.0.2.21"] });
  await createCertMonitor(healthy.session, { cn: "www.example.test", ip_addresses: ["192.0.2.30"] });
  const agentA = await registerAgent(scenario.session);
  const agentB = await registerAgent(healthy.session);
  await scan(agentA.token, { "192.0.2.20": result("ecdsaTrusted", { daysLeft: -3 }), "192.0.2.21": tls10Result() });
  await scan(agentB.token, { "192.0.2.30": result("ecdsaTrusted", { daysLeft: 200 }) });

  // CT: a log that grows by 16 real entries after the first run (2 chixbbq.org, 2 cynova.dev certificates).
  const log = `rep${uid()}`;
  await createLog(log, { from: "navigli2025h2", size: 256 });
  const ctConfig = {
    ...NOT_DNS,
    ...(await publishLogList(`l${log}`, [{ log, protocol: "static-ct" }])),
    DOH_RESOLVER_URLS: await dohZone(`rep${log}`, [{ name: "chixbbq.org", type: "CAA", ttl: 300, data: { flags: 0, tag: "issue", value: ";" } }]),
  };
  expect((await call("POST", "/api/ct-log/filters", { token: scenario.session, body: { pattern: "chixbbq.org", match_type: "wide" } })).status).toBe(201);
  expect((await call("POST", "/api/ct-log/filters", { token: healthy.session, body: { pattern: "cynova.dev", match_type: "wide" } })).status).toBe(201);
  const { log_id_b64 } = await logKey(log);
  await cron(ctConfig);
  await waitForPosition(log_id_b64, 256);
  await copyEntries(log, "navigli2025h2", 256, 272);
  await cron(ctConfig);
  await waitForPosition(log_id_b64, 272);
}, 240_000);

// ------------------------------------------------------------------ assertions

const SCENARIO_FINDINGS = [
  "dns.dmarc_weakened",
  "certificates.expired",
  "rdap.ownership_or_registrar_change",
  "ct.caa_violations",
  "certificates.deprecated_tls",
  "coverage.modules_without_assets",
];

describe("the audit of data recorded by the modules", () => {
  it("scores the scenario exactly: weakened DMARC, expired certificate, TLS 1.0, registrar change, CAA violation, a module without assets", async () => {
    const data = await overview(scenario.session, clock.advance(1000));
    expect(findingIds(data)).toEqual(SCENARIO_FINDINGS);
    expect(data.findings.map((f: any) => [f.severity, f.score_impact, f.category, f.affected_assets])).toEqual([
      ["critical", 30, "dns", 1],
      ["critical", 30, "certificates", 1],
      ["critical", 25, "rdap", 1],
      ["high", 20, "ct", 2],
      ["high", 18, "certificates", 1],
      ["medium", 12, "coverage", 1],
    ]);
    expect(data.category_scores).toEqual({ dns: 70, ct: 80, certificates: 52, rdap: 75, coverage: 88 });
    expect(data.overall_score).toBe(72); // 71.85 rounded half up
    expect(data.grade).toBe("C");

    const by = Object.fromEntries(data.findings.map((f: any) => [f.id, f]));
    expect(by["dns.dmarc_weakened"].evidence).toEqual([
      // Values in presentation format, as the watcher stores them; its verdict in words.
      expect.objectContaining({
        asset: zone,
        old_value: `"${DMARC_BEFORE}"`,
        new_value: `"${DMARC_AFTER}"`,
        detail: `DMARC weakened: policy lowered from reject to none; subdomain policy lowered from reject to none; non-existent subdomain policy lowered from reject to none (_dmarc.${zone} TXT)`,
      }),
    ]);
    expect(by["certificates.expired"].evidence).toEqual([
      expect.objectContaining({ asset: "shop.example.test:443 (192.0.2.20)", fingerprint: expiredSha, detail: expect.stringMatching(/expired certificate/) }),
    ]);
    expect(by["certificates.deprecated_tls"].evidence).toEqual([expect.objectContaining({ asset: "legacy.example.test:8443 (192.0.2.21)", detail: "Accepts TLSv1.0" })]);
    expect(by["rdap.ownership_or_registrar_change"].evidence).toEqual([
      expect.objectContaining({ asset: rdapName, detail: "Registrar changed", old_value: "Sea Wasp, LLC (IANA 411)", new_value: "GoDaddy.com, LLC (IANA 146)" }),
    ]);
    const caa = by["ct.caa_violations"].evidence;
    expect(caa).toHaveLength(2);
    for (const e of caa) {
      expect(e.asset).toMatch(/(^|\.)chixbbq\.org/);
      expect(e.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect(e.detail).toMatch(/Let's Encrypt.*authorizes no CA/);
    }
    expect(by["coverage.modules_without_assets"].evidence.map((e: any) => e.asset)).toEqual(["RDAP"]);
    expect(by["ct.caa_violations"].references.map((r: any) => r.id)).toEqual(["CC6", "CC7", "A.8.16", "A.8.20", "DE.CM", "SC"]);
    expect(data.coverage.find((c: any) => c.module === "rdap")).toMatchObject({ enabled_assets: 0 });
    expect(data.coverage.find((c: any) => c.module === "cert-watcher")).toMatchObject({ enabled_assets: 2, stale_assets: 0 });
  });

  it("a healthy organization (every module watching, nothing wrong) gets 100 and an A", async () => {
    const data = await overview(healthy.session, clock.advance(1000));
    expect(data.findings).toEqual([]);
    expect(data.category_scores).toEqual({ dns: 100, ct: 100, certificates: 100, rdap: 100, coverage: 100 });
    expect(data.overall_score).toBe(100);
    expect(data.grade).toBe("A");
    expect(data.coverage.map((c: any) => [c.module, c.enabled_assets > 0, c.stale_assets]).sort()).toEqual([
      ["cert-watcher", true, 0], ["ct-log", true, 0], ["dns-watcher", true, 0], ["rdap", true, 0],
    ]);
  });

  it("data not collected within the expected window makes 'Monitoring data stale' fire", async () => {
    // Three hours later without a Cron run: the scan (2 h 5 min), CT polling (7 min) and DNS (35 min) are stale; RDAP (12 h 5 min) is not.
    const later = new Date(clock.now().getTime() + 3 * 3_600_000);
    const data = await overview(healthy.session, later);
    expect(findingIds(data)).toEqual(["coverage.monitoring_data_stale"]);
    const assets = data.findings[0].evidence.map((e: any) => e.asset.split(":")[0]).sort();
    expect(assets).toEqual(["CT Log", "Certificate deployments", "DNS watcher"]);
    expect(data.category_scores.coverage).toBe(82);
    expect(data.overall_score).toBe(97);
  });

  it("the scenario's report holds the same findings; its PDF reads back with pdftotext and renders with pdftoppm", async () => {
    const now = clock.advance(1000);
    const made = await generateWeeklyReport(
      { db: createDb(E.DB), config: loadConfig(E as never), now },
      { id: scenario.organizationId, name: "Scenario Corp" },
      { start: started, end: new Date(now.getTime() + 1000) },
    );
    expect(made.created).toBe(true);
    expect(made.result.findings.map((f) => f.id)).toEqual(SCENARIO_FINDINGS);
    expect(made.result.overall_score).toBe(72);

    const [report] = (await callAt("GET", "/api/reports", scenario.session)).body.data;
    expect(report).toMatchObject({ overall_score: 72, grade: "C", findings_count: 6, category_scores: { dns: 70, ct: 80, certificates: 52, rdap: 75, coverage: 88 } });
    const pdf = await download(scenario.session, report.id);
    expect(pdf.status).toBe(200);
    const doc = await inspectPdf(pdf.bytes);
    const text = squash(doc.text);
    expect(squash(doc.raw)).toMatch(/OVERALL SCORE\s+72 ?\/ 100\s+GRADE\s+C\s/);
    expect(text).toContain("Scenario Corp");
    for (const title of ["DMARC policy weakened", "Expired certificates", "Ownership or registrar change", "Recent CAA violations", "Deprecated TLS versions", "Modules without assets"]) {
      expect(text).toContain(title);
    }
    expect(text).toContain(`Before "${DMARC_BEFORE}"`);
    expect(text).toContain(`After "${DMARC_AFTER}"`);
    expect(text).toContain(`SHA-256 ${expiredSha}`);
    expect(text).toContain("legacy.example.test:8443 (192.0.2.21)");
    expect(text).toContain("Before Sea Wasp, LLC (IANA 411)");
    expect(text).toContain("After GoDaddy.com, LLC (IANA 146)");
    // The appendix lists every monitored asset with its state.
    expect(text).toMatch(new RegExp(`${zone.replace(/\./g, "\\.")} Changed`));
    expect(text).toMatch(/shop\.example\.test:443 \(192\.0\.2\.20\) Expired/);
    expect(text).toMatch(/legacy\.example\.test:8443 \(192\.0\.2\.21\) Legacy TLS/);
    expect(text).toMatch(new RegExp(`${rdapName.replace(/\./g, "\\.")} Paused`));
    expect(text).toMatch(/chixbbq\.org \(wide\) CAA violation/);

    const { pages } = await renderPdfPages(pdf.bytes, 40);
    expect(pages).toHaveLength(doc.pages);
    expect(pages.every((p) => p.width === 331 && p.height === 468 && p.ink > 0.01)).toBe(true);
  });
});
