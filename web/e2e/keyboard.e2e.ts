/**
 * The console with the keyboard only: the skip link comes first and moves focus to the
 * content, the navigation works with Tab and Enter, arrow keys move between tabs, a
 * sort button sorts and keeps focus, a dialog opens with Enter, keeps focus inside and
 * closes with Escape (focus back on its button), the UTC switch shows every time in
 * UTC, and on a phone the menu opens from the keyboard. Every element Tab reaches
 * must show a focus indicator.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { launch, newOrganization, settled } from "./helpers";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

interface Focused {
  tag: string;
  id: string;
  role: string | null;
  /** Its accessible name as the tests match it: aria-label, else its text. */
  name: string;
  /** A focus ring (outline of 2 px or more, or a box shadow) on it or, for a visually hidden switch input, on the element drawn for it. */
  indicator: boolean;
  /** On screen: not clipped off to the left (the skip link before focus) and not zero-sized. */
  shown: boolean;
  inDialog: boolean;
}

async function focused(page: Page): Promise<Focused | null> {
  return page.evaluate(`(() => {
    const e = document.activeElement;
    if (!e || e === document.body) return null;
    const ring = (el) => {
      if (!el) return false;
      const cs = getComputedStyle(el);
      return (cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) >= 2) || (cs.boxShadow !== "" && cs.boxShadow !== "none");
    };
    const r = e.getBoundingClientRect();
    return {
      tag: e.tagName.toLowerCase(),
      id: e.id,
      role: e.getAttribute("role"),
      name: (e.getAttribute("aria-label") || e.textContent || "").replace(/\\s+/g, " ").trim(),
      indicator: ring(e) || ring(e.nextElementSibling),
      shown: r.width > 0 && r.height > 0 && r.right > 0 && r.left < innerWidth,
      inDialog: Boolean(e.closest("dialog[open]")),
    };
  })()`);
}

/**
 * Presses Tab (Shift+Tab with `back`) until the focused element satisfies `wanted`;
 * every element on the way must show a focus indicator. Fails with the path taken.
 */
async function tabTo(page: Page, wanted: (f: Focused) => boolean, opts: { back?: boolean; max?: number } = {}): Promise<Focused> {
  const path: string[] = [];
  for (let i = 0; i < (opts.max ?? 80); i++) {
    await page.keyboard.press(opts.back ? "Shift+Tab" : "Tab");
    const f = await focused(page);
    if (!f) {
      path.push(`(nothing; the window ${(await page.evaluate("document.hasFocus()")) ? "has" : "does not have"} focus)`);
      continue;
    }
    path.push(`${f.tag}${f.role ? `[${f.role}]` : ""} "${f.name.slice(0, 40)}"`);
    expect(f.indicator, `no visible focus indicator on ${path[path.length - 1]}`).toBe(true);
    expect(f.shown, `focused but not on screen: ${path[path.length - 1]}`).toBe(true);
    if (wanted(f)) return f;
  }
  throw new Error(`never reached the element; Tab went through:\n  ${path.join("\n  ")}`);
}

/**
 * Keyboard input goes to the focused window: a page of a new browser context gets
 * focus a moment after it loads, and only one page of the browser has it at a time.
 */
async function focusWindow(page: Page) {
  await page.bringToFront();
  await page.waitForFunction("document.hasFocus()", undefined, { timeout: 10_000 });
}

const named = (name: string | RegExp) => (f: Focused) => (typeof name === "string" ? f.name === name : name.test(f.name));

