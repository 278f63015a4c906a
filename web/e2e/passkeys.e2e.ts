/**
 * Passkeys in a real browser: Chromium's virtual authenticator (DevTools
 * `WebAuthn.enable` + `WebAuthn.addVirtualAuthenticator`) creates and uses real WebAuthn
 * credentials, which the service checks with @simplewebauthn/server. A relying party id
 * cannot be an IP address, so this file runs its own service addressed as `localhost`
 * (PUBLIC_BASE_URL, hence the relying party id). Covers: registration from the account
 * page (the first factor brings the recovery codes), the second step at sign-in with the
 * passkey, a passkey of another user refused (404), and removal.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CONSOLE, PASSWORD, checkAtWidths, launch, unique } from "./helpers";
import { hubEnv, startService, type RunningService } from "./service";

let browser: Browser;
let service: RunningService;
let stateDir: string;
let base: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "trust-plane-passkeys-"));
  service = await startService({ stateDir, env: hubEnv(inject("hubUrl"), inject("hubSetup")), host: "localhost" });
  base = service.baseUrl;
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

/** A browser context with a virtual platform authenticator (user verification on, presence automatic). */
async function withAuthenticator(): Promise<{ context: BrowserContext; page: Page; credentials: () => Promise<unknown[]> }> {
  const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return { context, page, credentials: async () => (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials };
}

async function signUp(page: Page): Promise<string> {
  const email = `passkey-${unique()}@example.com`;
  const r = await page.request.post("/api/auth/signup", { headers: CONSOLE, data: { organization_name: `Passkeys ${unique()}`, email, password: PASSWORD } });
  expect(r.status(), await r.text()).toBe(201);
  return email;
}

describe("passkeys", () => {
  it("registered from the account page; then a sign-in completes with it; another user's passkey is 404; removal", async () => {
    const owner = await withAuthenticator();
    const email = await signUp(owner.page);
    await owner.page.goto("/account");
    await owner.page.getByLabel("Name of the passkey").fill("Test laptop");
    const registration = owner.page.waitForRequest((r) => r.method() === "POST" && new URL(r.url()).pathname === "/api/auth/mfa/passkeys");
    await owner.page.getByRole("button", { name: "Add a passkey" }).click();
    const registrationBody = (await registration).postData()!;
    // The first factor of the account brings its recovery codes.
    await expect.poll(() => owner.page.getByTestId("recovery-codes").locator("li").count(), { timeout: 30_000 }).toBe(10);
    expect(await owner.credentials()).toHaveLength(1);
    await owner.page.getByRole("button", { name: "I have saved them" }).click();
    await expect.poll(() => owner.page.getByRole("table", { name: "Passkeys" }).textContent()).toContain("Test laptop");
    const problems = await checkAtWidths(owner.page, "account-passkeys");
    expect(problems.join("\n"), problems.join("\n")).toBe("");

    // Sign in again in another browser context with the same authenticator's credential: a
    // fresh context has no cookie, so it goes through the password and the passkey step.
    await owner.context.clearCookies();
    await owner.page.goto("/login");
    await owner.page.getByLabel("Email").fill(email);
    await owner.page.getByLabel("Password").fill(PASSWORD);
    await owner.page.getByRole("button", { name: "Log in" }).click();
    await expect.poll(() => owner.page.getByRole("heading", { level: 1 }).textContent()).toBe("Second factor");
    const assertion = owner.page.waitForRequest((r) => r.method() === "POST" && new URL(r.url()).pathname === "/api/auth/login/mfa");
    await owner.page.getByRole("button", { name: "Use a passkey" }).click();
    const assertionBody = (await assertion).postData()!;
    await owner.page.waitForURL(`${base}/`);
    await expect.poll(() => owner.page.getByRole("heading", { level: 1 }).textContent()).toBe("Security overview");
    const sessions = await owner.page.request.get("/api/auth/sessions", { headers: CONSOLE });
    const current = (await sessions.json()).sessions.find((s: { current: boolean }) => s.current);
    expect(current.sign_in_method).toBe("password+passkey");
    const list = await (await owner.page.request.get("/api/auth/mfa/passkeys", { headers: CONSOLE })).json();
    expect(list.passkeys[0].last_used_at).not.toBeNull();

    // Another user cannot see or remove it.
    const stranger = await browser.newContext({ baseURL: base });
    const strangerPage = await stranger.newPage();
    await signUp(strangerPage);
    const foreign = await strangerPage.request.delete(`/api/auth/mfa/passkeys/${list.passkeys[0].id}`, { headers: CONSOLE });
    expect(foreign.status()).toBe(404);
    const rename = await strangerPage.request.patch(`/api/auth/mfa/passkeys/${list.passkeys[0].id}`, { headers: CONSOLE, data: { name: "mine now" } });
    expect(rename.status()).toBe(404);

    // The browser's own answers replayed are refused and save nothing: the registration
    // (its challenge is spent) and the sign-in assertion (its mfa_token is spent).
    const replay = await owner.page.request.post("/api/auth/mfa/passkeys", { headers: { ...CONSOLE, "content-type": "application/json" }, data: registrationBody });
    expect(replay.status(), await replay.text()).toBe(400);
    expect((await replay.json()).error.details).toEqual([expect.objectContaining({ path: "response" })]);
    const garbage = await owner.page.request.post("/api/auth/mfa/passkeys", { headers: CONSOLE, data: { name: "again", response: { id: "x", rawId: "x", type: "public-key", response: { clientDataJSON: "e30", attestationObject: "" } } } });
    expect(garbage.status()).toBe(400);
    const replayedSignIn = await stranger.request.post(`${base}/api/auth/login/mfa`, { headers: { ...CONSOLE, "content-type": "application/json" }, data: assertionBody });
    expect(replayedSignIn.status(), await replayedSignIn.text()).toBe(401);
    expect((await (await owner.page.request.get("/api/auth/mfa/passkeys", { headers: CONSOLE })).json()).passkeys).toHaveLength(1);

    // Removal from the page.
    await owner.page.goto("/account");
    owner.page.once("dialog", (d) => void d.accept());
    await owner.page.getByRole("button", { name: "Remove the passkey Test laptop" }).click();
    await expect.poll(() => owner.page.locator("main").textContent()).toContain("No passkey yet");
    await Promise.all([owner.context.close(), stranger.close()]);
  });
});
