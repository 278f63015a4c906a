/**
 * Blind categories are said. First the pure engine on hand-built coverage (the issue's
 * offline organization: 12 domains, 71 CT logs, nothing collected); then one
 * organization through every module's real collection path against its local
 * counterpart, the clock moved between Cron runs:
 *
 *   never collected  the DoH resolver and the RDAP server refuse connections, the CT log
 *                    answers 503, no scan has come back: every category with assets is
 *                    blind, the grade provisional; 40 minutes later "Monitoring data
 *                    stale" names the domain first and the CT log in one line; the
 *                    week's preview PDF says "not assessed" and "Preview" on every page
 *   partly collected one of two RDAP domains answers, one of two endpoints is scanned
 *   collected        the DNS lab resolves, both RDAP domains answer, a healthy CT log is
 *                    read, both endpoints are scanned: every category assessed
 *
 * Nowhere (the JSON, the PDF) the runtime's "internal error".
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, serve, signup, type Org } from "../helpers";
import { agentCall, createMonitor, registerAgent, result, type FixtureName } from "../cert-watcher/helpers";
import { control } from "../rdap/data";
import { createLog, cursor, logKey, postJson, publishLogList, uid, waitForPosition, waitForRun } from "../ct-log/ingest-helpers";
import { labDohUrl, putZone, uniqueZone } from "../dns-watcher/lab";
import { assessCategories, gradeWords, provisionalNote, scoreHeadline } from "../../src/modules/reports/category-status";
import { limitEvidence, scoreAudit } from "../../src/modules/reports/scoring";
import { E, NOT_DNS, callAt, clock, cron, overview, rdapAnswer } from "./helpers";
import { inspectPdf, renderPdfPages, squash } from "./poppler";
import { blindFacts, moduleCoverage, scenarioFacts, uncollected } from "./sample";

const MINUTE = 60_000;

describe("category status, pure", () => {
  it("the offline organization: DNS, CT and RDAP blind with the reason, certificates assessed, not graded (the formula's A is never shown)", () => {
    const r = scoreAudit(blindFacts());
    expect(r.grade).toBe("A");
    expect(r.provisional).toBe(true);
    expect(r.graded).toBe(false);
    expect(gradeWords(r.grade, r.category_status)).toBe("not graded: DNS not assessed, CT Log not assessed, RDAP not assessed");
    expect(scoreHeadline(r.overall_score, r.grade, r.category_status)).toBe(
      `not graded (DNS not assessed, CT Log not assessed, RDAP not assessed); provisional score ${r.overall_score}/100`,
    );
    expect(Object.fromEntries(Object.entries(r.category_status).map(([k, v]) => [k, v.status]))).toEqual({
      dns: "blind",
      ct: "blind",
      certificates: "assessed",
      rdap: "blind",
      coverage: "assessed",
    });
    expect(r.category_status.dns).toMatchObject({ expected: 12, collected: 0 });
    expect(r.category_status.dns.reason).toBe(
      "0 of 12 domains resolved since 2026-11-22 23:25 UTC: DNS lookup failed for 12 domains since 2026-11-22 20:00 UTC (DNS lookup of cloudflare-dns.com failed)",
    );
    expect(r.category_status.ct.reason).toMatch(/^0 of 71 CT logs read since 2026-11-22 23:53 UTC: DNS lookup failed for 35 CT logs \(reading log 1: DNS lookup of ct1\.example failed\); 36 CT logs not read since 2026-11-22 20:40 UTC/);
    expect(r.category_status.certificates.reason).toBe("2 of 2 endpoints scanned since 2026-11-22 21:55 UTC");
    // Blind: since when nothing was collected (the newest collection of any log; the domains never were).
    expect(r.category_status.ct.last_collected_at).toBe("2026-11-22T20:40:00.000Z");
    expect(r.category_status.dns.last_collected_at).toBeNull();
    expect(r.category_status.certificates.last_collected_at).toBeNull();
    expect(provisionalNote(r.category_status)).toBe("DNS not assessed, CT Log not assessed, RDAP not assessed");
  });

  it("partly and fully collected, nothing to assess, and CT with filters but no log monitored", () => {
    const f = scenarioFacts();
    f.coverage = [
      moduleCoverage("dns-watcher", 4, { uncollected: [uncollected("a.example", { state: "pending" })] }),
      moduleCoverage("ct-log", 1, { expected: 0 }),
      moduleCoverage("cert-watcher", 2),
      moduleCoverage("rdap", 0, { configured: 2 }),
    ];
    const s = assessCategories(f);
    expect(s.dns).toEqual({ status: "partial", expected: 4, collected: 3, reason: "3 of 4 domains resolved since 2026-11-22 23:25 UTC: 1 domain not resolved yet", last_collected_at: null });
    expect(s.ct).toMatchObject({ status: "blind", expected: 0, collected: 0, reason: expect.stringContaining("No CT log is monitored") });
    expect(s.certificates.status).toBe("assessed");
    expect(s.rdap).toEqual({ status: "no_assets", expected: 0, collected: 0, reason: "All 2 domains paused: nothing to assess", last_collected_at: null });
    expect(provisionalNote(s)).toBe("DNS partly assessed, CT Log not assessed");

    // Partly assessed only: the grade stands, marked provisional.
    f.coverage[1] = moduleCoverage("ct-log", 1);
    const partly = scoreAudit(f);
    expect([partly.provisional, partly.graded]).toEqual([true, true]);
    expect(gradeWords(partly.grade, partly.category_status)).toBe(`${partly.grade}, provisional: DNS partly assessed`);
    expect(scoreHeadline(72, "C", partly.category_status)).toBe("72/100 (C, provisional: DNS partly assessed)");

    f.coverage = [moduleCoverage("dns-watcher", 4), moduleCoverage("ct-log", 1), moduleCoverage("cert-watcher", 2), moduleCoverage("rdap", 1)];
    const full = scoreAudit(f);
    expect([full.provisional, full.graded]).toEqual([false, true]);
    expect(scoreHeadline(full.overall_score, full.grade, full.category_status)).toBe(`${full.overall_score}/100 (${full.grade})`);
    // A report stored before category status was recorded shows its grade as it was.
    expect(scoreHeadline(97, "A", null)).toBe("97/100 (A)");
  });

  it("'Monitoring data stale' is about the organization: own assets per module first, the shared CT logs in one line", () => {
    const stale = scoreAudit(blindFacts()).findings.find((x) => x.id === "coverage.monitoring_data_stale")!;
    const assets = stale.evidence.map((e) => e.asset);
    expect(assets.slice(0, 12)).toEqual(Array.from({ length: 12 }, (_, i) => `DNS watcher: brand-${String(i).padStart(2, "0")}.example`));
    expect(assets.slice(12, 15)).toEqual(["RDAP: brand-0.example", "RDAP: brand-1.example", "RDAP: brand-2.example"]);
    expect(assets.slice(15)).toEqual(["CT Log: monitored logs"]);
    // 15 own assets and the CT logs as one: not "86 assets affected".
    expect(stale.affected_assets).toBe(16);
    expect(stale.evidence[0].detail).toBe(
      "Failing since 2026-11-22 20:00 UTC (dns_resolution): DNS lookup of cloudflare-dns.com failed; no data collected yet; expected within 35 min",
    );
    expect(stale.evidence[15].detail).toMatch(/^CT: 71 of 71 logs not read for 3 h; new certificates for your filters cannot be seen\. DNS lookup failed for 35 CT logs/);
    // Cut to the overview's ten items, the CT line stays.
    const shown = limitEvidence(stale.evidence, 10);
    expect(shown.map((e) => e.asset)).toEqual([...assets.slice(0, 9), "CT Log: monitored logs"]);
  });
});

// ------------------------------------------------------------------ through the modules

const REFUSING = `127.0.0.1:${(env as unknown as { REFUSING_PORT: string }).REFUSING_PORT}`;
/** Every outside source of the organization unreachable: the resolver and the RDAP server refuse connections. */
const OFFLINE = {
  DOH_RESOLVER_URLS: `http://${REFUSING}/dns-query`,
  DNS_CHECK_INTERVAL_SECONDS: "0",
  DNS_TIMEOUT_MS: "2000",
  RDAP_BASE_URL: `http://${REFUSING}/`,
  RDAP_CHECK_INTERVAL_SECONDS: "0",
};

