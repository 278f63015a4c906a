/**
 * Mail transport security in the weekly report, over data the DNS watcher recorded from
 * the DNS lab's signed zones and the fixture hub's MTA-STS policy server, through the
 * Cron Trigger: between two runs a domain lowers its MTA-STS mode, breaks its TLS
 * reporting record with a hostile value (a line break and markup) and weakens its DKIM
 * key; another domain's policy host is down. The report's finding "Mail transport security
 * weakened" carries each regression as evidence with the state before and after; its PDF
 * shows the hostile value with its line break made visible (no forged line), and the
 * appendix states each mechanism at generation, the unreachable policy as "Not observed"
 * with its reason, never as a pass or "not published".
 */
import { describe, expect, it } from "vitest";
import { call, signup } from "../helpers";
import { labDohUrl, putZone, uniqueZone } from "../dns-watcher/lab";
import * as K from "../dns-watcher/email-keys";
import { createDb } from "../../src/db/client";
import { loadConfig } from "../../src/env";
import { generateWeeklyReport } from "../../src/modules/reports/generation-service";
import { visibleText } from "../../src/modules/reports/pdf/text";
import { E, callAt, clock, cron, download } from "./helpers";
import { inspectPdf, renderPdfPages, squash } from "./poppler";

const started = new Date(Date.now() - 60_000);
const POLICY_URL = `${E.FIXTURE_URL}/mta-sts/{domain}/.well-known/mta-sts.txt`;
const dnsCron = async () => cron({ DOH_RESOLVER_URLS: await labDohUrl(), DNS_CHECK_INTERVAL_SECONDS: "0", DNS_TIMEOUT_MS: "2000", MTA_STS_POLICY_URL: POLICY_URL });
const setPolicy = (domain: string, p: Record<string, unknown>) => fetch(`${E.FIXTURE_URL}/mta-sts/__control/policy`, { method: "POST", body: JSON.stringify({ domain, ...p }) });
const POLICY = (z: string, mode: string) => `version: STSv1\r\nmode: ${mode}\r\nmx: mx1.${z}\r\nmax_age: 604800\r\n`;

/** A TLS reporting record whose rua carries a line break (zone-file \010) and markup: hostile text the PDF must not obey. */
const HOSTILE_RUA = "javascript:alert(1)\\010Observed 2020-01-01 00:00 UTC <b>forged</b>";
const zone = (o: { stsId: string; tlsRpt: string; dkim: string }) =>
  [
    "@ IN MX 10 mx1",
    "mx1 IN A 192.0.2.25",
    '_dmarc IN TXT "v=DMARC1; p=reject"',
    `_mta-sts IN TXT "v=STSv1; id=${o.stsId}"`,
    `_smtp._tls IN TXT "${o.tlsRpt}"`,
    `s1._domainkey IN TXT ${(`v=DKIM1; k=rsa; p=${o.dkim}`.match(/.{1,200}/g) ?? []).map((p) => `"${p}"`).join(" ")}`,
    `_25._tcp.mx1 IN TLSA 3 1 1 ${K.MX_SPKI_SHA256}`,
  ].join("\n") + "\n";

