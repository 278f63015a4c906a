/**
 * A weekly report judges state at its period's end, however late it is generated: a
 * week caught up ten days after it ended (the service was down) must not take on the
 * state of the day it is generated. With the injected clock, data is recorded by the
 * modules themselves before the week (setup), the week passes without a Cron run, and
 * on the day of generation the organization's state has moved on:
 *
 *   setup, 10 days before the week's end: a DNS zone failing DNSSEC (the watcher's
 *     fact is observed then, before the week), an RDAP monitor whose domain expires 35
 *     days after the week's end, a TLS endpoint scanned;
 *   generation, 10 days after the week's end: the endpoint scanned again, a CT filter
 *     added (the CT module had no asset during the week).
 *
 * The week's report counts no DNSSEC failure (none observed in it; "bogus now" is not
 * the week's), no expiry (35 days away at the week's end, 25 on generation day), CT as
 * a module without assets, and the endpoint as stale (its newest scan by the week's
 * end is 10 days old). The live overview on generation day says the opposite on each.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, call, login, unique } from "../helpers";
import { agentCall, createMonitor, registerAgent, result } from "../cert-watcher/helpers";
import { labDohUrl, putZone, uniqueZone } from "../dns-watcher/lab";
import { control } from "../rdap/data";
import { createDb } from "../../src/db/client";
import { loadConfig } from "../../src/env";
import { enqueueDueScans } from "../../src/modules/cert-watcher/jobs";
import { lastWeekEnd, weekEndingAt } from "../../src/modules/reports/period";
import { generateWeeklyReport } from "../../src/modules/reports/generation-service";
import { E, callAt, clock, cron, findingIds, overview, rdapAnswer, rdapCron, watchRdap } from "./helpers";

const DAY = 86_400_000;
const HOST = "period.example.test";
const IP = "192.0.2.60";
const ENDPOINT = `${HOST}:443 (${IP})`;

/** The week under test ends on a Monday three weeks ahead, so the clock (only forward) can reach the days before it. */
const weekEnd = new Date(lastWeekEnd(clock.now()).getTime() + 21 * DAY);
const setupAt = new Date(weekEnd.getTime() - 10 * DAY);
const generatedAt = new Date(weekEnd.getTime() + 10 * DAY);

let org: { organizationId: number; email: string; session: string };
let agentToken: string;
let zone: string;
let domain: string;

/** One scan of the endpoint posted by the agent at the clock: the Cron-side enqueue, then lease and result. */
async function scanAt(at: Date) {
  await enqueueDueScans(createDb(E.DB), at, 3600, org.organizationId);
  const clockHeader = { "x-trust-plane-now": at.toISOString() };
  const lease = await agentCall("lease", agentToken, { max_jobs: 10 }, clockHeader);
  const job = lease.body.jobs.find((j: any) => j.ip_address === IP);
  expect(job, JSON.stringify(lease.body)).toBeDefined();
  const posted = await agentCall("results", agentToken, { job_id: job.job_id, result: result("ecdsaTrusted", { daysLeft: 200, now: at }) }, clockHeader);
  expect(posted.status, JSON.stringify(posted.body)).toBe(200);
}

function report(end: Date) {
  return generateWeeklyReport({ db: createDb(E.DB), config: loadConfig(E as never), now: generatedAt }, { id: org.organizationId, name: "Period End Corp" }, weekEndingAt(end));
}