describe("keyboard only", () => {
  it("skip link, navigation, tabs, sorting, a dialog with Escape and the UTC switch, with a visible focus everywhere", async () => {
    const admin = await newOrganization(browser, "Keyboard");
    for (const pattern of ["alpha.example", "beta.example", "gamma.example"]) {
      expect((await admin.api("POST", "/api/ct-log/filters", { pattern, match_type: "wide" })).status).toBe(201);
    }
    const page = admin.page;
    await page.goto("/");
    await settled(page);
    await focusWindow(page);

    // The first Tab stop is the skip link, shown when focused; Enter moves focus to the content.
    // (Focus may start in the browser's own UI: the Tabs until one lands in the page do not count.)
    const skip = await tabTo(page, () => true, { max: 10 });
    expect(skip.name).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect((await focused(page))?.id).toBe("main");

    // The navigation: back up from the content to the main menu, open a page with Enter.
    await tabTo(page, named("Certificate Transparency"), { back: true });
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/ct$/);
    await settled(page);
    // The new page's heading takes focus, so reading continues there.
    await expect.poll(async () => (await focused(page))?.name).toBe("Certificate Transparency");

    // Tabs: arrow keys move the selection and the focus.
    await tabTo(page, (f) => f.role === "tab" && f.name === "Filters");
    await page.keyboard.press("ArrowRight");
    await page.waitForURL(/tab=matches/);
    await expect.poll(async () => (await focused(page))?.name).toBe("Matches");
    // Focused only once selected (web/src/ui/widgets.tsx Tabs): read at the moment focus arrived.
    expect(await page.evaluate(`document.activeElement?.getAttribute("aria-selected")`)).toBe("true");
    await page.keyboard.press("ArrowLeft");
    await page.waitForURL(/tab=filters/);
    await expect.poll(async () => (await focused(page))?.name).toBe("Filters");
    await settled(page);

    // A dialog: Enter opens it with focus inside, Tab stays inside, Escape closes it and
    // focus is back on the button that opened it.
    await tabTo(page, named("New filter"));
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "New CT filter" });
    await dialog.waitFor();
    expect((await focused(page))?.inDialog).toBe(true);
    for (let i = 0; i < 15; i++) {
      await page.keyboard.press("Tab");
      const f = await focused(page);
      // The modal keeps focus inside (the browser's own UI may take one stop at the wrap-around).
      if (f) expect(f.inDialog, `focus left the dialog: ${f.tag} "${f.name}"`).toBe(true);
    }
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.count()).toBe(0);
    expect((await focused(page))?.name).toBe("New filter");

    // A sort button: Enter sorts (the header says how), focus stays on the button.
    const table = page.getByRole("region", { name: "CT filters" });
    const firstPattern = () => table.locator("tbody tr").first().locator("td").first().innerText();
    await expect.poll(firstPattern).toBe("alpha.example");
    await tabTo(page, named(/^Sort by Pattern/));
    await page.keyboard.press("Enter");
    await expect.poll(firstPattern).toBe("gamma.example");
    expect(await table.locator("th", { hasText: "Pattern" }).getAttribute("aria-sort")).toBe("descending");
    expect((await focused(page))?.name).toMatch(/^Sort by Pattern, now descending/);

    // The UTC value of a time without a mouse: the header switch shows every time in UTC.
    const created = table.locator("tbody time").first();
    expect(await created.innerText()).not.toMatch(/UTC$/);
    await tabTo(page, named("UTC times"), { back: true });
    await page.keyboard.press("Space");
    await expect.poll(() => created.innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await page.getByRole("button", { name: "UTC times" }).getAttribute("aria-pressed")).toBe("true");
    // The local time is still there, as the title.
    expect(await created.getAttribute("title")).toMatch(/^Local time: /);
    await page.keyboard.press("Space");
    await expect.poll(() => created.innerText()).not.toMatch(/UTC$/);
    await admin.context.close();
  });

  it("on a phone, the menu opens from the keyboard and its links are reachable", async () => {
    const admin = await newOrganization(browser, "Phone keys");
    const page = admin.page;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto("/");
    await settled(page);
    await focusWindow(page);
    await tabTo(page, named("Menu"));
    await page.keyboard.press("Enter");
    expect(await page.getByRole("button", { name: "Menu" }).getAttribute("aria-expanded")).toBe("true");
    await tabTo(page, named("Reports"));
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/reports$/);
    // Opening a page closes the menu again.
    await expect.poll(() => page.getByRole("button", { name: "Menu" }).getAttribute("aria-expanded")).toBe("false");
    await admin.context.close();
  });
});