let org: Org;
let agent: { token: string };
let zone: string;
const rdapNames = [`blind-a-${uid()}.com`, `blind-b-${uid()}.com`];
let failingLog: { log_id_b64: string; config: Record<string, string> };

/**
 * One Cron run (scans due at every run), then, unless `scans` is empty, the agent leases
 * the scan jobs and posts a result for each endpoint (as scanner-node would), at the clock.
 */
async function cronAndScan(overrides: Record<string, string>, scans: Record<string, FixtureName>, stepMs?: number) {
  const at = await cron({ SCAN_INTERVAL_SECONDS: "0", ...overrides }, stepMs);
  if (Object.keys(scans).length === 0) return at;
  const clockHeader = { "x-trust-plane-now": at.toISOString() };
  const lease = await agentCall("lease", agent.token, { max_jobs: 100 }, clockHeader);
  expect(lease.status, JSON.stringify(lease.body)).toBe(200);
  expect(lease.body.jobs.map((j: any) => j.ip_address).sort()).toEqual(Object.keys(scans).sort());
  for (const job of lease.body.jobs) {
    const res = await agentCall("results", agent.token, { job_id: job.job_id, result: result(scans[job.ip_address], { daysLeft: 200, now: at }) }, clockHeader);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  return at;
}

/** A Cron run with every source offline; waits for the failing CT log's cursor to have run. */
async function offlineRun(stepMs?: number) {
  const before = (await cursor(failingLog.log_id_b64).status()).runs;
  const at = await cronAndScan({ ...OFFLINE, ...failingLog.config }, {}, stepMs);
  await waitForRun(failingLog.log_id_b64, before);
  return at;
}

const statuses = (data: any) => Object.fromEntries(Object.entries(data.category_status).map(([k, v]: [string, any]) => [k, v.status]));

async function preview(token: string, at: Date) {
  const res = await serve(
    new Request("http://trust-plane.test/api/reports/preview/download", { headers: { authorization: `Bearer ${token}`, "cf-connecting-ip": "192.0.2.1", "x-trust-plane-now": at.toISOString() } }),
  );
  return { status: res.status as number, headers: res.headers as Headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

beforeAll(async () => {
  org = await signup("Blind");
  zone = uniqueZone("b");
  await putZone(zone, `@ IN A 192.0.2.10\n@ IN TXT "v=spf1 -all"\n_dmarc IN TXT "v=DMARC1; p=reject"\n`);
  expect((await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: zone } })).status).toBe(201);
  for (const name of rdapNames) expect((await call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: name } })).status).toBe(201);
  expect((await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: "blind.example", match_type: "wide" } })).status).toBe(201);
  await createMonitor(org.session, { cn: "www.blind.example", ip_addresses: ["192.0.2.61", "192.0.2.62"] });
  agent = await registerAgent(org.session);

  // The one CT log the organization relies on answers 503 to everything.
  const log = `blind${uid()}`;
  await createLog(log, { from: "navigli2025h2", size: 64 });
  await postJson(`/ctlog/${log}/__control/fault`, { kind: "server-error", count: 100_000 });
  const { log_id_b64 } = await logKey(log);
  failingLog = { log_id_b64, config: await publishLogList(`l${log}`, [{ log, protocol: "static-ct" }]) };
}, 120_000);

