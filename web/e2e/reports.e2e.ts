/**
 * Reports in the browser: the weekly report list and its PDF downloaded through the
 * console's link (the session cookie authenticates the download). Skipped, saying so,
 * on a build without the reports API.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { launch, newOrganization, poll, runCron, settled } from "./helpers";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe("reports", () => {
  it("lists the weekly reports and downloads a report's PDF", async (ctx) => {
    // A weekly report is due for each week the organization existed in: it signed up 8 days ago.
    const admin = await newOrganization(browser, "Reports", { createdAt: new Date(Date.now() - 8 * 86_400_000) });
    const probe = await admin.api("GET", "/api/reports");
    if (probe.status === 404 && /no such endpoint/i.test(probe.body?.error?.message ?? "")) {
      ctx.skip("the reports API is not part of this build");
    }
    await admin.api("POST", "/api/rdap/domains", { domain_name: "reports-example.com" });
    const reports = await poll(async () => {
      const r = await admin.api("GET", "/api/reports?limit=10");
      if (r.body?.data?.length) return r.body.data;
      await runCron();
      return null;
    }, "a weekly report");
    const page = admin.page;
    await page.goto("/reports");
    await settled(page);
    const link = page.getByRole("link", { name: /^Download PDF/ }).first();
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    expect(download.suggestedFilename()).toBe(reports[0].pdf_filename);
    const path = await download.path();
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(path!).subarray(0, 5).toString("latin1")).toBe("%PDF-");
    await admin.context.close();
  });
});