describe("mail transport security in the weekly report", () => {
  it("a regression over the week is a finding with its evidence; the appendix states each mechanism, an unfetched policy as not observed", async () => {
    const org = await signup("Mail Report");
    const z = uniqueZone("rep");
    const blind = uniqueZone("repb");
    await putZone(z, zone({ stsId: "a1", tlsRpt: "v=TLSRPTv1; rua=mailto:tls@example.net", dkim: K.RSA2048_SPKI }));
    await putZone(blind, `@ IN MX 10 mx1\nmx1 IN A 192.0.2.26\n_mta-sts IN TXT "v=STSv1; id=b1"\n`);
    await setPolicy(z, { body: POLICY(z, "enforce") });
    await setPolicy(blind, { down: true });
    for (const [name, extra] of [[z, { dkim_selectors: ["s1"] }], [blind, {}]] as const) {
      const r = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: name, email_checks: true, ...extra } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    // The records and the policies, then the MX hosts' TLSA records.
    await dnsCron();
    await dnsCron();

    // The week's regressions: mode lowered (announced with a new id), TLS reporting broken with a hostile value, DKIM key weakened.
    await setPolicy(z, { body: POLICY(z, "testing") });
    await putZone(z, zone({ stsId: "a2", tlsRpt: `v=TLSRPTv1; rua=${HOSTILE_RUA}`, dkim: K.RSA1024_SPKI }));
    await dnsCron();

    const now = clock.advance(1000);
    const made = await generateWeeklyReport({ db: createDb(E.DB), config: loadConfig(E as never), now }, { id: org.organizationId, name: "Mail Report Corp" }, { start: started, end: new Date(now.getTime() + 1000) });
    expect(made.created).toBe(true);
    const finding = made.result.findings.find((f) => f.id === "dns.email_transport_weakened")!;
    expect(finding).toMatchObject({ severity: "high", score_impact: 15, category: "dns", affected_assets: 1, evidence_total: 3 });
    expect(made.result.findings.map((f) => f.id).filter((id) => id.startsWith("dns."))).toEqual(["dns.email_transport_weakened"]);
    expect(made.result.category_scores.dns).toBe(85);
    const byRecord = (name: string) => finding.evidence.find((e) => e.detail.endsWith(`(${name} TXT)`))!;
    expect(byRecord(`_mta-sts.${z}`)).toMatchObject({
      asset: z,
      detail: `MTA-STS mode lowered from enforce to testing (_mta-sts.${z} TXT)`,
      old_value: `v=STSv1; id=a1 | policy mode enforce, max_age 604800 s, mx mx1.${z}`,
      new_value: `v=STSv1; id=a2 | policy mode testing, max_age 604800 s, mx mx1.${z}`,
    });
    const rpt = byRecord(`_smtp._tls.${z}`);
    expect(rpt.detail).toBe(`TLS reporting record broken: 'javascript:alert(1)\nObserved 2020-01-01 00:00 UTC <b>forged</b>' is neither mailto: nor https: (_smtp._tls.${z} TXT)`);
    expect(rpt).toMatchObject({ old_value: "v=TLSRPTv1; rua=mailto:tls@example.net", new_value: "v=TLSRPTv1; rua=javascript:alert(1)\nObserved 2020-01-01 00:00 UTC <b>forged</b>" });
    expect(byRecord(`s1._domainkey.${z}`)).toMatchObject({
      detail: `DKIM key of selector s1 changed (rsa 1024 bits); DKIM key of selector s1 weakened: rsa 2048 bits to rsa 1024 bits (s1._domainkey.${z} TXT)`,
      old_value: "rsa 2048 bits",
      new_value: "rsa 1024 bits",
    });

    // The PDF, downloaded as a user does: the finding with its evidence, the hostile value quoted with its line break shown.
    const [report] = (await callAt("GET", "/api/reports", org.session)).body.data;
    const pdf = await download(org.session, report.id);
    expect(pdf.status).toBe(200);
    const doc = await inspectPdf(pdf.bytes);
    const text = squash(doc.text);
    expect(text).toContain("Mail transport security weakened");
    expect(text).toContain("MTA-STS mode lowered from enforce to testing");
    const flat = doc.text.replace(/\s+/g, " ");
    expect(flat).toMatch(/Before v=STSv1; id=a1 \| policy mode enforce/);
    expect(flat).toContain("alert(1)\\nObserved 2020-01-01 00:00 UTC <b>forged</b>");
    // No line of the PDF starts with the forged text: the line break was not obeyed.
    expect(doc.text.split("\n").filter((l) => /^\s*Observed 2020/.test(l))).toEqual([]);
    expect(visibleText("a\nb\u202Ec\u0080")).toBe("a\\nb\\u202Ec\\u0080");

    // The appendix: each mechanism of each domain at generation; the policy that could not be fetched is not observed, with why.
    const appendix = text.slice(text.lastIndexOf("Monitored assets"));
    expect(appendix).toContain("Mail transport security");
    expect(appendix).toMatch(/MTA-STS Not observed The policy could not be fetched:/);
    expect(appendix).toMatch(/connection to 127\.0\.0\.1:\d+ failed/);
    expect(appendix).not.toMatch(/MTA-STS Not published/);
    expect(appendix).toMatch(/MTA-STS OK Policy mode testing,/);
    expect(appendix).toMatch(/TLS reporting Invalid/);
    expect(appendix).toMatch(/DANE OK mx1\./);
    expect(appendix).toMatch(/port 25 not\s+scanned/);
    expect(appendix).toMatch(/DKIM OK s1: rsa 1024 bits/);
    expect(appendix).toMatch(/BIMI Not published/);
    // Every page renders with pdftoppm (kept in REPORT_PNG_DIR when set, to look at).
    const { pages } = await renderPdfPages(pdf.bytes, 60);
    expect(pages).toHaveLength(doc.pages);
    expect(pages.every((p) => p.ink > 0.01)).toBe(true);
  });
});