describe("an organization whose data was never collected", () => {
  it("is not an A: every category with assets is blind, with the reason, and no grade", async () => {
    for (let run = 0; run < 2; run++) await offlineRun();
    const data = await overview(org.session, clock.advance(1000));
    expect(statuses(data)).toEqual({ dns: "blind", ct: "blind", certificates: "blind", rdap: "blind", coverage: "assessed" });
    expect(data.provisional).toBe(true);
    expect(data.graded).toBe(false);
    expect(data.category_status.dns.reason).toMatch(/^0 of 1 domain resolved since .+ UTC: /);
    expect(data.category_status.rdap.reason).toMatch(
      // The monitors' own collection state: since when their lookups fail, and why.
      // (What answers on the refusing port is the machine's: nothing, normally.)
      new RegExp(`^0 of 2 domains looked up since .+ UTC: (connection failed|HTTP error) for 2 domains since .+ UTC \\(RDAP lookup of blind-a-`),
    );
    expect(data.category_status.ct.reason).toMatch(/^0 of 1 CT log read since .+ UTC: HTTP error for 1 CT log (since .+ )?\(reading CT log "Fixture 'blind\w+' log": HTTP 500 from http:\/\/.+\/checkpoint\)/);
    expect(data.category_status.certificates.reason).toMatch(/^0 of 2 endpoints scanned since .+ UTC: 2 endpoints not scanned yet$/);
    // Never read: no "since" to give (the overview's "new since your last visit" says "never read").
    expect(data.category_status.ct.last_collected_at).toBeNull();
    // New assets are not stale yet: only pending.
    expect(data.findings.map((f: any) => f.id)).not.toContain("coverage.monitoring_data_stale");
    expect(JSON.stringify(data)).not.toMatch(/internal error/i);
  });

  it("40 minutes on: 'Monitoring data stale' names its own domain first, the CT log in one line; the week's preview says so on every page", async () => {
    const at = await offlineRun(40 * MINUTE);
    const data = await overview(org.session, clock.advance(1000));
    const stale = data.findings.find((f: any) => f.id === "coverage.monitoring_data_stale");
    expect(stale.evidence.map((e: any) => e.asset)).toEqual([`DNS watcher: ${zone}`, "CT Log: monitored logs"]);
    expect(stale.evidence[1].detail).toMatch(/^CT: 1 of 1 logs never read; new certificates for your filters cannot be seen\. HTTP error for 1 CT log/);
    expect(stale.affected_assets).toBe(2);

    const pdf = await preview(org.session, at);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    expect(pdf.headers.get("content-disposition")).toMatch(/^attachment; filename=trust-plane-weekly-report-blind-[a-z0-9-]+-\d{4}-W\d\d-preview\.pdf$/);
    const doc = await inspectPdf(pdf.bytes);
    doc.page_texts.forEach((p, i) => expect(p, `page ${i + 1}`).toMatch(/PREVIEW/));
    const text = squash(doc.text);
    expect(text).toContain("NOT ASSESSED");
    expect(text).toMatch(/Not graded: DNS not assessed, CT Log not assessed, Certificates not assessed, RDAP not assessed/);
    expect(text).toContain("PROVISIONAL SCORE");
    expect(text).toContain("NOT GRADED");
    expect(text).toMatch(/Overall 100% \d+ \(not graded\)/);
    expect(text).not.toMatch(/Provisional grade|\(A\b/);
    expect(text).toContain("CT: 1 of 1 logs never read");
    expect(text).toContain("Appendix B — CT logs read for your filters");
    expect(text).not.toMatch(/internal error/i);
    const { pages } = await renderPdfPages(pdf.bytes, 40);
    expect(pages).toHaveLength(doc.pages);
    expect(pages.every((p) => p.ink > 0.01)).toBe(true);
    // Not stored: the reports list is still empty.
    expect((await callAt("GET", "/api/reports", org.session)).body.data).toEqual([]);
  });
});

describe("partly, then fully collected", () => {
  it("one of two RDAP domains answers and one of two endpoints is scanned (the other refused the connection): partly assessed", async () => {
    await control(`domain/${rdapNames[0]}`, { body: await rdapAnswer(rdapNames[0]) });
    await control(`domain/${rdapNames[1]}`, { status: 503 });
    await cronAndScan({ ...NOT_DNS, RDAP_CHECK_INTERVAL_SECONDS: "0", ...failingLog.config }, { "192.0.2.61": "ecdsaTrusted", "192.0.2.62": "refused" });
    const data = await overview(org.session, clock.advance(1000));
    expect(statuses(data)).toMatchObject({ rdap: "partial", certificates: "partial", dns: "blind", ct: "blind" });
    expect(data.graded).toBe(false);
    expect(data.category_status.rdap).toMatchObject({ expected: 2, collected: 1, reason: expect.stringMatching(/^1 of 2 domains looked up since .+: HTTP error for 1 domain since .+ UTC \(RDAP lookup of blind-b-.*503/) });
    // A scan that could not connect collected nothing.
    expect(data.category_status.certificates).toMatchObject({ expected: 2, collected: 1, reason: expect.stringMatching(/^1 of 2 endpoints scanned since .+: connection failed for 1 endpoint since .+ UTC \(TLS scan of 192\.0\.2\.62:443 \(www\.blind\.example\): connect to .* failed: ECONNREFUSED\)$/) });
    expect(data.provisional).toBe(true);
  });

  it("everything collected: every category assessed, the grade no longer provisional", async () => {
    // A healthy log replaces the failing one in the log list in use.
    const log = `seen${uid()}`;
    await createLog(log, { from: "navigli2025h2", size: 64 });
    const { log_id_b64 } = await logKey(log);
    const ctConfig = await publishLogList(`l${log}`, [{ log, protocol: "static-ct" }]);
    await control(`domain/${rdapNames[1]}`, { body: await rdapAnswer(rdapNames[1]) });
    await cronAndScan({ ...ctConfig, DOH_RESOLVER_URLS: await labDohUrl(), DNS_CHECK_INTERVAL_SECONDS: "0", DNS_TIMEOUT_MS: "2000", RDAP_CHECK_INTERVAL_SECONDS: "0" }, { "192.0.2.61": "ecdsaTrusted", "192.0.2.62": "ecdsaTrusted" });
    await waitForPosition(log_id_b64, 64);
    const data = await overview(org.session, clock.advance(1000));
    expect(statuses(data)).toEqual({ dns: "assessed", ct: "assessed", certificates: "assessed", rdap: "assessed", coverage: "assessed" });
    expect(data.provisional).toBe(false);
    expect(data.graded).toBe(true);
    expect(data.category_status.ct.reason).toMatch(/^1 of 1 CT log read since /);
    expect(data.findings.map((f: any) => f.id)).toEqual([]);
    expect(data.grade).toBe("A");
  });
});
