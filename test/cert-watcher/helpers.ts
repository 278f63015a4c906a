/** Helpers of the cert-watcher tests: organizations, monitors, agents, cron, realistic results. */
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { call, signup, uniqueIp, type Org } from "../helpers";
import ecdsaIntermediate from "./fixtures/ecdsa-intermediate.json";
import ecdsaTrusted from "./fixtures/ecdsa-trusted.json";
import legacyWeak from "./fixtures/legacy-weak.json";
import refused from "./fixtures/refused.json";
import rsaSelfSigned from "./fixtures/rsa-self-signed.json";

export const FIXTURES = { ecdsaIntermediate, ecdsaTrusted, legacyWeak, refused, rsaSelfSigned } as const;
export type FixtureName = keyof typeof FIXTURES;

const DAY = 86_400_000;

/**
 * A real scanner-node result (fixtures/), with the leaf's validity moved so that it
 * expires `daysLeft` days from `now` (negative: expired that many days ago).
 */
export function result(name: FixtureName, opts: { daysLeft?: number; now?: Date } = {}): any {
  const r = structuredClone(FIXTURES[name]) as any;
  if (r.certificate && opts.daysLeft !== undefined) {
    const now = (opts.now ?? new Date()).getTime();
    r.certificate.not_after = new Date(now + opts.daysLeft * DAY + 3_600_000).toISOString();
    r.certificate.not_before = new Date(now + opts.daysLeft * DAY - 200 * DAY).toISOString(); // 200-day lifespan
    r.validity_days = opts.daysLeft;
  }
  return r;
}

export async function newOrg(): Promise<Org> {
  return signup("CertWatcher");
}

export async function createMonitor(token: string, body: Record<string, unknown>): Promise<number> {
  const r = await call("POST", "/api/cert-watcher/monitors", { token, body });
  if (r.status !== 201) throw new Error(`create monitor failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

export async function registerAgent(token: string, name = "agent"): Promise<{ id: number; token: string }> {
  const r = await call("POST", "/api/cert-watcher/agents", { token, body: { name } });
  if (r.status !== 201) throw new Error(`register agent failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** An agent request (its own client IP: agent calls are rate limited like anonymous ones). */
export function agentCall(path: "lease" | "results", agentToken: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  return call("POST", `/api/cert-watcher/agents/${path}`, { token: agentToken, body, headers: { "cf-connecting-ip": uniqueIp(), ...headers } });
}

let quietCt: Promise<Record<string, string>> | undefined;
/**
 * Configuration that keeps the other modules' scheduled jobs local and quick: an empty,
 * signed CT log list from the fixture hub's CT counterpart (so no CT log is polled).
 */
function localJobConfig(): Promise<Record<string, string>> {
  const base = (env as any).FIXTURE_URL as string;
  quietCt ??= (async () => {
    const key = await (await fetch(`${base}/ctlog/__control/loglist-key`)).json<{ pem: string }>();
    const pub = await fetch(`${base}/ctlog/__control/loglists`, { method: "POST", body: JSON.stringify({ name: "cert-watcher-empty", logs: [] }) });
    const { url } = await pub.json<{ url: string }>();
    return { CT_LOG_LIST_URL: url, CT_LOG_LIST_PUBLIC_KEY: key.pem };
  })();
  return quietCt;
}

let lastCron = 0;
/**
 * Fires the Cron Trigger through the Worker's scheduled handler (every module's jobs
 * run). Scheduled times never go backwards within a test file: the scheduler skips a
 * job whose last start lies in the "future" of the run, as after a moved clock.
 */
export async function fireCron(at = new Date(), overrides: Record<string, string> = {}) {
  const ctx = createExecutionContext();
  const local = await localJobConfig();
  lastCron = Math.max(at.getTime(), lastCron + 1000);
  await worker.scheduled(createScheduledController({ scheduledTime: lastCron }), { ...(env as any), ...local, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
}

/** Leases the organization's jobs (after a cron run) and posts `results[i]` for the job of target IP `ip`. */
export async function scanOnce(agentToken: string, byIp: Record<string, any>) {
  await fireCron();
  const lease = await agentCall("lease", agentToken, { max_jobs: 100 });
  if (lease.status !== 200) throw new Error(`lease failed: ${lease.status} ${JSON.stringify(lease.body)}`);
  const posted: any[] = [];
  for (const job of lease.body.jobs) {
    const r = byIp[job.ip_address];
    if (!r) continue;
    const res = await agentCall("results", agentToken, { job_id: job.job_id, result: r });
    if (res.status !== 200) throw new Error(`post failed: ${res.status} ${JSON.stringify(res.body)}`);
    posted.push(res.body);
  }
  return { jobs: lease.body.jobs, posted };
}
