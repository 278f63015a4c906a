/**
 * The report PDF, rendered inside workerd (as in production) and read back with the
 * real poppler-utils through the fixture hub (test/fixtures/servers/pdf.ts): its text
 * (pdftotext), fonts (pdffonts: embedded subsets with Unicode maps), and every page
 * rendered with pdftoppm (A4, not blank). Also the line breaking of long evidence.
 */
import { describe, expect, it } from "vitest";
import { renderReportPdf } from "../../src/modules/reports/pdf/render";
import { wrapText } from "../../src/modules/reports/pdf/text";
import { pdfFilename, isoWeek } from "../../src/modules/reports/document";
import { emptyFacts } from "../../src/modules/reports/facts/types";
import { AS_OF, PERIOD, documentOf, largeSample, moduleCoverage, scenarioFacts } from "./sample";
import { inspectPdf, renderPdfPages, squash } from "./poppler";

describe("report PDF", () => {
  it("carries the cover, every finding with severity, impact, evidence and references, the methodology and the asset appendix", async () => {
    const pdf = await renderReportPdf(documentOf(scenarioFacts()));
    expect(new TextDecoder().decode(pdf.slice(0, 5))).toBe("%PDF-");
    const doc = await inspectPdf(pdf);
    const text = squash(doc.text);

    // Fonts: all three embedded as subsets with a Unicode map (so the text extracts).
    expect(doc.fonts.map((f) => f.name).sort()).toEqual(["TPAAAA+NotoSans-Regular", "TPAAAB+NotoSans-Bold", "TPAAAC+NotoSansMono-Regular"]);
    expect(doc.fonts.every((f) => f.embedded && f.subset && f.unicode)).toBe(true);
    expect(doc.info.Title).toContain("Example Corporation");
    expect(doc.info.Producer).toBe("Trust-Plane (pdf-lib)");
    expect(doc.info["Page size"]).toMatch(/^595\.2\d? x 841\.8\d? pts \(A4\)/);

    // Cover: organization, period, score, grade, the five category scores.
    const cover = squash(doc.page_texts[0]);
    expect(cover).toContain("Weekly Security Audit Report");
    expect(cover).toContain("Example Corporation");
    expect(cover).toContain("2026-11-16 00:00 UTC – 2026-11-23 00:00 UTC");
    expect(squash(doc.raw)).toMatch(/OVERALL SCORE\s+72 ?\/ 100\s+GRADE\s+C\s/);
    for (const [label, weight, score] of [["DNS", 30, 70], ["CT Log", 20, 80], ["Certificates", 20, 52], ["RDAP", 15, 75], ["Coverage", 15, 88]] as const) {
      expect(cover).toMatch(new RegExp(`\\n${label} ${score}\\nweight ${weight}%\\n`));
    }
    expect(cover).toContain("6 audit rules fired");

    // Findings: title, severity, impact, rule id, evidence, references.
    for (const [title, severity, impact] of [
      ["DMARC policy weakened", "CRITICAL", 30],
      ["Expired certificates", "CRITICAL", 30],
      ["Ownership or registrar change", "CRITICAL", 25],
      ["Recent CAA violations", "HIGH", 20],
      ["Deprecated TLS versions", "HIGH", 18],
      ["Modules without assets", "MEDIUM", 12],
    ] as const) {
      expect(text).toMatch(new RegExp(`${severity} ${title} –${impact} points`));
    }
    expect(text).toContain("Before v=DMARC1; p=reject; rua=mailto:dmarc-reports@example.com;");
    expect(text).toContain("After v=DMARC1; p=none; rua=mailto:dmarc-reports@example.com");
    expect(text).toContain("shop.example.com:443 (192.0.2.20)");
    expect(text).toContain("SHA-256 9f2c1b7e0d4a3c5b6e8f7a9d0c1b2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d");
    expect(text).toContain("legacy.example.com:8443 (2001:db8::8443)");
    expect(text).toContain("Before MarkMonitor Inc. (IANA 292)");
    expect(text).toContain("After GoDaddy.com, LLC (IANA 146)");
    // The arrow Noto Sans lacks is written as "->", not dropped or boxed.
    expect(text).toContain("policy lowered from reject -> none");
    expect(text).toContain("SOC 2 CC6 Logical and physical access controls · CC7 System operations");
    expect(text).toContain("ISO 27001 Annex A A.8.16 Monitoring activities · A.8.20 Networks security");
    expect(text).toContain("National framework DE.CM Continuous monitoring · SC Supply chain risk management");

    // Methodology and appendix.
    expect(text).toContain("rounded half up");
    expect(text).toMatch(/RDAP 12 h 5 min RDAP_CHECK_INTERVAL_SECONDS/);
    expect(text).toMatch(/SPF overly permissive critical 25 Passed/);
    expect(text).toMatch(/DMARC policy weakened critical 30 Fired/);
    expect(text).toContain("Appendix A — Monitored assets");
    expect(text).toMatch(/shop\.example\.com:443 \(192\.0\.2\.20\) Expired 2026-11-20 10:00 UTC/);

    // Running footer on every page.
    doc.page_texts.forEach((p, i) => expect(squash(p)).toContain(`Page ${i + 1} of ${doc.pages}`));
  });

  it("renders every page with pdftoppm: A4, none blank", async () => {
    const pdf = await renderReportPdf(documentOf(scenarioFacts()));
    const { pages } = await renderPdfPages(pdf, 40);
    expect(pages.length).toBeGreaterThanOrEqual(4);
    for (const p of pages) {
      // A4 at 40 dpi: 331 x 468 pixels.
      expect([p.width, p.height]).toEqual([331, 468]);
      expect(p.ink).toBeGreaterThan(0.01);
    }
    // The cover's navy band makes it by far the darkest page.
    expect(pages[0].ink).toBeGreaterThan(0.2);
  });

  it("renders the same document to the same bytes (a stored report downloads identically)", async () => {
    const doc = documentOf(scenarioFacts());
    const a = await renderReportPdf(doc);
    const b = await renderReportPdf(structuredClone(doc));
    expect(a.length).toBe(b.length);
    expect(a).toEqual(b);
  });

  it("an organization without findings gets a short report that says so", async () => {
    const facts = emptyFacts(AS_OF, PERIOD);
    facts.coverage.push(moduleCoverage("rdap", 1));
    const doc = await inspectPdf(await renderReportPdf(documentOf(facts, [])));
    const text = squash(doc.text);
    expect(squash(doc.raw)).toMatch(/OVERALL SCORE\s+100 ?\/ 100\s+GRADE\s+A\s/);
    expect(text).toContain("No audit rule fired for this period");
    expect(text).not.toContain("EVIDENCE");
    expect(text).toMatch(/RDAP 0 domains\s+No assets configured\./);
  });

  it("a large organization: long evidence wraps inside the margins, page breaks keep tables readable", async () => {
    const { facts, assets } = largeSample(400);
    const longRecord = "v=spf1 " + Array.from({ length: 40 }, (_, i) => `include:_spf${i}.mail-provider-${i}.example.net`).join(" ") + " ~all";
    facts.dns.changes.push({
      domain: "example.com", kind: "spf_allows_all", record_name: "example.com", record_type: "TXT",
      old_values: [longRecord], new_values: ["v=spf1 +all"], detail: "", observed_at: "2026-11-22T00:00:00.000Z",
    });
    const pdf = await renderReportPdf(documentOf(facts, assets, "Ünïcødé Ørg — ΑΒΓ Кириллица 漢字"));
    const doc = await inspectPdf(pdf);
    const text = squash(doc.text);
    expect(doc.pages).toBeGreaterThan(20);
    // Every character of the long SPF record is there, wrapped over several lines.
    const spfLines = doc.text.split("\n").filter((l) => l.includes("mail-provider-"));
    expect(spfLines.length).toBeGreaterThan(5);
    expect(text.replace(/\s+/g, "")).toContain(longRecord.replace(/\s+/g, ""));
    // Letters the fonts have are kept; CJK, which they lack, becomes "?" rather than an empty box.
    expect(text).toContain("Ünïcødé Ørg — ΑΒΓ Кириллица ??");
    // Table headers repeat after a page break, with the section named.
    expect(text).toContain("Certificate deployments (continued)");
    const { pages } = await renderPdfPages(pdf, 20);
    expect(pages).toHaveLength(doc.pages);
    expect(pages.every((p) => p.ink > 0.005)).toBe(true);
  });
});

