/**
 * The weekly audit reports' scheduled work: `reports.weekly` runs at every Cron run
 * and generates what is due (generation-service.ts generateDueReports): each organization's
 * report for every week of the last four that ended Monday 00:00 UTC and has none,
 * at most REPORTS_PER_RUN per run. Finding nothing due costs one indexed query.
 *
 * The mail of a report names its PDF rather than carrying it; the mailer's delivery
 * (the `platform.deliver_mail` job, registered beside this one in src/jobs.ts) renders
 * it from the stored report through the renderer registered here.
 */
import { registerAttachmentRenderer } from "../../platform/mailer";
import type { ScheduledJob } from "../../platform/scheduler";
import { generateDueReports } from "./generation-service";
import { renderReportAttachment } from "./report-service";
import { REPORT_PDF_SOURCE } from "./stored-report";

registerAttachmentRenderer(REPORT_PDF_SOURCE, renderReportAttachment);

export const weeklyReportJob: ScheduledJob = {
  name: "reports.weekly",
  intervalSeconds: 0,
  run: ({ db, config, now }) => generateDueReports({ db, config, now }),
};
