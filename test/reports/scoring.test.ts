/**
 * The audit catalogue and the pure scoring engine: every rule of the catalogue with
 * its severity and impact, category floors, the weighted average rounded half up, the
 * grade table, and findings whose evidence names the assets.
 */
import { describe, expect, it } from "vitest";
import { AUDIT_RULES, CATEGORIES, REFERENCES } from "../../src/modules/reports/rules";
import { categoryScores, gradeOf, overallScore, scoreAudit } from "../../src/modules/reports/scoring";
import { emptyFacts } from "../../src/modules/reports/facts/types";
import { expectedCollectionWindowSeconds, formatDuration } from "../../src/modules/reports/freshness";
import { AS_OF, PERIOD, moduleCoverage, scan, scenarioFacts, uncollected } from "./sample";

describe("audit catalogue", () => {
  it("holds the eighteen documented rules with their categories, severities and impacts", () => {
    expect(AUDIT_RULES.map((r) => [r.category, r.title, r.severity, r.impact])).toEqual([
      ["dns", "DMARC policy weakened", "critical", 30],
      ["dns", "SPF overly permissive", "critical", 25],
      ["dns", "Critical apex records changed", "high", 15],
      ["dns", "Mail or nameserver records changed", "high", 12],
      ["dns", "DNSSEC validation regression", "high", 20],
      ["dns", "DANE mismatch on a mail server", "critical", 25],
      ["dns", "Mail transport security weakened", "high", 15],
      ["ct", "Recent CAA violations", "high", 20],
      ["certificates", "Expired certificates", "critical", 30],
      ["certificates", "Scan failures", "high", 15],
      ["certificates", "Deprecated TLS versions", "high", 18],
      ["certificates", "Weak cipher suites", "high", 18],
      ["certificates", "Self-signed certificates", "high", 12],
      ["rdap", "Ownership or registrar change", "critical", 25],
      ["rdap", "Domain expiry approaching", "high", 15],
      ["rdap", "Nameserver or status change", "medium", 10],
      ["coverage", "Modules without assets", "medium", 12],
      ["coverage", "Monitoring data stale", "high", 18],
    ]);
    expect(new Set(AUDIT_RULES.map((r) => r.id)).size).toBe(18);
  });

  it("weights the categories 30/20/20/15/15 and maps every rule to each of the three frameworks", () => {
    expect(CATEGORIES.map((c) => [c.id, c.weight])).toEqual([["dns", 30], ["ct", 20], ["certificates", 20], ["rdap", 15], ["coverage", 15]]);
    expect(Object.keys(REFERENCES).sort()).toEqual(["A.5.9", "A.8.16", "A.8.20", "A.8.32", "A.8.7", "CC6", "CC7", "CC8", "DE.CM", "ID.AM", "PR.DS", "SC"].sort());
    for (const r of AUDIT_RULES) {
      const frameworks = new Set(r.references.map((id) => REFERENCES[id].framework));
      expect([r.id, [...frameworks].sort()]).toEqual([r.id, ["iso27001", "national", "soc2"]]);
    }
    // Every reference of the catalogue is used by at least one rule.
    const used = new Set(AUDIT_RULES.flatMap((r) => r.references));
    expect([...used].sort()).toEqual(Object.keys(REFERENCES).sort());
  });
});

