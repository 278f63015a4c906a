/**
 * Identity in the console, in a real browser: setting up an authenticator app from its
 * QR code page (codes computed by `otpauth`, as a phone would), the recovery codes shown
 * once, the second step at sign-in; single sign-on configured on its page, the domain
 * proven by DNS, and "Sign in with SSO" through the local OpenID provider (the fixture
 * hub's `oidc-provider`) into the console, a refused one back on the login page with
 * its reason; the sessions page; the policy that sends a member to enrollment first.
 * Screenshots of each page at 1280 and 390 px (and an axe scan).
 */
import * as OTPAuth from "otpauth";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE, HUB, HUB_SETUP, PASSWORD, checkAtWidths, launch, newMember, newOrganization, settled, unique } from "./helpers";
import { postJson } from "./seed";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const STEP_MS = 30_000;

async function expectNoProblems(page: Page, name: string) {
  const problems = await checkAtWidths(page, name);
  expect(problems.join("\n"), problems.join("\n")).toBe("");
}

/** Sets up the app on the account page; returns the app (as otpauth) and the recovery codes shown. */
async function enrollTotp(page: Page, screenshot?: string): Promise<{ totp: OTPAuth.TOTP; codes: string[] }> {
  await page.goto("/account");
  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  await expect.poll(() => page.getByRole("img", { name: /QR code to add/ }).count()).toBe(1);
  const secret = ((await page.getByTestId("totp-secret").textContent()) ?? "").replace(/\s/g, "");
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
  if (screenshot) await expectNoProblems(page, screenshot);
  await page.getByLabel("Code from the app").fill(totp.generate());
  await page.getByRole("button", { name: "Turn on" }).click();
  await expect.poll(() => page.getByTestId("recovery-codes").locator("li").count()).toBe(10);
  const codes = (await page.getByTestId("recovery-codes").locator("code").allTextContents()).map((c) => c.trim());
  if (screenshot) await expectNoProblems(page, `${screenshot}-recovery-codes`);
  await page.getByRole("button", { name: "I have saved them" }).click();
  await expect.poll(() => page.getByTestId("recovery-codes").count()).toBe(0);
  return { totp, codes };
}

