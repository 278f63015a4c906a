/**
 * Every page of the console with real data behind it: CT matches ingested from the
 * fixture hub's logs through the Cron Trigger, RDAP snapshots from its RDAP server
 * (one registration changed between two runs), scans posted by an agent with real
 * scanner-node results, alert rules that fired to a webhook, users, invitations,
 * tokens. Each page is screenshotted at 1280 and 390 px and scanned with axe-core:
 * no serious or critical violation anywhere.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE, HUB, axe, visit, describeViolations, hubPost, launch, newMember, newOrganization, poll, runCron, screenshots, settled, unique, type AxeViolation, type User } from "./helpers";

const certFixtures = join(dirname(fileURLToPath(import.meta.url)), "../../test/cert-watcher/fixtures");
const scanResult = (name: string, daysLeft?: number) => {
  const r = JSON.parse(readFileSync(join(certFixtures, `${name}.json`), "utf8"));
  if (r.certificate && daysLeft !== undefined) {
    const now = Date.now();
    r.certificate.not_after = new Date(now + daysLeft * 86_400_000 + 3_600_000).toISOString();
    r.certificate.not_before = new Date(now + daysLeft * 86_400_000 - 200 * 86_400_000).toISOString();
    r.validity_days = daysLeft;
  }
  return r;
};

/** A self-signed certificate for `names` (a lookalike seen in a CT log), made by openssl. */
function certificateFor(names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "tp-cert-"));
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "90",
      "-subj", `/CN=${names[0]}`, "-addext", `subjectAltName=${names.map((n) => `DNS:${n}`).join(",")}`,
      "-keyout", join(dir, "key.pem"), "-outform", "DER", "-out", join(dir, "cert.der"),
    ], { stdio: "ignore" });
    return readFileSync(join(dir, "cert.der")).toString("base64");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let browser: Browser;
let admin: User;
let viewer: User;
const ids: Record<string, string> = {};

