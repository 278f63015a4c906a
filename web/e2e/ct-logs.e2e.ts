/**
 * The CT "Logs" tab says, per log, whether the service could read it, why not, how many
 * attempts failed in a row and when it tries again, and above the table, once, what that
 * means for the organization's filters. One of the hub's logs answers 503 to every
 * request for one Cron run: its row shows the classified failure (never the runtime's
 * text), and it is read again once the fault is cleared (the next run after its backoff).
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HUB_SETUP, checkAtWidths, hubPost, launch, newOrganization, poll, runCron, settled, type User } from "./helpers";

let browser: Browser;
let admin: User;

beforeAll(async () => {
  browser = await launch();
  admin = await newOrganization(browser, "CT logs");
  expect((await admin.api("POST", "/api/ct-log/filters", { pattern: "ct-logs-tab.example", match_type: "wide" })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await hubPost(`/ctlog/${HUB_SETUP.tilesLog}/__control/fault`, { kind: "clear" }).catch(() => {});
  await browser?.close();
});

describe("the CT Logs tab", () => {
  it("shows each log's collection state, its classified error, failures in a row and the next attempt, and the summary once", async () => {
    await hubPost(`/ctlog/${HUB_SETUP.tilesLog}/__control/fault`, { kind: "server-error", status: 503, count: 1000 });
    const failed = await poll(async () => {
      await runCron();
      const log = (await admin.api("GET", "/api/ct-log/logs")).body.logs.find((l: any) => l.description.includes(HUB_SETUP.tilesLog));
      return log?.collection.error?.class === "http_status" && log;
    }, "a failed read of the tiles log", 90_000);
    expect(failed.collection.error.message).toMatch(/^reading CT log "Fixture '.+' log": HTTP 503 from http:\/\/.+/);
    await hubPost(`/ctlog/${HUB_SETUP.tilesLog}/__control/fault`, { kind: "clear" });

    const page = admin.page;
    await page.goto("/ct?tab=logs");
    await settled(page);
    const row = page.getByRole("row").filter({ hasText: `Fixture '${HUB_SETUP.tilesLog}' log` });
    await expect.poll(() => row.count()).toBe(1);
    const cells = row.locator("td");
    // Its columns, by their labels (the table's own, not the first row's keys).
    const headers = await page.getByRole("columnheader").allInnerTexts();
    expect(headers.map((h) => h.replace(/[▲▼↕]/g, "").trim())).toEqual(["Log", "Collection", "Failures in a row", "Next attempt", "Verified entries", "In the log list"]);
    const collection = await cells.nth(1).innerText();
    expect(collection).toMatch(/latest attempt failed: reading CT log "Fixture '.+' log": HTTP 503 from http:\/\//);
    expect(await cells.nth(2).innerText()).toBe(String(failed.consecutive_failures));
    expect(await cells.nth(3).innerText()).toMatch(/^retry \S/);
    // The other hub log was read: collected, nothing failed.
    const other = page.getByRole("row").filter({ hasText: `Fixture '${HUB_SETUP.rfcLog}' log` });
    expect(await other.locator("td").nth(1).innerText()).toMatch(/^collected/);
    expect(await other.locator("td").nth(2).innerText()).toBe("0");

    const summary = await page.getByTestId("ct-logs-summary").innerText();
    expect(summary).toMatch(/Signed log list version .+, fetched .+ from http:\/\//);
    expect(summary).toMatch(/\d+ of 2 logs read/);
    expect(await page.locator("main").innerText()).not.toMatch(/internal error|reference =/i);

    const problems = await checkAtWidths(page, "ct-logs");
    expect(problems.join("\n")).toBe("");
  });
});
