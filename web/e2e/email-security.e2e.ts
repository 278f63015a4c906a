/**
 * The "Mail transport security" panel of a DNS domain, in the browser: a domain with the
 * email checks on, its records served by the hub's DoH namespace and its MTA-STS policy
 * by the hub's policy server, after two scheduled runs. The panel says each mechanism's
 * state, what it means and what to do; a hostile BIMI record is shown as text; the page
 * passes axe and is screenshotted at 1280 and 390 px.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { checkAtWidths, HUB_SETUP, hubPost, launch, newOrganization, poll, runCron, settled, unique, visit } from "./helpers";
import { HUB_DNS_RECORDS } from "./seed";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

/** A 1024-bit RSA key (openssl), a legacy size. */
const RSA1024 =
  "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDacGCCYN+gyxoaD/6KbEAvK4kTq0ouDIJw8YiJLUwTLQ4AbqP53RryUh1brqJnHilEkuZg8Im7tP/Q6QCEH+Erc/fYYJVYYX04O3/HOA3B5BETHcqtOMwLhvjdOh84/g1h3wfjpsP5aeTf0NXFowR1yLA/o3OTx2j7WVPveo57IQIDAQAB";

describe("mail transport security in the console", () => {
  it("shows each mechanism's state with what it means, the regressions in the history, hostile records as text", async () => {
    const admin = await newOrganization(browser, "Mail");
    const page = admin.page;
    const domain = `mail-${unique()}.example`;
    const txt = (name: string, value: string) => ({ name, type: "TXT", ttl: 300, data: value });
    const records = [
      { name: domain, type: "A", ttl: 300, data: "192.0.2.10" },
      { name: domain, type: "MX", ttl: 300, data: { preference: 10, exchange: `mx1.${domain}` } },
      txt(domain, "v=spf1 mx -all"),
      txt(`_dmarc.${domain}`, "v=DMARC1; p=none"),
      txt(`_mta-sts.${domain}`, "v=STSv1; id=1"),
      txt(`_smtp._tls.${domain}`, "v=TLSRPTv1; rua=mailto:tls@example.net"),
      txt(`s1._domainkey.${domain}`, `v=DKIM1; k=rsa; p=${RSA1024}`),
      txt(`default._bimi.${domain}`, 'v=BIMI1; l=https://x.example/<img src=x onerror="alert(1)">.png'),
    ];
    await hubPost("/doh/__control/records", { ns: HUB_SETUP.ns, records });
    await hubPost("/mta-sts/__control/policy", { domain, body: `version: STSv1\nmode: testing\nmx: mx1.${domain}\nmax_age: 86400\n` });
    try {
      const created = await admin.api("POST", "/api/dns-watcher/domains", { domain_name: domain, email_checks: true, dkim_selectors: ["s1"] });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id;
      await poll(async () => {
        const d = await admin.api("GET", `/api/dns-watcher/domains/${id}`);
        if (d.body.email_security.mta_sts.status === "ok" && d.body.email_security.dane.status !== "unknown") return true;
        await runCron();
        return false;
      }, "email checks observed");

      await visit(page, `/dns/${id}`);
      await settled(page);
      const panel = page.locator("section").filter({ hasText: "Mail transport security" });
      await expect.poll(() => panel.innerText()).toMatch(/MTA-STS\s+ok\s+Sending servers that support MTA-STS/);
      const text = await panel.innerText();
      expect(text).toMatch(/policy mode testing, max_age 86400 s, mx mx1\.\S+/);
      expect(text).toMatch(/Mode testing: senders report failures but still deliver without TLS; switch to enforce/);
      expect(text).toMatch(/TLS reporting\s+ok[\s\S]+reports to mailto:tls@example\.net/);
      expect(text).toMatch(/DANE\s+missing\s+No MX host publishes TLSA records/);
      expect(text).toMatch(/DKIM\s+ok[\s\S]+s1\s+ok\s+rsa 1024 bits \(legacy\)/);
      expect(text).toMatch(/Selector s1: RSA key of 1024 bits; 2048 bits is the recommended size/);
      expect(text).toMatch(/BIMI\s+invalid[\s\S]+l='https:\/\/x\.example\/<img src=x onerror="alert\(1\)">\.png' does not name an SVG file/);
      expect(await page.locator("section img[src=x]").count()).toBe(0);
      const problems = await checkAtWidths(page, "dns-email-security");
      expect(problems).toEqual([]);

      // A regression: the TLS reporting record goes; the next run records it and the history says so.
      await hubPost("/doh/__control/records", { ns: HUB_SETUP.ns, records: [{ name: `_smtp._tls.${domain}`, type: "TXT", ttl: 300, data: "not a report record" }] });
      await poll(async () => {
        const h = await admin.api("GET", `/api/dns-watcher/domains/${id}/history`);
        if (h.body.changes.some((c: { kind: string }) => c.kind === "email")) return true;
        await runCron();
        return false;
      }, "the TLS-RPT regression");
      await visit(page, `/dns/${id}`);
      await settled(page);
      const history = page.locator("section").filter({ hasText: "History of changes" });
      await expect.poll(() => history.innerText()).toMatch(/regression\s+_smtp\._tls\.\S+\s+TLS reporting removed: the _smtp\._tls TXT record is gone/);
    } finally {
      await hubPost("/doh/__control/zone", { ns: HUB_SETUP.ns, records: HUB_DNS_RECORDS });
    }
    await admin.context.close();
  });
});
