/**
 * Every scheduled job of the service. Each module contributes its jobs here; the
 * Cron Trigger (every minute) runs the ones that are due.
 */
import { and, inArray, lt, lte } from "drizzle-orm";
import { alertDeliveries, sessions } from "./db/schema";
import { alertStateOf } from "./modules/alerting/emit";
import { enqueueScansJob } from "./modules/cert-watcher/jobs";
import { deliverPending, transportFor } from "./platform/mailer";
import { JobRegistry } from "./platform/scheduler";
import { ctLogJobs } from "./modules/ct-log/jobs";
import { registerRdapJobs } from "./modules/rdap/jobs";
import { registerDnsWatcherJobs } from "./modules/dns-watcher/jobs";
import { weeklyReportJob } from "./modules/reports/jobs";
import { pruneInventoryJob, refreshInventoryJob } from "./modules/inventory/jobs";

export const jobs = new JobRegistry();

jobs.register({
  name: "platform.prune_sessions",
  intervalSeconds: 3600,
  async run({ db, now }) {
    const res = await db.delete(sessions).where(lt(sessions.expiresAt, now.toISOString())).run();
    return { deleted: res.meta.changes };
  },
});

jobs.register({
  name: "platform.deliver_mail",
  intervalSeconds: 0,
  run: ({ db, config, now }) => deliverPending(db, transportFor(config), now),
});

/**
 * Safety net for alert delivery: each organization's AlertState alarm delivers and
 * retries; should an alarm be lost, deliveries overdue by a minute are handed back
 * to their organization's AlertState here.
 */
jobs.register({
  name: "alerting.redeliver_overdue",
  intervalSeconds: 60,
  async run({ env, db, now }) {
    const overdueBefore = new Date(now.getTime() - 60_000).toISOString();
    const orgs = await db
      .selectDistinct({ organizationId: alertDeliveries.organizationId })
      .from(alertDeliveries)
      .where(and(inArray(alertDeliveries.status, ["pending", "retrying"]), lte(alertDeliveries.nextAttemptAt, overdueBefore)))
      .limit(100)
      .all();
    for (const { organizationId } of orgs) await alertStateOf(env, organizationId).deliverNow(organizationId);
    return { organizations: orgs.length };
  },
});

registerRdapJobs(jobs);

registerDnsWatcherJobs(jobs);

jobs.register(enqueueScansJob);

for (const job of ctLogJobs) jobs.register(job);

jobs.register(weeklyReportJob);

jobs.register(refreshInventoryJob);
jobs.register(pruneInventoryJob);
