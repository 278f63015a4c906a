/**
 * What every browser test needs: Debian's chromium through playwright-core (no
 * browser download), one browser context per user (its own cookie jar), users made
 * through the API the console itself calls, screenshots at the two widths the
 * console is built for, and an axe-core scan.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect, inject } from "vitest";
import { CONSOLE, PASSWORD, contextApi } from "./browser";
import { poll, postJson, runCron as cronAt } from "./seed";

export { CONSOLE, PASSWORD, launch } from "./browser";

export const BASE = inject("baseUrl");
export const HUB = inject("hubUrl");
export const HUB_SETUP = inject("hubSetup");

const here = dirname(fileURLToPath(import.meta.url));
export const SCREENSHOTS = join(here, "screenshots");

let seq = 0;
export const unique = () => `${Date.now().toString(36)}${(seq++).toString(36)}${Math.random().toString(36).slice(2, 5)}`;

export interface User {
  email: string;
  context: BrowserContext;
  page: Page;
  /** A call with this user's session cookie (and the console header), as the page makes it. */
  api<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
}

/** A browser context logged in as `email` (cookie session), with a page at 1280 px. */
export async function contextFor(browser: Browser, email: string, password = PASSWORD): Promise<User> {
  const context = await browser.newContext({ baseURL: BASE, viewport: { width: 1280, height: 900 } });
  const login = await context.request.post("/api/auth/login", { headers: CONSOLE, data: { email, password } });
  expect(login.status(), await login.text()).toBe(200);
  return userOf(email, context);
}

function userOf(email: string, context: BrowserContext): User & { page: Page } {
  return { email, context, page: undefined as unknown as Page, api: contextApi(context) };
}

/** Signs up a new organization through the API; returns its administrator's context and page. */
export async function newOrganization(browser: Browser, name = "Org", opts: { createdAt?: Date } = {}): Promise<User> {
  const email = `admin-${unique()}@example.com`;
  const context = await browser.newContext({ baseURL: BASE, viewport: { width: 1280, height: 900 } });
  // createdAt: the organization signs up at that time (the service runs with
  // ALLOW_CLOCK_OVERRIDE), then the user logs in now for a session that is valid now.
  const then: Record<string, string> = opts.createdAt ? { "x-trust-plane-now": opts.createdAt.toISOString() } : {};
  const r = await context.request.post("/api/auth/signup", { headers: { ...CONSOLE, ...then }, data: { organization_name: `${name} ${unique()}`, email, password: PASSWORD } });
  expect(r.status(), await r.text()).toBe(201);
  if (opts.createdAt) {
    const login = await context.request.post("/api/auth/login", { headers: CONSOLE, data: { email, password: PASSWORD } });
    expect(login.status(), await login.text()).toBe(200);
  }
  const u = userOf(email, context);
  u.page = await context.newPage();
  return u;
}

/** Invites `email` with `roles` as `admin`, accepts through the API, and logs the new user in. */
export async function newMember(browser: Browser, admin: User, roles: { module_name: string; role_name: string }[]): Promise<User> {
  const email = `member-${unique()}@example.com`;
  expect((await admin.api("POST", "/api/admin/invitations", { email, roles })).status).toBe(201);
  const token = await invitationToken(admin, email);
  const accept = await fetch(`${BASE}/api/auth/invitations/accept`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token, password: PASSWORD }) });
  expect(accept.status).toBe(201);
  const u = await contextFor(browser, email);
  u.page = await u.context.newPage();
  return u;
}

export async function invitationLink(admin: User, email: string): Promise<string> {
  const out = await admin.api<{ messages: { to: string; body: string }[] }>("GET", "/api/admin/mail-outbox?limit=100");
  const mail = out.body.messages.find((m) => m.to === email);
  const link = mail && /https?:\/\/\S+\/accept-invitation\?token=\S+/.exec(mail.body)?.[0];
  if (!link) throw new Error(`no invitation mail for ${email}`);
  return link;
}