beforeAll(async () => {
  clock.set(setupAt);
  const email = `period-${unique()}@example.com`;
  const signup = await call("POST", "/api/auth/signup", {
    body: { organization_name: `Period ${unique()}`, email, password: PASSWORD },
    headers: { "x-trust-plane-now": setupAt.toISOString() },
  });
  expect(signup.status, JSON.stringify(signup.body)).toBe(201);
  org = { organizationId: signup.body.organization_id, email, session: signup.body.token };

  // DNS: a zone whose signatures do not validate, resolved once through the lab.
  zone = uniqueZone("p");
  await putZone(zone, `@ IN A 192.0.2.10\n@ IN TXT "v=spf1 -all"\n_dmarc IN TXT "v=DMARC1; p=reject"\n`, "bogus");
  expect((await callAt("POST", "/api/dns-watcher/domains", org.session, clock.now(), { domain_name: zone })).status).toBe(201);
  // A TLS endpoint (the scan job is enqueued by this Cron run too).
  await createMonitor(org.session, { cn: HOST, ip_addresses: [IP] });
  agentToken = (await registerAgent(org.session)).token;
  await cron({ DOH_RESOLVER_URLS: await labDohUrl(), DNS_CHECK_INTERVAL_SECONDS: "0", DNS_TIMEOUT_MS: "2000" });

  // RDAP: a domain expiring 35 days after the week's end, checked once.
  domain = `period-${unique()}.com`;
  await control(`domain/${domain}`, { body: await rdapAnswer(domain, { expiresAt: new Date(weekEnd.getTime() + 35 * DAY) }) });
  await watchRdap(org, domain);
  await rdapCron();
  await scanAt(clock.advance(1000));

  // Generation day, ten days after the week's end (no Cron ran meanwhile): the endpoint
  // is scanned again and a CT filter is added.
  clock.set(generatedAt);
  org.session = (await login(email, PASSWORD, generatedAt)).body.token;
  await scanAt(generatedAt);
  expect((await callAt("POST", "/api/ct-log/filters", org.session, generatedAt, { pattern: "period.example.test", match_type: "wide" })).status).toBe(201);
}, 120_000);

describe("a weekly report generated after its week", () => {
  it("judges expiry, DNSSEC, coverage and freshness at the week's end, not on the day it is generated", async () => {
    const made = await report(weekEnd);
    expect(made.created).toBe(true);
    const week = made.result;
    expect(week.findings.map((f) => f.id)).toEqual(["coverage.monitoring_data_stale", "coverage.modules_without_assets"]);
    const by = Object.fromEntries(week.findings.map((f) => [f.id, f]));
    // CT had no filter during the week (it was added on generation day).
    expect(by["coverage.modules_without_assets"].evidence.map((e) => e.asset)).toEqual(["CT Log"]);
    // At the week's end the newest scan was 10 days old (the one of generation day came later);
    // the RDAP and DNS data too (nothing was collected after the setup).
    expect(by["coverage.monitoring_data_stale"].evidence.map((e) => e.asset).sort()).toEqual([`Certificate deployments: ${ENDPOINT}`, `DNS watcher: ${zone}`, `RDAP: ${domain}`].sort());
    const scanEvidence = by["coverage.monitoring_data_stale"].evidence.find((e) => e.asset.startsWith("Certificate"))!;
    expect(Date.parse(scanEvidence.observed_at!)).toBeLessThan(weekEnd.getTime() - 9 * DAY);
    expect(week.category_scores).toEqual({ dns: 100, ct: 100, certificates: 100, rdap: 100, coverage: 70 });

    // The live overview on generation day: DNSSEC failing now, the domain 25 days from
    // expiry, every module with an asset, the endpoint freshly scanned.
    const live = await overview(org.session, generatedAt);
    expect(findingIds(live)).toEqual(["dns.dnssec_regression", "coverage.monitoring_data_stale", "rdap.expiry_approaching"]);
    const liveBy = Object.fromEntries(live.findings.map((f: any) => [f.id, f]));
    expect(liveBy["rdap.expiry_approaching"].evidence[0]).toMatchObject({ asset: domain, detail: expect.stringMatching(/^Registration expires in 2[45] day\(s\)/) });
    expect(liveBy["coverage.monitoring_data_stale"].evidence.map((e: any) => e.asset).sort()).toEqual([`DNS watcher: ${zone}`, `RDAP: ${domain}`].sort());
  });

  it("the next week, also caught up: its end is 28 days before the expiry, which fires, counted from that end", async () => {
    const next = new Date(weekEnd.getTime() + 7 * DAY);
    const made = await report(next);
    expect(made.created).toBe(true);
    const expiry = made.result.findings.find((f) => f.id === "rdap.expiry_approaching")!;
    expect(expiry.evidence).toEqual([expect.objectContaining({ asset: domain, detail: expect.stringMatching(/^Registration expires in 2[78] day\(s\)/) })]);
    expect(made.result.findings.map((f) => f.id)).not.toContain("dns.dnssec_regression");
    expect(made.result.findings.find((f) => f.id === "coverage.modules_without_assets")!.evidence.map((e) => e.asset)).toEqual(["CT Log"]);
  });
});
