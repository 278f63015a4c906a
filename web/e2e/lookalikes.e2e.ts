/**
 * The Lookalikes page with real data behind it: a protected CT filter, certificates for
 * three of its lookalikes appended to the hub's RFC 6962 log (one with a Cyrillic letter,
 * one with "rn" for "m", one with an affix) and read by the Cron Trigger, the lookalikes'
 * DNS on the hub's DoH resolver (one takes mail through an MX whose host name is markup)
 * and a registrar name with markup from the hub's RDAP server, checked by the scheduled
 * lookalike checks. The list filters by state and confidence; the detail marks in words
 * which characters differ and their scripts, shows the timeline, and dismisses with a
 * reason; hostile values stay text. axe-core and screenshots at 1280 and 390 px.
 */
import { domainToASCII } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HUB_SETUP, checkAtWidths, hubPost, launch, newOrganization, poll, runCron, settled, unique, visit, type User } from "./helpers";
import { certificateFor } from "./seed";

let browser: Browser;
let admin: User;
let label: string;
const HOSTILE_MX = "<img src=x onerror=alert(1)>";
const HOSTILE_REGISTRAR = "<script>alert(1)</script> Evil Registrar =cmd|'/c calc'!A1";
const names = () => ({
  affix: `${label}-login.com`,
  // Cyrillic "а" (U+0430) for the first Latin "a".
  cyrillic: domainToASCII(`${label.replace("a", "\u0430")}.com`),
  rn: `${label.replace("m", "rn")}.com`,
});

