/**
 * The weekly audit reports' scheduled work: `reports.weekly` runs at every Cron run
 * and generates what is due (service.ts generateDueReports): each organization's
 * report for every week of the last four that ended Monday 00:00 UTC and has none,
 * at most REPORTS_PER_RUN per run. Finding nothing due costs one indexed query.
 */
import type { ScheduledJob } from "../../platform/scheduler";
import { generateDueReports } from "./service";

export const weeklyReportJob: ScheduledJob = {
  name: "reports.weekly",
  intervalSeconds: 0,
  run: ({ db, config, now }) => generateDueReports({ db, config, now }),
};
