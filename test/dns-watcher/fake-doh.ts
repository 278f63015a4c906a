/**
 * The fake DoH resolver of the fixture hub (test/fixtures/servers/doh.ts) seen from tests
 * in workerd: a namespace per call with its zone, fault mode and query log. Where the DNS
 * lab (lab.ts) is real DNS, this is for what the lab cannot do on cue: never answer,
 * answer truncated or oversize, alternate between two zones.
 */
import { env } from "cloudflare:workers";
import { unique } from "../helpers";

const base = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;

export interface FakeRecord {
  name: string;
  type: string;
  ttl?: number;
  data: unknown;
}

export type FakeFault = "servfail" | "refused" | "http500" | "timeout" | "garbage" | "wrong-type" | "truncated" | "oversize" | "huge";

export interface FakeResolver {
  url: string;
  /** Replaces the zone (and fault mode) of this resolver. */
  set(records: FakeRecord[], options?: FakeOptions): Promise<void>;
  /** The queries it received. */
  log(): Promise<{ method: string; name: string; type: string; cd: boolean }[]>;
}

/** fail: a fault mode; alternate: a second zone answered in turns with `records`; ad: answers from `records` say validated (AD). */
export interface FakeOptions {
  fail?: FakeFault;
  alternate?: FakeRecord[];
  ad?: boolean;
}

export async function fakeResolver(records: FakeRecord[] = [], options: FakeOptions = {}): Promise<FakeResolver> {
  const ns = `w${unique()}`.replace(/[^A-Za-z0-9_-]/g, "");
  const r: FakeResolver = {
    url: `${base}/doh/${ns}/dns-query`,
    async set(recs, opts = {}) {
      const res = await fetch(`${base}/doh/__control/zone`, { method: "POST", body: JSON.stringify({ ns, records: recs, ...opts }) });
      if (!res.ok) throw new Error(`fake DoH zone: HTTP ${res.status}`);
    },
    async log() {
      return (await (await fetch(`${base}/doh/__control/log?ns=${ns}`)).json()) as never;
    },
  };
  await r.set(records, options);
  return r;
}

/** The default record sets of a watched domain, answered (A, AAAA, MX, NS, TXT with SPF, CAA, _dmarc TXT). */
export function fakeZone(domain: string, o: { a?: string; mx?: number; spf?: string } = {}): FakeRecord[] {
  return [
    { name: domain, type: "A", data: o.a ?? "192.0.2.10" },
    { name: domain, type: "AAAA", data: "2001:db8::10" },
    { name: domain, type: "MX", data: { preference: o.mx ?? 10, exchange: `mx.${domain}` } },
    { name: domain, type: "NS", data: `ns1.${domain}` },
    { name: domain, type: "TXT", data: [o.spf ?? "v=spf1 ip4:192.0.2.0/24 -all"] },
    { name: domain, type: "CAA", data: { flags: 0, tag: "issue", value: "letsencrypt.org" } },
    { name: `_dmarc.${domain}`, type: "TXT", data: ["v=DMARC1; p=reject"] },
  ];
}
