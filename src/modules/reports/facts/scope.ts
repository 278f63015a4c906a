/**
 * What one audit reads, and the shape every module's reader returns.
 *
 *  - Live overview: changes observed in the last 7 days (the length of a report
 *    window) up to now; each TLS endpoint by its latest scan.
 *  - Weekly report: changes observed inside [period_start, period_end); each TLS
 *    endpoint by every scan inside the period.
 *  - Both: domain expiry, coverage and freshness are judged at `now` (monitored
 *    configuration has no history to replay).
 */
import type { Config } from "../../../env";
import type { MonitoringModule } from "../../../platform/permissions";
import type { Tenant } from "../../../platform/tenant";
import type { MonitoredAsset } from "../document";
import { expectedCollectionWindowSeconds } from "../freshness";
import type { AuditFacts, ModuleCoverage, StaleAsset } from "./types";

export type ScheduleConfig = Pick<Config, "rdapCheckIntervalSeconds" | "dnsCheckIntervalSeconds" | "scanIntervalSeconds">;

export interface AuditScope {
  t: Tenant;
  /** Change facts observed in [start, end) count. */
  window: { start: Date; end: Date };
  /** latest: each endpoint's newest scan (live); window: every scan inside the window (report). */
  scans: "latest" | "window";
  /** Expiry horizon, staleness, the appendix's state. */
  now: Date;
  config: ScheduleConfig;
  /** Also list every monitored asset with its state (the report's appendix). */
  withAssets: boolean;
  /** Evidence items a reader needs to return per rule at most (it reports the true counts beyond). */
  evidenceLimit: number;
}

export interface ModuleReading<F> {
  facts: F;
  /** True counts of rules whose evidence the reader cut at `evidenceLimit`. */
  counts?: AuditFacts["counts"];
  coverage: ModuleCoverage;
  /** Empty unless the scope asks for assets. */
  assets: MonitoredAsset[];
}

/** An asset as the coverage rules see it. */
export interface CoverageItem {
  asset: string;
  enabled: boolean;
  createdAt: string;
  lastCollectedAt: string | null;
}

/**
 * Enabled assets, and those whose newest data is older than the module's window. An
 * asset never collected is stale once it has existed for a whole window (a new one is
 * only pending).
 */
export function coverageOf(module: MonitoringModule, scope: Pick<AuditScope, "config" | "now">, items: CoverageItem[]): ModuleCoverage {
  const window = expectedCollectionWindowSeconds(module, scope.config);
  const staleBefore = new Date(scope.now.getTime() - window * 1000).toISOString();
  const enabled = items.filter((i) => i.enabled);
  const stale: StaleAsset[] = enabled
    .filter((i) => (i.lastCollectedAt === null ? i.createdAt < staleBefore : i.lastCollectedAt < staleBefore))
    .map((i) => ({ asset: i.asset, last_collected_at: i.lastCollectedAt }));
  return { module, enabled_assets: enabled.length, expected_window_seconds: window, stale };
}

export const iso = (d: Date) => d.toISOString();

/** Parses a JSON column that drizzle returns raw (text) from `sql` selections. */
export function jsonArray<T = string>(value: unknown): T[] {
  if (Array.isArray(value)) return value as T[];
  if (typeof value !== "string" || value === "") return [];
  try {
    const v = JSON.parse(value);
    return Array.isArray(v) ? (v as T[]) : [];
  } catch {
    return [];
  }
}
