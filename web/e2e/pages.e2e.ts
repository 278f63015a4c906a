/**
 * Every page of the console with real data behind it (seed.ts): CT matches ingested
 * from the fixture hub's logs through the Cron Trigger, RDAP snapshots from its RDAP
 * server (one registration changed between two runs), DNS changes, scans posted by an
 * agent with real scanner-node results, alert rules that fired to a webhook, weekly
 * reports (the organization signed up five weeks ago), users, invitations, tokens.
 * Each page, each kind of dialog and the phone menu is scanned with axe-core at 1280
 * and at 390 px (no serious or critical violation anywhere) and screenshotted at both.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE, HUB, HUB_SETUP, checkAtWidths, launch, newMember, newOrganization, screenshots, settled, unique, visit, type User } from "./helpers";
import { CATCH_UP_REPORTS, seedOrganization, weeksAgo, type Seeded } from "./seed";

let browser: Browser;
let admin: User;
let viewer: User;
let ids: Seeded;

beforeAll(async () => {
  browser = await launch();
  // Signed up five weeks ago: the Cron runs of the seeding generate its weekly reports.
  admin = await newOrganization(browser, "Example Corp", { createdAt: weeksAgo(5) });
  const u = unique().replace(/[^a-z0-9]/g, "");
  ids = await seedOrganization({ api: admin.api, baseUrl: BASE, hubUrl: HUB, hub: HUB_SETUP, suffix: u, reports: CATCH_UP_REPORTS });

  // People and tokens.
  viewer = await newMember(browser, admin, [
    { module_name: "ct-log", role_name: "Viewer" },
    { module_name: "rdap", role_name: "Viewer" },
  ]);
  await admin.api("POST", "/api/admin/invitations", { email: `pending-${u}@example.com`, roles: [{ module_name: "cert-watcher", role_name: "Editor" }] });
  await admin.api("POST", "/api/api-tokens", { name: "ci-deploy", validity_days: 30, scopes: ["rdap:view_monitoring", "ct-log:view_monitoring"] });
  await admin.api("POST", "/api/api-tokens", { name: "old-script", validity_days: 7, scopes: ["rdap:view_monitoring"] }).then((t) => admin.api("DELETE", `/api/api-tokens/${t.body.id}`));
}, 300_000);

afterAll(async () => {
  await browser?.close();
});

interface PageCase {
  name: string;
  path: () => string;
  as?: () => User;
  /** After load: what must be on the page, or an action to reach the state shown. */
  then?: (page: Page) => Promise<void>;
}

const text = (page: Page) => page.locator("main").innerText();

