/**
 * The Worker's bindings and configuration.
 *
 * Every value in `Bindings` comes from wrangler.toml `[vars]` (public defaults),
 * `.dev.vars` locally, or secrets when deployed. `loadConfig` turns the raw strings
 * into typed configuration once per request; modules read `Config`, never `env.X`.
 */
import type { OrgGateRpc } from "./platform/rate-limit/buckets";

/**
 * The Worker's D1 database and configuration variables. The other bindings are declared
 * beside the contract that types them, by adding to this interface
 * (`declare module "../../env" { interface Bindings { ... } }`): EVENTS_QUEUE in
 * platform/queue.ts, ALERT_STATE in modules/alerting/alert-state-contract.ts,
 * CT_LOG_CURSOR in modules/ct-log/cursor-contract.ts, CT_CURSOR_DATA in
 * modules/ct-log/cursor/data.ts. So configuration imports no module and no file that
 * imports it back (the dependency rules, .dependency-cruiser.cjs, check both).
 */
export interface Bindings {
  DB: D1Database;
  /** One OrgGate Durable Object per organization and per rate-limit key (durable-objects/org-gate.ts, bound by wrangler.toml). */
  ORG_GATE: DurableObjectNamespace<OrgGateRpc>;

  SIGNUP_ENABLED?: string;
  PUBLIC_BASE_URL?: string;
  MAIL_FROM?: string;
  SMTP_URL?: string;
  CT_LOG_LIST_URL?: string;
  CT_LOG_LIST_PUBLIC_KEY?: string;
  RDAP_BOOTSTRAP_URL?: string;
  DOH_RESOLVER_URLS?: string;
  RDAP_CHECK_INTERVAL_SECONDS?: string;
  RDAP_BASE_URL?: string;
  RDAP_TIMEOUT_MS?: string;
  RDAP_MAX_DOMAINS_PER_RUN?: string;
  RDAP_CONCURRENCY?: string;
  DNS_CHECK_INTERVAL_SECONDS?: string;
  DNS_CONCURRENCY?: string;
  DNS_MAX_DOMAINS_PER_RUN?: string;
  DNS_TIMEOUT_MS?: string;
  MTA_STS_POLICY_URL?: string;
  LOOKALIKE_CHECK_INTERVAL_SECONDS?: string;
  LOOKALIKE_MAX_CHECKS_PER_RUN?: string;
  LOOKALIKE_DISCOVERY_QUERIES_PER_DAY?: string;
  LOOKALIKE_HTTPS_PORT?: string;
  SCAN_INTERVAL_SECONDS?: string;
  CT_START_POSITION?: string;
  CT_BATCH_SIZE?: string;
  CT_POLL_SPREAD_SECONDS?: string;
  CT_REQUESTS_PER_SECOND?: string;
  CT_CONCURRENCY?: string;
  CT_RUN_SECONDS?: string;
  CT_LOG_POLITENESS?: string;
  RATE_LIMIT_ORG_PER_MINUTE?: string;
  RATE_LIMIT_TOKEN_PER_MINUTE?: string;
  RATE_LIMIT_ANONYMOUS_PER_MINUTE?: string;
  SECRETS_KEY?: string;
  EGRESS_ALLOWLIST?: string;
  TRUST_CF_CONNECTING_IP?: string;
  /** Test configuration only: lets the X-Trust-Plane-Now header move a request's clock (src/platform/clock.ts). */
  ALLOW_CLOCK_OVERRIDE?: string;
  ALERT_DELIVERY_TIMEOUT_MS?: string;
  PAGERDUTY_EVENTS_URL?: string;
  PAGERDUTY_EU_EVENTS_URL?: string;
  OPSGENIE_API_URL?: string;
  OPSGENIE_EU_API_URL?: string;
}

