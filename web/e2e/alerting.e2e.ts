/**
 * The alerting console with the service and a real browser: a PagerDuty channel created
 * from the form the console builds from the provider's settings schema, its test-send
 * reaching the local PagerDuty receiver (open, then resolve), and the routing key shown
 * only masked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { HUB, launch, newOrganization, screenshots, settled, unique } from "./helpers";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe("notification channels", () => {
  it("creates a PagerDuty channel from the generated form; its test-send opens and resolves an incident; the key stays masked", async () => {
    const admin = await newOrganization(browser, "Channels");
    const page = admin.page;
    const key = `pd${unique()}`.replace(/[^A-Za-z0-9]/g, "").padEnd(32, "7").slice(0, 32);
    await page.goto("/alerting?section=channels");
    await settled(page);
    await page.getByRole("button", { name: "New channel" }).click();
    const dialog = page.getByRole("dialog", { name: "New channel" });
    await dialog.getByLabel("Name").fill("On-call");
    await dialog.getByLabel("Kind").selectOption("pagerduty");
    // The controls come from PagerDuty's settings schema: its titles, its choices.
    await expect.poll(() => dialog.getByLabel("Integration key").count()).toBe(1);
    expect(await dialog.getByLabel("Service region").inputValue()).toBe("us");
    expect(await dialog.getByLabel("Integration key").getAttribute("type")).toBe("password");
    await dialog.getByLabel("Integration key").fill("too-short");
    await dialog.getByRole("button", { name: "Save channel" }).click();
    await expect.poll(() => dialog.locator("[data-field-error]").first().textContent()).toMatch(/32-character integration key/);
    await dialog.getByLabel("Integration key").fill(key);
    await screenshots(page, "alerting-channel-pagerduty-form");
    await dialog.getByRole("button", { name: "Save channel" }).click();
    const table = page.getByRole("region", { name: "Notification channels" });
    await expect.poll(() => table.textContent()).toContain("On-call");
    expect(await table.textContent()).toContain(`routing_key: …${key.slice(-4)}`);
    expect(await page.content()).not.toContain(key);

    await page.getByRole("button", { name: "Send test to On-call" }).click();
    await expect.poll(() => table.textContent()).toContain("delivered");
    const got = (await (await fetch(`${HUB}/providers/__control/${key}`)).json()) as { received: { json: any }[] };
    expect(got.received.map((r) => r.json.event_action)).toEqual(["trigger", "resolve"]);
    const list = await admin.api("GET", "/api/notification-channels");
    expect(list.body.channels[0]).toMatchObject({ kind: "pagerduty", settings: { routing_key: `…${key.slice(-4)}`, region: "us" } });
    await screenshots(page, "alerting-channels-pagerduty");
    await admin.context.close();
  });
});
