/** Worker entry points: HTTP (the Hono app), the Cron Trigger (the job dispatcher) and the queue consumer. */
import { createApp } from "./app";
import { backgroundD1 } from "./db/background";
import { createDb } from "./db/client";
import { loadConfig, type Bindings } from "./env";
import { jobs } from "./jobs";
import { runScheduled } from "./platform/scheduler";
import { queues } from "./queues";
import { runHeartbeats } from "./modules/admin/heartbeat";

export { OrgGate } from "../durable-objects/org-gate";
export { AlertState } from "../durable-objects/alert-state";
export { CtLogCursor } from "../durable-objects/ct-log-cursor";
export { CtCursorData } from "./ct-cursor-data";

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller: ScheduledController, env: Bindings, ctx: ExecutionContext) {
    const run = {
      env,
      config: loadConfig(env),
      db: createDb(backgroundD1(env.DB)),
      now: new Date(controller.scheduledTime),
      waitUntil: (p: Promise<unknown>) => ctx.waitUntil(p),
    };
    const outcomes = await runScheduled(jobs, run);
    const failed = outcomes.filter((o) => o.status === "error");
    if (failed.length) console.error(`scheduled: ${failed.map((f) => `${f.name}: ${f.error}`).join("; ")}`);
    // After the run, judged by it: the organizations' dead-man's switches.
    await runHeartbeats(run, outcomes);
  },
  async queue(batch: MessageBatch<unknown>, env: Bindings) {
    await queues.dispatch(batch, { env, db: createDb(backgroundD1(env.DB)), now: new Date() });
  },
} satisfies ExportedHandler<Bindings>;