beforeAll(async () => {
  browser = await launch();
  admin = await newOrganization(browser, "Example Corp");
  const u = unique().replace(/[^a-z0-9]/g, "");

  // Alerting first, so that the ingestion below fires it.
  const hook = await admin.api("POST", "/api/notification-channels", { name: "SOC webhook", kind: "webhook", url: `${HUB}/webhook/web${u}` });
  expect(hook.status).toBe(201);
  await admin.api("POST", "/api/notification-channels", { name: "Security team", kind: "email", recipients: ["security@example.com"] });
  const tpl = await admin.api("POST", "/api/ct-log/alert-templates", { name: "Short", subject: "[{{cert.subject}}] CAA", body: "Issuer {{cert.issuer}} for {{cert.dns_names}}" });
  expect(tpl.status).toBe(201);
  expect((await admin.api("POST", "/api/ct-log/alert-rules", { name: "CAA violation", expression: "caa.has_records && !caa.authorized", severity: "high", channel_ids: [hook.body.id], template_id: tpl.body.id })).status).toBe(201);
  expect((await admin.api("POST", "/api/cert-watcher/alert-rules", { name: "Expiring soon", expression: "validity_days < 30", severity: "medium", channel_ids: [hook.body.id] })).status).toBe(201);
  expect((await admin.api("POST", "/api/lists", { name: "dmz", list_type: "ip", description: "DMZ networks", entries: ["192.0.2.0/24", "2001:db8::/32"] })).status).toBe(201);

  // CT: filters, then real entries appended to the logs the service reads.
  for (const f of [
    { pattern: "chixbbq.org", match_type: "wide", feed_dns_enabled: true, description: "Restaurant brand" },
    { pattern: "cynova.dev", match_type: "wide", feed_certs_enabled: true },
    { pattern: "paypal.com", match_type: "wide", typosquat_enabled: true, description: "Payments" },
    { pattern: "www.example.com", match_type: "exact" },
  ]) {
    const r = await admin.api("POST", "/api/ct-log/filters", f);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  await hubPost("/ctlog/webtiles/__control/copy", { from: "navigli2025h2", start: 256, end: 1024 });
  await hubPost("/ctlog/webrfc/__control/entries", { certificates: [certificateFor(["paypa1.com", "www.paypa1.com"]), certificateFor(["paypal-login.com"])] });

  // DNS: a zone on the hub's DoH resolver, watched, then edited between two runs.
  const zone = `shop${u}.test`;
  const caa = { name: "chixbbq.org", type: "CAA", ttl: 300, data: { flags: 0, tag: "issue", value: ";" } };
  const dnsZone = (a: string, dmarc: string) => [
    caa,
    { name: zone, type: "A", data: a },
    { name: zone, type: "AAAA", data: "2001:db8::10" },
    { name: zone, type: "MX", data: { preference: 10, exchange: `mx1.${zone}` } },
    { name: zone, type: "TXT", data: ["v=spf1 ip4:192.0.2.0/24 ~all"] },
    { name: zone, type: "CAA", data: { flags: 0, tag: "issue", value: "letsencrypt.org" } },
    { name: `_dmarc.${zone}`, type: "TXT", data: [dmarc] },
  ];
  await hubPost("/doh/__control/zone", { ns: "web", records: dnsZone("192.0.2.10", `v=DMARC1; p=quarantine; rua=mailto:dmarc@${zone}`) });
  const dnsDomain = await admin.api("POST", "/api/dns-watcher/domains", { domain_name: zone, notes: "Shop" });
  expect(dnsDomain.status, JSON.stringify(dnsDomain.body)).toBe(201);
  ids.dnsDomain = String(dnsDomain.body.id);
  await admin.api("POST", "/api/dns-watcher/domains", { domain_name: `brand${u}.test`, enabled: false });

  // RDAP: two domains; one changes registrar data between two scheduled runs.
  const shop = `shop${u}.com`;
  const brand = `brand${u}.fr`;
  for (const d of [shop, brand]) expect((await admin.api("POST", "/api/rdap/domains", { domain_name: d, notes: d.endsWith(".fr") ? "French market" : "Main shop" })).status).toBe(201);

  // Certificates: monitors, an agent, and real scanner-node results posted as the agent does.
  const m1 = await admin.api("POST", "/api/cert-watcher/monitors", { cn: "www.example.test", ip_addresses: ["192.0.2.10", "192.0.2.11"], notes: "Public site" });
  const m2 = await admin.api("POST", "/api/cert-watcher/monitors", { cn: "legacy.example.test", port: 8443, ip_addresses: ["192.0.2.12"] });
  const m3 = await admin.api("POST", "/api/cert-watcher/monitors", { cn: "mail.example.test", port: 587, ip_addresses: ["192.0.2.13"] });
  expect([m1.status, m2.status, m3.status]).toEqual([201, 201, 201]);
  ids.monitor = String(m1.body.id);
  const agent = await admin.api("POST", "/api/cert-watcher/agents", { name: "dmz-scanner" });
  expect(agent.status).toBe(201);
  await admin.api("POST", "/api/cert-watcher/agents", { name: "old-scanner" }).then((a) => admin.api("DELETE", `/api/cert-watcher/agents/${a.body.id}`));

  await runCron();
  const results: Record<string, unknown> = {
    "192.0.2.10": scanResult("ecdsa-trusted", 64),
    "192.0.2.11": scanResult("rsa-self-signed", 12),
    "192.0.2.12": scanResult("legacy-weak", -3),
    "192.0.2.13": scanResult("refused"),
  };
  const leased = await poll(async () => {
    const r = await fetch(`${BASE}/api/cert-watcher/agents/lease`, { method: "POST", headers: { authorization: `Bearer ${agent.body.token}`, "content-type": "application/json" }, body: JSON.stringify({ max_jobs: 10 }) });
    const body = (await r.json()) as { jobs: { job_id: number; ip_address: string }[] };
    return body.jobs.length ? body.jobs : null;
  }, "scan jobs");
  for (const job of leased) {
    const r = await fetch(`${BASE}/api/cert-watcher/agents/results`, {
      method: "POST",
      headers: { authorization: `Bearer ${agent.body.token}`, "content-type": "application/json" },
      body: JSON.stringify({ job_id: job.job_id, result: results[job.ip_address] }),
    });
    expect(r.status, await r.clone().text()).toBe(200);
  }

  // Wait for the CT ingestion of the appended entries and the first RDAP snapshots.
  await poll(async () => (await admin.api("GET", "/api/ct-log/typosquatting/matches")).body.total > 0 && (await admin.api("GET", "/api/ct-log/matches")).body.total > 20, "CT matches");
  await poll(async () => (await admin.api("GET", `/api/rdap/domains/${shop}/history`)).status === 200, "the first RDAP snapshot");
  const original = await (await fetch(`${HUB}/rdap/domain/${shop}`)).json();
  const changed = structuredClone(original) as any;
  changed.nameservers = [{ objectClassName: "nameserver", ldhName: "NS1.NEW-DNS.EXAMPLE" }, { objectClassName: "nameserver", ldhName: "NS2.NEW-DNS.EXAMPLE" }];
  changed.status = ["client transfer prohibited", "client delete prohibited"];
  for (const e of changed.events ?? []) if (e.eventAction === "expiration") e.eventDate = new Date(Date.now() + 21 * 86_400_000).toISOString().replace(/\.\d+Z$/, "Z");
  await hubPost(`/rdap/__control/domain/${shop}`, { body: changed });
  await poll(async () => (await admin.api("GET", `/api/dns-watcher/domains/${ids.dnsDomain}`)).body.last_checked_at, "the first DNS resolution");
  await hubPost("/doh/__control/zone", { ns: "web", records: dnsZone("192.0.2.11", `v=DMARC1; p=none; rua=mailto:dmarc@${zone}`) });
  await runCron();
  await poll(async () => {
    if ((await admin.api("GET", `/api/dns-watcher/domains/${ids.dnsDomain}/history`)).body.total >= 2) return true;
    await runCron();
    return false;
  }, "the DNS changes");
  const change = await poll(async () => (await admin.api("GET", "/api/rdap/changes")).body.changes.find((c: any) => c.domain_name === shop && c.previous_snapshot_id), "the RDAP change");
  ids.rdapDomain = shop;
  ids.rdapFrom = change.previous_snapshot_id;
  ids.rdapTo = change.snapshot_id;
  const match = (await admin.api("GET", "/api/ct-log/matches?sort_by=certificate_domain")).body.matches.find((m: any) => m.caa_violation);
  ids.match = match.sha256;
  const typo = (await admin.api("GET", "/api/ct-log/typosquatting/matches")).body.matches[0];
  ids.typo = `${typo.sha256}?filter_id=${typo.filter_id}&candidate_domain=${encodeURIComponent(typo.candidate_domain)}`;

  // People and tokens.
  viewer = await newMember(browser, admin, [
    { module_name: "ct-log", role_name: "Viewer" },
    { module_name: "rdap", role_name: "Viewer" },
  ]);
  await admin.api("POST", "/api/admin/invitations", { email: `pending-${u}@example.com`, roles: [{ module_name: "cert-watcher", role_name: "Editor" }] });
  await admin.api("POST", "/api/api-tokens", { name: "ci-deploy", validity_days: 30, scopes: ["rdap:view_monitoring", "ct-log:view_monitoring"] });
  await admin.api("POST", "/api/api-tokens", { name: "old-script", validity_days: 7, scopes: ["rdap:view_monitoring"] }).then((t) => admin.api("DELETE", `/api/api-tokens/${t.body.id}`));
}, 240_000);

afterAll(async () => {
  await browser?.close();
});

interface PageCase {
  name: string;
  path: () => string;
  as?: () => User;
  /** After load: what must be on the page, or an action to reach the state shown. */
  then?: (page: Page) => Promise<void>;
}

const text = (page: Page) => page.locator("main").innerText();

const PAGES: PageCase[] = [
  {
    name: "overview",
    path: () => "/",
    then: async (p) => {
      await expect.poll(() => text(p)).toMatch(/Security overview/);
      await expect.poll(() => p.getByTestId("whats-new").innerText()).toMatch(/new certificate match/);
    },
  },
  { name: "ct-filters", path: () => "/ct", then: async (p) => void (await expect.poll(() => text(p)).toContain("chixbbq.org")) },
  { name: "ct-matches", path: () => "/ct?tab=matches", then: async (p) => void (await expect.poll(() => text(p)).toContain("Matches per day")) },
  { name: "ct-match-detail", path: () => `/ct/matches/${ids.match}`, then: async (p) => void (await expect.poll(() => p.getByTestId("caa-verdict").innerText()).toContain("CAA violation")) },
  { name: "ct-typosquatting", path: () => "/ct?tab=typosquatting", then: async (p) => void (await expect.poll(() => text(p)).toContain("paypa1.com")) },
  { name: "ct-typosquat-detail", path: () => `/ct/typosquatting/${ids.typo}`, then: async (p) => void (await expect.poll(() => text(p)).toContain("Why it looks like your domain")) },
  { name: "ct-proposals", path: () => "/ct?tab=proposals", then: async (p) => void (await expect.poll(() => text(p)).toMatch(/DNS monitoring|Certificate monitoring/)) },
  { name: "ct-logs", path: () => "/ct?tab=logs", then: async (p) => void (await expect.poll(() => text(p)).toContain("Fixture 'webtiles' log")) },
  { name: "dns", path: () => "/dns", then: async (p) => void (await expect.poll(() => text(p)).toContain("Shop")) },
  {
    name: "dns-domain",
    path: () => `/dns/${ids.dnsDomain}`,
    then: async (p) => {
      await expect.poll(() => p.getByRole("region", { name: "DNS changes" }).innerText()).toContain("192.0.2.11");
      await expect.poll(() => text(p)).toMatch(/DMARC[\s\S]*policy none/);
    },
  },
  { name: "rdap-domains", path: () => "/rdap", then: async (p) => void (await expect.poll(() => text(p)).toContain(ids.rdapDomain)) },
  { name: "rdap-changes", path: () => "/rdap?tab=changes", then: async (p) => void (await expect.poll(() => text(p)).toContain("Compare before and after")) },
  {
    name: "rdap-diff",
    path: () => `/rdap/${ids.rdapDomain}?from=${encodeURIComponent(ids.rdapFrom)}&to=${encodeURIComponent(ids.rdapTo)}`,
    then: async (p) => {
      const diff = p.getByRole("region", { name: "Changed fields side by side" });
      await expect.poll(() => diff.innerText()).toMatch(/NS1\.NEW-DNS\.EXAMPLE/i);
      await expect.poll(() => text(p)).toMatch(/Expires[\s\S]*\d+ days/);
    },
  },
  { name: "certificates", path: () => "/certificates", then: async (p) => void (await expect.poll(() => text(p)).toContain("legacy.example.test")) },
  { name: "certificates-scans", path: () => "/certificates?tab=scans", then: async (p) => void (await expect.poll(() => text(p)).toMatch(/Days until each served certificate expires/)) },
  { name: "certificates-agents", path: () => "/certificates?tab=agents", then: async (p) => void (await expect.poll(() => text(p)).toContain("dmz-scanner")) },
  {
    name: "certificate-monitor",
    path: () => `/certificates/${ids.monitor}`,
    then: async (p) => {
      await p.getByRole("button", { name: "Show" }).first().click();
      await expect.poll(() => text(p)).toMatch(/Framework verdicts[\s\S]*PCI DSS/);
    },
  },
  { name: "alerting-rules", path: () => "/alerting?section=ct-log&tab=rules", then: async (p) => void (await expect.poll(() => text(p)).toContain("CAA violation")) },
  {
    name: "alerting-rule-editor",
    path: () => "/alerting?section=cert-watcher&tab=rules",
    then: async (p) => {
      await p.getByRole("button", { name: "Edit Expiring soon" }).click();
      await expect.poll(() => text(p)).toContain("validity_days");
    },
  },
  { name: "alerting-templates", path: () => "/alerting?section=ct-log&tab=templates", then: async (p) => void (await expect.poll(() => text(p)).toContain("Short")) },
  { name: "alerting-history", path: () => "/alerting?section=ct-log&tab=history", then: async (p) => void (await expect.poll(() => text(p)).toMatch(/delivered|pending|retrying/)) },
  { name: "alerting-channels", path: () => "/alerting?section=channels", then: async (p) => void (await expect.poll(() => text(p)).toContain("SOC webhook")) },
  { name: "alerting-lists", path: () => "/alerting?section=lists", then: async (p) => void (await expect.poll(() => text(p)).toContain("dmz")) },
  { name: "admin-users", path: () => "/admin", then: async (p) => void (await expect.poll(() => text(p)).toContain(viewer.email)) },
  { name: "admin-invitations", path: () => "/admin?tab=invitations", then: async (p) => void (await expect.poll(() => text(p)).toContain("pending-")) },
  { name: "admin-roles", path: () => "/admin?tab=roles", then: async (p) => void (await expect.poll(() => text(p)).toContain("Token Admin")) },
  { name: "admin-tokens", path: () => "/admin?tab=tokens", then: async (p) => void (await expect.poll(() => text(p)).toContain("ci-deploy")) },
  { name: "admin-audit", path: () => "/admin?tab=audit", then: async (p) => void (await expect.poll(() => text(p)).toContain("ct_filter")) },
  { name: "admin-subscription", path: () => "/admin?tab=subscription", then: async (p) => void (await expect.poll(() => text(p)).toMatch(/free/i)) },
  { name: "admin-outbox", path: () => "/admin?tab=outbox", then: async (p) => void (await expect.poll(() => text(p)).toContain("You are invited")) },
  { name: "reports", path: () => "/reports" },
  { name: "viewer-ct", path: () => "/ct", as: () => viewer, then: async (p) => void (await expect.poll(() => text(p)).toContain("chixbbq.org")) },
  { name: "not-found", path: () => "/no/such/page", then: async (p) => void (await expect.poll(() => text(p)).toContain("Page not found")) },
];

/** Elements wider than the viewport at 390 px (a page must not scroll sideways; tables scroll inside their region). */
async function overflow(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const w = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= w) return [];
    return [...document.querySelectorAll("main *")]
      .filter((e) => e.getBoundingClientRect().right > w + 1 && !e.closest(".table-scroll, pre, .tabs"))
      .slice(0, 5)
      .map((e) => e.tagName.toLowerCase() + "." + [...e.classList].join(".") + " " + Math.round(e.getBoundingClientRect().right) + "px: " + (e.textContent || "").slice(0, 60));
  })()`);
}

describe("every page", () => {
  it("renders with real data, has no serious or critical axe violation, fits 390 px, and is screenshotted at 1280 and 390 px", async () => {
    const problems: string[] = [];
    for (const c of PAGES) {
      const t0 = Date.now();
      const who = c.as?.() ?? admin;
      const page = who.page;
      await page.setViewportSize({ width: 1280, height: 900 });
      await visit(page, c.path());
      await settled(page);
      await c.then?.(page);
      await settled(page);
      const violations = await axe(page);
      if (violations.length) problems.push(`== ${c.name}\n${describeViolations(violations)}`);
      await screenshots(page, c.name);
      await page.setViewportSize({ width: 390, height: 844 });
      const wide = await overflow(page);
      if (wide.length) problems.push(`== ${c.name} is wider than 390 px:\n   ${wide.join("\n   ")}`);
      console.log(`[pages] ${c.name}: ${Date.now() - t0} ms`);
    }
    expect(problems.join("\n"), problems.join("\n")).toBe("");
  }, 400_000);

  it("the public pages (login, signup, invitation) pass the same scan", async () => {
    const context = await browser.newContext({ baseURL: BASE, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const found: string[] = [];
    for (const [name, path] of [
      ["login", "/login"],
      ["signup", "/signup"],
      ["accept-invitation", "/accept-invitation?token=tpi_example"],
    ]) {
      await page.goto(path);
      await settled(page);
      await page.getByRole("heading", { level: 1 }).waitFor();
      const vs = await axe(page);
      if (vs.length) found.push(`== ${name}\n${describeViolations(vs)}`);
      await screenshots(page, name);
    }
    expect(found.join("\n"), found.join("\n")).toBe("");
    await context.close();
  });

  it("the API reference renders from this origin only, without the internet", async () => {
    const context = await browser.newContext({ baseURL: BASE });
    const page = await context.newPage();
    const outside: string[] = [];
    await page.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === "127.0.0.1" || url.protocol === "data:" || url.protocol === "blob:") return route.continue();
      outside.push(url.href);
      return route.abort();
    });
    await page.goto("/api/docs");
    await expect.poll(() => page.locator("body").innerText(), { timeout: 30_000 }).toContain("Trust-Plane API");
    await expect.poll(() => page.locator("body").innerText()).toContain("/api/ct-log/filters");
    await screenshots(page, "api-docs");
    expect(outside).toEqual([]);
    await context.close();
  });
});
