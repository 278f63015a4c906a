/**
 * Shared setup of the CT ingestion end-to-end tests: fixture CT logs (created
 * through the ct-log fixture's control endpoints), a signed log list naming them,
 * a DoH namespace, and the Cron Trigger fired through the Worker's scheduled
 * handler with configuration overrides (the way an operator sets them).
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { unique } from "../helpers";
import type { CursorStatus } from "../../src/modules/ct-log/cursor-contract";
import { normalizeCertificateName } from "../../src/modules/ct-log/cert/names";
import { parseFilterPattern } from "../../src/modules/ct-log/filters/pattern";
import { filterMatchesName } from "../../src/modules/ct-log/filters/semantics";

export const base = (env as any).FIXTURE_URL as string;

/** A fixture-safe lowercase unique name. */
export const uid = () => unique().toLowerCase().replace(/[^a-z0-9]/g, "");

export async function postJson(path: string, body: unknown): Promise<any> {
  const r = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const j = await r.json().catch(() => null);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}

export async function createLog(name: string, opts: { from?: string; size?: number; leafIndexExtension?: boolean } = {}) {
  return postJson("/ctlog/__control/logs", { name, ...opts });
}
export const copyEntries = (log: string, from: string, start: number, end: number) => postJson(`/ctlog/${log}/__control/copy`, { from, start, end });
export const fault = (log: string, f: Record<string, unknown>) => postJson(`/ctlog/${log}/__control/fault`, f);
export async function logKey(log: string): Promise<{ log_id_b64: string; tree_size: number }> {
  return (await fetch(`${base}/ctlog/${log}/__control/key`)).json() as any;
}
/** Every request the fixture log received, with the time it arrived (ms, this machine's clock). */
export async function requests(log: string): Promise<{ path: string; query: string; at: number }[]> {
  return (await fetch(`${base}/ctlog/${log}/__control/requests`)).json() as any;
}

/** Publishes a signed log list naming fixture logs; returns the env overrides that point the service at it. */
export async function publishLogList(name: string, logs: { log: string; protocol: "rfc6962" | "static-ct"; state?: string; url?: string }[]) {
  const { url } = await postJson("/ctlog/__control/loglists", { name, logs });
  const { pem } = (await (await fetch(`${base}/ctlog/__control/loglist-key`)).json()) as { pem: string };
  return { CT_LOG_LIST_URL: url as string, CT_LOG_LIST_PUBLIC_KEY: pem };
}

export async function dohZone(ns: string, records: unknown[]) {
  await postJson("/doh/__control/zone", { ns, records });
  return `${base}/doh/${ns}/dns-query`;
}

/**
 * The scheduler's clock in these tests: only moves forward (the job registry skips a
 * job whose last start is "in the future"), starting now; tests move it to pass backoffs.
 */
let virtualNow = Date.now();
export function advance(minutes: number): number {
  virtualNow = Math.max(virtualNow + minutes * 60_000, Date.now());
  return virtualNow;
}

/** Fires the Cron Trigger through the Worker's scheduled handler and waits for it. */
export async function runCron(overrides: Record<string, string>, scheduledTime = advance(0.05)) {
  const ctx = createExecutionContext();
  // Logs are read at once in tests (production spreads their runs over the minute).
  const testEnv = { ...(env as any), CT_POLL_SPREAD_SECONDS: "0", ...overrides };
  await worker.scheduled(createScheduledController({ scheduledTime, cron: "* * * * *" }), testEnv, ctx);
  await waitOnExecutionContext(ctx);
}

/**
 * An API call served with configuration overrides (like runCron): for endpoints that read
 * the configured log list, such as GET /api/ct-log/logs.
 */
export async function callWithConfig(overrides: Record<string, string>, path: string, token: string): Promise<{ status: number; body: any }> {
  const ctx = createExecutionContext();
  const req = new Request(`http://trust-plane.test${path}`, { headers: { authorization: `Bearer ${token}`, "cf-connecting-ip": "192.0.2.1" } });
  const res = await worker.fetch(req, { ...(env as any), ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: await res.json() };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Fires the Cron Trigger, then waits until each named log's cursor has completed a
 * run after it (a poke only arms the cursor's alarm; the alarm does the reading).
 */
export async function cronAndWait(overrides: Record<string, string>, logIds: string[], scheduledTime = advance(0.05)): Promise<CursorStatus[]> {
  const before = await Promise.all(logIds.map((id) => cursor(id).status()));
  await runCron(overrides, scheduledTime);
  return Promise.all(logIds.map((id, i) => waitForRun(id, before[i].runs)));
}

/** Waits until a cursor has completed more than `runs` runs and is idle. */
export async function waitForRun(logId: string, runs: number, timeoutMs = 25_000): Promise<CursorStatus> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const s = await cursor(logId).status();
    if (s.runs > runs && !s.inProgress) return s;
    if (Date.now() > end) throw new Error(`cursor ${logId} did not complete a run: ${JSON.stringify(s)}`);
    await sleep(50);
  }
}

/** Waits until a cursor's verified position reaches `size` (its alarm works through a backlog). */
export async function waitForPosition(logId: string, size: number, timeoutMs = 25_000): Promise<CursorStatus> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const s = await cursor(logId).status();
    if (s.verifiedPosition === size && !s.inProgress) return s;
    if (Date.now() > end) throw new Error(`cursor ${logId} did not reach ${size}: ${JSON.stringify(s)}`);
    await sleep(50);
  }
}

/** The CtLogCursor of a log (status() is its RPC view of position, tree head, errors). */
export function cursor(logIdB64: string): { status(): Promise<CursorStatus> } & DurableObjectStub {
  const ns = (env as any).CT_LOG_CURSOR as DurableObjectNamespace;
  return ns.get(ns.idFromName(`log:${logIdB64}`)) as any;
}

export interface NavigliEntry {
  index: number;
  dns: string[];
  subject_cn: string | null;
}
let navigli: NavigliEntry[] | undefined;
/** The 1024 real navigli2025h2 entries' names (expected.json of the shared data). */
export async function navigliEntries(): Promise<NavigliEntry[]> {
  navigli ??= ((await (await fetch(`${base}/data/ct/static-ct/navigli2025h2/expected.json`)).json()) as any).entries as NavigliEntry[];
  return navigli;
}

/** Indices in [from, to) with a name the filter matches (semantics.ts is the reference of the matcher). */
export async function indicesMatching(pattern: string, matchType: "wide" | "exact", from: number, to: number): Promise<number[]> {
  const parsed = parseFilterPattern(pattern);
  if (!parsed.ok) throw new Error(parsed.error);
  const hit = (n: string) => {
    const name = normalizeCertificateName(n);
    return name !== null && filterMatchesName(parsed.value, matchType, name);
  };
  return (await navigliEntries()).filter((e) => e.index >= from && e.index < to && (e.dns.some(hit) || (e.subject_cn !== null && hit(e.subject_cn)))).map((e) => e.index);
}
