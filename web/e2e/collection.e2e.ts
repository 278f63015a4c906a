/**
 * The console when the service cannot look: the DoH resolver answers HTTP 500 to every
 * question and the RDAP server 503 for the monitored domain, from before their first
 * lookup. The DNS and RDAP pages say what is not known and why ("unknown", "not
 * resolved yet", "Lookup failing since ...: HTTP 503 from ..."), never a finding that
 * was not observed ("no SPF record published") and never the runtime's opaque text.
 * Both pages are scanned (axe) and screenshotted at 1280 and 390 px.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { checkAtWidths, HUB_SETUP, hubPost, launch, newOrganization, poll, runCron, settled, unique, visit } from "./helpers";
import { HUB_DNS_RECORDS } from "./seed";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const NOT_OBSERVED = /no SPF record published|no DMARC record published|internal error|reference =/i;

describe("collection state in the console", () => {
  it("DNS and RDAP pages of assets never collected say unknown, failing since when and why", async () => {
    const admin = await newOrganization(browser, "Blind");
    const page = admin.page;
    const dnsDomain = `blind-${unique()}.example`;
    const rdapDomain = `blind-${unique()}.com`;
    // The resolver every organization's DNS goes to fails; restored below whatever happens.
    await hubPost("/doh/__control/zone", { ns: HUB_SETUP.ns, records: [], fail: "http500" });
    try {
      await hubPost(`/rdap/__control/domain/${rdapDomain}`, { status: 503 });
      const dns = await admin.api("POST", "/api/dns-watcher/domains", { domain_name: dnsDomain });
      expect(dns.status, JSON.stringify(dns.body)).toBe(201);
      expect((await admin.api("POST", "/api/rdap/domains", { domain_name: rdapDomain })).status).toBe(201);
      // Two runs in a row fail: both assets are failing.
      await poll(async () => {
        const d = await admin.api("GET", `/api/dns-watcher/domains/${dns.body.id}`);
        const r = await admin.api("GET", `/api/rdap/domains?domain_name=${rdapDomain}`);
        if (d.body.collection.state === "failing" && r.body.domains[0].collection.state === "failing") return true;
        await runCron();
        return false;
      }, "DNS and RDAP failing");

      await visit(page, `/dns/${dns.body.id}`);
      await settled(page);
      const main = page.locator("main");
      await expect.poll(() => main.innerText()).toMatch(/DNS lookups failing since/);
      const dnsText = await main.innerText();
      expect(dnsText).not.toMatch(NOT_OBSERVED);
      expect(dnsText).toMatch(/SPF\s+unknown\s+lookups of \S+ TXT failing since .+: HTTP 500 from http:\/\/127\.0\.0\.1:\d+\/doh\//);
      expect(dnsText).toMatch(/DMARC\s+unknown\s+lookups of _dmarc\.\S+ TXT failing since/);
      expect(dnsText).toMatch(/not resolved yet/);
      expect(dnsText).toMatch(/Reason\s+HTTP error\s+no record set of \S+ resolved: HTTP 500 from/);
      const dnsProblems = await checkAtWidths(page, "collection-dns-blind");

      await visit(page, "/dns");
      await settled(page);
      const row = page.getByRole("row").filter({ hasText: dnsDomain });
      await expect.poll(() => row.innerText()).toMatch(/failing\s+since [^\n]+\s+no record set of \S+ resolved: HTTP 500 from/);
      expect(await main.innerText()).not.toMatch(NOT_OBSERVED);

      await visit(page, `/rdap/${rdapDomain}`);
      await settled(page);
      // The 503 itself, or (when an earlier file's 503s made the server back off) the backoff that follows it.
      const RDAP_FAILURE = String.raw`RDAP lookup of \S+: (HTTP 503 from http://127\.0\.0\.1:\d+/rdap/domain/|not asked: http://127\.0\.0\.1:\d+ is backing off until \S+ after repeated server errors)`;
      await expect.poll(() => main.innerText()).toMatch(new RegExp(`Lookup failing since .+: ${RDAP_FAILURE}`));
      const rdapText = await main.innerText();
      expect(rdapText).not.toMatch(/No snapshot yet/);
      // The compare button says why it is disabled: nothing was ever read, and why.
      expect(await page.getByRole("button", { name: "Compare the two snapshots" }).isDisabled()).toBe(true);
      expect(await page.getByTestId("compare-why").innerText()).toMatch(new RegExp(`^No snapshot to compare: the registration was never read; lookups failing since .+ \\(${RDAP_FAILURE}`));
      expect(await page.getByRole("button", { name: "Compare the two snapshots" }).getAttribute("aria-describedby")).toBe("compare-why");
      expect(rdapText).not.toMatch(NOT_OBSERVED);
      const rdapProblems = await checkAtWidths(page, "collection-rdap-blind");

      await visit(page, "/rdap");
      await settled(page);
      await expect.poll(() => page.getByRole("row").filter({ hasText: rdapDomain }).innerText()).toMatch(new RegExp(`not collected yet\\s+failing\\s+since [^\\n]+\\s+${RDAP_FAILURE}`));
      expect([...dnsProblems, ...rdapProblems]).toEqual([]);
    } finally {
      await hubPost("/doh/__control/zone", { ns: HUB_SETUP.ns, records: HUB_DNS_RECORDS });
      await hubPost("/rdap/__control/reset", { suffix: rdapDomain });
    }
    await admin.context.close();
  });
});
