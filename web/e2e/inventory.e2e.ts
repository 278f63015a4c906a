/**
 * The certificate inventory in the browser, with real certificates: the TLS lab's test
 * CAs (test/fixtures/servers/tls-lab.ts) issue them, the hub's RFC 6962 log publishes
 * some, `openssl s_server` serves some and the scanner agent's own scan of each is posted
 * through the agent API. The Inventory page lists the names with their states and
 * filters them; a name's page draws its certificates' timeline; a CT match links to
 * where its certificate is deployed.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE, HUB_SETUP, checkAtWidths, hubPost, launch, newOrganization, poll, runCron, settled, unique, type User } from "./helpers";

const DAY = 86_400_000;
const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString();

interface LabCert {
  id: string;
  key: string;
  der_b64: string;
  sha256: string;
  chain_b64: string[];
}

let browser: Browser;
let admin: User;
let D: string;
let www1: LabCert;
let www2: LabCert;
const ports: number[] = [];

const lab = (action: string, body: unknown) => hubPost(`/tls-lab/__control/${action}`, body) as Promise<any>;

async function agentCall(token: string, path: string, body: unknown) {
  const r = await fetch(`${BASE}/api/cert-watcher/agents/${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as any };
}

beforeAll(async () => {
  browser = await launch();
  admin = await newOrganization(browser, "Inventory");
  D = `inv${unique().replace(/[^a-z0-9]/g, "")}.com`;
  const T = Date.now();
  const filter = await admin.api("POST", "/api/ct-log/filters", { pattern: D, match_type: "wide" });
  expect(filter.status, JSON.stringify(filter.body)).toBe(201);
  const issue = (ca: string, names: string[], from: number, days: number, key?: string): Promise<LabCert> =>
    lab("issue", { ca, names, not_before: iso(from), not_after: iso(from + days * DAY - 1000), key });
  www1 = await issue("a", [`www.${D}`], T - 40 * DAY, 90);
  const mail = await issue("a", [`mail.${D}`], T - 5 * DAY, 90);
  const shadow = await issue("b", [`shadow.${D}`], T - DAY, 90);
  await hubPost(`/ctlog/${HUB_SETUP.rfcLog}/__control/entries`, { certificates: [www1.der_b64, mail.der_b64], chain: www1.chain_b64 });
  await poll(async () => {
    await runCron();
    return (await admin.api("GET", "/api/inventory/hostnames")).body.total >= 2;
  }, "the logged certificates in the inventory");

  // www serves its certificate, shadow one never logged; the scanner's scans are posted as an agent would.
  const servers: Record<string, number> = { [`www.${D}`]: (await lab("serve", { cert: www1.id })).port, [`shadow.${D}`]: (await lab("serve", { cert: shadow.id })).port };
  ports.push(...Object.values(servers));
  let ip = 50;
  for (const cn of Object.keys(servers)) {
    const m = await admin.api("POST", "/api/cert-watcher/monitors", { cn, ip_addresses: [`192.0.2.${ip++}`] });
    expect(m.status, JSON.stringify(m.body)).toBe(201);
  }
  const agent = (await admin.api("POST", "/api/cert-watcher/agents", { name: "inventory e2e" })).body.token as string;
  await runCron();
  const lease = await agentCall(agent, "lease", { max_jobs: 10 });
  expect(lease.status, JSON.stringify(lease.body)).toBe(200);
  expect(lease.body.jobs).toHaveLength(2);
  for (const job of lease.body.jobs) {
    const report = await lab("scan", { port: servers[job.monitor_cn], sni: job.monitor_cn });
    const posted = await agentCall(agent, "results", { job_id: job.job_id, result: report });
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
  }

  // Its renewal (same key) is logged but not deployed yet.
  www2 = await issue("a", [`www.${D}`], T - DAY / 2, 90, www1.key);
  await hubPost(`/ctlog/${HUB_SETUP.rfcLog}/__control/entries`, { certificates: [www2.der_b64], chain: www2.chain_b64 });
  await poll(async () => {
    await runCron();
    const h = (await admin.api("GET", `/api/inventory/hostnames/www.${D}`)).body;
    return h.state === "deploying";
  }, "the renewal logged and not yet deployed");
}, 240_000);

afterAll(async () => {
  for (const port of ports) await lab("stop", { port }).catch(() => undefined);
  await browser?.close();
});

describe("the Inventory page", () => {
  it("lists the names with their states, filters by state and name, and draws a name's timeline", async () => {
    const page = admin.page;
    await page.goto(`/inventory?q=${D}`);
    await settled(page);
    const row = (name: string) => page.getByRole("row").filter({ has: page.getByRole("link", { name, exact: true }) });
    await expect.poll(() => row(`www.${D}`).innerText()).toMatch(/Deploying/);
    expect(await row(`shadow.${D}`).innerText()).toMatch(/Not in CT/);
    // Issued the day before the CT filter existed: its log entry may predate what was read, and the reason says so, once.
    const shadowText = await row(`shadow.${D}`).innerText();
    expect(shadowText).toMatch(/Test Public CA B not seen in CT: issued .* before the logs were searched/);
    expect(shadowText.match(/192\.0\.2\.51:443/g)).toHaveLength(1);
    expect(await row(`mail.${D}`).innerText()).toMatch(/Unmonitored/);
    expect(await checkAtWidths(page, "inventory-list")).toEqual([]);

    // The state filter: only the names not in CT.
    await page.getByRole("combobox", { name: /^State/ }).selectOption("not_in_ct");
    await settled(page);
    await expect.poll(() => page.getByRole("row").count()).toBe(2);
    expect(await row(`shadow.${D}`).count()).toBe(1);
    expect(page.url()).toContain("state=not_in_ct");

    // A name: its state in words, the targets, the timeline of both certificates.
    await page.goto(`/inventory?q=${D}`);
    await row(`www.${D}`).getByRole("link").click();
    await settled(page);
    await expect.poll(() => page.getByTestId("hostname-state").innerText()).toMatch(/Deploying.*not yet served by 192\.0\.2\.50:443/);
    const lanes = page.getByTestId("timeline-lane");
    expect(await lanes.count()).toBe(2);
    expect(new Set(await lanes.evaluateAll((els) => els.map((e) => e.getAttribute("data-sha256"))))).toEqual(new Set([www1.sha256, www2.sha256]));
    // The served one has its deployment drawn, the renewal not yet.
    expect(await page.locator(`[data-sha256="${www1.sha256}"] .tl-deployed`).count()).toBe(1);
    expect(await page.locator(`[data-sha256="${www2.sha256}"] .tl-deployed`).count()).toBe(0);
    // The picture is drawn in the stylesheet's colours (an unclosed rule earlier in styles.css once left every shape black).
    const paint = (sel: string, prop: "fill" | "stroke") => page.locator(sel).first().evaluate((el, p) => getComputedStyle(el).getPropertyValue(p), prop);
    expect(await paint(`[data-sha256="${www1.sha256}"] .tl-validity`, "fill")).toBe("rgb(219, 234, 254)"); // --info-bg
    expect(await paint(`[data-sha256="${www1.sha256}"] .tl-deployed`, "fill")).toBe("rgb(20, 83, 45)"); // --good
    expect(await paint(`[data-sha256="${www1.sha256}"] .tl-overdue`, "stroke")).toBe("rgb(127, 29, 29)"); // --bad
    // Served by a monitored target: no certificate-monitor proposal offered for it.
    expect(await page.getByText("a certificate monitor is proposed").count()).toBe(0);
    expect(await page.getByRole("table", { name: "Certificates of this name" }).innerText()).toMatch(/routine/);
    expect(await checkAtWidths(page, "inventory-hostname")).toEqual([]);
  });

  it("tells routine renewals apart from unexpected issuance on the overview", async () => {
    const page = admin.page;
    await page.goto("/");
    await settled(page);
    // www's first certificate and mail's: keys never seen deployed when judged; www's renewal keeps the served key.
    await expect.poll(() => page.getByTestId("whats-new").innerText()).toMatch(/3 new certificate matches/);
    expect(await page.getByTestId("whats-new-unexpected").innerText()).toMatch(/2 unexpected issuances\s+2 with a key never seen deployed/);
    expect(await page.getByTestId("whats-new-routine").innerText()).toMatch(/1 routine renewal/);
    expect(await page.getByTestId("whats-new-not-judged").count()).toBe(0);
    expect(await checkAtWidths(page, "inventory-overview-new")).toEqual([]);
  });

  it("goes from a CT match to where its certificate is deployed in one click", async () => {
    const page = admin.page;
    await page.goto(`/ct/matches/${www1.sha256}`);
    await settled(page);
    const where = page.getByTestId("match-deployments");
    await expect.poll(() => where.innerText()).toMatch(new RegExp(`www\\.${D.replace(/\./g, "\\.")} on 192\\.0\\.2\\.50:443: served now`));
    await where.getByRole("link", { name: `www.${D}` }).first().click();
    await settled(page);
    expect(new URL(page.url()).pathname).toBe(`/inventory/www.${D}`);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(`www.${D}`);
  });
});


