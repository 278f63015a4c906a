/**
 * Weekly report periods: a week runs from Monday 00:00 UTC to the next Monday 00:00
 * UTC (half-open). The report for a week is due once the week has ended; the Cron
 * job looks at the last CATCH_UP_WEEKS ended weeks, so a week missed while the
 * service was down is generated on its next run (and one older than that is not:
 * its data is mostly pruned, e.g. CT matches after 30 days).
 */
const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;
export const CATCH_UP_WEEKS = 4;

export interface Period {
  start: Date;
  end: Date;
}

/** The most recent Monday 00:00 UTC at or before `now`: the end of the last complete week. */
export function lastWeekEnd(now: Date): Date {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const sinceMonday = (now.getUTCDay() + 6) % 7;
  return new Date(midnight - sinceMonday * DAY_MS);
}

/** The week ending at `end`. */
export function weekEndingAt(end: Date): Period {
  return { start: new Date(end.getTime() - WEEK_MS), end };
}

/** The last `weeks` complete weeks at `now`, oldest first. */
export function recentWeeks(now: Date, weeks = CATCH_UP_WEEKS): Period[] {
  const last = lastWeekEnd(now).getTime();
  return Array.from({ length: weeks }, (_, i) => weekEndingAt(new Date(last - (weeks - 1 - i) * WEEK_MS)));
}
