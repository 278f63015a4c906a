/**
 * Reports in the browser: the weekly reports the Cron Trigger generates for an
 * organization that signed up five weeks ago, listed on the reports page and drawn
 * as the overview's score trend, and a report's PDF downloaded through the console's
 * link (the session cookie authenticates the download). The screenshots and axe scans
 * of both pages with stored reports are in pages.e2e.ts (its organization has them too).
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { launch, newOrganization, poll, runCron, settled } from "./helpers";
import { CATCH_UP_REPORTS, weeksAgo } from "./seed";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe("reports", () => {
  it("lists the weekly reports, draws them as the score trend, and downloads a report's PDF", async () => {
    // A weekly report is due for each week of the catch-up window the organization existed in.
    const admin = await newOrganization(browser, "Reports", { createdAt: weeksAgo(5) });
    // The reports API is part of this build: without it there is nothing to test, which is a failure, not a skip.
    const probe = await admin.api("GET", "/api/reports");
    expect(probe.status, JSON.stringify(probe.body)).toBe(200);
    await admin.api("POST", "/api/rdap/domains", { domain_name: "reports-example.com" });
    const reports = await poll(async () => {
      const r = await admin.api("GET", "/api/reports?limit=54");
      if ((r.body?.data?.length ?? 0) >= CATCH_UP_REPORTS) return r.body.data;
      await runCron();
      return null;
    }, `${CATCH_UP_REPORTS} weekly reports`);
    expect(reports).toHaveLength(CATCH_UP_REPORTS);

    const page = admin.page;
    // The overview's trend: one point per stored report, its numbers in the table under the chart.
    await page.goto("/");
    await settled(page);
    const trend = page.getByRole("img", { name: /^Overall score per weekly report: / });
    await expect.poll(() => page.locator("svg.line circle.point").count()).toBe(CATCH_UP_REPORTS);
    const label = (await trend.getAttribute("aria-label")) ?? "";
    for (const r of reports as { overall_score: number }[]) expect(label).toContain(` ${r.overall_score}`);

    await page.goto("/reports");
    await settled(page);
    const links = page.getByRole("link", { name: /^Download PDF/ });
    await expect.poll(() => links.count()).toBe(CATCH_UP_REPORTS);
    // Newest first: the first link is the newest report's.
    const [download] = await Promise.all([page.waitForEvent("download"), links.first().click()]);
    expect(download.suggestedFilename()).toBe(reports[0].pdf_filename);
    const path = await download.path();
    expect(readFileSync(path!).subarray(0, 5).toString("latin1")).toBe("%PDF-");
    await admin.context.close();
  });
});
