/**
 * CEL rule evaluation throughput: 50 realistic compiled CT-log rules over 10,000
 * synthetic CT match events, with in_list lookups against a 1,000-entry IP list and a
 * 1,000-entry domain list, next to hand-written JavaScript predicates doing the same work
 * (same ListData lookups) in the same run.
 *
 *   npx tsx bench/cel-rules.ts            (targets: >= 100,000 evaluations/s, within 5x)
 *
 * The CEL figure includes prepareEvent (JSON -> CEL values) once per event, amortized over
 * the 50 rules, because the alert processor pays it too.
 */
import { compileRule, evaluate, prepareEvent, type CompiledRule } from "../src/modules/alerting/cel/engine";
import { compileListData, type ListData } from "../src/modules/alerting/cel/list-data";

// ---- deterministic synthetic data ---------------------------------------------------

let seed = 0x2545f491;
function rand(): number {
  // xorshift32: reproducible figures from run to run
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 0x100000000;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

const ORGS = ["example.com", "example.org", "shop.example.net", "acme-corp.com", "bank-secure.co.uk", "contoso.io", "bücher.de"];
const WORDS = ["www", "api", "mail", "vpn", "login", "cdn", "dev", "staging", "app", "portal", "auth", "m", "static", "admin"];
const ISSUERS = [
  "CN=R11,O=Let's Encrypt,C=US",
  "CN=E6,O=Let's Encrypt,C=US",
  "CN=DigiCert Global G2 TLS RSA SHA256 2020 CA1,O=DigiCert Inc,C=US",
  "CN=Sectigo RSA Domain Validation Secure Server CA,O=Sectigo Limited,L=Salford,ST=Greater Manchester,C=GB",
  "CN=GTS CA 1P5,O=Google Trust Services LLC,C=US",
  "CN=Amazon RSA 2048 M02,O=Amazon,C=US",
];
const LOGS = ["Google 'Argon2025h2' log", "Cloudflare 'Nimbus2025'", "Let's Encrypt 'Oak2025h2'", "DigiCert 'Wyvern2025h2' Log", "Sectigo 'Elephant2025h2'"];

const domainEntries: string[] = [];
for (let i = 0; i < 1000; i++) domainEntries.push(`${pick(WORDS)}${i}.${pick(ORGS)}`);
const ipEntries: string[] = [];
for (let i = 0; i < 1000; i++) {
  ipEntries.push(i % 10 === 0 ? `2001:db8:${i.toString(16)}::/48` : `${int(1, 223)}.${int(0, 255)}.${int(0, 255)}.0/24`);
}
const listData: ListData = compileListData([
  { name: "vip_domains", list_type: "domain", values: domainEntries },
  { name: "bad_ips", list_type: "ip", values: ipEntries },
]);

function syntheticEvent(i: number): Record<string, unknown> {
  const org = pick(ORGS);
  const names: string[] = [];
  const nNames = int(1, 6);
  for (let k = 0; k < nNames; k++) {
    const r = rand();
    if (r < 0.15) names.push(pick(domainEntries)); // a listed name
    else if (r < 0.22) names.push(`${int(1, 223)}.${int(0, 255)}.${int(0, 255)}.${int(1, 254)}`); // IP SAN
    else if (r < 0.25) names.push(`*.${org}`);
    else names.push(`${pick(WORDS)}${int(0, 2000)}.${org}`);
  }
  const issuer = pick(ISSUERS);
  const rsa = rand() < 0.6;
  const hasCaa = rand() < 0.5;
  const notBefore = new Date(Date.UTC(2025, int(0, 11), int(1, 28), int(0, 23)));
  const days = pick([7, 14, 30, 90, 90, 90, 200, 397, 398, 825]);
  const cert: Record<string, unknown> = {
    subject: names[0],
    issuer,
    dns_names: names,
    sha256: (i * 2654435761).toString(16).padStart(64, "0"),
    serial: (i * 40503).toString(16),
    not_before: notBefore.toISOString(),
    not_after: new Date(notBefore.getTime() + days * 86400_000).toISOString(),
    signature_algorithm: pick(["sha256WithRSAEncryption", "ecdsa-with-SHA384", "sha1WithRSAEncryption", "ecdsa-with-SHA256"]),
    key_algorithm: rsa ? "RSA" : "EC",
    is_precert: rand() < 0.5,
    log_name: pick(LOGS),
    log_index: int(0, 900_000_000),
    aia_issuing: ["http://r11.i.lencr.org/"],
    ocsp_servers: rand() < 0.5 ? [] : ["http://r11.o.lencr.org"],
    scts: Array.from({ length: int(0, 3) }, () => ({
      log_id: "7s3QZNXbGs7FXLedtM0TojKHRny87N7DUUhZRnEftZs=",
      timestamp: 1_750_000_000_000 + int(0, 1e9),
      version: 0,
      hash_algorithm: "sha256",
      signature_algorithm: "ecdsa",
    })),
  };
  if (rsa) cert.key_size = pick([1024, 2048, 2048, 3072, 4096]);
  return {
    cert,
    caa: {
      has_records: hasCaa,
      authorized: !hasCaa || rand() < 0.8,
      records: hasCaa ? ["letsencrypt.org"] : [],
      error: rand() < 0.05 ? "SERVFAIL" : "",
      checked_names: [org],
      issuer_candidates: ["letsencrypt.org"],
      evaluated_at: "2025-07-01T00:00:00Z",
    },
    rate: { count: int(0, 60), window: "1h", precert_count: int(0, 30), final_count: int(0, 30), total_count: int(0, 90) },
    filter_id: int(1, 20),
    matched_at: "2025-07-01T00:00:00Z",
  };
}

// ---- 50 rules: CEL text and the same predicate by hand ------------------------------

type Ev = any;
interface BenchRule {
  cel: string;
  js: (e: Ev, l: ListData) => boolean;
}

const rules: BenchRule[] = [];
for (const org of ORGS.slice(0, 6)) {
  rules.push({
    cel: `cert.dns_names.exists(n, n.endsWith(".${org}")) && caa.has_records && !caa.authorized`,
    js: (e) => e.cert.dns_names.some((n: string) => n.endsWith(`.${org}`)) && e.caa.has_records && !e.caa.authorized,
  });
  rules.push({
    cel: `cert.dns_names.exists(n, n == "*.${org}")`,
    js: (e) => e.cert.dns_names.some((n: string) => n === `*.${org}`),
  });
  rules.push({
    cel: `cert.subject.endsWith("${org}") && cert.issuer.contains("Let's Encrypt") == false`,
    js: (e) => e.cert.subject.endsWith(org) && e.cert.issuer.includes("Let's Encrypt") === false,
  });
}
for (const word of WORDS.slice(0, 6)) {
  rules.push({
    cel: `cert.dns_names.exists(n, n.startsWith("${word}")) && rate.count > 20`,
    js: (e) => e.cert.dns_names.some((n: string) => n.startsWith(word)) && e.rate.count > 20,
  });
}
rules.push(
  { cel: `cert.dns_names.exists(n, in_list(n, lists["vip_domains"]))`, js: (e, l) => e.cert.dns_names.some((n: string) => l.matches("vip_domains", n)) },
  { cel: `cert.dns_names.exists(n, in_list(n, lists["bad_ips"]))`, js: (e, l) => e.cert.dns_names.some((n: string) => l.matches("bad_ips", n)) },
  { cel: `in_list(cert.subject, lists["vip_domains"]) && !cert.is_precert`, js: (e, l) => l.matches("vip_domains", e.cert.subject) && !e.cert.is_precert },
  {
    cel: `cert.dns_names.exists(n, in_list(n, lists["vip_domains"])) && caa.has_records && !caa.authorized`,
    js: (e, l) => e.cert.dns_names.some((n: string) => l.matches("vip_domains", n)) && e.caa.has_records && !e.caa.authorized,
  },
  { cel: `cert.dns_names.filter(n, in_list(n, lists["vip_domains"])).size() >= 2`, js: (e, l) => e.cert.dns_names.filter((n: string) => l.matches("vip_domains", n)).length >= 2 },
  { cel: `!cert.dns_names.all(n, !in_list(n, lists["bad_ips"]))`, js: (e, l) => !e.cert.dns_names.every((n: string) => !l.matches("bad_ips", n)) },
  { cel: `has(cert.key_size) && cert.key_size < 2048`, js: (e) => e.cert.key_size !== undefined && e.cert.key_size < 2048 },
  { cel: `cert.key_algorithm == "RSA" && has(cert.key_size) && cert.key_size >= 4096`, js: (e) => e.cert.key_algorithm === "RSA" && e.cert.key_size !== undefined && e.cert.key_size >= 4096 },
  { cel: `cert.signature_algorithm.startsWith("sha1")`, js: (e) => e.cert.signature_algorithm.startsWith("sha1") },
  { cel: `cert.signature_algorithm.matches("^ecdsa-with-SHA(384|512)$")`, js: (e) => /^ecdsa-with-SHA(384|512)$/.test(e.cert.signature_algorithm) },
  { cel: `size(cert.scts) < 2 && !cert.is_precert`, js: (e) => e.cert.scts.length < 2 && !e.cert.is_precert },
  { cel: `cert.scts.exists(s, s.version != 0)`, js: (e) => e.cert.scts.some((s: any) => s.version !== 0) },
  { cel: `caa.error != "" && caa.has_records`, js: (e) => e.caa.error !== "" && e.caa.has_records },
  { cel: `caa.has_records && !("letsencrypt.org" in caa.records) && cert.issuer.contains("Let's Encrypt")`, js: (e) => e.caa.has_records && !e.caa.records.includes("letsencrypt.org") && e.cert.issuer.includes("Let's Encrypt") },
  { cel: `rate.precert_count > 10 && rate.final_count == 0`, js: (e) => e.rate.precert_count > 10 && e.rate.final_count === 0 },
  { cel: `rate.total_count > 80 || rate.count > 55`, js: (e) => e.rate.total_count > 80 || e.rate.count > 55 },
  { cel: `filter_id in [3, 5, 8] && cert.log_name.contains("Argon")`, js: (e) => [3, 5, 8].includes(e.filter_id) && e.cert.log_name.includes("Argon") },
  { cel: `cert.not_after < "2025-06-01T00:00:00.000Z"`, js: (e) => e.cert.not_after < "2025-06-01T00:00:00.000Z" },
  {
    cel: `timestamp(cert.not_after) - timestamp(cert.not_before) > duration("9504h")`,
    js: (e) => Date.parse(e.cert.not_after) - Date.parse(e.cert.not_before) > 9504 * 3600_000,
  },
  { cel: `size(cert.dns_names) > 4 && cert.dns_names.exists(n, n.contains("login"))`, js: (e) => e.cert.dns_names.length > 4 && e.cert.dns_names.some((n: string) => n.includes("login")) },
  { cel: `cert.ocsp_servers.size() == 0 && cert.issuer.contains("Let's Encrypt")`, js: (e) => e.cert.ocsp_servers.length === 0 && e.cert.issuer.includes("Let's Encrypt") },
  { cel: `cert.aia_issuing.exists(u, u.startsWith("http://r11."))`, js: (e) => e.cert.aia_issuing.some((u: string) => u.startsWith("http://r11.")) },
  { cel: `cert.dns_names.exists(n, n.matches("^(login|auth)[0-9]+\\\\."))`, js: (e) => e.cert.dns_names.some((n: string) => /^(login|auth)[0-9]+\./.test(n)) },
  { cel: `cert.issuer.contains("O=DigiCert") && cert.dns_names.exists(n, n.endsWith(".contoso.io"))`, js: (e) => e.cert.issuer.includes("O=DigiCert") && e.cert.dns_names.some((n: string) => n.endsWith(".contoso.io")) },
  { cel: `cert.log_index > 800000000 && cert.is_precert`, js: (e) => e.cert.log_index > 800000000 && e.cert.is_precert },
  { cel: `!caa.authorized && caa.checked_names.exists(n, in_list(n, lists["vip_domains"]))`, js: (e, l) => !e.caa.authorized && e.caa.checked_names.some((n: string) => l.matches("vip_domains", n)) },
);
if (rules.length !== 50) throw new Error(`expected 50 rules, have ${rules.length}`);

// ---- run ------------------------------------------------------------------------------

const compiled: CompiledRule[] = rules.map((r) => {
  const c = compileRule("ct-log", r.cel, ["vip_domains", "bad_ips"]);
  if (!c.ok) throw new Error(`${r.cel}: ${c.message}`);
  return c;
});
const events = Array.from({ length: 10_000 }, (_, i) => syntheticEvent(i));

// Both sides must agree, or the comparison measures different work.
let mismatches = 0;
for (const e of events.slice(0, 2000)) {
  const p = prepareEvent("ct-log", e);
  compiled.forEach((c, k) => {
    const a = evaluate(c, p, listData);
    if (a.error) throw new Error(`${c.expression}: ${a.error}`);
    if (a.matched !== rules[k].js(e, listData)) mismatches++;
  });
}
if (mismatches) throw new Error(`CEL and hand-written predicates disagree ${mismatches} times`);

function runCel(): number {
  let matched = 0;
  for (const e of events) {
    const p = prepareEvent("ct-log", e);
    for (const c of compiled) if (evaluate(c, p, listData).matched) matched++;
  }
  return matched;
}
function runJs(): number {
  let matched = 0;
  for (const e of events) for (const r of rules) if (r.js(e, listData)) matched++;
  return matched;
}

function measure(fn: () => number): { rate: number; matched: number } {
  fn(); // warm-up
  let best = Infinity;
  let matched = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    matched = fn();
    best = Math.min(best, performance.now() - t0);
  }
  return { rate: (events.length * rules.length) / (best / 1000), matched };
}

const cel = measure(runCel);
const js = measure(runJs);
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(`events: ${events.length}, rules: ${rules.length}, lists: 1,000 IP networks + 1,000 domains`);
console.log(`CEL (compiled, prepared events): ${fmt(cel.rate)} evaluations/s  (${cel.matched} matches)`);
console.log(`hand-written JavaScript:         ${fmt(js.rate)} evaluations/s  (${js.matched} matches)`);
console.log(`ratio hand-written / CEL: ${(js.rate / cel.rate).toFixed(2)}x  (target <= 5x; CEL target >= 100,000/s)`);