const PAGES: PageCase[] = [
  {
    name: "overview",
    path: () => "/",
    then: async (p) => {
      await expect.poll(() => text(p)).toMatch(/Security overview/);
      await expect.poll(() => p.getByTestId("whats-new").innerText()).toMatch(/new certificate match/);
      // The score trend over the stored weekly reports: one point per report.
      await expect.poll(() => p.locator("svg.line circle.point").count()).toBe(CATCH_UP_REPORTS);
    },
  },
  { name: "ct-filters", path: () => "/ct", then: async (p) => void (await expect.poll(() => text(p)).toContain("chixbbq.org")) },
  { name: "ct-matches", path: () => "/ct?tab=matches", then: async (p) => void (await expect.poll(() => text(p)).toContain("Matches per day")) },
  { name: "ct-match-detail", path: () => `/ct/matches/${ids.match}`, then: async (p) => void (await expect.poll(() => p.getByTestId("caa-verdict").innerText()).toContain("CAA violation")) },
  { name: "ct-typosquatting", path: () => "/ct?tab=typosquatting", then: async (p) => void (await expect.poll(() => text(p)).toContain("paypa1.com")) },
  { name: "ct-typosquat-detail", path: () => `/ct/typosquatting/${ids.typo}`, then: async (p) => void (await expect.poll(() => text(p)).toContain("Why it looks like your domain")) },
  { name: "ct-proposals", path: () => "/ct?tab=proposals", then: async (p) => void (await expect.poll(() => text(p)).toMatch(/DNS monitoring|Certificate monitoring/)) },
  { name: "ct-logs", path: () => "/ct?tab=logs", then: async (p) => void (await expect.poll(() => text(p)).toContain("Fixture 'webtiles' log")) },
  { name: "dns", path: () => "/dns", then: async (p) => void (await expect.poll(() => text(p)).toContain("Shop")) },
  {
    name: "dns-domain",
    path: () => `/dns/${ids.dnsDomain}`,
    then: async (p) => {
      await expect.poll(() => p.getByRole("region", { name: "DNS changes" }).innerText()).toContain("192.0.2.11");
      await expect.poll(() => text(p)).toMatch(/DMARC[\s\S]*policy none/);
    },
  },
  { name: "rdap-domains", path: () => "/rdap", then: async (p) => void (await expect.poll(() => text(p)).toContain(ids.rdapDomain)) },
  { name: "rdap-changes", path: () => "/rdap?tab=changes", then: async (p) => void (await expect.poll(() => text(p)).toContain("Compare before and after")) },
  {
    name: "rdap-diff",
    path: () => `/rdap/${ids.rdapDomain}?from=${encodeURIComponent(ids.rdapFrom)}&to=${encodeURIComponent(ids.rdapTo)}`,
    then: async (p) => {
      const diff = p.getByRole("region", { name: "Changed fields side by side" });
      await expect.poll(() => diff.innerText()).toMatch(/NS1\.NEW-DNS\.EXAMPLE/i);
      await expect.poll(() => text(p)).toMatch(/Expires[\s\S]*\d+ days/);
      // Each row's radios name their snapshot; the compared pair is picked.
      // (The hidden part of the label is its own box: the browser may put a space before it.)
      expect(await p.getByRole("radio", { name: new RegExp(`^before ?: snapshot ${ids.rdapFrom} of `) }).isChecked()).toBe(true);
      expect(await p.getByRole("radio", { name: new RegExp(`^after ?: snapshot ${ids.rdapTo} of `) }).isChecked()).toBe(true);
      // Two snapshots picked: the compare button is enabled, with no reason beside it.
      expect(await p.getByRole("button", { name: "Compare the two snapshots" }).isEnabled()).toBe(true);
      expect(await p.getByTestId("compare-why").count()).toBe(0);
    },
  },
  {
    name: "certificates",
    path: () => "/certificates",
    then: async (p) => {
      const table = p.getByRole("region", { name: "Certificate monitors" });
      await expect.poll(() => table.innerText()).toContain("legacy-sni.example.test");
      // The API's sort_by=target orders by the SNI override: that column offers it, the target count does not.
      expect(await table.getByRole("button", { name: /^Sort by Targets/ }).count()).toBe(0);
      const sortBySni = table.getByRole("button", { name: /^Sort by SNI override/ });
      const firstRow = () => table.locator("tbody tr").first().innerText();
      await sortBySni.click();
      await expect.poll(firstRow).toContain("mail.example.test"); // ascending: no override first, then by hostname
      await sortBySni.click();
      await expect.poll(firstRow).toContain("legacy-sni.example.test");
    },
  },
  { name: "certificates-scans", path: () => "/certificates?tab=scans", then: async (p) => void (await expect.poll(() => text(p)).toMatch(/Days until each served certificate expires/)) },
  { name: "certificates-agents", path: () => "/certificates?tab=agents", then: async (p) => void (await expect.poll(() => text(p)).toContain("dmz-scanner")) },
  {
    name: "certificate-monitor",
    path: () => `/certificates/${ids.monitor}`,
    then: async (p) => {
      // Each row's button names its scan.
      await p.getByRole("button", { name: /^Show scan \d+ of 192\.0\.2\.1[01], / }).first().click();
      await expect.poll(() => text(p)).toMatch(/Framework verdicts[\s\S]*PCI DSS/);
    },
  },
  {
    name: "alerting-rules",
    path: () => "/alerting?section=ct-log&tab=rules",
    then: async (p) => {
      const rules = p.getByRole("region", { name: "Certificate Transparency alert rules" });
      await expect.poll(() => rules.innerText()).toContain("CAA violation");
      // The rule's channel by its name, not its id.
      await expect.poll(() => rules.getByRole("list", { name: "Channels of CAA violation" }).innerText()).toBe("SOC webhook");
    },
  },
  {
    name: "alerting-rules-activity",
    path: () => "/alerting?section=cert-watcher&tab=rules",
    // Each rule says what it did in the last 24 h; the suppressed count leads to those rows.
    then: async (p) => void (await expect.poll(() => p.getByLabel(/^Expiring soon: \d+ sent and 2 suppressed in the last 24 hours$/).count()).toBe(1)),
  },
  {
    name: "alerting-rule-editor",
    path: () => "/alerting?section=cert-watcher&tab=rules",
    then: async (p) => {
      await p.getByRole("button", { name: "Edit Expiring soon" }).click();
      await expect.poll(() => text(p)).toContain("validity_days");
    },
  },
  { name: "alerting-templates", path: () => "/alerting?section=ct-log&tab=templates", then: async (p) => void (await expect.poll(() => text(p)).toContain("Short")) },
  { name: "alerting-history", path: () => "/alerting?section=ct-log&tab=history", then: async (p) => void (await expect.poll(() => text(p)).toMatch(/delivered|pending|retrying/)) },
  {
    name: "alerting-history-suppressed",
    path: () => "/alerting?section=cert-watcher&tab=history&status=suppressed",
    // The second identical scan of each expiring certificate: recorded, not sent, and why.
    then: async (p) => void (await expect.poll(() => text(p)).toMatch(/duplicate[\s\S]*Not sent: the rule already alerted on this same event for monitor \d+ at 192\.0\.2\.1[12] \(alert #\d+\)/)),
  },
  { name: "alerting-channels", path: () => "/alerting?section=channels", then: async (p) => void (await expect.poll(() => text(p)).toContain("SOC webhook")) },
  { name: "alerting-lists", path: () => "/alerting?section=lists", then: async (p) => void (await expect.poll(() => text(p)).toContain("dmz")) },
  { name: "admin-users", path: () => "/admin", then: async (p) => void (await expect.poll(() => text(p)).toContain(viewer.email)) },
  { name: "admin-invitations", path: () => "/admin?tab=invitations", then: async (p) => void (await expect.poll(() => text(p)).toContain("pending-")) },
  { name: "admin-roles", path: () => "/admin?tab=roles", then: async (p) => void (await expect.poll(() => text(p)).toContain("Token Admin")) },
  { name: "admin-tokens", path: () => "/admin?tab=tokens", then: async (p) => void (await expect.poll(() => text(p)).toContain("ci-deploy")) },
  { name: "admin-audit", path: () => "/admin?tab=audit", then: async (p) => void (await expect.poll(() => text(p)).toContain("ct_filter")) },
  { name: "admin-subscription", path: () => "/admin?tab=subscription", then: async (p) => void (await expect.poll(() => text(p)).toMatch(/free/i)) },
  { name: "admin-outbox", path: () => "/admin?tab=outbox", then: async (p) => void (await expect.poll(() => text(p)).toContain("You are invited")) },
  { name: "admin-heartbeat", path: () => "/admin?tab=heartbeat", then: async (p) => void (await expect.poll(() => text(p)).toContain("dead-man's switch")) },
  { name: "reports", path: () => "/reports", then: async (p) => void (await expect.poll(() => p.getByRole("link", { name: /^Download PDF/ }).count()).toBe(CATCH_UP_REPORTS)) },
  { name: "viewer-ct", path: () => "/ct", as: () => viewer, then: async (p) => void (await expect.poll(() => text(p)).toContain("chixbbq.org")) },
  { name: "not-found", path: () => "/no/such/page", then: async (p) => void (await expect.poll(() => text(p)).toContain("Page not found")) },
];

describe("every page", () => {
  it("renders with real data, has no serious or critical axe violation at 1280 or 390 px, fits 390 px, and is screenshotted at both", async () => {
    const problems: string[] = [];
    for (const c of PAGES) {
      const t0 = Date.now();
      const who = c.as?.() ?? admin;
      const page = who.page;
      await page.setViewportSize({ width: 1280, height: 900 });
      await visit(page, c.path());
      await settled(page);
      await c.then?.(page);
      await settled(page);
      problems.push(...(await checkAtWidths(page, c.name)));
      console.log(`[pages] ${c.name}: ${Date.now() - t0} ms`);
    }
    expect(problems.join("\n"), problems.join("\n")).toBe("");
  }, 600_000);

  it("dialogs and the phone menu pass the same scan at 1280 and 390 px", async () => {
    const page = admin.page;
    const problems: string[] = [];
    const DIALOGS: { name: string; path: string; open: (p: Page) => Promise<void> }[] = [
      { name: "dialog-ct-filter", path: "/ct", open: (p) => p.getByRole("button", { name: "New filter" }).click() },
      { name: "dialog-roles", path: "/admin", open: (p) => p.getByRole("button", { name: `Roles of ${viewer.email}` }).click() },
      { name: "dialog-monitor", path: "/certificates", open: (p) => p.getByRole("button", { name: "New monitor" }).click() },
      { name: "dialog-channel", path: "/alerting?section=channels", open: (p) => p.getByRole("button", { name: "New channel" }).click() },
      { name: "dialog-mail", path: "/admin?tab=outbox", open: (p) => p.getByRole("button", { name: /You are invited/ }).first().click() },
    ];
    for (const d of DIALOGS) {
      await page.setViewportSize({ width: 1280, height: 900 });
      await visit(page, d.path);
      await settled(page);
      await d.open(page);
      await page.getByRole("dialog").waitFor();
      problems.push(...(await checkAtWidths(page, d.name)));
      await page.keyboard.press("Escape");
      await expect.poll(() => page.getByRole("dialog").count()).toBe(0);
    }

    // The phone layout's navigation: a menu button that opens the list of pages.
    await page.setViewportSize({ width: 390, height: 844 });
    await visit(page, "/");
    await settled(page);
    const menu = page.getByRole("button", { name: "Menu" });
    await menu.click();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Certificates" }).waitFor({ state: "visible" });
    problems.push(...(await checkAtWidths(page, "menu-open", [390])));
    await menu.click();
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems.join("\n"), problems.join("\n")).toBe("");
  }, 300_000);

  it("the public pages (login, signup, invitation) pass the same scan at both widths", async () => {
    const context = await browser.newContext({ baseURL: BASE, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const found: string[] = [];
    for (const [name, path] of [
      ["login", "/login"],
      ["signup", "/signup"],
      ["accept-invitation", "/accept-invitation?token=tpi_example"],
    ]) {
      await page.goto(path);
      await settled(page);
      await page.getByRole("heading", { level: 1 }).waitFor();
      found.push(...(await checkAtWidths(page, name)));
    }
    expect(found.join("\n"), found.join("\n")).toBe("");
    await context.close();
  });

  it("the API reference renders from this origin only, without the internet, and finds the document valid", async () => {
    const context = await browser.newContext({ baseURL: BASE });
    const page = await context.newPage();
    const outside: string[] = [];
    await page.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === "127.0.0.1" || url.protocol === "data:" || url.protocol === "blob:") return route.continue();
      outside.push(url.href);
      return route.abort();
    });
    // The page's CSP allows this origin's scripts only: the reference must work under it.
    const refused: string[] = [];
    // The reference checks the document against its own model of OpenAPI and warns of each schema it cannot read.
    const invalid: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) refused.push(m.text());
      if (/document validation errors/i.test(m.text())) invalid.push(m.text());
    });
    const response = await page.goto("/api/docs");
    expect(response?.headers()["content-security-policy"]).toMatch(/script-src 'self';/);
    expect(response?.headers()["x-frame-options"]).toBe("DENY");
    await expect.poll(() => page.locator("body").innerText(), { timeout: 30_000 }).toContain("Trust-Plane API");
    await expect.poll(() => page.locator("body").innerText()).toContain("/api/ct-log/filters");
    await screenshots(page, "api-docs");
    expect(outside).toEqual([]);
    expect(refused).toEqual([]);
    expect(invalid).toEqual([]);
    await context.close();
  });
});
