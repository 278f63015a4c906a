/**
 * CAA evaluation and the DoH client against the local DoH resolver fixture
 * (test/fixtures/servers/doh.ts): the "lab" endpoint replays real captured
 * answers of the DNSSEC lab (shared/data/dns/lab), other namespaces serve zones
 * the tests install.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { evaluateCaa } from "../../../src/modules/ct-log/caa/evaluate";
import { issuerCaaMapping } from "../../../src/modules/ct-log/caa/issuers";
import { MemoryDnsCache, createDohClient, parseResolverUrls, DnsLookupError } from "../../../src/platform/dns/doh";

const base = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;
const resolverUrl = (ns: string) => `${base}/doh/${ns}/dns-query`;
const lab = createDohClient({ resolverUrls: [resolverUrl("lab")] });

const LE = "CN=R11,O=Let's Encrypt,C=US";
const GTS = "CN=WE1,O=Google Trust Services,C=US";
const SECTIGO = "CN=Sectigo Public Server Authentication CA DV R36,O=Sectigo Limited,C=GB";
const DIGICERT = "CN=DigiCert Global G2 TLS RSA SHA256 2020 CA1,O=DigiCert Inc,C=US";
const STAGING = "CN=(STAGING) False Fennel E6,O=(STAGING) Let's Encrypt,C=US";
const fixedClock = () => new Date("2026-11-22T10:00:00Z");

let nsCounter = 0;
async function zone(records: unknown[], extra: Record<string, unknown> = {}): Promise<string> {
  const ns = `z${Date.now().toString(36)}${nsCounter++}`;
  const res = await fetch(`${base}/doh/__control/zone`, { method: "POST", body: JSON.stringify({ ns, records, ...extra }) });
  expect(res.ok).toBe(true);
  return ns;
}
const queryLog = async (ns: string) => (await (await fetch(`${base}/doh/__control/log?ns=${ns}`)).json()) as any[];
const caa = (name: string, value: string, tag = "issue", flags = 0) => ({ name, type: "CAA", ttl: 120, data: { flags, tag, value } });
const soa = (name: string) => ({ name, type: "SOA", ttl: 600, data: { mname: "ns1." + name, rname: "hostmaster." + name, serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 } });

describe("DoH client (RFC 8484) on the captured lab answers", () => {
  it("GETs ?dns= with accept application/dns-message and decodes the real CAA answer", async () => {
    const r = await lab.query("example.test", "CAA", { dnssecOk: true });
    expect(r.rcode).toBe("NOERROR");
    expect(r.authenticData).toBe(true);
    const caaRecords = r.answers.filter((a) => a.type === "CAA").map((a) => a.data);
    expect(caaRecords).toEqual([
      expect.objectContaining({ flags: 0, tag: "iodef", value: "mailto:security@example.test" }),
      expect.objectContaining({ flags: 0, tag: "issuewild", value: ";" }),
      expect.objectContaining({ flags: 0, tag: "issue", value: "letsencrypt.org" }),
    ]);
    const log = await queryLog("lab");
    expect(log).toContainEqual({ method: "GET", name: "example.test", type: "CAA", cd: false, do: true, accept: "application/dns-message" });
  });

  it("reports NXDOMAIN and SERVFAIL (expired RRSIGs) as answers", async () => {
    expect((await lab.query("nx.example.test", "A", { dnssecOk: true })).rcode).toBe("NXDOMAIN");
    expect((await lab.query("bogus.test", "A", { dnssecOk: true })).rcode).toBe("SERVFAIL");
    const cd = await lab.query("bogus.test", "A", { dnssecOk: true, checkingDisabled: true });
    expect(cd.rcode).toBe("NOERROR");
    expect(cd.authenticData).toBe(false);
  });

  it("fails over to the next resolver, and throws a typed error when all fail", async () => {
    const broken = await zone([], { fail: "http500" });
    const good = await zone([caa("example.com", "letsencrypt.org")]);
    const client = createDohClient({ resolverUrls: [resolverUrl(broken), "http://127.0.0.1:1/dns-query", resolverUrl(good)] });
    const r = await client.query("example.com", "CAA");
    expect(r.resolver).toBe(resolverUrl(good));
    expect(r.answers).toHaveLength(1);

    for (const fail of ["http500", "garbage", "wrong-type"] as const) {
      const ns = await zone([], { fail });
      const err = await createDohClient({ resolverUrls: [resolverUrl(ns)] }).query("example.com", "CAA").catch((e) => e);
      expect(err).toBeInstanceOf(DnsLookupError);
      expect((err as DnsLookupError).code).toBe(fail === "http500" ? "http" : "malformed");
    }
    const slow = await zone([], { fail: "timeout" });
    const t = await createDohClient({ resolverUrls: [resolverUrl(slow)], timeoutMs: 200 }).query("example.com", "CAA").catch((e) => e);
    expect((t as DnsLookupError).code).toBe("timeout");
    const none = await createDohClient({ resolverUrls: parseResolverUrls(" , ") }).query("example.com", "CAA").catch((e) => e);
    expect((none as DnsLookupError).code).toBe("no-resolvers");
    expect(parseResolverUrls("https://a/dns-query, https://b/dns-query")).toEqual(["https://a/dns-query", "https://b/dns-query"]);
  });

  it("caches answers for their TTL (negative answers for the SOA minimum) with an injected clock", async () => {
    const ns = await zone([soa("example.com"), caa("example.com", "letsencrypt.org")]);
    let now = 1_000_000;
    const cache = new MemoryDnsCache({ now: () => now });
    const client = createDohClient({ resolverUrls: [resolverUrl(ns)], cache });
    await client.query("example.com", "CAA");
    const again = await client.query("EXAMPLE.com.", "CAA");
    expect(again.resolver).toBe("cache:" + resolverUrl(ns));
    expect((await queryLog(ns)).length).toBe(1);
    await client.query("missing.example.com", "CAA"); // NXDOMAIN, SOA minimum 60 s
    await client.query("missing.example.com", "CAA");
    expect((await queryLog(ns)).length).toBe(2);
    now += 61_000;
    await client.query("missing.example.com", "CAA");
    await client.query("example.com", "CAA"); // TTL 120 s still valid
    expect((await queryLog(ns)).length).toBe(3);
    now += 60_000;
    await client.query("example.com", "CAA");
    expect((await queryLog(ns)).length).toBe(4);
  });
});

describe("evaluateCaa on the lab zones (real captured answers)", () => {
  it("example.test: issue letsencrypt.org authorises Let's Encrypt", async () => {
    const r = await evaluateCaa(["example.test"], LE, lab, { now: fixedClock });
    expect(r).toEqual({
      has_records: true,
      authorized: true,
      records: [";", "letsencrypt.org"],
      error: "",
      checked_names: ["example.test"],
      issuer_candidates: ["Let's Encrypt (ISRG)"],
      evaluated_at: "2026-11-22T10:00:00.000Z",
    });
  });

  it("*.example.test: issuewild \";\" forbids every CA, even the one `issue` allows", async () => {
    const r = await evaluateCaa(["*.example.test"], LE, lab, { now: fixedClock });
    expect(r.has_records).toBe(true);
    expect(r.authorized).toBe(false);
    expect(r.checked_names).toEqual(["example.test"]);
  });

  it("deep.sub.example.test climbs NODATA and an empty non-terminal to the apex set", async () => {
    const r = await evaluateCaa(["deep.sub.example.test"], GTS, lab, { now: fixedClock });
    expect(r.checked_names).toEqual(["deep.sub.example.test", "sub.example.test", "example.test"]);
    expect(r.has_records).toBe(true);
    expect(r.authorized).toBe(false); // pki.goog is not letsencrypt.org
    expect(r.issuer_candidates).toEqual(["Google Trust Services"]);
  });

  it("shop.example.test follows the CNAME to shop.cdn.insecure.test (sectigo.com)", async () => {
    const ok = await evaluateCaa(["shop.example.test"], SECTIGO, lab);
    expect(ok).toMatchObject({ has_records: true, authorized: true, records: ["sectigo.com"], checked_names: ["shop.example.test"], error: "" });
    expect((await evaluateCaa(["shop.example.test"], LE, lab)).authorized).toBe(false);
  });

  it("insecure.test: a critical unknown tag forbids issuance; parameters after ';' are ignored", async () => {
    const r = await evaluateCaa(["insecure.test"], DIGICERT, lab);
    expect(r.has_records).toBe(true);
    expect(r.authorized).toBe(false);
    expect(r.records).toEqual(["digicert.com", "pki.goog; accounturi=https://dv.acme-v02.api.pki.goog/account/abc"]);
  });

  it("a SERVFAIL (bogus DNSSEC) fills caa.error and does not throw", async () => {
    const r = await evaluateCaa(["bogus.test"], LE, lab);
    expect(r.error).toMatch(/bogus\.test.*(SERVFAIL|REFUSED)/);
    expect(r.has_records).toBe(false);
    expect(r.authorized).toBe(true); // no evidence of a violation
  });
});

describe("evaluateCaa on installed zones", () => {
  it("parameters after ';' and the issuer mapping (Google issues under `issue pki.goog; accounturi=...`)", async () => {
    const ns = await zone([caa("example.com", "pki.goog; accounturi=https://dv.acme-v02.api.pki.goog/account/1")]);
    const r = await evaluateCaa(["www.example.com", "example.com"], GTS, createDohClient({ resolverUrls: [resolverUrl(ns)] }));
    expect(r.authorized).toBe(true);
    expect(r.checked_names).toEqual(["www.example.com", "example.com"]);
  });

  it("issue \";\" forbids all CAs, including unmapped issuers", async () => {
    const ns = await zone([caa("example.com", ";")]);
    const client = createDohClient({ resolverUrls: [resolverUrl(ns)] });
    expect((await evaluateCaa(["example.com"], LE, client)).authorized).toBe(false);
    const unmapped = await evaluateCaa(["example.com"], STAGING, client);
    expect(unmapped.issuer_candidates).toEqual([]);
    expect(unmapped.authorized).toBe(false);
  });

  it("no CAA anywhere: climbs to the TLD, has_records false, authorized true", async () => {
    const ns = await zone([{ name: "a.example.com", type: "A", data: "192.0.2.1" }]);
    const r = await evaluateCaa(["a.example.com"], LE, createDohClient({ resolverUrls: [resolverUrl(ns)] }));
    expect(r).toMatchObject({ has_records: false, authorized: true, records: [], error: "", checked_names: ["a.example.com", "example.com", "com"] });
  });

  it("wildcard names use `issue` when no `issuewild` exists; iodef-only sets do not restrict", async () => {
    const ns = await zone([caa("example.com", "letsencrypt.org"), caa("other.com", "mailto:x@other.com", "iodef")]);
    const client = createDohClient({ resolverUrls: [resolverUrl(ns)] });
    expect((await evaluateCaa(["*.example.com"], LE, client)).authorized).toBe(true);
    expect((await evaluateCaa(["*.example.com"], GTS, client)).authorized).toBe(false);
    expect((await evaluateCaa(["other.com"], GTS, client))).toMatchObject({ has_records: true, authorized: true, records: [] });
  });

  it("a resolver that times out fills caa.error", async () => {
    const ns = await zone([], { fail: "timeout" });
    const r = await evaluateCaa(["example.com"], LE, createDohClient({ resolverUrls: [resolverUrl(ns)], timeoutMs: 200 }));
    expect(r.error).toMatch(/example\.com.*did not answer/);
    expect(r.checked_names).toEqual(["example.com"]);
  });
});

describe("issuer DN -> CAA identifiers", () => {
  it("maps by O first, CN second, and excludes staging", () => {
    expect(issuerCaaMapping(GTS)).toEqual({ cas: ["Google Trust Services"], identifiers: ["pki.goog"] });
    expect(issuerCaaMapping("CN=E7,C=US").cas).toEqual(["Let's Encrypt (ISRG)"]);
    expect(issuerCaaMapping(STAGING)).toEqual({ cas: [], identifiers: [] });
    expect(issuerCaaMapping("CN=GeoTrust SSL CA,O=GeoTrust\\, Inc.,C=US").identifiers).toContain("geotrust.com");
    expect(issuerCaaMapping("CN=Microsoft Azure RSA TLS Issuing CA 03,O=Microsoft Corporation,C=US").identifiers).toEqual(["microsoft.com", "digicert.com"]);
  });
});
