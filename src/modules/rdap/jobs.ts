/**
 * The RDAP monitor's scheduled work: `rdap.poll` runs at every Cron run (interval 0)
 * and itself picks the monitors that are due (poller.ts), so
 * RDAP_CHECK_INTERVAL_SECONDS applies per monitor, not to the job.
 */
import type { JobRegistry } from "../../platform/scheduler";
import { pollRdap } from "./poller";
import { rdapSettings } from "./settings";

export function registerRdapJobs(jobs: JobRegistry): void {
  jobs.register({
    name: "rdap.poll",
    intervalSeconds: 0,
    run: ({ env, config, db, now }) => pollRdap({ db, env, settings: rdapSettings(config), now }),
  });
}
