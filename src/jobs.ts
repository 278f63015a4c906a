/**
 * Every scheduled job of the service. Each module contributes its jobs here; the
 * Cron Trigger (every minute) runs the ones that are due.
 */
import { lt } from "drizzle-orm";
import { sessions } from "./db/schema/platform";
import { deliverPending, transportFor } from "./platform/mailer";
import { JobRegistry } from "./platform/scheduler";

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
