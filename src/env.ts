/**
 * The Worker's bindings and configuration.
 *
 * Every value in `Bindings` comes from wrangler.toml `[vars]` (public defaults),
 * `.dev.vars` locally, or secrets when deployed. `loadConfig` turns the raw strings
 * into typed configuration once per request; modules read `Config`, never `env.X`.
 */
import type { AlertState } from "../durable-objects/alert-state";
import type { OrgGate } from "../durable-objects/org-gate";
import type { CtLogCursor } from "../durable-objects/ct-log-cursor";

export interface Bindings {
  DB: D1Database;
  ORG_GATE: DurableObjectNamespace<OrgGate>;
  ALERT_STATE: DurableObjectNamespace<AlertState>;
  CT_LOG_CURSOR: DurableObjectNamespace<CtLogCursor>;

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
  SCAN_INTERVAL_SECONDS?: string;
  CT_START_POSITION?: string;
  CT_BATCH_SIZE?: string;
  CT_POLL_SPREAD_SECONDS?: string;
  RATE_LIMIT_ORG_PER_MINUTE?: string;
  RATE_LIMIT_TOKEN_PER_MINUTE?: string;
  RATE_LIMIT_ANONYMOUS_PER_MINUTE?: string;
  SECRETS_KEY?: string;
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
  scanIntervalSeconds: number;
  ctStartPosition: "end" | "start";
  ctBatchSize: number;
  /** Each log reads at a stable offset within this window after a Cron run (spreads connections). */
  ctPollSpreadSeconds: number;
  rateLimit: { orgPerMinute: number; tokenPerMinute: number; anonymousPerMinute: number };
  /** base64 AES-256 key sealing channel secrets; empty = built-in development key. */
  secretsKey: string;
}

function int(value: string | undefined, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value.trim() === "") return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n >= min ? Math.min(n, max) : fallback;
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
    scanIntervalSeconds: int(env.SCAN_INTERVAL_SECONDS, 3600),
    ctStartPosition: env.CT_START_POSITION === "start" ? "start" : "end",
    ctBatchSize: int(env.CT_BATCH_SIZE, 256, 1),
    ctPollSpreadSeconds: int(env.CT_POLL_SPREAD_SECONDS, 30, 0, 55),
    rateLimit: {
      orgPerMinute: int(env.RATE_LIMIT_ORG_PER_MINUTE, 1200, 1),
      tokenPerMinute: int(env.RATE_LIMIT_TOKEN_PER_MINUTE, 600, 1),
      anonymousPerMinute: int(env.RATE_LIMIT_ANONYMOUS_PER_MINUTE, 120, 1),
    },
    secretsKey: env.SECRETS_KEY ?? "",
  };
}
