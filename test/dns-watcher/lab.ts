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
export const stopLab = (process: "unbound" | "dnsdist") => control("process", { process, action: "stop" });
export const startLab = (process: "unbound" | "dnsdist") => control("process", { process, action: "start" });

let n = 0;
/** A zone name no other test (file or run) uses. */
export const uniqueZone = (prefix = "w") => `${prefix}${Date.now().toString(36)}${(n++).toString(36)}${Math.random().toString(36).slice(2, 5)}.test`;
