/**
 * Helpers for the RDAP monitor's integration tests: fire the Cron Trigger through the
 * Worker's scheduled handler with configuration overrides and an injected clock,
 * read row counts from the test D1, set up monitors through the API.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { call } from "../helpers";

/**
 * The test clock: scheduled runs get strictly increasing times so "due" and backoff
 * behave as in production. Starts at the real time; tests move it forward.
 */
let clockMs = Date.now();
export const clock = {
  now: () => clockMs,
  advance: (ms: number) => (clockMs += ms),
};

const FIXTURE_URL = (env as any).FIXTURE_URL as string;

/**
 * The Cron run executes every module's jobs. The CT log job would otherwise read the
 * public CT logs of its bundled list (no network here: slow retries), so point it at an
 * empty, signed log list of the local CT log fixture. Best effort: if that fixture
 * changes, the runs are only slower.
 */
let quietNeighbours: Promise<Record<string, string>> | null = null;
function neighbourConfig(): Promise<Record<string, string>> {
  quietNeighbours ??= (async (): Promise<Record<string, string>> => {
    try {
      const key = (await (await fetch(`${FIXTURE_URL}/ctlog/__control/loglist-key`)).json()) as { pem: string };
      const list = (await (
        await fetch(`${FIXTURE_URL}/ctlog/__control/loglists`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "rdap-tests-empty", logs: [] }),
        })
      ).json()) as { url: string };
      return { CT_LOG_LIST_URL: list.url, CT_LOG_LIST_PUBLIC_KEY: key.pem } as Record<string, string>;
    } catch {
      return {};
    }
  })();
  return quietNeighbours;
}

/**
 * How long the previous run took on the wall clock. A run's own clock starts at its
 * scheduled time and advances with the wall clock (the RDAP poll stamps each check with
 * it), so on a loaded machine a run can write times past "scheduled + 1 s": the next run
 * starts after those, as the next minute's Cron would, or a monitor checked "in the
 * future" would not be due.
 */
let previousRunMs = 0;

/** One Cron run of the Worker at the test clock (advanced by 1 s past the previous run first), with env overrides. */
export async function runCron(overrides: Record<string, string> = {}): Promise<void> {
  clock.advance(1000 + previousRunMs);
  const started = Date.now();
  await runCronAt(clock.now(), overrides);
  previousRunMs = Date.now() - started;
}

/** A Cron run at an explicit time (to overlap two runs). */
export async function runCronAt(scheduledTime: number, overrides: Record<string, string> = {}): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime, cron: "* * * * *" }),
    { ...(env as any), ...(await neighbourConfig()), RDAP_CHECK_INTERVAL_SECONDS: "0", ...overrides },
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

export async function rowCount(table: string, where = "1 = 1", ...binds: unknown[]): Promise<number> {
  const r = await (env as any).DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).bind(...binds).first();
  return Number(r.n);
}

export async function createMonitor(token: string, domain_name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await call("POST", "/api/rdap/domains", { token, body: { domain_name, ...extra } });
  if (r.status !== 201) throw new Error(`create ${domain_name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id as number;
}

export async function monitorOf(token: string, domain: string): Promise<any> {
  const r = await call("GET", "/api/rdap/domains?limit=1000", { token });
  return (r.body.domains as any[]).find((d) => d.domain_name === domain);
}

export async function setTier(token: string, tier: "free" | "pro" | "enterprise"): Promise<void> {
  const r = await call("PUT", "/api/admin/subscription", { token, body: { tier } });
  if (r.status !== 200) throw new Error(`set tier: ${r.status} ${JSON.stringify(r.body)}`);
}
