/**
 * The DNS watcher's scheduled work: `dns-watcher.resolve` runs at every Cron run
 * (interval 0) and itself picks the domains that are due (due-domains.ts), so
 * DNS_CHECK_INTERVAL_SECONDS applies per domain, not to the job.
 */
import type { Config } from "../../env";
import type { JobRegistry } from "../../platform/scheduler";
import { egressPolicy } from "../../platform/egress";
import { runDnsWatch, type DnsWatchSettings } from "./resolver-run";

/**
 * The DNS work of one run ends 2 minutes after it starts: far above what the default
 * 2,000 domains cost against a DoH resolver that answers, and well within a Cron
 * invocation, so a slow resolver cannot make runs pile up; what is left stays due.
 */
export const DNS_RUN_DEADLINE_MS = 120_000;
/** Consecutive transport failures after which a resolver is not asked again during a run (a hanging one costs about one timeout). */
export const DNS_BREAK_AFTER_FAILURES = 8;

export function dnsWatchSettings(config: Config): DnsWatchSettings {
  return {
    resolverUrls: config.dohResolverUrls,
    intervalSeconds: config.dnsCheckIntervalSeconds,
    concurrency: config.dns.concurrency,
    maxDomainsPerRun: config.dns.maxDomainsPerRun,
    timeoutMs: config.dns.timeoutMs,
    runDeadlineMs: DNS_RUN_DEADLINE_MS,
    breakAfterFailures: DNS_BREAK_AFTER_FAILURES,
    mtaStsPolicyUrl: config.dns.mtaStsPolicyUrl,
    egress: egressPolicy(config),
  };
}

export function registerDnsWatcherJobs(jobs: JobRegistry): void {
  jobs.register({
    name: "dns-watcher.resolve",
    intervalSeconds: 0,
    run: async ({ env, config, db, now }) => {
      const summary = await runDnsWatch({ db, env, settings: dnsWatchSettings(config), now });
      // One line per run that did work: what an operator (and bench:dns) reads to see the cost of a run.
      if (summary.due_domains > 0) console.log(`dns-watcher.resolve ${JSON.stringify(summary)}`);
      return summary;
    },
  });
}
