/** Reads reference data (../shared/data/rdap) and the local RDAP server through the fixture hub. */
import { env } from "cloudflare:workers";

export const FIXTURE_URL = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;
/** Base URL of the local RDAP server (test/fixtures/servers/rdap.ts). */
export const RDAP_BASE = FIXTURE_URL + "/rdap/";

export async function rdapText(rel: string): Promise<string> {
  const res = await fetch(`${FIXTURE_URL}/data/rdap/${rel}`);
  if (!res.ok) throw new Error(`fixture ${rel}: HTTP ${res.status}`);
  // The hub serves application/octet-stream; decode explicitly as UTF-8.
  return new TextDecoder().decode(await res.arrayBuffer());
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function rdapJson(rel: string): Promise<any> {
  return JSON.parse(await rdapText(rel));
}

/** A deep copy to edit without touching the cached original. */
export function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** POST a scenario or reset to the local RDAP server. */
export async function control(path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${FIXTURE_URL}/rdap/__control/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body ?? {}),
  });
  if (!res.ok) throw new Error(`control ${path}: HTTP ${res.status}`);
  await res.body?.cancel();
}

/** How many GET /rdap/domain/<name> the local server has seen, per name. */
export async function requestCounts(): Promise<Record<string, number>> {
  return (await serverStats()).requests;
}

export interface RdapServerStats {
  requests: Record<string, number>;
  total: number;
  lastAccept: Record<string, string>;
}

export async function serverStats(): Promise<RdapServerStats> {
  const res = await fetch(`${FIXTURE_URL}/rdap/__control/stats`);
  return (await res.json()) as RdapServerStats;
}
