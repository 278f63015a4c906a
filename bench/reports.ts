/**
 * Reports benchmark (issue 11): an organization with 1,000 monitored assets and 10,000
 * stored observations. Measures, in the same run and on the same local D1:
 *
 *  - baseline: ONE bare `SELECT count(*)` over the fact tables the audit reads
 *    (cert_scans, rdap_change_facts, ct_match_occurrences, dns_change_facts), as one
 *    statement of four scalar subqueries;
 *  - the live overview: `securityOverview` (its one D1 batch of statements plus the
 *    scoring and the category status), the code GET /api/dashboard/security-overview
 *    runs (target < 200 ms); and the same a day later with nothing collected since, so
 *    that every one of the 1,000 assets is uncollected (the category status's reasons and
 *    "Monitoring data stale" then describe all of them);
 *  - the weekly report: reading the week's facts and the asset appendix, then rendering
 *    the PDF (target < 1 s for the rendering).
 *
 * D1 is wrangler's platform proxy (miniflare: the same D1 engine as `wrangler dev`), with
 * the migrations applied; the service code runs in this Node process (one core) and
 * reaches D1 through the proxy, as a Worker reaches D1 through its binding. The rows are
 * written with plain SQL in the shapes the modules write (seeding 10,000 observations
 * through each module's ingestion path would measure those modules, not the reports).
 *
 *   assets        250 DNS domains, 250 CT filters, 250 TLS endpoints (125 monitors x 2 IPs), 250 RDAP monitors
 *   observations  4,000 scans (16 per endpoint), 3,000 CT occurrences (1,500 certificates in 2 logs),
 *                 2,000 DNS change facts, 1,000 RDAP snapshots with their facts; spread over 7 days,
 *                 a few per cent of them audit findings (expired, TLS 1.0, CAA violation, registrar change...)
 *
 * Run: npm run bench:reports   (BENCH_RUNS to change the 20 timed runs of each measure;
 *      BENCH_PROFILE=1 adds the time of each module's reader and of each of its statements)
 */
import { readdirSync, readFileSync } from "node:fs";
import { getPlatformProxy } from "wrangler";
import { createDb } from "../src/db/client";
import { loadConfig } from "../src/env";
import { tenantDb } from "../src/platform/tenant";
import { readAudit } from "../src/modules/reports/facts";
import { scoreAudit } from "../src/modules/reports/scoring";
import { assessCategories, scoreHeadline } from "../src/modules/reports/category-status";
import { securityOverview } from "../src/modules/reports/overview-service";
import { REPORT_EVIDENCE_LIMIT } from "../src/modules/reports/stored-report";
import { renderReportPdf } from "../src/modules/reports/pdf/render";
import { expectedCollectionWindowSeconds } from "../src/modules/reports/freshness";
import type { ReportDocument } from "../src/modules/reports/document";

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const root = new URL("..", import.meta.url).pathname;
const DAY = 86_400_000;
const now = new Date();
const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
/** A time inside the last 7 days, spread by `i` of `n`. */
const inWeek = (i: number, n: number) => ago(Math.floor(((i + 0.5) / n) * 7 * DAY));
const hex64 = (i: number, salt: string) => (salt + i.toString(16).padStart(8, "0")).padEnd(64, "0").slice(0, 64);

