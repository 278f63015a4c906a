/**
 * Configuration as `npm start` applies it: the service of these tests is started on a
 * free port with PUBLIC_BASE_URL unset (service.ts), so the base of the links it mails
 * must be that port's address, not wrangler.toml's 8787, and the start-up log says
 * which base is in effect and where it came from.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Browser } from "playwright-core";
import { BASE, invitationLink, launch, newOrganization, unique } from "./helpers";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe("PUBLIC_BASE_URL", () => {
  it("defaults to the address npm start serves (PORT), stated at start-up, and invitation links use it", async () => {
    const port = new URL(BASE).port;
    expect(port).not.toBe("8787");
    expect(inject("startLog")).toContain(`[start] PUBLIC_BASE_URL ${BASE} (the address served)`);

    const admin = await newOrganization(browser, "Links");
    const email = `invitee-${unique()}@example.com`;
    expect((await admin.api("POST", "/api/admin/invitations", { email, roles: [{ module_name: "ct-log", role_name: "Viewer" }] })).status).toBe(201);
    const link = new URL(await invitationLink(admin, email));
    expect(link.origin).toBe(BASE);
    // The link opens the console's acceptance page on the port actually served.
    const res = await fetch(link);
    expect(res.status).toBe(200);
    expect((await res.text()).toLowerCase()).toContain("<!doctype html>");
    await admin.context.close();
  });
});
