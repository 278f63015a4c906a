/**
 * Scheduled work of the CT log module:
 *   ct-log.poke_cursors  every Cron run: refresh the log list when its 24 h are up,
 *                        then poke the CtLogCursor of every monitored log (each
 *                        reads what is due, for up to CT_RUN_SECONDS per invocation,
 *                        and runs again at once while a backlog remains)
 *   ct-log.prune_matches hourly: drop matches not seen for 30 days
 *   ct-log.lookalike_checks  every Cron run: check the lookalikes that are due
 *                        (lookalikes/check-run.ts: DNS, HTTPS port, RDAP; their events)
 *   ct-log.lookalike_discovery hourly: the registered-permutation discovery of the
 *                        organizations whose daily time came (lookalikes/discovery.ts)
 */
import type { JobContext, ScheduledJob } from "../../platform/scheduler";
import type { Bindings, Config } from "../../env";
import type { CursorOptions, CursorStatus } from "./cursor-contract";
import { logUnexpected } from "../../platform/collection";
import { announceLogTransitions } from "./collection";
import { currentLogList } from "./loglist-service";
import { monitoredLogs, type CtLogDescriptor } from "./loglist";
import { lookalikeCheckSettings, runLookalikeChecks } from "./lookalikes/check-run";
import { discoverySettings, runScheduledDiscovery } from "./lookalikes/discovery";
import { pruneMatches } from "./match-service";

export function cursorOf(env: Bindings, logId: string) {
  return env.CT_LOG_CURSOR.get(env.CT_LOG_CURSOR.idFromName(`log:${logId}`));
}

/** The options of one log's cursor: the defaults, with CT_LOG_POLITENESS's entry for the log's id or host over them. */
export function cursorOptions(config: Config, log?: Pick<CtLogDescriptor, "logId" | "readUrl">): CursorOptions {
  const p = config.ctPoliteness;
  let host = "";
  try {
    host = log ? new URL(log.readUrl).host : "";
  } catch {
    /* no host: only the id can match */
  }
  const override = { ...(host ? p.overrides[host] : undefined), ...(log ? p.overrides[log.logId] : undefined) };
  return {
    batchSize: config.ctBatchSize,
    startPosition: config.ctStartPosition,
    dohResolverUrls: config.dohResolverUrls,
    requestsPerSecond: override.requestsPerSecond ?? p.requestsPerSecond,
    concurrency: override.concurrency ?? p.concurrency,
    runBudgetMs: config.ctRunSeconds * 1000,
    pollSpreadMs: config.ctPollSpreadSeconds * 1000,
  };
}

export async function pokeCursors({ env, config, db, now }: JobContext): Promise<{ logs: number; statuses: CursorStatus[]; failed: string[]; entered_failing: number; recovered: number }> {
  const { list } = await currentLogList(db, config, now);
  const logs = monitoredLogs(list);
  // What the cursors recorded since the last run first (logs that entered failing or recovered,
  // told once: collection.ts), before the pokes start new runs.
  const changes = await announceLogTransitions(env, db, logs, now);
  const results = await Promise.allSettled(logs.map((log: CtLogDescriptor) => cursorOf(env, log.logId).poke(log, cursorOptions(config, log), now.getTime())));
  const statuses: CursorStatus[] = [];
  const failed: string[] = [];
  results.forEach((r, i) => {
    if (r.status === "fulfilled") statuses.push(r.value);
    else {
      failed.push(`${logs[i].description}: ${String(r.reason)}`);
      logUnexpected(`ct-log: poke of the cursor of ${logs[i].description}`, r.reason);
    }
  });
  return { logs: logs.length, statuses, failed, entered_failing: changes.failing.length, recovered: changes.recovered.length };
}

export const ctLogJobs: ScheduledJob[] = [
  { name: "ct-log.poke_cursors", intervalSeconds: 0, run: pokeCursors },
  { name: "ct-log.prune_matches", intervalSeconds: 3600, run: async ({ db, now }) => ({ deleted: await pruneMatches(db, now) }) },
  {
    name: "ct-log.lookalike_checks",
    intervalSeconds: 0,
    run: async ({ db, env, config, now }) => {
      const summary = await runLookalikeChecks({ db, env, settings: lookalikeCheckSettings(config), now });
      if (summary.due > 0) console.log(`ct-log.lookalike_checks ${JSON.stringify(summary)}`);
      return summary;
    },
  },
  {
    name: "ct-log.lookalike_discovery",
    intervalSeconds: 3600,
    run: async ({ db, config, now }) => {
      const organizations = await runScheduledDiscovery({ db, settings: discoverySettings(config), now });
      if (organizations.length) console.log(`ct-log.lookalike_discovery ${JSON.stringify(organizations.map(({ organization_id, queries, registered, new_lookalikes, failed }) => ({ organization_id, queries, registered, new: new_lookalikes.length, failed })))}`);
      return { organizations };
    },
  },
];
