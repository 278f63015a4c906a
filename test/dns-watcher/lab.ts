/**
 * The DNS lab (test/fixtures/dns-lab.ts, started by the fixture hub) seen from tests in
 * workerd: its DoH URL, and zone / process controls. When the lab could not start
 * (programs missing), every caller fails with the reason instead of skipping.
 */
import { env } from "cloudflare:workers";

const base = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;

export async function labDohUrl(): Promise<string> {
  const s = (await (await fetch(`${base}/dnslab/__control/status`)).json()) as { doh_url: string; error: string };
  if (!s.doh_url) throw new Error(s.error || "the DNS lab is not running (test/fixtures/servers/dns-lab.ts)");
  return s.doh_url;
}

async function control(path: string, body: unknown): Promise<any> {
  await labDohUrl();
  const res = await fetch(`${base}/dnslab/__control/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const out = await res.json();
  if (!res.ok) throw new Error(`DNS lab ${path}: ${JSON.stringify(out)}`);
  return out;
}

/** Creates or replaces a child zone of test. (records: zone-file lines relative to the zone). */
export const putZone = (name: string, records: string, mode: "signed" | "insecure" | "bogus" = "signed") => control("zone", { name, mode, records });
/** Removes a zone a test put: its delegation goes, the name no longer exists. */
export const removeZone = (name: string) => control("unzone", { name });
/** named-checkzone's verdict on a zone file: {ok, output}. */
export const checkZone = (zone: string, text: string): Promise<{ ok: boolean; output: string }> => control("checkzone", { zone, text });
export const stopLab = (process: "unbound" | "dnsdist") => control("process", { process, action: "stop" });
export const startLab = (process: "unbound" | "dnsdist") => control("process", { process, action: "start" });

let n = 0;
/** A zone name no other test (file or run) uses. */
export const uniqueZone = (prefix = "w") => `${prefix}${Date.now().toString(36)}${(n++).toString(36)}${Math.random().toString(36).slice(2, 5)}.test`;

// ---- one scheduled run, called directly (the code the Cron Trigger runs), so its summary and events can be read

import { createDb } from "../../src/db/client";
import { emitEvent } from "../../src/modules/alerting/contract";
import { runDnsWatch, type DnsRunSummary, type DnsWatchSettings } from "../../src/modules/dns-watcher/resolver-run";
import type { DnsWatcherEvent } from "../../src/modules/dns-watcher/events";
import { call, type Org } from "../helpers";

export interface WatchRun {
  summary: DnsRunSummary;
  /** HTTP requests to resolvers, counted at the fetch the DoH client uses. */
  requests: number;
  /** The change events the run emitted (organization, event). */
  events: DnsWatcherEvent[];
  /** Wall time of the run, ms. */
  ms: number;
}

let runClock = Date.now();
/** The time of the last run (runs are a minute apart unless `at` is given). */
export const lastRunAt = () => runClock;

/**
 * One run a minute after the previous one (or at `at`), against the lab unless
 * `settings.resolverUrls` says otherwise. Its events are collected (`events`); with
 * `alerting`, each also goes to alerting as the scheduled run sends it (rules, channels).
 */
export async function runWatch(settings: Partial<DnsWatchSettings> = {}, at?: number, opts: { alerting?: boolean } = {}): Promise<WatchRun> {
  let requests = 0;
  const events: DnsWatcherEvent[] = [];
  const countingFetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    requests++;
    return fetch(input, init);
  }) as typeof fetch;
  if (at === undefined) runClock += 60_000;
  else runClock = Math.max(runClock, at);
  const started = Date.now();
  const summary = await runDnsWatch({
    db: createDb((env as any).DB),
    env: env as any,
    settings: {
      resolverUrls: settings.resolverUrls ?? [await labDohUrl()],
      intervalSeconds: 0,
      concurrency: 8,
      maxDomainsPerRun: 1000,
      timeoutMs: 3000,
      runDeadlineMs: 60_000,
      breakAfterFailures: 8,
      ...settings,
    },
    now: new Date(at ?? runClock),
    fetch: countingFetch,
    emit: async (organizationId, event) => {
      events.push(event);
      if (opts.alerting) await emitEvent(env as any, "dns-watcher", organizationId, event);
    },
  });
  return { summary, requests, events, ms: Date.now() - started };
}

/** Watches `domain` for `org` through the API; returns the domain id. */
export async function watchDomain(org: Org, domain: string): Promise<number> {
  const r = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: domain } });
  if (r.status !== 201) throw new Error(`watching ${domain}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

/** The fact rows of a domain, oldest first. */
export async function factsOf(domainId: number): Promise<{ kind: string; record_name: string; record_type: string | null; old_values: string; new_values: string; detail: string }[]> {
  return ((await (env as any).DB.prepare("SELECT kind, record_name, record_type, old_values, new_values, detail FROM dns_change_facts WHERE domain_id = ? ORDER BY id").bind(domainId).all()).results);
}

/**
 * Storage is shared by the tests of a file, and a run resolves every due domain of every
 * organization: a test that counts what a run does starts from no watched domain.
 */
export async function forgetWatchedDomains(): Promise<void> {
  await (env as any).DB.prepare("DELETE FROM dns_domains").run(); // record sets, history and facts cascade
}
