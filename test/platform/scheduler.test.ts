/**
 * The Cron Trigger: the Worker's scheduled handler runs the registered jobs,
 * records them in job_runs, prunes expired sessions and leaves live ones.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { JobRegistry, runScheduled } from "../../src/platform/scheduler";
import { loadConfig } from "../../src/env";
import { createDb } from "../../src/db/client";
import { call, login, signupFresh } from "../helpers";

const DB = (env as any).DB as D1Database;
type JobRun = { name: string; last_started_at: string; last_finished_at: string; last_status: string; last_error: string | null; run_count: number };

async function fire(at = Date.now()) {
  const controller = createScheduledController({ scheduledTime: at, cron: "* * * * *" });
  const ctx = createExecutionContext();
  await worker.scheduled(controller, env as any, ctx);
  await waitOnExecutionContext(ctx);
}
const jobRun = (name: string) => DB.prepare("SELECT * FROM job_runs WHERE name = ?").bind(name).first<JobRun>();

describe("scheduled handler", () => {
  it("runs platform.prune_sessions and platform.deliver_mail, records job_runs, prunes only expired sessions", async () => {
    await DB.prepare("DELETE FROM job_runs WHERE name IN ('platform.prune_sessions', 'platform.deliver_mail')").run();
    const org = await signupFresh();
    // A second session, logged in 13 hours ago: its 12-hour lifetime is over.
    const expired = (await login(org.email, undefined, new Date(Date.now() - 13 * 3_600_000))).body.token as string;
    const before = await DB.prepare("SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?").bind(org.userId).first<{ n: number }>();
    expect(before!.n).toBe(2);

    const at = Date.now();
    await fire(at);

    const prune = await jobRun("platform.prune_sessions");
    const mail = await jobRun("platform.deliver_mail");
    for (const r of [prune, mail]) {
      expect(r).toMatchObject({ last_status: "ok", last_error: null, run_count: 1, last_started_at: new Date(at).toISOString() });
      expect(r!.last_finished_at >= r!.last_started_at).toBe(true);
    }
    const after = await DB.prepare("SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?").bind(org.userId).first<{ n: number }>();
    expect(after!.n).toBe(1);
    expect((await call("GET", "/api/auth/me", { token: org.session })).status).toBe(200);
    expect((await call("GET", "/api/auth/me", { token: expired })).status).toBe(401);
  });

  it("respects intervals: prune_sessions (hourly) is skipped a minute later, deliver_mail (every run) is not", async () => {
    await DB.prepare("DELETE FROM job_runs WHERE name IN ('platform.prune_sessions', 'platform.deliver_mail')").run();
    const t0 = Date.now();
    await fire(t0);
    await fire(t0 + 60_000);
    expect((await jobRun("platform.prune_sessions"))!.run_count).toBe(1);
    expect((await jobRun("platform.deliver_mail"))!.run_count).toBe(2);
    await fire(t0 + 3600_000);
    expect((await jobRun("platform.prune_sessions"))!.run_count).toBe(2);
  });

  it("a failing job is recorded as error and does not stop the others", async () => {
    const registry = new JobRegistry();
    registry.register({ name: `test.fails.${t()}`, intervalSeconds: 0, run: async () => { throw new Error("boom"); } });
    registry.register({ name: `test.ok.${t()}`, intervalSeconds: 0, run: async () => 42 });
    const outcomes = await runScheduled(registry, {
      env: env as any, config: loadConfig(env as any), db: createDb(DB), now: new Date(), waitUntil: () => undefined,
    });
    expect(outcomes.map((o) => o.status)).toEqual(["error", "ok"]);
    expect(outcomes[0].error).toBe("boom");
    expect(outcomes[1].result).toBe(42);
    const failed = await jobRun(registry.list()[0].name);
    expect(failed).toMatchObject({ last_status: "error", last_error: "boom" });
    expect(() => registry.register({ name: registry.list()[1].name, intervalSeconds: 0, run: async () => 0 })).toThrow();
  });
});

function t() {
  return Math.random().toString(36).slice(2, 8);
}
