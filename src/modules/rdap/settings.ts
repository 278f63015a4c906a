/**
 * The RDAP monitor's settings, from the service configuration (src/env.ts):
 *   RDAP_BOOTSTRAP_URL, RDAP_CHECK_INTERVAL_SECONDS (docs/configuration.md) and the module's own
 *   RDAP_BASE_URL              one RDAP base URL for every domain (air-gapped sites
 *                              with an RDAP proxy, tests); unset = IANA bootstrap.
 *   RDAP_TIMEOUT_MS            whole-lookup timeout, redirects and body included.
 *   RDAP_MAX_DOMAINS_PER_RUN   distinct domains looked up per Cron run (oldest first);
 *                              the rest wait for the next run.
 *   RDAP_CONCURRENCY           lookups in flight at once.
 */
import type { Config } from "../../env";
import { egressPolicy, type EgressPolicy } from "../../platform/egress";

export interface RdapSettings {
  bootstrapUrl: string;
  /** Empty string = use the bootstrap. */
  baseUrlOverride: string;
  checkIntervalSeconds: number;
  timeoutMs: number;
  maxDomainsPerRun: number;
  concurrency: number;
  /** Stop starting new lookups after this much wall time in one run (Worker limits). */
  runBudgetMs: number;
  /**
   * Where a registry answer may redirect the lookup: the egress policy. The configured
   * bootstrap and base URLs are the operator's; a redirect is the remote's choice.
   */
  egress: EgressPolicy;
}

export const RUN_BUDGET_MS = 60_000;

export function rdapSettings(config: Config): RdapSettings {
  return {
    bootstrapUrl: config.rdapBootstrapUrl,
    baseUrlOverride: config.rdap.baseUrl,
    checkIntervalSeconds: config.rdapCheckIntervalSeconds,
    timeoutMs: config.rdap.timeoutMs,
    maxDomainsPerRun: config.rdap.maxDomainsPerRun,
    concurrency: config.rdap.concurrency,
    runBudgetMs: RUN_BUDGET_MS,
    egress: egressPolicy(config),
  };
}
