/**
 * The scheduled-job registry. The Cron Trigger fires every minute; `runScheduled`
 * runs every registered job whose interval has elapsed since its last start,
 * each isolated from the others' failures, and records the outcome in `job_runs`.
 * Modules register jobs in their jobs.ts; src/jobs.ts lists the modules.
 */
import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { jobRuns } from "../db/schema/platform";
import type { Bindings, Config } from "../env";

export interface JobContext {
  env: Bindings;
  config: Config;
  db: Db;
  now: Date;
  waitUntil(promise: Promise<unknown>): void;
}

export interface ScheduledJob {
  name: string;
  /** Minimum seconds between starts; 0 = every run. May depend on configuration. */
  intervalSeconds: number | ((config: Config) => number);
  run(ctx: JobContext): Promise<unknown>;
}

export class JobRegistry {
  private readonly jobs = new Map<string, ScheduledJob>();

  register(job: ScheduledJob): void {
    if (this.jobs.has(job.name)) throw new Error(`job ${job.name} registered twice`);
    this.jobs.set(job.name, job);
  }

  list(): ScheduledJob[] {
    return [...this.jobs.values()];
  }
}

export interface JobOutcome {
  name: string;
  status: "ok" | "error" | "skipped";
  error?: string;
  result?: unknown;
}

export async function runScheduled(registry: JobRegistry, ctx: JobContext): Promise<JobOutcome[]> {
  const runs = new Map((await ctx.db.select().from(jobRuns).all()).map((r) => [r.name, r]));
  const outcomes = await Promise.all(
    registry.list().map(async (job): Promise<JobOutcome> => {
      const interval = typeof job.intervalSeconds === "function" ? job.intervalSeconds(ctx.config) : job.intervalSeconds;
      const last = runs.get(job.name)?.lastStartedAt;
      // A few seconds of slack so a once-a-minute cron does not skip a 60 s job.
      if (last && ctx.now.getTime() - Date.parse(last) < interval * 1000 - 5_000) return { name: job.name, status: "skipped" };
      const startedAt = ctx.now.toISOString();
      await ctx.db
        .insert(jobRuns)
        .values({ name: job.name, lastStartedAt: startedAt, runCount: 1 })
        .onConflictDoUpdate({ target: jobRuns.name, set: { lastStartedAt: startedAt, runCount: sql`${jobRuns.runCount} + 1` } })
        .run();
      let outcome: JobOutcome;
      try {
        outcome = { name: job.name, status: "ok", result: await job.run(ctx) };
      } catch (err) {
        outcome = { name: job.name, status: "error", error: err instanceof Error ? err.message : String(err) };
        console.error(`scheduled job ${job.name} failed: ${outcome.error}`);
      }
      await ctx.db
        .update(jobRuns)
        // The wall clock, not ctx.now (the run's start): the finish time says how long the job took.
        .set({ lastFinishedAt: new Date().toISOString(), lastStatus: outcome.status, lastError: outcome.error ?? null })
        .where(eq(jobRuns.name, job.name))
        .run();
      return outcome;
    }),
  );
  return outcomes;
}