describe("scoring", () => {
  it("scores the issue's scenario exactly", () => {
    const r = scoreAudit(scenarioFacts());
    expect(r.findings.map((f) => [f.id, f.severity, f.score_impact, f.category])).toEqual([
      ["dns.dmarc_weakened", "critical", 30, "dns"],
      ["certificates.expired", "critical", 30, "certificates"],
      ["rdap.ownership_or_registrar_change", "critical", 25, "rdap"],
      ["ct.caa_violations", "high", 20, "ct"],
      ["certificates.deprecated_tls", "high", 18, "certificates"],
      ["coverage.modules_without_assets", "medium", 12, "coverage"],
    ]);
    expect(r.category_scores).toEqual({ dns: 70, ct: 80, certificates: 52, rdap: 75, coverage: 88 });
    // (70·30 + 80·20 + 52·20 + 75·15 + 88·15) / 100 = 71.85 -> 72
    expect(r.overall_score).toBe(72);
    expect(r.grade).toBe("C");
  });

  it("names the assets in the evidence: domain, endpoint, fingerprint, old and new values", () => {
    const byId = Object.fromEntries(scoreAudit(scenarioFacts()).findings.map((f) => [f.id, f]));
    expect(byId["dns.dmarc_weakened"].evidence).toEqual([
      {
        asset: "example.com",
        detail: "DMARC weakened: policy lowered from reject → none (_dmarc.example.com TXT)",
        observed_at: "2026-11-19T08:15:00.000Z",
        fingerprint: null,
        old_value: expect.stringContaining("p=reject"),
        new_value: "v=DMARC1; p=none; rua=mailto:dmarc-reports@example.com",
      },
    ]);
    expect(byId["certificates.expired"].evidence).toEqual([
      expect.objectContaining({
        asset: "shop.example.com:443 (192.0.2.20)",
        fingerprint: "9f2c1b7e0d4a3c5b6e8f7a9d0c1b2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d",
        detail: expect.stringContaining("not after 2026-11-10T12:00:00Z"),
      }),
    ]);
    expect(byId["certificates.deprecated_tls"].evidence[0]).toMatchObject({ asset: "legacy.example.com:8443 (2001:db8::8443)", detail: "Accepts TLSv1.0" });
    expect(byId["rdap.ownership_or_registrar_change"].evidence[0]).toMatchObject({
      asset: "example.com",
      old_value: "MarkMonitor Inc. (IANA 292)",
      new_value: "GoDaddy.com, LLC (IANA 146)",
    });
    expect(byId["ct.caa_violations"].evidence[0]).toMatchObject({ asset: "login.example.com", fingerprint: expect.stringMatching(/^b1946ac9/) });
    expect(byId["coverage.modules_without_assets"].evidence.map((e) => e.asset)).toEqual(["Certificate deployments"]);
    expect(byId["ct.caa_violations"].references.map((r) => r.id)).toEqual(["CC6", "CC7", "A.8.16", "A.8.20", "DE.CM", "SC"]);
  });

  it("an organization with no facts scores 100 (A); one with every rule firing floors at 0", () => {
    const empty = scoreAudit(emptyFacts(AS_OF, PERIOD));
    expect(empty).toMatchObject({ overall_score: 100, grade: "A", category_scores: { dns: 100, ct: 100, certificates: 100, rdap: 100, coverage: 100 }, provisional: false, findings: [] });
    expect(Object.values(empty.category_status).map((s) => s.status)).toEqual(["no_assets", "no_assets", "no_assets", "no_assets", "assessed"]);

    const all = AUDIT_RULES.map((r) => ({ category: r.category, score_impact: r.impact }));
    // DNS loses 102 and certificates 93: both floor at 0 (not negative).
    expect(categoryScores(all)).toEqual({ dns: 0, ct: 80, certificates: 7, rdap: 50, coverage: 70 });
  });

  it("rounds the weighted average half up and grades by the table", () => {
    // 65·30 + 100·20 + 100·20 + 100·15 + 100·15 = 8950 -> 89.5 -> 90 (A, not B).
    expect(overallScore({ dns: 65, ct: 100, certificates: 100, rdap: 100, coverage: 100 })).toBe(90);
    // Weights are multiples of 5, so averages end in .x0 or .x5: .45 rounds down, .50 and .55 up.
    expect(overallScore({ dns: 100, ct: 100, certificates: 100, rdap: 100, coverage: 83 })).toBe(97); // 97.45
    expect(overallScore({ dns: 85, ct: 100, certificates: 100, rdap: 100, coverage: 88 })).toBe(94); // 93.70
    expect(overallScore({ dns: 100, ct: 100, certificates: 100, rdap: 97, coverage: 100 })).toBe(100); // 99.55
    expect(overallScore({ dns: 100, ct: 100, certificates: 97, rdap: 100, coverage: 100 })).toBe(99); // 99.4
    expect([100, 90, 89, 80, 79, 70, 69, 60, 59, 0].map(gradeOf)).toEqual(["A", "A", "B", "B", "C", "C", "D", "D", "F", "F"]);
  });

  it("fires a rule once, listing each endpoint once (its newest scan showing the condition)", () => {
    const f = emptyFacts(AS_OF, PERIOD);
    f.endpoint_scans.push(
      scan({ expired: true, scanned_at: "2026-11-17T00:00:00.000Z", sha256: "a".repeat(64) }),
      scan({ expired: true, scanned_at: "2026-11-19T00:00:00.000Z", sha256: "b".repeat(64) }),
      scan({ expired: false, scanned_at: "2026-11-21T00:00:00.000Z" }),
      scan({ ip_address: "192.0.2.11", has_error: true, error: "connect ECONNREFUSED", sha256: null }),
      scan({ ip_address: "192.0.2.12", weak_suites: ["TLS_RSA_WITH_RC4_128_SHA"], self_signed: true, subject: "CN=localhost" }),
    );
    const r = scoreAudit(f);
    const expired = r.findings.find((x) => x.id === "certificates.expired")!;
    expect(expired.evidence).toHaveLength(1);
    expect(expired.evidence[0]).toMatchObject({ asset: "www.example.com:443 (192.0.2.10)", fingerprint: "b".repeat(64), observed_at: "2026-11-19T00:00:00.000Z" });
    expect(r.findings.map((x) => x.id).sort()).toEqual(["certificates.expired", "certificates.scan_failures", "certificates.self_signed", "certificates.weak_ciphers"]);
    // 30 + 15 + 18 + 12 = 75 -> 25.
    expect(r.category_scores.certificates).toBe(25);
    expect(r.findings.find((x) => x.id === "certificates.scan_failures")!.evidence[0].detail).toBe("Scan failed: connect ECONNREFUSED");
  });

  it("maps every DNS change kind of the watcher's contract to its rule", () => {
    const f = emptyFacts(AS_OF, PERIOD);
    const change = (kind: any, record_type: string | null) => ({
      domain: "example.net", kind, record_name: kind === "apex_changed" ? "example.net" : "_dmarc.example.net", record_type,
      old_values: ["old"], new_values: [], detail: "", observed_at: "2026-11-20T00:00:00.000Z",
    });
    f.dns.changes.push(change("dmarc_removed", "TXT"), change("spf_allows_all", "TXT"), change("apex_changed", "A"), change("mx_changed", "MX"), change("ns_changed", "NS"));
    f.dns.dnssec_failing.push({ domain: "example.org", checked_at: "2026-11-22T00:00:00.000Z" });
    const r = scoreAudit(f);
    expect(r.findings.map((x) => x.id).sort()).toEqual([
      "dns.apex_records_changed", "dns.dmarc_weakened", "dns.dnssec_regression", "dns.mail_or_nameserver_changed", "dns.spf_overly_permissive",
    ]);
    expect(r.category_scores.dns).toBe(0);
    expect(r.findings.find((x) => x.id === "dns.dmarc_weakened")!.evidence[0]).toMatchObject({ detail: "DMARC record removed at _dmarc.example.net", new_value: "(none)" });
    expect(r.findings.find((x) => x.id === "dns.mail_or_nameserver_changed")!.evidence).toHaveLength(2);
  });

  it("coverage: modules without assets and stale data, with the expected window in the evidence", () => {
    const f = emptyFacts(AS_OF, PERIOD);
    f.coverage.push(
      moduleCoverage("rdap", 0, { configured: 2 }),
      moduleCoverage("ct-log", 0),
      moduleCoverage("cert-watcher", 3, { uncollected: [uncollected("a.example.com:443 (192.0.2.1)", { state: "pending" })] }),
    );
    const r = scoreAudit(f);
    expect(r.findings.map((x) => [x.id, x.affected_assets])).toEqual([
      ["coverage.monitoring_data_stale", 1],
      ["coverage.modules_without_assets", 2],
    ]);
    expect(r.category_scores.coverage).toBe(70);
    expect(r.findings[0].evidence[0]).toMatchObject({ asset: "Certificate deployments: a.example.com:443 (192.0.2.1)", detail: "Not collected yet; expected within 2 h 5 min" });
    // A module with nothing configured and one whose assets are all paused: both watch nothing.
    expect(r.findings[1].evidence.map((e) => [e.asset, e.detail])).toEqual([
      ["CT Log", "No asset configured"],
      ["RDAP", "All 2 configured asset(s) paused: the module watches nothing"],
    ]);
  });

  it("derives the expected collection windows from the configured intervals", () => {
    const config = { rdapCheckIntervalSeconds: 21600, dnsCheckIntervalSeconds: 900, scanIntervalSeconds: 3600 };
    expect(["ct-log", "dns-watcher", "rdap", "cert-watcher"].map((m) => formatDuration(expectedCollectionWindowSeconds(m as any, config)))).toEqual([
      "7 min", "35 min", "12 h 5 min", "2 h 5 min",
    ]);
    // 0 = every Cron run: the minute of the Cron is the interval.
    expect(expectedCollectionWindowSeconds("rdap", { ...config, rdapCheckIntervalSeconds: 0 })).toBe(420);
  });

  it("a reader that returned only the newest evidence passes the true counts on", () => {
    const f = scenarioFacts();
    f.counts = { "dns.dmarc_weakened": { evidence: 1234, assets: 56 } };
    const dmarc = scoreAudit(f).findings.find((x) => x.id === "dns.dmarc_weakened")!;
    expect([dmarc.evidence.length, dmarc.evidence_total, dmarc.affected_assets]).toEqual([1, 1234, 56]);
    expect(scoreAudit(f).overall_score).toBe(72); // a rule fires once, however much evidence
  });
});
