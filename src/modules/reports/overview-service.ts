/**
 * The live security overview (docs/modules/reports.md): the organization's facts of the
 * last 7 days up to now, each TLS endpoint by its latest scan, state judged now, scored
 * (scoring.ts). One D1 batch of indexed statements (facts/index.ts). The same reading
 * answers whether the organization's monitoring is healthy (the heartbeat's
 * `collectionHealth`, through health-contract.ts).
 */
import type { Tenant } from "../../platform/tenant";
import { readAudit } from "./facts";
import type { ScheduleConfig } from "./facts/scope";
import { WEEK_MS } from "./period";
import { MODULE_LABELS } from "./rules";
import { limitEvidence, scoreAudit } from "./scoring";
import { uncollectedCauses } from "./category-status";

/** Evidence items returned per finding by the overview (the total is given). */
export const OVERVIEW_EVIDENCE_LIMIT = 10;

export async function securityOverview(t: Tenant, config: ScheduleConfig, now: Date) {
  const { facts } = await readAudit({
    t,
    mode: "live",
    window: { start: new Date(now.getTime() - WEEK_MS), end: new Date(now.getTime() + 1) },
    asOf: now,
    now,
    config,
    withAssets: false,
    evidenceLimit: OVERVIEW_EVIDENCE_LIMIT,
  });
  const result = scoreAudit(facts);
  return {
    success: true as const,
    data: {
      overall_score: result.overall_score,
      grade: result.grade,
      provisional: result.provisional,
      graded: result.graded,
      category_scores: result.category_scores,
      category_status: result.category_status,
      findings: result.findings.map((f) => ({ ...f, evidence: limitEvidence(f.evidence, OVERVIEW_EVIDENCE_LIMIT) })),
      generated_at: now.toISOString(),
      window: facts.window,
      coverage: facts.coverage.map((c) => ({
        module: c.module,
        configured_assets: c.configured_assets,
        enabled_assets: c.enabled_assets,
        stale_assets: c.uncollected.filter((u) => u.stale).length,
        expected_window_seconds: c.expected_window_seconds,
      })),
    },
  };
}

/**
 * Whether the organization's monitoring collected what it should, judged now like the
 * overview's freshness: every enabled asset (and each CT log its filters rely on) that
 * has existed for a whole collection window was collected within it. A new asset not
 * collected yet does not count against it. The causes are in words, per module.
 */
export async function collectionHealth(t: Tenant, config: ScheduleConfig, now: Date): Promise<{ healthy: boolean; causes: string[] }> {
  const { facts } = await readAudit({ t, mode: "live", window: { start: new Date(now.getTime() - WEEK_MS), end: new Date(now.getTime() + 1) }, asOf: now, now, config, withAssets: false, evidenceLimit: 1 });
  const causes = facts.coverage.flatMap((c) => {
    const stale = c.uncollected.filter((u) => u.stale);
    return stale.length ? [`${MODULE_LABELS[c.module]}: ${uncollectedCauses(c.module, stale).join("; ")}`] : [];
  });
  return { healthy: causes.length === 0, causes };
}