export interface Config {
  signupEnabled: boolean;
  publicBaseUrl: string;
  mailFrom: string;
  /** Empty: mail goes to the D1 outbox (local transport). */
  smtpUrl: string;
  ctLogListUrl: string;
  ctLogListPublicKey: string;
  rdapBootstrapUrl: string;
  dohResolverUrls: string[];
  rdapCheckIntervalSeconds: number;
  rdap: {
    /** One RDAP base URL for every domain instead of the bootstrap; empty = bootstrap. */
    baseUrl: string;
    timeoutMs: number;
    maxDomainsPerRun: number;
    concurrency: number;
  };
  dnsCheckIntervalSeconds: number;
  dns: {
    /** DoH queries in flight at once in a scheduled run. */
    concurrency: number;
    /** Domains resolved per scheduled run (least recently checked first). */
    maxDomainsPerRun: number;
    /** Timeout of one DoH request. */
    timeoutMs: number;
    /**
     * Where a domain's MTA-STS policy is fetched: a URL template whose `{domain}` is the
     * watched domain (RFC 8461 §3.3: https://mta-sts.{domain}/.well-known/mta-sts.txt).
     */
    mtaStsPolicyUrl: string;
  };
  /** Lookalike domains (src/modules/ct-log/lookalikes/). */
  lookalikes: {
    /** How often each lookalike's DNS, HTTPS port and (monthly) RDAP are checked again. */
    checkIntervalSeconds: number;
    /** Lookalikes checked per scheduled run (least recently checked first; the rest stay due). */
    maxChecksPerRun: number;
    /** DoH queries the registered-permutation discovery may spend per organization per UTC day (scheduled and on demand). */
    discoveryQueriesPerDay: number;
    /** The port whose accepting connections makes a lookalike `serving`. */
    httpsPort: number;
  };
  scanIntervalSeconds: number;
  ctStartPosition: "end" | "start";
  ctBatchSize: number;
  /** Each log reads at a stable offset within this window after a Cron run (spreads connections). */
  ctPollSpreadSeconds: number;
  /** Politeness towards each log (per log: every log has its own budget), overridable per log. */
  ctPoliteness: CtPoliteness & { overrides: Record<string, Partial<CtPoliteness>> };
  /** How long one cursor invocation reads before handing over (it re-schedules at once while a backlog remains). */
  ctRunSeconds: number;
  rateLimit: { orgPerMinute: number; tokenPerMinute: number; anonymousPerMinute: number };
  /** base64 AES-256 key sealing channel secrets; empty = built-in development key. */
  secretsKey: string;
  /** Destinations the egress policy lets through although it would refuse them (src/platform/egress/allow-list.ts). */
  egressAllowlist: string;
  /**
   * The service sits behind Cloudflare, which sets CF-Connecting-IP itself: only then is
   * that header the client address. Otherwise a client could choose its own address.
   */
  trustCfConnectingIp: boolean;
  alerting: {
    /** Timeout of one delivery attempt to a channel. */
    deliveryTimeoutMs: number;
    /** PagerDuty Events API v2 enqueue URLs of its US and EU service regions. */
    pagerdutyEventsUrl: { us: string; eu: string };
    /** Opsgenie API base URLs of its US and EU instances. */
    opsgenieApiUrl: { us: string; eu: string };
  };
}

export interface CtPoliteness {
  /** Requests per second to one log; 0 = no limit. */
  requestsPerSecond: number;
  /** Requests to one log in flight at once. */
  concurrency: number;
}

/**
 * CT_LOG_POLITENESS: a JSON object keyed by a log's id (base64, as in the log list) or
 * by its host name, e.g. {"ct.googleapis.com": {"requests_per_second": 10, "concurrency": 2}}.
 * Anything unreadable is ignored (the defaults apply).
 */
function ctPolitenessOverrides(raw: string | undefined): Record<string, Partial<CtPoliteness>> {
  if (!raw || !raw.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    console.error("CT_LOG_POLITENESS is not JSON: ignored");
    return {};
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
  const out: Record<string, Partial<CtPoliteness>> = {};
  for (const [key, value] of Object.entries(parsed as Record<string, { requests_per_second?: unknown; concurrency?: unknown }>)) {
    const o: Partial<CtPoliteness> = {};
    const rps = Number(value?.requests_per_second);
    const conc = Number(value?.concurrency);
    if (value?.requests_per_second !== undefined && Number.isFinite(rps) && rps >= 0) o.requestsPerSecond = rps;
    if (value?.concurrency !== undefined && Number.isInteger(conc) && conc >= 1) o.concurrency = Math.min(conc, 16);
    out[key] = o;
  }
  return out;
}

/** RFC 8461 §3.3: the policy host is `mta-sts.` + the domain, the path fixed. */
export const MTA_STS_POLICY_URL_DEFAULT = "https://mta-sts.{domain}/.well-known/mta-sts.txt";

function int(value: string | undefined, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value.trim() === "") return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n >= min ? Math.min(n, max) : fallback;
}

/** A configured base URL without its trailing slashes, or the public default. */
function baseUrl(value: string | undefined, fallback: string): string {
  return (value?.trim() || fallback).replace(/\/+$/, "");
}

function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value.trim() === "") return fallback;
  return !["false", "0", "no", "off"].includes(value.trim().toLowerCase());
}

