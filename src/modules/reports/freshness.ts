/**
 * The expected collection window of each module: how old its newest data may be
 * before "Monitoring data stale" fires. Derived from the configured schedules:
 *
 *   window = 2 × max(interval, 60 s) + 5 min
 *
 *  - interval: RDAP_CHECK_INTERVAL_SECONDS (rdap), DNS_CHECK_INTERVAL_SECONDS
 *    (dns-watcher), SCAN_INTERVAL_SECONDS (cert-watcher); the CT log job runs at
 *    every Cron run (every minute). An interval of 0 means "every Cron run", so no
 *    interval is shorter than the Cron's minute.
 *  - Twice the interval: one missed collection (a registry rate limit, an agent
 *    restarting, a scan that ran long) is normal operation, two are not.
 *  - 5 minutes: the Cron's one-minute granularity plus the per-run caps
 *    (RDAP_MAX_DOMAINS_PER_RUN, scan leasing) delaying a due asset a little.
 *
 * Defaults: CT 7 min, DNS 35 min, certificates 2 h 5 min, RDAP 12 h 5 min.
 * An asset created less than one window ago and not yet collected is not stale.
 */
import type { Config } from "../../env";
import type { MonitoringModule } from "../../platform/permissions";

/** The Cron Trigger fires every minute; nothing is collected more often. */
export const CRON_INTERVAL_SECONDS = 60;
export const FRESHNESS_GRACE_SECONDS = 300;

type ScheduleConfig = Pick<Config, "rdapCheckIntervalSeconds" | "dnsCheckIntervalSeconds" | "scanIntervalSeconds">;

/** Seconds between two collections of one asset of `module`. */
export function collectionIntervalSeconds(module: MonitoringModule, config: ScheduleConfig): number {
  const configured = {
    "ct-log": CRON_INTERVAL_SECONDS,
    "dns-watcher": config.dnsCheckIntervalSeconds,
    rdap: config.rdapCheckIntervalSeconds,
    "cert-watcher": config.scanIntervalSeconds,
  }[module];
  return Math.max(configured, CRON_INTERVAL_SECONDS);
}

export function expectedCollectionWindowSeconds(module: MonitoringModule, config: ScheduleConfig): number {
  return 2 * collectionIntervalSeconds(module, config) + FRESHNESS_GRACE_SECONDS;
}

/** ISO time before which an asset's newest data is stale at `now`. */
export function staleBefore(module: MonitoringModule, config: ScheduleConfig, now: Date): string {
  return new Date(now.getTime() - expectedCollectionWindowSeconds(module, config) * 1000).toISOString();
}

/** "2 h 5 min", "7 min", "12 h 5 min": windows as the report prints them. */
export function formatDuration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const parts = [d && `${d} d`, h && `${h} h`, m && `${m} min`, s && `${s} s`].filter(Boolean);
  return parts.length ? parts.join(" ") : "0 s";
}
