/**
 * The console's main flows in a real browser: signup, login/logout and the 401
 * redirect, a CT filter through the form, a validation error by its field, a
 * certificate monitor with its targets and a scanner agent through the forms, an RDAP
 * and a DNS domain through theirs, a
 * Viewer without write actions, an alert rule from compile error to saved, and an
 * invitation accepted from the link in the outbox mail.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { BASE, PASSWORD, launch, newMember, newOrganization, unique, settled } from "./helpers";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe("accounts", () => {
  it("signs up through the form and lands on the overview", async () => {
    const context = await browser.newContext({ baseURL: BASE });
    const page = await context.newPage();
    await page.goto("/");
    // Anonymous: the console sends the visitor to the login page.
    await page.waitForURL(/\/login\?next=%2F$/);
    await page.getByRole("link", { name: "Create an organization" }).click();
    const email = `signup-${unique()}@example.com`;
    await page.getByLabel("Organization name").fill("Browser Corp");
    await page.getByLabel("Your email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.waitForURL(`${BASE}/`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Security overview");
    await expect.poll(() => page.locator("header.top").textContent()).toContain("Browser Corp");
    // The session is an HttpOnly cookie: the page's script cannot read it.
    expect(await page.evaluate("document.cookie")).toBe("");
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "tp_session");
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe("Strict");
    expect(session?.path).toBe("/api");

    // Log out, then log in again and come back to the page asked for.
    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(/\/login$/);
    await page.goto("/ct?tab=filters");
    await page.waitForURL(/\/login\?next=/);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("wrong password!!");
    await page.getByRole("button", { name: "Log in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Invalid email or password");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`${BASE}/ct?tab=filters`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Certificate Transparency");
    await context.close();
  });

  it("a session that ends while the page is open sends the user to the login page", async () => {
    const admin = await newOrganization(browser, "Expiry");
    await admin.page.goto("/rdap");
    await settled(admin.page);
    // The page is open and working: its domain list has loaded.
    await admin.page.getByRole("tab", { name: "Changes" }).waitFor();
    // The session ends elsewhere (logout from another tab).
    expect((await admin.api("POST", "/api/auth/logout")).status).toBe(200);
    await admin.page.getByRole("tab", { name: "Changes" }).click();
    await admin.page.waitForURL(/\/login\?next=%2Frdap/);
    await admin.context.close();
  });

  it("accepts an invitation from the link in the outbox mail", async () => {
    const admin = await newOrganization(browser, "Inviter");
    const page = admin.page;
    const invitee = `invitee-${unique()}@example.com`;
    await page.goto("/admin?tab=invitations");
    await page.getByLabel("Email").fill(invitee);
    await page.getByLabel("RDAP").selectOption("Editor");
    await page.getByRole("button", { name: "Send invitation" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Invitation sent");
    await expect.poll(() => page.getByRole("region", { name: "Invitations" }).textContent()).toContain(invitee);

    // The mail, as the outbox shows it without SMTP: its link opens the acceptance page.
    await page.getByRole("tab", { name: "Mail outbox" }).click();
    await page.getByRole("button", { name: /You are invited/ }).first().click();
    const link = page.getByRole("dialog").getByRole("link", { name: /accept-invitation\?token=/ });
    const href = await link.getAttribute("href");
    expect(href).toMatch(/^\/accept-invitation\?token=tpi_/);

    const other = await browser.newContext({ baseURL: BASE });
    const p2 = await other.newPage();
    await p2.goto(href!);
    await p2.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await p2.getByLabel("Repeat the password").fill("a different passphrase");
    await p2.getByRole("button", { name: "Join" }).click();
    await expect.poll(() => p2.locator("[data-field-error=confirm]").textContent()).toContain("same password");
    await p2.getByLabel("Repeat the password").fill(PASSWORD);
    await p2.getByRole("button", { name: "Join" }).click();
    await p2.waitForURL(`${BASE}/`);
    // The new member sees only what an RDAP Editor may see.
    const nav = p2.getByRole("navigation", { name: "Main" });
    await expect.poll(() => nav.textContent()).toContain("RDAP");
    expect(await nav.textContent()).not.toContain("Certificate Transparency");
    expect(await nav.textContent()).not.toContain("Administration");
    // The same link a second time: the invitation is used.
    const p3 = await (await browser.newContext({ baseURL: BASE })).newPage();
    await p3.goto(href!);
    await p3.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await p3.getByLabel("Repeat the password").fill(PASSWORD);
    await p3.getByRole("button", { name: "Join" }).click();
    await expect.poll(() => p3.getByRole("alert").textContent()).toContain("invalid, expired or already used");
    await other.close();
    await admin.context.close();
  });
});

describe("CT filters", () => {
  it("creates a filter through the form and shows it in the list; a bad pattern is reported by its field", async () => {
    const admin = await newOrganization(browser, "Filters");
    const page = admin.page;
    await page.goto("/ct");
    await settled(page);
    await page.getByRole("button", { name: "Create the first filter" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Domain pattern").fill("not a domain!");
    await dialog.getByRole("button", { name: "Create filter" }).click();
    const error = dialog.locator("[data-field-error=pattern]");
    await expect.poll(() => error.textContent()).toBeTruthy();
    // The message sits under the pattern field, which says so to assistive technology.
    const input = dialog.getByLabel("Domain pattern");
    expect(await input.getAttribute("aria-invalid")).toBe("true");
    const describedBy = (await input.getAttribute("aria-describedby")) ?? "";
    expect(describedBy.split(" ")).toContain(await error.getAttribute("id"));
    expect(await dialog.textContent()).not.toContain('"success"');

    // Typosquatting on a pattern that is not one registrable domain: the error is by that checkbox.
    await input.fill("www.example.com");
    await dialog.getByLabel("Detect lookalike domains (typosquatting)").check();
    await dialog.getByRole("button", { name: "Create filter" }).click();
    await expect.poll(() => dialog.locator("[data-field-error=typosquat_enabled]").textContent()).toBeTruthy();

    const pattern = `shop-${unique()}.example`;
    await input.fill(pattern);
    await dialog.getByLabel("Detect lookalike domains (typosquatting)").uncheck();
    await dialog.getByLabel("Description").fill("the web shop");
    await dialog.getByRole("button", { name: "Create filter" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("filters left on your plan");
    const table = page.getByRole("region", { name: "CT filters" });
    await expect.poll(() => table.textContent()).toContain(pattern);
    expect(await table.textContent()).toContain("the web shop");
    const stored = await admin.api("GET", "/api/ct-log/filters");
    expect(stored.body.filters.map((f: { pattern: string }) => f.pattern)).toEqual([pattern]);

    // Toggle it off from the list.
    await table.getByLabel(`${pattern} enabled`).uncheck();
    await expect.poll(async () => (await admin.api("GET", "/api/ct-log/filters")).body.filters[0].enabled).toBe(false);
    await admin.context.close();
  });
});

describe("certificate monitors", () => {
  it("a monitor through the form with its addresses, switched off, edited, a target added and removed; an agent registered and revoked", async () => {
    const admin = await newOrganization(browser, "Monitors");
    const page = admin.page;
    page.on("dialog", (d) => void d.accept());
    await page.goto("/certificates");
    await settled(page);
    await page.getByRole("button", { name: "New monitor" }).click();
    const dialog = page.getByRole("dialog");
    const cn = `shop-${unique()}.example`;
    await dialog.getByLabel("Hostname on the certificate (CN, sent as SNI)").fill(cn);
    await dialog.getByLabel("IP addresses to scan").fill("192.0.2.10, 192.0.2.11");
    await dialog.getByRole("button", { name: "Create monitor" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("monitors left on your plan");
    const table = page.getByRole("region", { name: "Certificate monitors" });
    await expect.poll(() => table.textContent()).toContain(cn);
    const [created] = (await admin.api("GET", "/api/cert-watcher/monitors")).body.monitors;
    expect(created).toMatchObject({ cn, port: 443, starttls: null, enabled: true, indicators: { target_count: 2 } });

    await table.getByLabel(`${cn} enabled`).uncheck();
    await expect.poll(async () => (await admin.api("GET", `/api/cert-watcher/monitors/${created.id}`)).body.enabled).toBe(false);

    await table.getByRole("link", { name: cn }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(`${cn}:443`);
    await page.getByRole("button", { name: "Edit monitor" }).click();
    await page.getByRole("dialog").getByLabel("Port").fill("8443");
    await page.getByRole("dialog").getByLabel("Notes").fill("staging shop");
    await page.getByRole("dialog").getByRole("button", { name: "Save monitor" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(`${cn}:8443`);
    expect((await admin.api("GET", `/api/cert-watcher/monitors/${created.id}`)).body).toMatchObject({ port: 8443, notes: "staging shop", enabled: false });

    await page.getByLabel("IP address", { exact: true }).fill("192.0.2.12");
    await page.getByRole("button", { name: "Add target" }).click();
    const targets = page.getByRole("region", { name: "IP targets" });
    await expect.poll(() => targets.textContent()).toContain("192.0.2.12");
    await targets.getByRole("button", { name: "Remove 192.0.2.10" }).click();
    await expect.poll(async () => (await admin.api("GET", `/api/cert-watcher/monitors/${created.id}`)).body.targets.map((t: { ip_address: string }) => t.ip_address).sort()).toEqual(["192.0.2.11", "192.0.2.12"]);

    await page.goto("/certificates?tab=agents");
    await page.getByLabel("Agent name").fill("dmz-1");
    await page.getByRole("button", { name: "Register agent" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Agent token of dmz-1.");
    const agents = page.getByRole("region", { name: "Scanner agents" });
    await agents.getByRole("button", { name: "Revoke dmz-1" }).click();
    await expect.poll(() => agents.textContent()).toContain("revoked");
    expect((await admin.api("GET", "/api/cert-watcher/agents")).body.agents).toMatchObject([{ name: "dmz-1", status: "revoked" }]);
    await admin.context.close();
  });

  it("an RDAP domain through the form, switched off, edited and deleted; a DNS domain watched, switched off, a record set added and removed, email checks on", async () => {
    const admin = await newOrganization(browser, "Registrations");
    const page = admin.page;
    page.on("dialog", (d) => void d.accept());
    const name = `reg-${unique()}.example`;
    await page.goto("/rdap");
    await settled(page);
    await page.getByRole("button", { name: "Add domain" }).click();
    await page.getByRole("dialog").getByLabel("Domain name").fill(name);
    await page.getByRole("dialog").getByLabel("Notes").fill("main shop");
    await page.getByRole("dialog").getByRole("button", { name: "Add domain" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("monitors left on your plan");
    const rdap = page.getByRole("region", { name: "RDAP domains" });
    await rdap.getByLabel(`${name} enabled`).uncheck();
    const monitor = async () => (await admin.api("GET", `/api/rdap/domains?domain_name=${name}`)).body.domains[0];
    await expect.poll(async () => (await monitor()).enabled).toBe(false);
    await rdap.getByRole("button", { name: `Edit ${name}` }).click();
    await page.getByRole("dialog").getByLabel("Notes").fill("old shop");
    await page.getByRole("dialog").getByRole("button", { name: "Save" }).click();
    await expect.poll(async () => (await monitor()).notes).toBe("old shop");
    await rdap.getByRole("button", { name: `Delete ${name}` }).click();
    await expect.poll(async () => (await admin.api("GET", `/api/rdap/domains?domain_name=${name}`)).body.total).toBe(0);

    await page.goto("/dns");
    await settled(page);
    await page.getByRole("button", { name: "Watch a domain" }).click();
    await page.getByRole("dialog").getByLabel("Domain name").fill(name);
    await page.getByRole("dialog").getByRole("button", { name: "Watch domain" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("domains left on your plan");
    const [domain] = (await admin.api("GET", "/api/dns-watcher/domains")).body.domains;
    expect(domain).toMatchObject({ domain_name: name, enabled: true });
    await page.getByRole("region", { name: "DNS domains" }).getByLabel(`${name} enabled`).uncheck();
    await expect.poll(async () => (await admin.api("GET", `/api/dns-watcher/domains/${domain.id}`)).body.enabled).toBe(false);

    await page.getByRole("link", { name }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(name);
    await page.getByLabel("Name", { exact: true }).fill(`_mta-sts.${name}`);
    await page.getByRole("combobox", { name: "Type" }).selectOption("TXT");
    await page.getByRole("button", { name: "Watch record set" }).click();
    const sets = page.getByRole("region", { name: "Record sets" });
    await expect.poll(() => sets.textContent()).toContain(`_mta-sts.${name}`);
    await sets.getByRole("button", { name: `Remove _mta-sts.${name} TXT` }).click();
    await expect.poll(async () => (await admin.api("GET", `/api/dns-watcher/domains/${domain.id}`)).body.records.some((r: { name: string }) => r.name.startsWith("_mta-sts."))).toBe(false);
    await page.getByRole("button", { name: "Turn on email checks" }).click();
    await expect.poll(async () => (await admin.api("GET", `/api/dns-watcher/domains/${domain.id}`)).body.email_checks).toBe(true);
    await admin.context.close();
  });
});

describe("permissions", () => {
  it("a Viewer sees the data but no write action", async () => {
    const admin = await newOrganization(browser, "Viewer org");
    await admin.api("POST", "/api/ct-log/filters", { pattern: "viewer.example", match_type: "wide" });
    await admin.api("POST", "/api/ct-log/alert-rules", { name: "all", expression: "true", severity: "low" });
    const viewer = await newMember(browser, admin, [{ module_name: "ct-log", role_name: "Viewer" }]);
    const page = viewer.page;
    await page.goto("/ct");
    await settled(page);
    const table = page.getByRole("region", { name: "CT filters" });
    await expect.poll(() => table.textContent()).toContain("viewer.example");
    expect(await page.getByRole("button", { name: /New filter|Create the first filter/ }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^(Edit|Delete) / }).count()).toBe(0);
    expect(await page.getByRole("checkbox").count()).toBe(0);

    await page.goto("/alerting");
    await settled(page);
    await expect.poll(() => page.getByRole("region", { name: /alert rules/ }).textContent()).toContain("all");
    expect(await page.getByRole("button", { name: "New rule" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^(Edit|Delete) all/ }).count()).toBe(0);

    const nav = await page.getByRole("navigation", { name: "Main" }).textContent();
    expect(nav).not.toContain("Administration");
    expect(nav).not.toContain("RDAP");
    // The API agrees: the hidden action is refused.
    expect((await viewer.api("POST", "/api/ct-log/filters", { pattern: "x.example", match_type: "wide" })).status).toBe(403);
    await viewer.context.close();
    await admin.context.close();
  });
});

describe("alert rules", () => {
  it("shows a CEL compile error by the expression, then tests the fixed rule against a sample event and saves it", async () => {
    const admin = await newOrganization(browser, "Rules");
    const page = admin.page;
    await page.goto("/alerting?section=ct-log&tab=rules");
    await settled(page);
    await page.getByRole("button", { name: "New rule" }).click();
    await page.getByLabel("Rule name").fill("CAA violation");
    await page.getByLabel("Severity").selectOption("high");
    // The variables of the module come from introspection, and insert at the cursor.
    await page.getByRole("button", { name: "Insert caa.has_records" }).click();
    const expr = page.getByLabel("Condition (CEL)");
    expect(await expr.inputValue()).toBe("caa.has_records");
    await expr.fill("caa.has_records && !caa.authorised");
    await page.getByRole("button", { name: "Create rule" }).click();
    const exprError = page.locator("[data-field-error=expression]");
    await expect.poll(() => exprError.textContent()).toMatch(/authorised/);
    expect(await expr.getAttribute("aria-invalid")).toBe("true");

    await expr.fill("caa.has_records && !caa.authorized");
    // The sample event is prefilled from the variables; make it a violation and test.
    const sample = page.getByLabel("Sample event (JSON)");
    const event = JSON.parse(await sample.inputValue());
    expect(event.caa).toMatchObject({ has_records: false, authorized: false });
    event.caa.has_records = true;
    await sample.fill(JSON.stringify(event, null, 2));
    await page.getByRole("button", { name: "Test against the sample event" }).click();
    await expect.poll(() => page.getByTestId("test-result").textContent()).toContain("Matched");
    expect(await exprError.count()).toBe(0);
    event.caa.authorized = true;
    await sample.fill(JSON.stringify(event));
    await page.getByRole("button", { name: "Test against the sample event" }).click();
    await expect.poll(() => page.getByTestId("test-result").textContent()).toContain("Did not match");

    await page.getByRole("button", { name: "Create rule" }).click();
    const table = page.getByRole("region", { name: /alert rules/ });
    await expect.poll(() => table.textContent()).toContain("CAA violation");
    const rules = await admin.api("GET", "/api/ct-log/alert-rules");
    expect(rules.body.rules).toHaveLength(1);
    expect(rules.body.rules[0]).toMatchObject({ name: "CAA violation", severity: "high", expression: "caa.has_records && !caa.authorized", enabled: true });
    await table.getByLabel("CAA violation enabled").uncheck();
    await expect.poll(async () => (await admin.api("GET", "/api/ct-log/alert-rules")).body.rules[0].enabled).toBe(false);
    await admin.context.close();
  });
});

describe("administration", () => {
  it("an error saving a user's roles is shown inside the role dialog, not behind it", async () => {
    const admin = await newOrganization(browser, "Roles");
    const member = await newMember(browser, admin, [{ module_name: "rdap", role_name: "Viewer" }]);
    const page = admin.page;
    await page.goto("/admin");
    await settled(page);
    await page.getByRole("button", { name: `Roles of ${member.email}` }).click();
    const dialog = page.getByRole("dialog", { name: `Roles of ${member.email}` });
    await dialog.getByLabel("DNS watcher").selectOption("Editor");
    // Meanwhile another administrator removes the user: saving fails.
    const users = (await admin.api("GET", "/api/admin/users")).body.users as { id: number; email: string }[];
    expect((await admin.api("DELETE", `/api/admin/users/${users.find((x) => x.email === member.email)!.id}`)).status).toBe(200);
    await dialog.getByRole("button", { name: "Save roles" }).click();
    await expect.poll(() => dialog.getByRole("alert").textContent()).toMatch(/not found/i);
    // The dialog stays open with the choice made, so the administrator sees what failed.
    expect(await dialog.getByLabel("DNS watcher").inputValue()).toBe("Editor");
    await member.context.close();
    await admin.context.close();
  });
});
