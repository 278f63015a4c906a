/**
 * A blind organization in the browser. Its RDAP registry answers 503 to every lookup
 * (never collected), and the page is seen half an hour after the service's last Cron
 * run (the requests carry X-Trust-Plane-Now; the service runs with
 * ALLOW_CLOCK_OVERRIDE): nothing of its DNS or CT data was collected within the
 * 7-minute windows of this service. The overview must not look like an A: it is not
 * graded (no letter, the score small and marked provisional, no grade colour), DNS, CT
 * and RDAP say "Not assessed" and why, with no bar; "Monitoring data stale" names its own domain before the CT
 * logs' one line. Then the reports page's preview of the week (the browser downloads it
 * now, not half an hour on: only RDAP is blind then): a PDF marked "Preview" on every
 * page, read back with pdftotext and rendered with pdftoppm.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCREENSHOTS, checkAtWidths, hubPost, launch, newOrganization, poll, runCron, settled, unique, type User } from "./helpers";

let browser: Browser;
let admin: User;
let rdapDomain: string;
let dnsDomain: string;

beforeAll(async () => {
  browser = await launch();
  admin = await newOrganization(browser, "Blind");
  const u = unique().replace(/[^a-z0-9]/g, "");
  rdapDomain = `blind-${u}.com`;
  dnsDomain = `blind-${u}.example`;
  await hubPost(`/rdap/__control/domain/${rdapDomain}`, { status: 503 });
  for (const [path, body] of [
    ["/api/rdap/domains", { domain_name: rdapDomain }],
    ["/api/dns-watcher/domains", { domain_name: dnsDomain }],
    ["/api/ct-log/filters", { pattern: `${u}.example`, match_type: "wide" }],
  ] as const) {
    const r = await admin.api("POST", path, body);
    expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(201);
  }
  // The registry was asked and failed (twice: the monitor is failing, not pending).
  await poll(async () => {
    await runCron();
    const d = (await admin.api("GET", "/api/rdap/domains")).body.domains.find((x: any) => x.domain_name === rdapDomain);
    return d?.last_check_status === "server_error" && d;
  }, "a failed RDAP lookup");
  // Every later request of this browser is made half an hour on.
  await admin.context.setExtraHTTPHeaders({ "x-trust-plane-now": new Date(Date.now() + 30 * 60_000).toISOString() });
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

describe("the overview of a blind organization", () => {
  it("is not graded: no letter, the score marked provisional, no grade colour, 'Not assessed' and why for DNS, CT and RDAP, no green bar for them", async () => {
    const page = admin.page;
    await page.goto("/");
    await settled(page);
    const grade = page.getByTestId("grade");
    await expect.poll(() => grade.getAttribute("class")).toBe("grade provisional ungraded");
    expect(await grade.getAttribute("aria-label")).toBe("Not graded");
    expect((await grade.innerText()).trim()).toBe("Not graded");
    expect(await page.locator(".score-card").innerText(), "no letter grade anywhere in the score card").not.toMatch(/\b[A-F]\b/);
    expect(await page.getByTestId("overall-score").getAttribute("aria-label")).toMatch(/^Provisional score \d+$/);
    // Not drawn in the A's green (the console's --good, #166534 / rgb(22, 101, 52), or any green).
    const colors = await grade.evaluate((el) => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]);
    for (const c of colors) {
      const [r, g, b] = c.match(/\d+/g)!.map(Number);
      expect(g > r + 30 && g > b + 30, `grade colour ${c}`).toBe(false);
    }
    const note = await page.getByTestId("provisional").innerText();
    expect(note).toMatch(/Not graded: DNS not assessed, CT log not assessed, RDAP not assessed\. No grade while/);

    for (const key of ["dns", "ct", "rdap"]) {
      const row = page.getByTestId(`category-${key}`);
      expect(await row.getAttribute("data-status"), key).toBe("blind");
      const text = await row.innerText();
      expect(text, key).toMatch(/not assessed/i);
      expect(await row.locator(".hbar").count(), `${key} has no bar`).toBe(0);
    }
    expect(await page.getByTestId("category-rdap").innerText()).toMatch(new RegExp(`0 of 1 domain looked up since .+: HTTP error for 1 domain since .+ UTC \\(RDAP lookup of ${rdapDomain.replace(/\./g, "\\.")}: HTTP 503 from http`));
    expect(await page.getByTestId("category-dns").innerText()).toMatch(/0 of 1 domain resolved since/);
    expect(await page.getByTestId("category-ct").innerText()).toMatch(/0 of 2 CT logs read since/);
    expect(await page.getByTestId("category-certificates").getAttribute("data-status")).toBe("no_assets");

    // "Monitoring data stale": the organization's own assets, then the CT logs in one line.
    const main = await page.locator("main").innerText();
    expect(main).toMatch(/Monitoring data stale/);
    const own = main.indexOf(`DNS watcher: ${dnsDomain}`);
    const ct = main.indexOf("CT Log: monitored logs");
    expect(own).toBeGreaterThan(0);
    expect(ct).toBeGreaterThan(own);
    expect(main).toMatch(/CT: 2 of 2 logs not read for \d+ min; new certificates for your filters cannot be seen/);
    expect(main).not.toMatch(/internal error/i);

    const problems = await checkAtWidths(page, "overview-blind");
    expect(problems.join("\n")).toBe("");
  });

  it("'what is new' never reads as nothing new while CT is not read, and a first visit has no 'since 1970'", async () => {
    const page = admin.page;
    // The previous test was this user's first visit: the overview's CT section said so.
    await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("trust-plane:last-visit:")).forEach((k) => localStorage.removeItem(k)));
    await page.goto("/");
    await settled(page);
    const section = page.locator("section.card", { has: page.getByTestId("whats-new") });
    await expect.poll(() => section.locator("h2").innerText()).toBe("New in the last 7 days");
    const notRead = page.getByTestId("whats-new-ct-not-read");
    expect(await notRead.getAttribute("data-status")).toBe("blind");
    // The logs were read before the clock moved half an hour on (or, on a slow run, never).
    expect(await notRead.innerText()).toMatch(/^(CT logs not read since .+|No CT log has been read yet): 0 of 2 CT logs read since .+\. New certificates for your filters logged since then cannot be seen/);
    const first = await page.getByTestId("whats-new").innerText();
    expect(first).toMatch(/in the last 7 days \(your first visit here\)/);
    expect(first).toMatch(/this is not an all clear/);
    expect(first).not.toMatch(/1970/);
    expect(await checkAtWidths(page, "overview-blind-whats-new-first")).toEqual([]);

    // The next visit: since the time of this one, on the service's clock, never the watermark.
    await page.reload();
    await settled(page);
    await expect.poll(() => section.locator("h2").innerText()).toBe("New since your last visit");
    const next = await page.getByTestId("whats-new").innerText();
    expect(next).toMatch(/since your last visit \(.+\)/);
    expect(next).not.toMatch(/1970/);
    expect(await checkAtWidths(page, "overview-blind-whats-new")).toEqual([]);
  });

  it("previews this week's report from the reports page: a PDF marked Preview on every page, not assessed, provisional", async () => {
    const page = admin.page;
    await page.goto("/reports");
    await settled(page);
    const link = page.getByRole("link", { name: "Preview this week's report" });
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    expect(download.suggestedFilename()).toMatch(/^trust-plane-weekly-report-blind-[a-z0-9-]+-\d{4}-W\d\d-preview\.pdf$/);
    const dir = join(SCREENSHOTS, "preview");
    mkdirSync(dir, { recursive: true });
    const pdf = join(dir, "blind-preview.pdf");
    await download.saveAs(pdf);
    const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync("pdfinfo", [pdf], { encoding: "utf8" }))![1]);
    expect(pages).toBeGreaterThan(1);
    for (let p = 1; p <= pages; p++) {
      const text = execFileSync("pdftotext", ["-f", String(p), "-l", String(p), "-layout", pdf, "-"], { encoding: "utf8" });
      expect(text, `page ${p}`).toMatch(/PREVIEW/);
      expect(text, `page ${p}`).not.toMatch(/internal error/i);
    }
    const all = execFileSync("pdftotext", [pdf, "-"], { encoding: "utf8" }).replace(/\s+/g, " ");
    expect(all).toContain("NOT ASSESSED");
    expect(all).toContain("PROVISIONAL SCORE");
    // The browser's download is its own request, made now (not half an hour on): DNS and CT
    // were collected a moment ago; the RDAP registry has never answered, so still no grade.
    expect(all).toMatch(/Not graded: RDAP not assessed /);
    expect(all).toContain("NOT GRADED");
    expect(all).toMatch(new RegExp(`RDAP Not assessed 0 of 1 domain looked up since .+: HTTP error for 1 domain since .+ UTC \\(RDAP lookup of ${rdapDomain.replace(/\./g, "\\.")}: HTTP 503 from http`));
    // Rendered at 60 dpi beside the screenshots, to be looked at.
    execFileSync("pdftoppm", ["-png", "-r", "60", pdf, join(dir, "blind-preview")]);
    // Not stored: the list of reports is unchanged.
    expect((await admin.api("GET", "/api/reports")).body.data).toEqual([]);
    writeFileSync(join(dir, "README.txt"), "blind-preview-N.png: pages of the preview PDF of blind.e2e.ts (pdftoppm -r 60)\n");
  });
});
