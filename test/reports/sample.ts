/**
 * Hand-built audit facts and report documents for the pure tests (scoring, PDF) and
 * for looking at the PDF (`npx tsx test/reports/render-sample.ts`). The end-to-end
 * tests build their data through the modules instead.
 */
import type { AuditFacts, EndpointScan, ModuleCoverage, UncollectedAsset } from "../../src/modules/reports/facts/types";
import { emptyFacts } from "../../src/modules/reports/facts/types";
import type { MonitoredAsset, ReportDocument } from "../../src/modules/reports/document";
import { scoreAudit } from "../../src/modules/reports/scoring";

export const PERIOD = { start: "2026-11-16T00:00:00.000Z", end: "2026-11-23T00:00:00.000Z" };
export const AS_OF = "2026-11-23T00:00:00.000Z";

export function scan(over: Partial<EndpointScan> = {}): EndpointScan {
  return {
    hostname: "www.example.com",
    port: 443,
    ip_address: "192.0.2.10",
    scanned_at: "2026-11-20T10:00:00.000Z",
    has_error: false,
    error: "",
    sha256: "4ecdafc48c4cdc8b808da8ecb667a437707826e4ccce9dec5a563dd377290114",
    subject: "CN=www.example.com",
    issuer: "CN=Example Issuing CA 1, O=Example",
    not_after: "2027-03-01T00:00:00Z",
    expired: false,
    self_signed: false,
    legacy_protocols: [],
    weak_suites: [],
    ...over,
  };
}

/** The scenario as facts: weakened DMARC, expired certificate, TLS 1.0, registrar change, CAA violation, one module without assets. */
export function scenarioFacts(): AuditFacts {
  const f = emptyFacts(AS_OF, PERIOD);
  f.dns.changes.push({
    domain: "example.com",
    kind: "dmarc_weakened",
    record_name: "_dmarc.example.com",
    record_type: "TXT",
    old_values: ["v=DMARC1; p=reject; rua=mailto:dmarc-reports@example.com; ruf=mailto:dmarc-forensics@example.com; fo=1; adkim=s; aspf=s"],
    new_values: ["v=DMARC1; p=none; rua=mailto:dmarc-reports@example.com"],
    detail: "DMARC weakened: policy lowered from reject → none",
    observed_at: "2026-11-19T08:15:00.000Z",
  });
  f.endpoint_scans.push(
    scan({ hostname: "shop.example.com", ip_address: "192.0.2.20", expired: true, not_after: "2026-11-10T12:00:00Z", subject: "CN=shop.example.com", sha256: "9f2c1b7e0d4a3c5b6e8f7a9d0c1b2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d" }),
    scan({ hostname: "legacy.example.com", port: 8443, ip_address: "2001:db8::8443", legacy_protocols: ["TLSv1.0"], scanned_at: "2026-11-21T03:00:00.000Z" }),
    scan(),
  );
  f.rdap_changes.push({
    domain: "example.com",
    observed_at: "2026-11-18T06:00:00.000Z",
    registrar_changed: true,
    registrant_changed: false,
    nameservers_changed: false,
    status_changed: false,
    registrar: { old: "MarkMonitor Inc. (IANA 292)", new: "GoDaddy.com, LLC (IANA 146)" },
    registrant: { old: null, new: null },
    nameservers: { old: [], new: [] },
    status: { old: [], new: [] },
  });
  f.caa_violations.push({
    names: ["login.example.com"],
    sha256: "b1946ac92492d2347c6235b4d2611184b1946ac92492d2347c6235b4d2611184",
    issuer: "C=US, O=Let's Encrypt, CN=R11",
    log_name: "Google 'Xenon2026h2' log",
    observed_at: "2026-11-17T11:42:00.000Z",
    caa_records: ["digicert.com"],
  });
  f.coverage.push(moduleCoverage("ct-log", 2, { expected: 3 }), moduleCoverage("dns-watcher", 1), moduleCoverage("rdap", 1), moduleCoverage("cert-watcher", 0));
  return f;
}