const proxy = await getPlatformProxy<{ DB: D1Database }>({ configPath: `${root}wrangler.toml`, persist: false });
try {
  const d1 = proxy.env.DB;
  for (const f of readdirSync(`${root}migrations`).filter((x) => x.endsWith(".sql")).sort()) {
    for (const stmt of readFileSync(`${root}migrations/${f}`, "utf8").split("--> statement-breakpoint")) if (stmt.trim()) await d1.prepare(stmt).run();
  }
  await d1.prepare("INSERT INTO organizations (name, tier, created_at) VALUES ('Bench Holdings International', 'enterprise', ?)").bind(ago(30 * DAY)).run();
  // A neighbour with the same amount of data: every query must stay on the organization's rows.
  await d1.prepare("INSERT INTO organizations (name, tier, created_at) VALUES ('Neighbour', 'enterprise', ?)").bind(ago(30 * DAY)).run();

  const seeded = { assets: 0, observations: 0 };
  /** SQL literal of a value (strings quoted, '' escaped). */
  const lit = (v: unknown): string => (v === null || v === undefined ? "NULL" : typeof v === "number" ? String(v) : typeof v === "boolean" ? (v ? "1" : "0") : `'${String(v).replace(/'/g, "''")}'`);
  /** Multi-row INSERTs of literal values, each statement under D1's 100 KB limit (bound parameters are capped at 100). */
  async function insert(table: string, columns: string[], rows: unknown[][]) {
    let chunk: string[] = [];
    let size = 0;
    const flush = async () => {
      if (chunk.length) await d1.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${chunk.join(", ")}`).run();
      chunk = [];
      size = 0;
    };
    for (const row of rows) {
      const tuple = `(${row.map(lit).join(", ")})`;
      if (size + tuple.length > 90_000) await flush();
      chunk.push(tuple);
      size += tuple.length + 2;
    }
    await flush();
  }
  const answer = JSON.parse(readFileSync(`${root}../shared/data/rdap/domain/registry-thin/verisign-hhgames.com.json`, "utf8"));

  console.log("seeding 2 organizations x (1,000 assets, 10,000 observations) ...");
  const t0 = performance.now();
  // Ids are assigned here (a fresh database), so children name their parents directly.
  const ids = { dns: 0, dnsFact: 0, filter: 0, match: 0, occurrence: 0, monitor: 0, target: 0, scan: 0, rdapMonitor: 0, snapshot: 0, history: 0 };
  for (const org of [1, 2]) {
    // DNS: 250 domains, 2,000 change facts (mostly record changes; a few DMARC/SPF regressions).
    const domains = Array.from({ length: 250 }, (_, i) => [++ids.dns, org, `d${i}.org${org}.example`, ago(5 * 60_000), ago(5 * 60_000), "ok", "validated", ago(20 * DAY)]);
    await insert("dns_domains", ["id", "organization_id", "domain_name", "last_checked_at", "last_success_at", "last_check_status", "dnssec_status", "created_at"], domains);
    const kinds = ["apex_changed", "mx_changed", "ns_changed", "apex_changed", "mx_changed", "apex_changed", "mx_changed", "ns_changed"];
    await insert(
      "dns_change_facts",
      ["id", "organization_id", "domain_id", "domain_name", "observed_at", "kind", "record_name", "record_type", "old_values", "new_values", "detail"],
      Array.from({ length: 2000 }, (_, i) => {
        const d = domains[i % 250];
        const kind = i % 97 === 0 ? "dmarc_weakened" : i % 89 === 0 ? "spf_allows_all" : kinds[i % kinds.length];
        const type = kind === "mx_changed" ? "MX" : kind === "ns_changed" ? "NS" : kind === "apex_changed" ? "A" : "TXT";
        return [++ids.dnsFact, org, d[0], d[2], inWeek(i, 2000), kind, kind.startsWith("dmarc") ? `_dmarc.${d[2]}` : d[2], type,
          JSON.stringify([`10 mx${i}.provider-one.example.net.`]), JSON.stringify([`10 mx${i}.provider-two.example.org.`]), `${type} changed`];
      }),
    );

    // CT: 250 filters, 1,500 certificates each seen in 2 logs; 4 % contradict CAA.
    const filters = Array.from({ length: 250 }, (_, i) => [++ids.filter, org, `brand${i}.org${org}.example`, "wide", ago(20 * DAY)]);
    await insert("ct_filters", ["id", "organization_id", "pattern", "match_type", "created_at"], filters);
    const matches: unknown[][] = [];
    const occurrences: unknown[][] = [];
    const matchFilters: unknown[][] = [];
    for (let i = 0; i < 1500; i++) {
      const name = `host${i}.brand${i % 250}.org${org}.example`;
      const at = inWeek(i, 1500);
      const violation = i % 25 === 0;
      const match = ++ids.match;
      matches.push([match, org, hex64(i, `d${org}`), hex64(i, `a${org}`), name, JSON.stringify([name]), at, at]);
      const cert = JSON.stringify({
        subject: name, issuer: "C=US, O=Let's Encrypt, CN=R11", dns_names: [name], sha256: hex64(i, `a${org}`), serial: i.toString(16),
        not_before: at, not_after: new Date(Date.parse(at) + 90 * DAY).toISOString(), signature_algorithm: "sha256WithRSAEncryption", key_algorithm: "EC",
        is_precert: true, log_name: "Bench log", log_index: i, aia_issuing: ["http://r11.i.lencr.org/"], ocsp_servers: [], scts: [],
      });
      const caa = JSON.stringify({ has_records: violation, authorized: !violation, records: violation ? ["digicert.com"] : [], error: "", checked_names: [name], issuer_candidates: ["letsencrypt.org"], evaluated_at: at });
      for (const log of ["bench-log-a", "bench-log-b"]) occurrences.push([++ids.occurrence, org, match, log, `Bench ${log}`, i, hex64(i, `a${org}`), 1, at, cert, caa]);
      matchFilters.push([match, filters[i % 250][0], org, JSON.stringify([name]), ids.occurrence - 1, at]);
    }
    await insert("ct_matches", ["id", "organization_id", "dedup_key", "sha256", "certificate_domain", "matched_names", "first_matched_at", "last_matched_at"], matches);
    await insert("ct_match_occurrences", ["id", "organization_id", "match_id", "log_id", "log_name", "log_index", "sha256", "is_precert", "observed_at", "cert", "caa"], occurrences);
    await insert("ct_match_filters", ["match_id", "filter_id", "organization_id", "matched_names", "occurrence_id", "created_at"], matchFilters);

    // Certificates: 125 monitors x 2 targets; 16 scans per target over the week; a few expired, legacy, failing.
    const monitors = Array.from({ length: 125 }, (_, m) => [++ids.monitor, org, `www${m}.org${org}.example`, 443, ago(20 * DAY)]);
    await insert("cert_monitors", ["id", "organization_id", "cn", "port", "created_at"], monitors);
    const targets = monitors.flatMap((m, k) => [`198.51.100.${k}`, `203.0.113.${k}`].map((ip) => [++ids.target, org, m[0], ip, ago(20 * DAY)]));
    await insert("cert_targets", ["id", "organization_id", "monitor_id", "ip_address", "created_at"], targets);
    const scans: unknown[][] = [];
    for (let i = 0; i < 4000; i++) {
      // Target k's j-th scan, newest (j = 0) within the last hour: one scan every 10.5 h on average.
      const k = i % 250;
      const j = Math.floor(i / 250);
      const target = targets[k];
      const expired = k % 40 === 1;
      const legacy = k % 20 === 3;
      const failed = k % 50 === 7 && i % 3 === 0;
      scans.push([
        ++ids.scan, org, target[2], target[0], ago(j * 10.5 * 3_600_000 + Math.floor((k / 250) * 55 * 60_000) + 60_000), target[3], "direct_tls", failed, failed ? "connect ETIMEDOUT" : "",
        JSON.stringify(legacy ? ["TLSv1.0", "TLSv1.2"] : ["TLSv1.2", "TLSv1.3"]), '["TLS_AES_128_GCM_SHA256","TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]', '["x25519","secp256r1"]',
        failed ? null : hex64(k, `c${org}`), failed ? null : `CN=${monitors[Math.floor(k / 2)][2]}`, "CN=Bench CA", ago(100 * DAY),
        expired ? ago(2 * DAY) : new Date(now.getTime() + 60 * DAY).toISOString(), expired ? -2 : 60, 2, legacy ? "legacy" : "modern", "strong", "trusted",
        expired, legacy, false, false, "[]", "[]", "{}",
      ]);
    }
    await insert(
      "cert_scans",
      ["id", "organization_id", "monitor_id", "target_id", "scanned_at", "ip_address", "connection_method", "has_error", "error", "protocols", "ciphers", "named_groups",
        "cert_sha256", "cert_subject", "cert_issuer", "cert_not_before", "cert_not_after", "validity_days", "chain_length", "protocol_status", "cipher_status", "validation_status",
        "expired", "legacy_protocol", "weak_cipher", "self_signed", "weak_suites", "frameworks", "result"],
      scans,
    );
    await d1
      .prepare(
        `UPDATE cert_targets SET last_scan_id = (SELECT s.id FROM cert_scans s WHERE s.target_id = cert_targets.id ORDER BY s.scanned_at DESC LIMIT 1),
           last_scan_at = (SELECT max(s.scanned_at) FROM cert_scans s WHERE s.target_id = cert_targets.id),
           last_attempt_at = (SELECT max(s.scanned_at) FROM cert_scans s WHERE s.target_id = cert_targets.id),
           last_success_at = (SELECT max(s.scanned_at) FROM cert_scans s WHERE s.target_id = cert_targets.id AND s.has_error = 0) WHERE organization_id = ?`,
      )
      .bind(org)
      .run();

    // RDAP: 250 monitors, 4 snapshots each (a baseline, then renewals; some nameserver changes, a few registrar changes).
    const rdapMonitors: unknown[][] = [];
    const snapshots: unknown[][] = [];
    const history: unknown[][] = [];
    const facts: unknown[][] = [];
    for (let i = 0; i < 250; i++) {
      const name = `r${i}.org${org}.example`;
      const monitor = ++ids.rdapMonitor;
      rdapMonitors.push([monitor, org, name, "example", ago(3_600_000), ago(3_600_000), "success", ago(20 * DAY)]);
      for (let v = 0; v < 4; v++) {
        const doc = structuredClone(answer);
        doc.ldhName = name.toUpperCase();
        const expiry = new Date(now.getTime() + (i % 60 === 5 ? 10 : 300 + v) * DAY).toISOString();
        doc.events.find((e: { eventAction: string }) => e.eventAction === "expiration").eventDate = expiry;
        const registrarChange = v === 2 && i % 20 === 0;
        if (v >= 2 && i % 20 === 0) doc.entities[0].handle = doc.entities[0].publicIds[0].identifier = "146";
        if (v >= 3 && i % 10 === 1) doc.nameservers = doc.nameservers.slice(1);
        const body = JSON.stringify(doc);
        const snapshot = ++ids.snapshot;
        snapshots.push([snapshot, hex64(snapshot, `s`), body, body.length, name]);
        const at = v === 0 ? ago(10 * DAY) : inWeek(i * 3 + v - 1, 750);
        history.push([++ids.history, org, monitor, snapshot, v ? snapshot - 1 : null, at, v > 0, "https://rdap.example/", 200]);
        facts.push([ids.history, org, monitor, name, at, registrarChange, false, v === 3 && i % 10 === 1, false, expiry, null]);
      }
    }
    await insert("rdap_monitors", ["id", "organization_id", "domain_name", "tld", "last_checked_at", "last_success_at", "last_check_status", "created_at"], rdapMonitors);
    await insert("rdap_snapshots", ["id", "hash", "body", "size_bytes", "domain_name"], snapshots);
    await insert("rdap_history", ["id", "organization_id", "monitor_id", "snapshot_id", "previous_snapshot_id", "observed_at", "changed", "rdap_server", "http_status"], history);
    await insert(
      "rdap_change_facts",
      ["history_id", "organization_id", "monitor_id", "domain_name", "observed_at", "registrar_changed", "registrant_changed", "nameservers_changed", "status_changed", "expiration_date", "previous_expiration_date"],
      facts,
    );
  }
  // The CT logs read (the log list in use) and their cursors, caught up half a minute ago: the CT module's freshness.
  const benchLogs = ["bench-log-a", "bench-log-b"].map((id) => ({ logId: id, description: `Bench ${id}`, state: { name: "usable", timestamp: ago(400 * DAY) } }));
  await d1
    .prepare("INSERT INTO ct_log_list_cache (id, url, source, list, fetched_at) VALUES (1, 'https://bench.example/log_list.json', 'remote', ?, ?)")
    .bind(JSON.stringify({ version: "1", logListTimestamp: ago(DAY), isAllLogs: false, logs: benchLogs }), ago(3_600_000))
    .run();
  for (const log of benchLogs) {
    await d1
      .prepare("INSERT INTO ct_log_states (log_id, log_name, verified_position, tree_size, tree_head_at, verified_tree_head_at, last_entry_at, last_run_at, updated_at) VALUES (?, ?, 1500, 1500, ?, ?, ?, ?, ?)")
      .bind(log.logId, log.description, ago(40_000), ago(40_000), ago(60_000), ago(30_000), ago(30_000))
      .run();
  }
  await d1.prepare("ANALYZE").run();
  const counts = (await d1
    .prepare(
      `SELECT (SELECT count(*) FROM dns_domains WHERE organization_id = 1) + (SELECT count(*) FROM ct_filters WHERE organization_id = 1)
            + (SELECT count(*) FROM cert_targets WHERE organization_id = 1) + (SELECT count(*) FROM rdap_monitors WHERE organization_id = 1) AS assets,
              (SELECT count(*) FROM cert_scans WHERE organization_id = 1) + (SELECT count(*) FROM rdap_change_facts WHERE organization_id = 1)
            + (SELECT count(*) FROM ct_match_occurrences WHERE organization_id = 1) + (SELECT count(*) FROM dns_change_facts WHERE organization_id = 1) AS observations`,
    )
    .first()) as { assets: number; observations: number };
  seeded.assets = counts.assets;
  seeded.observations = counts.observations;
  console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s: organization 1 has ${seeded.assets} assets, ${seeded.observations} observations (organization 2 the same)\n`);

  // ------------------------------------------------------------------ measures
  const db = createDb(d1);
  const t = tenantDb(db, 1);
  const config = loadConfig({} as never);

  async function measure(label: string, fn: () => Promise<unknown>, runs = RUNS) {
    for (let i = 0; i < 3; i++) await fn(); // warm-up (JIT, D1 page cache)
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const s = performance.now();
      await fn();
      times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(times.length * q) - 1)];
    return { label, median: times[Math.floor(times.length / 2)], p90: at(0.9), p95: at(0.95), min: times[0] };
  }

  if (process.env.BENCH_PROFILE) {
    const { readDns } = await import("../src/modules/reports/facts/dns");
    const { readCt } = await import("../src/modules/reports/facts/ct");
    const { readCertificates } = await import("../src/modules/reports/facts/certificates");
    const { readRdap } = await import("../src/modules/reports/facts/rdap");
    const scope = { t, mode: "live" as const, window: { start: new Date(now.getTime() - 7 * DAY), end: now }, asOf: now, now, config, withAssets: false, evidenceLimit: 10 };
    for (const [name, read] of [["dns", readDns], ["ct", readCt], ["certs", readCertificates], ["rdap", readRdap]] as const) {
      // One module's statements alone, as one batch (the overview sends all four modules' in one).
      const r = await measure(name, async () => {
        const plan = read(scope);
        plan.read((await db.batch(plan.statements as [never, ...never[]])) as unknown[]);
      });
      console.log(`${name}: ${r.median.toFixed(1)} ms`);
      // Each statement of the module alone: where the time of the reading goes.
      for (const [i, statement] of read(scope).statements.entries()) {
        const one = await measure(`${name}[${i}]`, async () => void (await db.batch([statement] as [never])));
        console.log(`  ${name}[${i}]: ${one.median.toFixed(1)} ms`);
      }
    }
  }
  const baseline = await measure("baseline: SELECT count(*) over the 4 fact tables", () =>
    d1
      .prepare(
        `SELECT (SELECT count(*) FROM cert_scans WHERE organization_id = ?1) + (SELECT count(*) FROM rdap_change_facts WHERE organization_id = ?1)
              + (SELECT count(*) FROM ct_match_occurrences WHERE organization_id = ?1) + (SELECT count(*) FROM dns_change_facts WHERE organization_id = ?1) AS n`,
      )
      .bind(1)
      .first(),
  );
  let overviewResult: Awaited<ReturnType<typeof securityOverview>> | undefined;
  const overview = await measure("security overview (all its D1 queries + scoring + category status)", async () => {
    overviewResult = await securityOverview(t, config, now);
  });
  // The same organization seen a day later with nothing collected since: every asset is
  // uncollected, so the category status and the stale evidence handle all 1,000 of them.
  const blindAt = new Date(now.getTime() + DAY);
  let blindResult: Awaited<ReturnType<typeof securityOverview>> | undefined;
  const blindOverview = await measure("security overview, nothing collected for a day (every asset blind)", async () => {
    blindResult = await securityOverview(t, config, blindAt);
  });

  // What the category status adds, alone: the pure computation on the facts the blind
  // overview reads (every asset uncollected), beside the whole scoring of them.
  const blindFacts = (
    await readAudit({ t, mode: "live", window: { start: new Date(blindAt.getTime() - 7 * DAY), end: blindAt }, asOf: blindAt, now: blindAt, config, withAssets: false, evidenceLimit: 10 })
  ).facts;
  const statusOnly = await measure("category status alone (pure, every asset blind)", async () => void assessCategories(blindFacts));
  const scoringOnly = await measure("scoring with status and stale evidence (pure, every asset blind)", async () => void scoreAudit(blindFacts));

  const week = { start: new Date(now.getTime() - 7 * DAY), end: now };
  let document: ReportDocument | undefined;
  const reportFacts = await measure("weekly report: facts + asset appendix + scoring", async () => {
    const reading = await readAudit({ t, mode: "period", window: week, asOf: week.end, now, config, withAssets: true, evidenceLimit: REPORT_EVIDENCE_LIMIT });
    document = {
      report_type: "weekly",
      organization: "Bench Holdings International",
      period_start: week.start.toISOString(),
      period_end: week.end.toISOString(),
      generated_at: now.toISOString(),
      result: scoreAudit(reading.facts),
      collection_windows: reading.facts.coverage.map((c) => ({ module: c.module, seconds: expectedCollectionWindowSeconds(c.module, config) })),
      assets: reading.assets,
      shared_sources: reading.shared_sources,
    };
  });
  let pdf: Uint8Array = new Uint8Array();
  const render = await measure("weekly report: PDF rendering", async () => {
    pdf = await renderReportPdf(document!);
  }, Math.min(RUNS, 10));

  const o = overviewResult!.data;
  console.log(`overview: score ${scoreHeadline(o.overall_score, o.grade, o.category_status)}, categories ${JSON.stringify(o.category_scores)}`);
  console.log(`          status ${Object.entries(o.category_status).map(([k, v]) => `${k} ${v.status} ${v.collected}/${v.expected}`).join(", ")}`);
  const b = blindResult!.data;
  console.log(`a day on: score ${scoreHeadline(b.overall_score, b.grade, b.category_status)}, status ${Object.entries(b.category_status).map(([k, v]) => `${k} ${v.status} ${v.collected}/${v.expected}`).join(", ")}`);
  console.log(`          findings ${o.findings.map((f) => `${f.id}×${f.evidence_total}`).join(", ")}`);
  console.log(`report:   ${document!.assets.length} assets in the appendix, ${document!.result.findings.length} findings; PDF ${(pdf.length / 1024).toFixed(0)} KiB\n`);

  const rows = [baseline, overview, blindOverview, statusOnly, scoringOnly, reportFacts, render];
  const w = Math.max(...rows.map((r) => r.label.length));
  console.log(`${"measure".padEnd(w)}  median ms   p90 ms   p95 ms   x baseline (median)`);
  for (const r of rows) {
    console.log(`${r.label.padEnd(w)}  ${r.median.toFixed(2).padStart(9)}  ${r.p90.toFixed(2).padStart(7)}  ${r.p95.toFixed(2).padStart(7)}   ${(r.median / baseline.median).toFixed(2).padStart(8)}`);
  }
  console.log(
    `\ntargets: overview < 200 ms (${overview.median < 200 && blindOverview.median < 200 ? "met" : "MISSED"}, both), PDF rendering < 1000 ms (${render.median < 1000 ? "met" : "MISSED"})`,
  );
} finally {
  await proxy.dispose();
}