beforeAll(async () => {
  browser = await launch();
  admin = await newOrganization(browser, "Lookalike Corp");
  label = `acmebank${unique().replace(/[^a-z0-9]/g, "")}`;
  const n = names();
  const record = (name: string, type: string, data: unknown) => ({ name, type, ttl: 60, data });
  await hubPost("/doh/__control/records", {
    ns: HUB_SETUP.ns,
    records: [
      record(`${label}.com`, "A", "192.0.2.1"),
      record(n.affix, "NS", `ns1.${n.affix}`),
      record(n.affix, "A", "203.0.113.5"),
      record(n.affix, "MX", { preference: 10, exchange: `${HOSTILE_MX}.evil.example` }),
      record(n.cyrillic, "NS", `ns1.${n.cyrillic}`),
      record(n.cyrillic, "A", "198.51.100.9"),
      record(n.rn, "NS", `ns1.${n.rn}`),
    ],
  });
  await hubPost(`/rdap/__control/domain/${n.affix}`, {
    body: {
      objectClassName: "domain",
      ldhName: n.affix,
      events: [{ eventAction: "registration", eventDate: new Date(Date.now() - 3 * 86_400_000).toISOString().replace(/\.\d+Z$/, "Z") }],
      entities: [{ objectClassName: "entity", roles: ["registrar"], vcardArray: ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", HOSTILE_REGISTRAR]]] }],
    },
  });
  const f = await admin.api("POST", "/api/ct-log/filters", { pattern: `${label}.com`, match_type: "wide", typosquat_enabled: true });
  expect(f.status, JSON.stringify(f.body)).toBe(201);
  await hubPost(`/ctlog/${HUB_SETUP.rfcLog}/__control/entries`, {
    certificates: [certificateFor([n.affix, `www.${n.affix}`]), certificateFor([n.cyrillic]), certificateFor([n.rn])],
  });
  // Ingested, then checked by the scheduled lookalike checks (every Cron run).
  let seen: unknown;
  await poll(
    async () => {
      await runCron();
      const r = await admin.api("GET", "/api/ct-log/lookalikes?page_size=100");
      seen = r.body.lookalikes?.map((l: any) => [l.domain, l.state, l.registrar, l.rdap_error, l.collection]);
      return r.body.total === 3 && r.body.lookalikes.every((l: any) => l.state !== "new" && (l.domain !== n.affix || l.registrar));
    },
    "three lookalikes found in CT and checked",
    120_000,
  ).catch((e) => {
    throw new Error(`${e.message}; lookalikes: ${JSON.stringify(seen)}`);
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
});

const idOf = async (domain: string) => ((await admin.api("GET", "/api/ct-log/lookalikes?page_size=100")).body.lookalikes as any[]).find((l) => l.domain === domain).id;

describe("the Lookalikes page", () => {
  it("lists lookalikes by state and confidence, with their checks and the exports", async () => {
    const page = admin.page;
    const n = names();
    await page.goto("/lookalikes");
    await settled(page);
    const table = page.getByRole("table", { name: "Lookalike domains" });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(3);
    const row = (d: string) => table.locator("tbody tr", { hasText: d });
    expect(await row(n.affix).innerText()).toMatch(/takes mail[\s\S]*high confidence/);
    // The Unicode form as a browser shows it, and the A-label beside it.
    expect(await row(n.cyrillic).innerText()).toContain(`${label.replace("a", "\u0430")}.com`);
    expect(await row(n.cyrillic).innerText()).toContain(n.cyrillic);
    expect(await row(n.rn).innerText()).toMatch(/registered/);
    expect(await checkAtWidths(page, "lookalikes")).toEqual([]);

    await page.getByRole("combobox", { name: "State" }).selectOption("mail_capable");
    await expect.poll(() => table.locator("tbody tr").count()).toBe(1);
    expect(new URL(page.url()).searchParams.get("state")).toBe("mail_capable");
    await page.getByRole("combobox", { name: "State" }).selectOption("open");
    await page.getByRole("combobox", { name: "Confidence" }).selectOption("low");
    await expect.poll(() => page.locator("main").innerText()).toContain("No lookalike in this view");

    const href = await page.getByRole("link", { name: "Export the open lookalikes as CSV" }).getAttribute("href");
    const csv = await page.request.get(href!);
    expect(csv.status()).toBe(200);
    const body = await csv.text();
    expect(body).toContain(n.affix);
    // The registrar's formula is neutralized in the spreadsheet export.
    expect(body).not.toMatch(/(^|,)"=/m);
  });

  it("shows a lookalike's differing characters in words with their scripts, its DNS, registration and timeline; hostile values stay text", async () => {
    const page = admin.page;
    const n = names();
    await visit(page, `/lookalikes/${await idOf(n.cyrillic)}`);
    await settled(page);
    const chars = page.getByRole("list", { name: "Characters of the lookalike label" });
    await expect.poll(() => chars.locator("li").count()).toBe(label.length);
    const first = await chars.locator("li").first().innerText();
    expect(first).toMatch(/а[\s\S]*looks alike for a[\s\S]*U\+0430[\s\S]*Cyrillic/);
    expect(await page.getByTestId("comparison").innerText()).toMatch(/Scripts[\s\S]*Cyrillic[\s\S]*Latin|Scripts[\s\S]*Latin[\s\S]*Cyrillic/);
    expect(await page.getByTestId("timeline").innerText()).toMatch(/detected[\s\S]*certificate[\s\S]*state changed/);
    expect(await checkAtWidths(page, "lookalike-detail")).toEqual([]);

    await visit(page, `/lookalikes/${await idOf(n.affix)}`);
    await settled(page);
    const main = page.locator("main");
    await expect.poll(() => main.innerText()).toContain(HOSTILE_REGISTRAR);
    expect(await main.innerText()).toContain(HOSTILE_MX);
    expect(await main.locator("img, script").count()).toBe(0);
    expect(await page.getByTestId("timeline").innerText()).toMatch(/registration[\s\S]*registered [\s\S]*through/);
    await checkAtWidths(page, "lookalike-hostile", [1280]);
  });

  it("dismisses with a reason: no longer open, its reason shown", async () => {
    const page = admin.page;
    const n = names();
    await visit(page, `/lookalikes/${await idOf(n.rn)}`);
    await settled(page);
    await page.getByRole("button", { name: "Dismiss…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Dismiss" }).click();
    await expect.poll(() => dialog.innerText()).toMatch(/Reason[\s\S]*(required|at least|character)/i);
    await dialog.getByLabel("Reason").fill("Our defensive registration");
    await dialog.getByRole("button", { name: "Dismiss" }).click();
    await expect.poll(() => page.locator("main").innerText()).toMatch(/Dismissed[\s\S]*Our defensive registration/);
    expect(await page.getByRole("button", { name: "Dismiss…" }).count()).toBe(0);
    await visit(page, "/lookalikes");
    await settled(page);
    await expect.poll(() => page.getByRole("table", { name: "Lookalike domains" }).locator("tbody tr").count()).toBe(2);
  });
});