describe("authenticator app", () => {
  it("set up from the QR code page; the recovery codes shown once; sign-in then asks for the code", async () => {
    const admin = await newOrganization(browser, "Totp");
    const { totp, codes } = await enrollTotp(admin.page, "account-totp-enroll");
    expect(new Set(codes).size).toBe(10);
    await expect.poll(() => admin.page.locator("main").textContent()).toContain("Sign-ins ask for the 6-digit code");
    await expectNoProblems(admin.page, "account-security");

    // A new browser: the password, then the app's next code (the current one was used).
    const context = await browser.newContext({ baseURL: BASE, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto("/login");
    await page.getByLabel("Email").fill(admin.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Second factor");
    await expectNoProblems(page, "login-second-factor");
    await page.getByLabel("Code from your authenticator app").fill("000000" === totp.generate({ timestamp: Date.now() + STEP_MS }) ? "111111" : "000000");
    await page.getByRole("button", { name: "Verify" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("wrong or was used already");
    await page.getByLabel("Code from your authenticator app").fill(totp.generate({ timestamp: Date.now() + STEP_MS }));
    await page.getByRole("button", { name: "Verify" }).click();
    await page.waitForURL(`${BASE}/`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Security overview");

    // And a recovery code works once instead.
    const other = await browser.newContext({ baseURL: BASE });
    const p2 = await other.newPage();
    await p2.goto("/login");
    await p2.getByLabel("Email").fill(admin.email);
    await p2.getByLabel("Password").fill(PASSWORD);
    await p2.getByRole("button", { name: "Log in" }).click();
    await p2.getByRole("button", { name: "Use a recovery code instead" }).click();
    await p2.getByRole("textbox", { name: "Recovery code" }).fill(codes[0]);
    await p2.getByRole("button", { name: "Verify" }).click();
    await p2.waitForURL(`${BASE}/`);

    // The sessions page lists them, with how each signed in.
    await page.goto("/account?tab=sessions");
    await settled(page);
    const table = page.getByRole("table", { name: "Sessions" });
    await expect.poll(() => table.textContent()).toContain("Password and authenticator app");
    expect(await table.textContent()).toContain("Password and recovery code");
    expect(await table.textContent()).toContain("this session");
    await expectNoProblems(page, "account-sessions");
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Sign out everywhere else" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toMatch(/other sessions ended/);
    await p2.goto("/account");
    await p2.waitForURL(/\/login/);
    await Promise.all([context.close(), other.close(), admin.context.close()]);
  });
});

describe("organization policy", () => {
  it("a member without a factor is sent to enrollment and sees nothing else until done", async () => {
    const admin = await newOrganization(browser, "Policy");
    await enrollTotp(admin.page);
    const member = await newMember(browser, admin, [{ module_name: "rdap", role_name: "Viewer" }]);
    await admin.page.goto("/admin?tab=security");
    await admin.page.getByLabel("Require a second factor of every member").check();
    await admin.page.getByRole("button", { name: "Save policy" }).click();
    await expect.poll(() => admin.page.getByRole("status").first().textContent()).toContain("must now set one up");
    await expectNoProblems(admin.page, "admin-security-policy");

    await member.page.goto("/rdap");
    await expect.poll(() => member.page.getByRole("heading", { level: 1 }).textContent()).toBe("Set up a second factor");
    expect(await member.page.locator("nav#nav").count()).toBe(0);
    await expectNoProblems(member.page, "enrollment-required");
    await enrollTotpOnEnrollmentPage(member.page);
    await member.page.goto("/rdap");
    await expect.poll(() => member.page.getByRole("heading", { level: 1 }).textContent()).toMatch(/^RDAP/);
    await Promise.all([admin.context.close(), member.context.close()]);
  });
});

async function enrollTotpOnEnrollmentPage(page: Page) {
  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  const secret = ((await page.getByTestId("totp-secret").textContent()) ?? "").replace(/\s/g, "");
  await page.getByLabel("Code from the app").fill(new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate());
  await page.getByRole("button", { name: "Turn on" }).click();
  await expect.poll(() => page.getByTestId("recovery-codes").locator("li").count()).toBe(10);
  // The codes stay until saved, although the restriction is already lifted (the view ends then).
  expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Set up a second factor");
  await page.getByRole("button", { name: "I have saved them" }).click();
  await expect.poll(() => page.locator("header.top").count()).toBe(1);
}

describe("single sign-on", () => {
  it("configured on its page, the domain proven by DNS; 'Sign in with SSO' creates the member and lands in the console; a refusal comes back with its reason", async () => {
    const domain = `corp-${unique()}.test`;
    const admin = await newOrganization(browser, "Sso");
    const client = await postJson(`${HUB}/oidc/reg`, {
      redirect_uris: [`${BASE}/api/auth/sso/callback`],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    });
    const page = admin.page;
    await page.goto("/admin?tab=sso");
    await expect.poll(() => page.getByTestId("redirect-uri").textContent()).toBe(`${BASE}/api/auth/sso/callback`);
    await page.getByLabel("Issuer URL").fill(`${HUB}/oidc`);
    await page.getByLabel("Client ID").fill(client.client_id);
    await page.getByLabel("Client secret").fill(client.client_secret);
    await page.getByLabel("Email domains").fill(domain);
    await page.getByLabel("Certificate Transparency").selectOption("Viewer");
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.getByTestId(`sso-domain-${domain}`).textContent()).toContain("not verified");
    const card = page.getByTestId(`sso-domain-${domain}`);
    const codes = await card.locator("code").allTextContents();
    // Not published yet: the check says what it found.
    await card.getByRole("button", { name: `Check DNS now for ${domain}` }).click();
    await expect.poll(() => page.getByRole("alert").first().textContent()).toMatch(/NXDOMAIN|no TXT record/);
    await postJson(`${HUB}/doh/__control/records`, { ns: HUB_SETUP.ns, records: [{ name: codes[0], type: "TXT", data: codes[1] }] });
    await card.getByRole("button", { name: `Check DNS now for ${domain}` }).click();
    await expect.poll(() => card.textContent()).toContain("verified");
    await expect.poll(() => card.textContent()).not.toContain("not verified");
    await expectNoProblems(page, "admin-sso");

    // A colleague signs in with SSO for the first time.
    const context = await browser.newContext({ baseURL: BASE, viewport: { width: 1280, height: 900 } });
    const p = await context.newPage();
    await p.goto("/ct");
    await p.waitForURL(/\/login\?next=/);
    await expectNoProblems(p, "login-with-sso");
    await p.getByLabel("Email").fill(`dana@${domain}`);
    await p.getByRole("button", { name: "Sign in with SSO" }).click();
    await p.waitForURL(`${BASE}/ct`);
    await expect.poll(() => p.getByRole("heading", { level: 1 }).textContent()).toBe("Certificate Transparency");
    await expect.poll(() => p.locator("header.top").textContent()).toContain(`dana@${domain}`);

    // The provider has not verified this address: back at the login page, with the reason.
    // A browser of its own: in dana's, the provider would sign dana in again whatever the hint.
    const other = await browser.newContext({ baseURL: BASE, viewport: { width: 1280, height: 900 } });
    const q = await other.newPage();
    await q.goto("/login");
    await q.getByLabel("Email").fill(`unverified-ed@${domain}`);
    await q.getByRole("button", { name: "Sign in with SSO" }).click();
    await q.waitForURL(/\/login\?sso_error=/);
    await expect.poll(() => q.locator("main").textContent()).toContain("has not verified");
    await expectNoProblems(q, "login-sso-refused");
    // No SSO for a domain nobody proved.
    await q.getByLabel("Email").fill(`x@nobody-${domain}`);
    await q.getByRole("button", { name: "Sign in with SSO" }).click();
    await q.waitForURL(/sso_error=/);
    await expect.poll(() => q.locator("main").textContent()).toContain(`No organization signs in with single sign-on for nobody-${domain}`);
    await Promise.all([context.close(), other.close(), admin.context.close()]);
  });
});
