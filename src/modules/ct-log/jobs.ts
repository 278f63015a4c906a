/**
 * Scheduled work of the CT log module:
 *   ct-log.poke_cursors  every Cron run: refresh the log list when its 24 h are up,
 *                        then poke the CtLogCursor of every monitored log (each
 *                        reads what is due and keeps an alarm while it has a backlog)
 *   ct-log.prune_matches hourly: drop matches not seen for 30 days
 */
import type { JobContext, ScheduledJob } from "../../platform/scheduler";
import type { Bindings, Config } from "../../env";
import type { CursorOptions, CursorStatus } from "../../../durable-objects/ct-log-cursor";
import { currentLogList } from "./loglist-service";
import { monitoredLogs, type CtLogDescriptor } from "./loglist";
import { pruneMatches } from "./service";

export function cursorOf(env: Bindings, logId: string) {
  return env.CT_LOG_CURSOR.get(env.CT_LOG_CURSOR.idFromName(`log:${logId}`));
}

export function cursorOptions(config: Config): CursorOptions {
  return {
    batchSize: config.ctBatchSize,
    startPosition: config.ctStartPosition,
    dohResolverUrls: config.dohResolverUrls,
    // Four fetches per run, then the cursor's alarm continues (1 s later) while a backlog remains.
    maxEntriesPerRun: config.ctBatchSize * 4,
    pollSpreadMs: config.ctPollSpreadSeconds * 1000,
  };
}

export async function pokeCursors({ env, config, db, now }: JobContext): Promise<{ logs: number; statuses: CursorStatus[]; failed: string[] }> {
  const { list } = await currentLogList(db, config, now);
  const logs = monitoredLogs(list);
  const options = cursorOptions(config);
  const results = await Promise.allSettled(logs.map((log: CtLogDescriptor) => cursorOf(env, log.logId).poke(log, options, now.getTime())));
  const statuses: CursorStatus[] = [];
  const failed: string[] = [];
  results.forEach((r, i) => {
    if (r.status === "fulfilled") statuses.push(r.value);
    else failed.push(`${logs[i].description}: ${String(r.reason)}`);
  });
  return { logs: logs.length, statuses, failed };
}

export const ctLogJobs: ScheduledJob[] = [
  { name: "ct-log.poke_cursors", intervalSeconds: 0, run: pokeCursors },
  { name: "ct-log.prune_matches", intervalSeconds: 3600, run: async ({ db, now }) => ({ deleted: await pruneMatches(db, now) }) },
];