const WINDOWS: Record<ModuleCoverage["module"], number> = { "ct-log": 420, "dns-watcher": 2100, rdap: 43_500, "cert-watcher": 7500 };

/**
 * A module's coverage: `enabled` assets (configured as many unless said), all collected
 * within the window unless `uncollected` says otherwise; CT is assessed on `expected` logs.
 */
export function moduleCoverage(
  module: ModuleCoverage["module"],
  enabled: number,
  opts: { configured?: number; uncollected?: UncollectedAsset[]; expected?: number } = {},
): ModuleCoverage {
  const shared = module === "ct-log";
  const expected = enabled === 0 ? 0 : (opts.expected ?? (shared ? 2 : enabled));
  const uncollected = opts.uncollected ?? [];
  return {
    module,
    configured_assets: opts.configured ?? enabled,
    enabled_assets: enabled,
    expected_window_seconds: WINDOWS[module],
    sources: shared ? "shared" : "own",
    expected,
    collected: expected - uncollected.length,
    uncollected,
  };
}

/** An asset not collected within its window (stale unless said). */
export function uncollected(asset: string, over: Partial<UncollectedAsset> = {}): UncollectedAsset {
  return { asset, state: "failing", last_collected_at: null, failing_since: null, error: null, stale: true, ...over };
}

export function sampleAssets(): MonitoredAsset[] {
  return [
    { module: "dns-watcher", asset: "example.com", status: "problem", state: "Changed", last_collected_at: "2026-11-22T23:50:00.000Z", detail: "DNSSEC insecure; last check success" },
    { module: "ct-log", asset: "example.com (wide)", status: "attention", state: "1 CAA violation", last_collected_at: "2026-11-22T23:59:00.000Z", detail: "14 matches in 30 days" },
    { module: "ct-log", asset: "example.org (exact)", status: "paused", state: "Paused", last_collected_at: null, detail: "disabled" },
    { module: "cert-watcher", asset: "shop.example.com:443 (192.0.2.20)", status: "problem", state: "Expired", last_collected_at: "2026-11-20T10:00:00.000Z", detail: "expired 2026-11-10; TLSv1.2, TLSv1.3" },
    { module: "cert-watcher", asset: "legacy.example.com:8443 (2001:db8::8443)", status: "problem", state: "Legacy TLS", last_collected_at: "2026-11-21T03:00:00.000Z", detail: "TLSv1.0 accepted" },
    { module: "rdap", asset: "example.com", status: "attention", state: "Changed", last_collected_at: "2026-11-22T18:00:00.000Z", detail: "registrar GoDaddy.com, LLC; expires 2027-08-13" },
  ];
}

export function documentOf(facts: AuditFacts, assets: MonitoredAsset[] = sampleAssets(), organization = "Example Corporation"): ReportDocument {
  return {
    report_type: "weekly",
    organization,
    period_start: facts.window.start,
    period_end: facts.window.end,
    generated_at: "2026-11-23T00:01:07.000Z",
    result: scoreAudit(facts),
    collection_windows: facts.coverage.map((c) => ({ module: c.module, seconds: c.expected_window_seconds })),
    assets,
  };
}

