/**
 * Real data behind the console, made the way the service meets it in production:
 * CT entries appended to the fixture hub's logs and ingested by the Cron Trigger,
 * DNS zones on its DoH resolver edited between two runs, RDAP registrations from its
 * RDAP server (one changed between two runs), scans posted by an agent with real
 * scanner-node results, alert rules that fire to a webhook, and, for an organization
 * that signed up weeks ago, the weekly reports the Cron Trigger generates.
 *
 * Shared by the browser tests (global-setup.ts prepares the hub, pages.e2e.ts seeds
 * its organization) and `npm run bench:web`, so the benchmark times the page the tests
 * look at. Plain Node, no vitest: callers pass their own API client.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** A call as a logged-in user of the organization (session cookie and console header). */
export type Api = <T = any>(method: string, path: string, body?: unknown) => Promise<{ status: number; body: T }>;

/** POST of a JSON body; the answer's JSON (null when it has none). Throws on a non-2xx answer. */
export async function postJson(url: string, body: unknown): Promise<any> {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json().catch(() => null);
}

export async function poll<T>(probe: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      // A connection dropped while the service is busy ingesting: ask again.
      lastError = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${lastError})` : ""}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Fires the service's Cron Trigger (what npm start does every minute). */
export async function runCron(baseUrl: string) {
  const r = await fetch(`${baseUrl}/__scheduled`);
  if (!r.ok) throw new Error(`/__scheduled answered ${r.status}`);
}

/** How many weekly reports an organization that signed up five weeks ago gets: the catch-up window (reports/period.ts CATCH_UP_WEEKS). */
export const CATCH_UP_REPORTS = 4;
/** A signup date for which every week of the catch-up window is due. */
export const weeksAgo = (n: number) => new Date(Date.now() - n * 7 * 86_400_000 - 86_400_000);

const CAA_FORBID_ALL = { name: "chixbbq.org", type: "CAA", ttl: 300, data: { flags: 0, tag: "issue", value: ";" } };
/** What the hub's DoH namespace of the service answers from (a test that makes it fail puts these back). */
export const HUB_DNS_RECORDS = [CAA_FORBID_ALL];

export interface HubSetup {
  /** CT_LOG_LIST_URL and CT_LOG_LIST_PUBLIC_KEY of the service. */
  logListUrl: string;
  logListPem: string;
  /** The DoH namespace (DOH_RESOLVER_URLS = `${hub}/doh/<ns>/dns-query`) and the two log names. */
  ns: string;
  tilesLog: string;
  rfcLog: string;
}

/**
 * Two CT logs the service reads (CT_START_POSITION=start) with a few real entries
 * already in them: entries appended after the filters exist become matches
 * (navigli2025h2 static-ct tiles; the pilot log over RFC 6962). chixbbq.org forbids
 * every CA in the DoH namespace `ns`: its certificates are CAA violations.
 */
export async function prepareHub(hubUrl: string, ns: string): Promise<HubSetup> {
  const tilesLog = `${ns}tiles`;
  const rfcLog = `${ns}rfc`;
  await postJson(`${hubUrl}/ctlog/__control/logs`, { name: tilesLog, from: "navigli2025h2", size: 256 });
  await postJson(`${hubUrl}/ctlog/__control/logs`, { name: rfcLog, from: "pilot", size: 2, leafIndexExtension: false });
  const { url } = await postJson(`${hubUrl}/ctlog/__control/loglists`, {
    name: ns,
    logs: [
      { log: tilesLog, protocol: "static-ct" },
      { log: rfcLog, protocol: "rfc6962" },
    ],
  });
  const { pem } = (await (await fetch(`${hubUrl}/ctlog/__control/loglist-key`)).json()) as { pem: string };
  await postJson(`${hubUrl}/doh/__control/zone`, { ns, records: HUB_DNS_RECORDS });
  return { logListUrl: url, logListPem: pem, ns, tilesLog, rfcLog };
}

const certFixtures = join(dirname(fileURLToPath(import.meta.url)), "../../test/cert-watcher/fixtures");

/** A recorded scanner-node result, its certificate moved to expire in `daysLeft` days. */
function scanResult(name: string, daysLeft?: number) {
  const r = JSON.parse(readFileSync(join(certFixtures, `${name}.json`), "utf8"));
  if (r.certificate && daysLeft !== undefined) {
    const now = Date.now();
    r.certificate.not_after = new Date(now + daysLeft * 86_400_000 + 3_600_000).toISOString();
    r.certificate.not_before = new Date(now + daysLeft * 86_400_000 - 200 * 86_400_000).toISOString();
    r.validity_days = daysLeft;
  }
  return r;
}

/** A self-signed certificate for `names` (a lookalike seen in a CT log), made by openssl. */
export function certificateFor(names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "tp-cert-"));
  try {
    // prettier-ignore
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

async function created<T = any>(call: Promise<{ status: number; body: T }>, what: string): Promise<T> {
  const r = await call;
  if (r.status !== 201) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export interface Seeded {
  dnsDomain: string;
  rdapDomain: string;
  rdapFrom: string;
  rdapTo: string;
  /** A CT match with a CAA violation (its SHA-256). */
  match: string;
  /** A typosquatting match: `sha256?filter_id=..&candidate_domain=..`. */
  typo: string;
  monitor: string;
  reports: number;
  ctMatches: number;
}

/**
 * Fills the organization `api` acts for. `suffix` keeps its DNS zone and RDAP names
 * apart from other organizations on the same hub. With `reports`, also waits for the
 * weekly reports of the catch-up window (the organization must have signed up weeks
 * ago: X-Trust-Plane-Now at signup, ALLOW_CLOCK_OVERRIDE on the service).
 */
export async function seedOrganization(opts: { api: Api; baseUrl: string; hubUrl: string; hub: HubSetup; suffix: string; reports?: number }): Promise<Seeded> {
  const { api, baseUrl, hubUrl, hub, suffix: u } = opts;
  const cron = () => runCron(baseUrl);
  const hubPost = (path: string, body: unknown) => postJson(`${hubUrl}${path}`, body);

  // Alerting first, so that the ingestion below fires it.
  const hook = await created(api("POST", "/api/notification-channels", { name: "SOC webhook", kind: "webhook", url: `${hubUrl}/webhook/web${u}` }), "webhook channel");
  await created(api("POST", "/api/notification-channels", { name: "Security team", kind: "email", recipients: ["security@example.com"] }), "email channel");
  const tpl = await created(api("POST", "/api/ct-log/alert-templates", { name: "Short", subject: "[{{cert.subject}}] CAA", body: "Issuer {{cert.issuer}} for {{cert.dns_names}}" }), "template");
  await created(api("POST", "/api/ct-log/alert-rules", { name: "CAA violation", expression: "caa.has_records && !caa.authorized", severity: "high", channel_ids: [hook.id], template_id: tpl.id }), "CT rule");
  await created(api("POST", "/api/cert-watcher/alert-rules", { name: "Expiring soon", expression: "validity_days < 30", severity: "medium", channel_ids: [hook.id] }), "cert rule");
  await created(api("POST", "/api/lists", { name: "dmz", list_type: "ip", description: "DMZ networks", entries: ["192.0.2.0/24", "2001:db8::/32"] }), "rule list");

  // CT: filters, then real entries appended to the logs the service reads.
  for (const f of [
    { pattern: "chixbbq.org", match_type: "wide", feed_dns_enabled: true, description: "Restaurant brand" },
    { pattern: "cynova.dev", match_type: "wide", feed_certs_enabled: true },
    { pattern: "paypal.com", match_type: "wide", typosquat_enabled: true, description: "Payments" },
    { pattern: "www.example.com", match_type: "exact" },
  ]) {
    await created(api("POST", "/api/ct-log/filters", f), `CT filter ${f.pattern}`);
  }
  await hubPost(`/ctlog/${hub.tilesLog}/__control/copy`, { from: "navigli2025h2", start: 256, end: 1024 });
  await hubPost(`/ctlog/${hub.rfcLog}/__control/entries`, { certificates: [certificateFor(["paypa1.com", "www.paypa1.com"]), certificateFor(["paypal-login.com"])] });

  // DNS: a zone on the hub's DoH resolver, watched, then edited between two runs.
  const zone = `shop${u}.test`;
  const dnsZone = (a: string, dmarc: string) => [
    CAA_FORBID_ALL,
    { name: zone, type: "A", data: a },
    { name: zone, type: "AAAA", data: "2001:db8::10" },
    { name: zone, type: "MX", data: { preference: 10, exchange: `mx1.${zone}` } },
    { name: zone, type: "TXT", data: ["v=spf1 ip4:192.0.2.0/24 ~all"] },
    { name: zone, type: "CAA", data: { flags: 0, tag: "issue", value: "letsencrypt.org" } },
    { name: `_dmarc.${zone}`, type: "TXT", data: [dmarc] },
  ];
  await hubPost("/doh/__control/zone", { ns: hub.ns, records: dnsZone("192.0.2.10", `v=DMARC1; p=quarantine; rua=mailto:dmarc@${zone}`) });
  const dnsDomain = await created(api("POST", "/api/dns-watcher/domains", { domain_name: zone, notes: "Shop" }), "DNS domain");
  await created(api("POST", "/api/dns-watcher/domains", { domain_name: `brand${u}.test`, enabled: false }), "paused DNS domain");

  // RDAP: two domains; one changes registrar data between two scheduled runs.
  const shop = `shop${u}.com`;
  const brand = `brand${u}.fr`;
  for (const d of [shop, brand]) await created(api("POST", "/api/rdap/domains", { domain_name: d, notes: d.endsWith(".fr") ? "French market" : "Main shop" }), `RDAP ${d}`);

  // Certificates: monitors (one with an SNI override), an agent, and real scanner-node results posted as the agent does.
  const m1 = await created(api("POST", "/api/cert-watcher/monitors", { cn: "www.example.test", ip_addresses: ["192.0.2.10", "192.0.2.11"], notes: "Public site" }), "monitor");
  await created(api("POST", "/api/cert-watcher/monitors", { cn: "legacy.example.test", port: 8443, target_dns: "legacy-sni.example.test", ip_addresses: ["192.0.2.12"] }), "monitor");
  await created(api("POST", "/api/cert-watcher/monitors", { cn: "mail.example.test", port: 587, ip_addresses: ["192.0.2.13"] }), "monitor");
  const agent = await created(api("POST", "/api/cert-watcher/agents", { name: "dmz-scanner" }), "agent");
  const old = await created(api("POST", "/api/cert-watcher/agents", { name: "old-scanner" }), "agent");
  await api("DELETE", `/api/cert-watcher/agents/${old.id}`);

  await cron();
  const results: Record<string, unknown> = {
    "192.0.2.10": scanResult("ecdsa-trusted", 64),
    "192.0.2.11": scanResult("rsa-self-signed", 12),
    "192.0.2.12": scanResult("legacy-weak", -3),
    "192.0.2.13": scanResult("refused"),
  };
  const asAgent = { authorization: `Bearer ${agent.token}`, "content-type": "application/json" };
  const scanRound = async () => {
    const leased = await poll(async () => {
      const r = await fetch(`${baseUrl}/api/cert-watcher/agents/lease`, { method: "POST", headers: asAgent, body: JSON.stringify({ max_jobs: 10 }) });
      const body = (await r.json()) as { jobs: { job_id: number; ip_address: string }[] };
      return body.jobs.length ? body.jobs : null;
    }, "scan jobs");
    for (const job of leased) {
      const r = await fetch(`${baseUrl}/api/cert-watcher/agents/results`, { method: "POST", headers: asAgent, body: JSON.stringify({ job_id: job.job_id, result: results[job.ip_address] }) });
      if (r.status !== 200) throw new Error(`scan result of ${job.ip_address}: ${r.status} ${await r.text()}`);
    }
  };
  await scanRound();
  // The same results again (every target is due at every run here): the expiring ones are suppressed as duplicates.
  await cron();
  await scanRound();

  // Wait for the CT ingestion of the appended entries and the first RDAP snapshots.
  await poll(async () => (await api("GET", "/api/ct-log/typosquatting/matches")).body.total > 0 && (await api("GET", "/api/ct-log/matches")).body.total > 20, "CT matches");
  await poll(async () => (await api("GET", `/api/rdap/domains/${shop}/history`)).status === 200, "the first RDAP snapshot");
  const original = await (await fetch(`${hubUrl}/rdap/domain/${shop}`)).json();
  const changed = structuredClone(original) as any;
  changed.nameservers = [
    { objectClassName: "nameserver", ldhName: "NS1.NEW-DNS.EXAMPLE" },
    { objectClassName: "nameserver", ldhName: "NS2.NEW-DNS.EXAMPLE" },
  ];
  changed.status = ["client transfer prohibited", "client delete prohibited"];
  for (const e of changed.events ?? []) if (e.eventAction === "expiration") e.eventDate = new Date(Date.now() + 21 * 86_400_000).toISOString().replace(/\.\d+Z$/, "Z");
  await hubPost(`/rdap/__control/domain/${shop}`, { body: changed });
  await poll(async () => (await api("GET", `/api/dns-watcher/domains/${dnsDomain.id}`)).body.last_checked_at, "the first DNS resolution");
  await hubPost("/doh/__control/zone", { ns: hub.ns, records: dnsZone("192.0.2.11", `v=DMARC1; p=none; rua=mailto:dmarc@${zone}`) });
  await cron();
  await poll(async () => {
    if ((await api("GET", `/api/dns-watcher/domains/${dnsDomain.id}/history`)).body.total >= 2) return true;
    await cron();
    return false;
  }, "the DNS changes");
  const change = await poll(async () => (await api("GET", "/api/rdap/changes")).body.changes.find((c: any) => c.domain_name === shop && c.previous_snapshot_id), "the RDAP change");
  const match = (await api("GET", "/api/ct-log/matches?sort_by=certificate_domain")).body.matches.find((m: any) => m.caa_violation);
  if (!match) throw new Error("no CT match with a CAA violation");
  // A match's event is evaluated by the queue consumer a moment after the match is visible
  // (longer on a busy machine): the pages read its alert and its verdict.
  await poll(async () => (await api("GET", "/api/ct-log/alert-history")).body.total > 0, "the CAA rule's alert");
  const typoMatches = await api("GET", "/api/ct-log/typosquatting/matches");
  const typo = typoMatches.body.matches[0];

  // The weekly reports of the catch-up window (generated by the Cron runs above, or the next ones).
  let reports = 0;
  if (opts.reports) {
    reports = await poll(async () => {
      const n = (await api("GET", "/api/reports?limit=54")).body?.data?.length ?? 0;
      if (n >= opts.reports!) return n;
      await cron();
      return 0;
    }, `${opts.reports} weekly reports`);
  }
  return {
    dnsDomain: String(dnsDomain.id),
    rdapDomain: shop,
    rdapFrom: change.previous_snapshot_id,
    rdapTo: change.snapshot_id,
    match: match.sha256,
    typo: `${typo.sha256}?filter_id=${typo.filter_id}&candidate_domain=${encodeURIComponent(typo.candidate_domain)}`,
    monitor: String(m1.id),
    reports,
    ctMatches: (await api("GET", "/api/ct-log/matches")).body.total,
  };
}
