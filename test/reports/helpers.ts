/**
 * Helpers of the reports tests: one clock per test file (Cron runs and API calls),
 * the Cron Trigger fired through the Worker's scheduled handler with configuration
 * overrides, and the reports endpoints called at the clock.
 *
 * The scheduler skips a job whose last start lies in the future of a run, so a test
 * file's clock only moves forward. It starts at the real time: CT observations are
 * stamped max(real time, Cron time) by the cursor, agent results at the request clock.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import worker from "../../src/index";
import { call, serve, type Org } from "../helpers";
import { clone, rdapJson } from "../rdap/data";

export const E = env as unknown as { FIXTURE_URL: string; SMTP_SINK_PORT: string; DB: D1Database };

let clockMs = Date.now();
export const clock = {
  now: () => new Date(clockMs),
  /** Moves forward (never behind the real time, so the CT cursor's stamps stay inside windows). */
  advance(ms: number): Date {
    clockMs = Math.max(clockMs + ms, Date.now());
    return new Date(clockMs);
  },
  /** Jumps to `at` (only forward). */
  set(at: Date): Date {
    clockMs = Math.max(clockMs, at.getTime());
    return new Date(clockMs);
  },
};

let quiet: Promise<Record<string, string>> | undefined;
/** An empty signed CT log list, so a Cron run never reaches for the public CT logs. */
export function quietCt(): Promise<Record<string, string>> {
  quiet ??= (async () => {
    const key = (await (await fetch(`${E.FIXTURE_URL}/ctlog/__control/loglist-key`)).json()) as { pem: string };
    const list = (await (
      await fetch(`${E.FIXTURE_URL}/ctlog/__control/loglists`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "reports-empty", logs: [] }) })
    ).json()) as { url: string };
    return { CT_LOG_LIST_URL: list.url, CT_LOG_LIST_PUBLIC_KEY: key.pem };
  })();
  return quiet;
}

/** One Cron run at the clock (advanced by `stepMs` first), every module's jobs, with env overrides. */
export async function cron(overrides: Record<string, string> = {}, stepMs = 1000): Promise<Date> {
  const at = clock.advance(stepMs);
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime: at.getTime(), cron: "* * * * *" }),
    { ...(env as object), ...(await quietCt()), CT_POLL_SPREAD_SECONDS: "0", ...overrides } as never,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return at;
}

/** A call made at the test clock (X-Trust-Plane-Now). */
export function callAt(method: string, path: string, token: string, at = clock.now(), body?: unknown) {
  return call(method, path, { token, body, headers: { "x-trust-plane-now": at.toISOString() } });
}

export async function overview(token: string, at = clock.now()) {
  const r = await callAt("GET", "/api/dashboard/security-overview", token, at);
  if (r.status !== 200) throw new Error(`overview: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

/** The findings as [id, affected assets] pairs, worst first. */
export const findingIds = (data: { findings: { id: string }[] }) => data.findings.map((f) => f.id);

/** Downloads a report's PDF: status, headers and bytes. */
export async function download(token: string, reportId: number) {
  const res = await serve(
    new Request(`http://trust-plane.test/api/reports/${reportId}/download`, { headers: { authorization: `Bearer ${token}`, "cf-connecting-ip": "192.0.2.1" } }),
  );
  return { status: res.status as number, headers: res.headers as Headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

// ------------------------------------------------------------------ RDAP through its real poll

const DAY = 86_400_000;

/** Other modules' Cron runs must not re-resolve the DNS domains (with another resolver). */
export const NOT_DNS = { DNS_CHECK_INTERVAL_SECONDS: "86400" };

/** A Cron run that checks every enabled RDAP monitor (each is due at every run). */
export const rdapCron = (overrides: Record<string, string> = {}, stepMs?: number) => cron({ ...NOT_DNS, RDAP_CHECK_INTERVAL_SECONDS: "0", ...overrides }, stepMs);

/**
 * The real .com answer for HHGAMES.COM relabelled as `name`, for the local RDAP server:
 * expiring at `expiresAt` (default a year after the clock); `registrar` replaces the
 * registrar entity.
 */
export async function rdapAnswer(name: string, opts: { expiresAt?: Date; registrar?: { handle: string; name: string } } = {}) {
  const doc = clone(await rdapJson("domain/registry-thin/verisign-hhgames.com.json"));
  doc.ldhName = name.toUpperCase();
  const expiresAt = opts.expiresAt ?? new Date(clock.now().getTime() + 365 * DAY);
  doc.events.find((e: any) => e.eventAction === "expiration").eventDate = expiresAt.toISOString().replace(/\.\d+Z$/, "Z");
  if (opts.registrar) {
    const r = doc.entities.find((e: any) => e.roles.includes("registrar"));
    r.handle = opts.registrar.handle;
    r.publicIds = [{ type: "IANA Registrar ID", identifier: opts.registrar.handle }];
    r.vcardArray = ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", opts.registrar.name]]];
  }
  return doc;
}

/** Watches `name` with the RDAP module (at the test clock); returns the monitor id. */
export async function watchRdap(org: Pick<Org, "session">, name: string, at = clock.now()): Promise<number> {
  const r = await callAt("POST", "/api/rdap/domains", org.session, at, { domain_name: name });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}