export function loadConfig(env: Bindings): Config {
  return {
    signupEnabled: bool(env.SIGNUP_ENABLED, true),
    publicBaseUrl: (env.PUBLIC_BASE_URL || "http://127.0.0.1:8787").replace(/\/+$/, ""),
    mailFrom: env.MAIL_FROM || "Trust-Plane <no-reply@trust-plane.local>",
    smtpUrl: env.SMTP_URL ?? "",
    ctLogListUrl: env.CT_LOG_LIST_URL || "https://www.gstatic.com/ct/log_list/v3/log_list.json",
    ctLogListPublicKey: env.CT_LOG_LIST_PUBLIC_KEY ?? "",
    rdapBootstrapUrl: env.RDAP_BOOTSTRAP_URL || "https://data.iana.org/rdap/dns.json",
    dohResolverUrls: (env.DOH_RESOLVER_URLS || "https://cloudflare-dns.com/dns-query,https://dns.google/dns-query")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    rdapCheckIntervalSeconds: int(env.RDAP_CHECK_INTERVAL_SECONDS, 21600),
    rdap: {
      baseUrl: (env.RDAP_BASE_URL ?? "").trim(),
      timeoutMs: int(env.RDAP_TIMEOUT_MS, 15_000, 1, 120_000),
      maxDomainsPerRun: int(env.RDAP_MAX_DOMAINS_PER_RUN, 250, 1, 5_000),
      concurrency: int(env.RDAP_CONCURRENCY, 8, 1, 64),
    },
    dnsCheckIntervalSeconds: int(env.DNS_CHECK_INTERVAL_SECONDS, 900),
    dns: {
      concurrency: int(env.DNS_CONCURRENCY, 16, 1, 64),
      maxDomainsPerRun: int(env.DNS_MAX_DOMAINS_PER_RUN, 2000, 1, 20_000),
      timeoutMs: int(env.DNS_TIMEOUT_MS, 5000, 1, 60_000),
      mtaStsPolicyUrl: env.MTA_STS_POLICY_URL?.trim() || MTA_STS_POLICY_URL_DEFAULT,
    },
    lookalikes: {
      checkIntervalSeconds: int(env.LOOKALIKE_CHECK_INTERVAL_SECONDS, 21_600, 60),
      maxChecksPerRun: int(env.LOOKALIKE_MAX_CHECKS_PER_RUN, 200, 1, 5_000),
      discoveryQueriesPerDay: int(env.LOOKALIKE_DISCOVERY_QUERIES_PER_DAY, 500, 0, 100_000),
      httpsPort: int(env.LOOKALIKE_HTTPS_PORT, 443, 1, 65_535),
    },
    scanIntervalSeconds: int(env.SCAN_INTERVAL_SECONDS, 3600),
    ctStartPosition: env.CT_START_POSITION === "start" ? "start" : "end",
    ctBatchSize: int(env.CT_BATCH_SIZE, 256, 1),
    ctPollSpreadSeconds: int(env.CT_POLL_SPREAD_SECONDS, 30, 0, 55),
    ctPoliteness: {
      requestsPerSecond: int(env.CT_REQUESTS_PER_SECOND, 100, 0),
      concurrency: int(env.CT_CONCURRENCY, 4, 1, 16),
      overrides: ctPolitenessOverrides(env.CT_LOG_POLITENESS),
    },
    ctRunSeconds: int(env.CT_RUN_SECONDS, 20, 1, 600),
    rateLimit: {
      orgPerMinute: int(env.RATE_LIMIT_ORG_PER_MINUTE, 1200, 1),
      tokenPerMinute: int(env.RATE_LIMIT_TOKEN_PER_MINUTE, 600, 1),
      anonymousPerMinute: int(env.RATE_LIMIT_ANONYMOUS_PER_MINUTE, 120, 1),
    },
    secretsKey: env.SECRETS_KEY ?? "",
    egressAllowlist: env.EGRESS_ALLOWLIST ?? "",
    trustCfConnectingIp: bool(env.TRUST_CF_CONNECTING_IP, false),
    alerting: {
      deliveryTimeoutMs: int(env.ALERT_DELIVERY_TIMEOUT_MS, 10_000, 1, 60_000),
      pagerdutyEventsUrl: {
        us: baseUrl(env.PAGERDUTY_EVENTS_URL, "https://events.pagerduty.com/v2/enqueue"),
        eu: baseUrl(env.PAGERDUTY_EU_EVENTS_URL, "https://events.eu.pagerduty.com/v2/enqueue"),
      },
      opsgenieApiUrl: {
        us: baseUrl(env.OPSGENIE_API_URL, "https://api.opsgenie.com"),
        eu: baseUrl(env.OPSGENIE_EU_API_URL, "https://api.eu.opsgenie.com"),
      },
    },
  };
}