export async function invitationToken(admin: User, email: string): Promise<string> {
  return new URL(await invitationLink(admin, email)).searchParams.get("token")!;
}

/** Saves the page at 1280 and 390 px wide (full page) into web/e2e/screenshots. */
export async function screenshots(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const original = page.viewportSize() ?? { width: 1280, height: 900 };
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true, animations: "disabled" });
  }
  await page.setViewportSize(original);
}

/** Elements wider than the viewport (at 390 px a page must not scroll sideways; tables scroll inside their region). */
export async function overflow(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const w = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= w) return [];
    return [...document.querySelectorAll("main *")]
      .filter((e) => e.getBoundingClientRect().right > w + 1 && !e.closest(".table-scroll, pre, .tabs"))
      .slice(0, 5)
      .map((e) => e.tagName.toLowerCase() + "." + [...e.classList].join(".") + " " + Math.round(e.getBoundingClientRect().right) + "px: " + (e.textContent || "").slice(0, 60));
  })()`);
}

export const WIDTHS = [1280, 390] as const;

/**
 * The page as it is now, at 1280 and at 390 px: an axe scan at each width (the phone
 * layout is another page for assistive technology: cards, the menu button), a
 * full-page screenshot at each (`<name>-<width>.png`), and at 390 px no sideways
 * scrolling. Returns the problems found, each naming `name` and the width.
 */
export async function checkAtWidths(page: Page, name: string, widths: readonly number[] = WIDTHS): Promise<string[]> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const original = page.viewportSize() ?? { width: 1280, height: 900 };
  const problems: string[] = [];
  for (const width of widths) {
    await page.setViewportSize({ width, height: width < 700 ? 844 : 900 });
    await settled(page);
    const violations = await axe(page);
    if (violations.length) problems.push(`== ${name} at ${width} px\n${describeViolations(violations)}`);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true, animations: "disabled" });
    if (width < 700) {
      const wide = await overflow(page);
      if (wide.length) problems.push(`== ${name} is wider than ${width} px:\n   ${wide.join("\n   ")}`);
    }
  }
  await page.setViewportSize(original);
  return problems;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * axe-core, evaluated in the page (through the DevTools protocol, so the console's
 * Content-Security-Policy stays on), WCAG 2.x A and AA rules: the serious and
 * critical violations.
 */
export async function axe(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate("typeof axe !== 'undefined'"))) await page.evaluate(axeSource);
  const result = (await page.evaluate(`axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] }, resultTypes: ["violations"] })`)) as {
    violations: AxeViolation[];
  };
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

export function describeViolations(vs: AxeViolation[]): string {
  return vs.map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.slice(0, 5).map((n) => `   ${n.target.join(" ")} ${n.failureSummary ?? ""}`).join("\n")}`).join("\n");
}

/** Waits until nothing on the page is loading (no progress bar, no busy table) for two frames in a row. */
export async function settled(page: Page) {
  await page.waitForFunction(
    `new Promise((resolve) => {
      const idle = () => !document.querySelector('.loading-bar, [aria-busy="true"]') && document.querySelector("main");
      requestAnimationFrame(() => requestAnimationFrame(() => resolve(idle() && idle())));
    })`,
    undefined,
    { timeout: 20_000, polling: 100 },
  );
}

/**
 * Goes to `path` inside the console the way its own links do (history navigation,
 * no reload), or loads it when the console is not open yet.
 */
export async function visit(page: Page, path: string) {
  const open = page.url().startsWith(BASE) && (await page.evaluate("Boolean(document.querySelector('.shell'))"));
  if (!open) {
    await page.goto(path);
    return;
  }
  await page.evaluate(`history.pushState(null, "", ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent("popstate"));`);
}

/** Fires the Cron Trigger of the service (what npm start does every minute). */
export const runCron = () => cronAt(BASE);

export { poll };

export const hubPost = (path: string, body: unknown) => postJson(`${HUB}${path}`, body);