/** A large organization: `n` assets across the modules, many of them with problems (page breaks, long evidence). */
export function largeSample(n = 1000): { facts: AuditFacts; assets: MonitoredAsset[] } {
  const f = scenarioFacts();
  const assets: MonitoredAsset[] = [];
  const hex64 = (i: number) => (i.toString(16).padStart(8, "0") + "a1b2c3d4e5f60718").repeat(3).slice(0, 64);
  for (let i = 0; i < n; i++) {
    const module = (["dns-watcher", "ct-log", "cert-watcher", "rdap"] as const)[i % 4];
    const name = `host-${i}.subsidiary-${i % 37}.example-holdings-international.com`;
    if (module === "cert-watcher") {
      const expired = i % 12 === 2;
      const failed = i % 20 === 6;
      f.endpoint_scans.push(scan({ hostname: name, ip_address: `198.51.100.${i % 250}`, expired, has_error: failed, error: failed ? "connect ECONNREFUSED 198.51.100.7:443" : "", sha256: hex64(i), weak_suites: i % 16 === 10 ? ["TLS_RSA_WITH_3DES_EDE_CBC_SHA", "TLS_RSA_WITH_RC4_128_SHA"] : [] }));
      assets.push({ module, asset: `${name}:443 (198.51.100.${i % 250})`, status: expired || failed ? "problem" : "ok", state: expired ? "Expired" : failed ? "Scan failed" : "Valid", last_collected_at: "2026-11-22T22:00:00.000Z", detail: "TLSv1.2, TLSv1.3; expires 2027-02-01" });
    } else if (module === "dns-watcher") {
      if (i % 40 === 0) f.dns.changes.push({ domain: name, kind: "mx_changed", record_name: name, record_type: "MX", old_values: ["10 mx1.mail-provider-one.example.net.", "20 mx2.mail-provider-one.example.net."], new_values: ["10 inbound-smtp.eu-west-1.mail-provider-two.example.org."], detail: "", observed_at: "2026-11-20T00:00:00.000Z" });
      assets.push({ module, asset: name, status: "ok", state: "Resolved", last_collected_at: "2026-11-22T23:50:00.000Z", detail: "DNSSEC validated" });
    } else if (module === "rdap") {
      assets.push({ module, asset: name, status: "ok", state: "Unchanged", last_collected_at: "2026-11-22T18:00:00.000Z", detail: "expires 2027-08-13" });
    } else {
      assets.push({ module, asset: `${name} (wide)`, status: "ok", state: "Active", last_collected_at: "2026-11-22T23:59:00.000Z", detail: "0 matches in 30 days" });
    }
  }
  const stale = Array.from({ length: 30 }, (_, i) =>
    uncollected(`host-${i * 4 + 2}.subsidiary.example.com:443 (198.51.100.${i})`, {
      last_collected_at: i % 3 ? "2026-11-19T00:00:00.000Z" : null,
      failing_since: "2026-11-19T02:00:00.000Z",
      error: { class: "connect", message: `TLS scan of host-${i * 4 + 2}.subsidiary.example.com:443: connection to 198.51.100.${i}:443 failed: refused or closed before an answer` },
    }),
  );
  f.coverage = [moduleCoverage("ct-log", 250), moduleCoverage("dns-watcher", 250), moduleCoverage("rdap", 250), moduleCoverage("cert-watcher", 250, { uncollected: stale })];
  return { facts: f, assets };
}

/**
 * The offline organization: nothing of its DNS, RDAP and CT data was ever
 * collected (every resolver, RDAP server and CT log unreachable), its two TLS
 * endpoints were scanned. The score alone would be an A.
 */
export function blindFacts(): AuditFacts {
  const f = emptyFacts(AS_OF, PERIOD);
  const since = "2026-11-22T20:00:00.000Z";
  const dns = Array.from({ length: 12 }, (_, i) =>
    uncollected(`brand-${String(i).padStart(2, "0")}.example`, {
      failing_since: since,
      error: { class: "dns_resolution", message: "DNS lookup of cloudflare-dns.com failed" },
    }),
  );
  const rdap = Array.from({ length: 3 }, (_, i) =>
    uncollected(`brand-${i}.example`, { failing_since: since, error: { class: "dns_resolution", message: `RDAP lookup of brand-${i}.example: DNS lookup of rdap.example failed` } }),
  );
  const logs = Array.from({ length: 71 }, (_, i) =>
    uncollected(`Example '${2024 + (i % 3)}h${(i % 2) + 1}' log ${i}`, {
      state: "ok",
      last_collected_at: "2026-11-22T20:40:00.000Z",
      error: i % 2 ? { class: "dns_resolution", message: `reading log ${i}: DNS lookup of ct${i}.example failed` } : null,
    }),
  );
  f.coverage.push(
    moduleCoverage("dns-watcher", 12, { uncollected: dns }),
    moduleCoverage("ct-log", 3, { expected: 71, uncollected: logs }),
    moduleCoverage("cert-watcher", 2),
    moduleCoverage("rdap", 3, { uncollected: rdap }),
  );
  return f;
}