describe("line breaking", () => {
  const mono = (s: string) => s.length; // one unit per character

  it("wraps at spaces and breaks over-long tokens after a separator", () => {
    expect(wrapText("the quick brown fox", 10, mono)).toEqual(["the quick", "brown fox"]);
    expect(wrapText("a b\nc", 10, mono)).toEqual(["a b", "c"]);
    const fp = "4ecdafc48c4cdc8b808da8ecb667a437707826e4ccce9dec5a563dd377290114";
    expect(wrapText(fp, 20, mono)).toEqual([fp.slice(0, 20), fp.slice(20, 40), fp.slice(40, 60), fp.slice(60)]);
    expect(wrapText("include:_spf.mail-provider.example.network", 20, mono)).toEqual(["include:_spf.mail-", "provider.example.", "network"]);
    for (const line of wrapText(`${"x".repeat(95)} y ${"z".repeat(33)}`, 30, mono)) expect(line.length).toBeLessThanOrEqual(30);
    expect(wrapText("", 10, mono)).toEqual([""]);
  });
});

describe("report file name", () => {
  it("is ASCII, names the organization and the ISO week", () => {
    expect(isoWeek("2026-11-16T00:00:00Z")).toBe("2026-W47");
    expect(isoWeek("2027-01-04T00:00:00Z")).toBe("2027-W01");
    expect(isoWeek("2026-12-28T00:00:00Z")).toBe("2026-W53");
    expect(pdfFilename("Ünïcödé Corp. (EMEA)", 7, "2026-11-16T00:00:00Z")).toBe("trust-plane-weekly-report-unicode-corp-emea-2026-W47.pdf");
    expect(pdfFilename("漢字", 7, "2026-11-16T00:00:00Z")).toBe("trust-plane-weekly-report-org-7-2026-W47.pdf");
  });
});
