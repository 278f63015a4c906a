/**
 * The "Mail transport security" panel of a DNS domain, in the browser. Two domains with
 * the email checks on, their records served by the hub's DoH namespace (the service's
 * DOH_RESOLVER_URLS) and their MTA-STS policies by the hub's policy server (its
 * MTA_STS_POLICY_URL, web/e2e/service.ts), observed by the scheduled runs the test fires:
 *  - one whose mechanisms are all observed: the panel says each state, what it means and
 *    what to do; a hostile BIMI record is shown as text; axe at 1280 and 390 px;
 *  - one whose policy host is down: MTA-STS reads unknown with the failed fetch's reason,
 *    never "not published".
 * Then a regression (the TLS reporting record goes) appears in the history.
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

const txt = (name: string, value: string) => ({ name, type: "TXT", ttl: 300, data: value });
const mx = (domain: string) => ({ name: domain, type: "MX", ttl: 300, data: { preference: 10, exchange: `mx1.${domain}` } });

describe("mail transport security in the console", () => {
  it("shows each mechanism's state with what it means, an unfetched policy as unknown, hostile records as text, regressions in the history", async () => {
    const admin = await newOrganization(browser, "Mail");
    const page = admin.page;
    const domain = `mail-${unique()}.example`;
    const blind = `mailblind-${unique()}.example`;
    await hubPost("/doh/__control/records", {
      ns: HUB_SETUP.ns,
      records: [
        mx(domain),
        txt(domain, "v=spf1 mx -all"),
        txt(`_dmarc.${domain}`, "v=DMARC1; p=none"),
        txt(`_mta-sts.${domain}`, "v=STSv1; id=1"),
        txt(`_smtp._tls.${domain}`, "v=TLSRPTv1; rua=mailto:tls@example.net"),
        txt(`s1._domainkey.${domain}`, `v=DKIM1; k=rsa; p=${RSA1024}`),
        txt(`default._bimi.${domain}`, 'v=BIMI1; l=https://x.example/<img src=x onerror="alert(1)">.png'),
        mx(blind),
        txt(`_mta-sts.${blind}`, "v=STSv1; id=7"),
      ],
    });
    await hubPost("/mta-sts/__control/policy", { domain, body: `version: STSv1\nmode: testing\nmx: mx1.${domain}\nmax_age: 86400\n` });
    await hubPost("/mta-sts/__control/policy", { domain: blind, down: true });
    try {
      const create = async (name: string, extra: object) => {
        const r = await admin.api("POST", "/api/dns-watcher/domains", { domain_name: name, email_checks: true, ...extra });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        return r.body.id as number;
      };
      const id = await create(domain, { dkim_selectors: ["s1"] });
      const blindId = await create(blind, {});
      const email = async (domainId: number) => (await admin.api("GET", `/api/dns-watcher/domains/${domainId}`)).body.email_security;
      // The first run reads the records (and fetches the policy the _mta-sts record advertises),
      // the next one the TLSA records of the MX hosts it found: fire runs until both are in.
      await poll(async () => {
        const [a, b] = [await email(id), await email(blindId)];
        if (a.mta_sts.status === "ok" && a.dane.status !== "unknown" && b.mta_sts.policy.collection.failures > 0) return true;
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
      // Per MX host: its TLSA state, what it serves on port 25, and the offer of a port-25 certificate monitor.
      expect(text).toMatch(/mx1\.\S+\s+missing[\s\S]+served on port 25:\s+not scanned yet/);
      expect(await panel.getByRole("button", { name: `Monitor mx1.${domain} on port 25` }).count()).toBe(1);
      expect(text).toMatch(/DKIM\s+ok[\s\S]+s1\s+ok\s+rsa 1024 bits \(legacy\)/);
      expect(text).toMatch(/Selector s1: RSA key of 1024 bits; 2048 bits is the recommended size/);
      expect(text).toMatch(/BIMI\s+invalid[\s\S]+l='https:\/\/x\.example\/<img src=x onerror="alert\(1\)">\.png' does not name an SVG file/);
      expect(await page.locator("section img[src=x]").count()).toBe(0);
      const problems = await checkAtWidths(page, "dns-email-security");
      expect(problems).toEqual([]);

      // The policy that could not be fetched: unknown, with why; never "not published".
      await visit(page, `/dns/${blindId}`);
      await settled(page);
      const sts = page.locator('[data-mechanism="mta_sts"]');
      await expect.poll(() => sts.innerText()).toMatch(/^unknown\s+Not observed yet: the record was not resolved or the policy not fetched/);
      const stsText = await sts.innerText();
      expect(stsText).toMatch(/The policy could not be fetched: MTA-STS policy fetch: connection to 127\.0\.0\.1:\d+ failed/);
      // One failed fetch says when it failed; two in a row (two runs may have fetched already) since when it fails.
      expect(stsText).toMatch(/policy fetch (failed|failing since) .+: MTA-STS policy fetch: connection to/);
      expect(stsText).not.toMatch(/missing|Without MTA-STS|not published/);

      // A regression: the TLS reporting record goes; the next run records it and the history says so.
      await hubPost("/doh/__control/records", { ns: HUB_SETUP.ns, records: [txt(`_smtp._tls.${domain}`, "not a report record")] });
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
