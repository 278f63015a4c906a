/**
 * The DNS message decoder on the real DoH answers captured from the lab
 * (../shared/data/dns/lab/doh-wire, manifest.json gives the expected summary), hostile
 * messages built from them, canonical presentation, and the DoH client's GET and POST
 * against the running lab (dnsdist). Signatures in the captures are never checked
 * against the clock: only what the resolver said (AD, RCODE, EDE) is.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { buildDnsQuery, checkMessageStructure, createDohClient, decodeDnsResponse, DnsLookupError, isNotAsked } from "../../../src/platform/dns/doh";
import { canonicalIpv6, canonicalRecordSet, PresentationError, txtText } from "../../../src/platform/dns/presentation";
import { observe, classifyDnssec } from "../../../src/modules/dns-watcher/observation";
import { labDohUrl } from "../../dns-watcher/lab";

const base = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;
const wireDir = `${base}/data/dns/lab/doh-wire`;

interface ManifestEntry {
  file: string;
  query: { name: string; type: string; do: boolean; cd: boolean; wire_b64url: string };
  decoded: { rcode: number; flags: Record<string, boolean>; answer: { name: string; type: string; txt?: string[]; caa?: { flags: number; tag: string; value: string } }[]; authority: { type: string }[]; additional: { type: string; options?: { EDE?: number; text?: string }[] }[] };
}

async function manifest(): Promise<ManifestEntry[]> {
  return (await (await fetch(`${wireDir}/manifest.json`)).json()) as ManifestEntry[];
}
const wire = async (file: string) => new Uint8Array(await (await fetch(`${wireDir}/${file}`)).arrayBuffer());
const RCODES = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN"];

describe("decoder on the captured lab answers", () => {
  it("decodes all 21 answers as the manifest says (RCODE, AD, CD, sections, TXT, CAA, EDE)", async () => {
    const entries = await manifest();
    expect(entries).toHaveLength(21);
    for (const m of entries) {
      const bytes = await wire(m.file);
      expect(checkMessageStructure(bytes), m.file).toBeNull();
      const r = decodeDnsResponse(bytes, "lab", { name: m.query.name, type: m.query.type });
      expect(r.rcode, m.file).toBe(RCODES[m.decoded.rcode]);
      expect(r.authenticData, m.file).toBe(m.decoded.flags.AD);
      expect(r.checkingDisabled, m.file).toBe(m.decoded.flags.CD);
      expect(r.answers.map((a) => `${a.name}. ${a.type}`), m.file).toEqual(m.decoded.answer.map((a) => `${a.name} ${a.type}`));
      expect(r.authorities.map((a) => a.type), m.file).toEqual(m.decoded.authority.map((a) => a.type));
      const txt = m.decoded.answer.filter((a) => a.txt).map((a) => a.txt!.join(""));
      expect(r.answers.filter((a) => a.type === "TXT").map((a) => (a.data as Uint8Array[]).map((b) => new TextDecoder().decode(b)).join("")), m.file).toEqual(txt);
      const ede = m.decoded.additional.flatMap((a) => a.options ?? []).filter((o) => o.EDE !== undefined);
      expect(r.ede.map((e) => [e.code, e.text]), m.file).toEqual(ede.map((e) => [e.EDE, e.text ?? ""]));
      // Our own query for the same question is byte-identical to the one the lab was asked.
      const q = buildDnsQuery(m.query.name, m.query.type as never, { dnssecOk: m.query.do, checkingDisabled: m.query.cd });
      expect(btoa(String.fromCharCode(...q)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""), m.file).toBe(m.query.wire_b64url);
    }
  });

  it("names the Extended DNS Error of the bogus zone (RFC 8914 code 6)", async () => {
    const r = decodeDnsResponse(await wire("15_bogus_test_A.bin"), "lab");
    expect(r.rcode).toBe("SERVFAIL");
    expect(r.ede).toEqual([{ code: 6, name: "DNSSEC Bogus", text: "" }]);
  });

  it("presents every watched type canonically from the captures", async () => {
    const set = async (file: string, type: any) => canonicalRecordSet(type, decodeDnsResponse(await wire(file), "lab").answers);
    expect(await set("01_example_test_A.bin", "A")).toEqual(["192.0.2.10"]);
    expect(await set("21_example_test_AAAA.bin", "AAAA")).toEqual(["2001:db8::10"]);
    expect(await set("05_example_test_MX.bin", "MX")).toEqual(["10 mx1.example.test.", "20 mx2.example.test."]);
    expect(await set("06_example_test_NS.bin", "NS")).toEqual(["ns1.test."]);
    expect(await set("03_example_test_TXT.bin", "TXT")).toEqual(['"v=spf1 ip4:192.0.2.0/24 include:_spf.example.test -all"']);
    expect(await set("02_example_test_CAA.bin", "CAA")).toEqual(['0 iodef "mailto:security@example.test"', '0 issue "letsencrypt.org"', '0 issuewild ";"']);
    expect(await set("20_insecure_test_CAA.bin", "CAA")).toContain('128 tbs "unknown critical"');
    const soa = await set("07_example_test_SOA.bin", "SOA"); // dnssec-signzone incremented the serial
    expect(soa).toEqual(["ns1.test. hostmaster.example.test. 2026112102 3600 600 604800 300"]);
    const ds = await set("09_example_test_DS.bin", "DS");
    expect(ds).toHaveLength(1);
    expect(ds[0]).toMatch(/^\d+ 13 2 [0-9A-F]{64}$/);
    const keys = await set("08_example_test_DNSKEY.bin", "DNSKEY");
    expect(keys.map((k) => k.split(" ").slice(0, 3).join(" ")).sort()).toEqual(["256 3 13", "257 3 13"]);
    expect(await set("10_www_example_test_A.bin", "CNAME")).toEqual(["example.test."]);
    expect(await set("10_www_example_test_A.bin", "A")).toEqual(["192.0.2.10"]);
  });

  it("order, name case and TTL never change the canonical set; TXT case does", () => {
    const a = [
      { name: "x", type: "MX", ttl: 300, data: { preference: 20, exchange: "MX2.Example.TEST" } },
      { name: "x", type: "MX", ttl: 300, data: { preference: 10, exchange: "mx1.example.test." } },
    ];
    const b = [
      { name: "x", type: "MX", ttl: 60, data: { preference: 10, exchange: "MX1.example.test" } },
      { name: "x", type: "MX", ttl: 60, data: { preference: 20, exchange: "mx2.example.test" } },
    ];
    expect(canonicalRecordSet("MX", a)).toEqual(canonicalRecordSet("MX", b));
    const txt = (s: string, ttl = 300) => ({ name: "x", type: "TXT", ttl, data: [new TextEncoder().encode(s)] });
    expect(canonicalRecordSet("TXT", [txt("b"), txt("a")])).toEqual(canonicalRecordSet("TXT", [txt("a", 5), txt("b", 9)]));
    expect(canonicalRecordSet("TXT", [txt("A")])).not.toEqual(canonicalRecordSet("TXT", [txt("a")]));
    expect(canonicalIpv6("2001:DB8:0:0:0:0:0:10")).toBe("2001:db8::10");
    expect(canonicalIpv6("::ffff:192.0.2.1")).toBe("::ffff:c000:201");
    expect(txtText('"v=spf1 " "-all"')).toBe("v=spf1 -all");
    expect(txtText('"say \\"hi\\" \\\\ \\233"')).toBe('say "hi" \\ \u00e9');
  });
});

describe("hostile answers are lookup errors, never 'no records'", () => {
  it("truncated messages at every length are malformed", async () => {
    const full = await wire("03_example_test_TXT.bin");
    for (let cut = 0; cut < full.length; cut++) {
      const err = (() => {
        try {
          decodeDnsResponse(full.subarray(0, cut), "lab");
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(err, `cut at ${cut}`).toBeInstanceOf(DnsLookupError);
      expect((err as DnsLookupError).code).toBe("malformed");
    }
  });

  it("a compression loop and a forward pointer are malformed", async () => {
    const m = new Uint8Array(await wire("01_example_test_A.bin"));
    // The answer's owner name is a pointer (0xC00C) to the question name; make it point at itself.
    const answerAt = 12 + "example.test".length + 2 + 4;
    expect(m[answerAt] & 0xc0).toBe(0xc0);
    const loop = m.slice();
    loop[answerAt] = 0xc0 | (answerAt >> 8);
    loop[answerAt + 1] = answerAt & 0xff;
    expect(checkMessageStructure(loop)).toMatch(/loop|backwards/);
    expect(() => decodeDnsResponse(loop, "lab")).toThrow(DnsLookupError);
    const forward = m.slice();
    forward[answerAt + 1] = 0xff;
    expect(() => decodeDnsResponse(forward, "lab")).toThrow(/malformed|pointer/);
  });

  it("an answer for another question, a TC answer, and an oversize TXT are refused", async () => {
    const a = await wire("01_example_test_A.bin");
    expect(() => decodeDnsResponse(a, "lab", { name: "example.test", type: "AAAA" })).toThrow(/another question/);
    const tc = a.slice();
    tc[2] |= 0x02;
    expect(() => decodeDnsResponse(tc, "lab")).toThrow(/truncated/);
    const big = [{ name: "x", type: "TXT", ttl: 1, data: Array.from({ length: 20 }, () => new Uint8Array(255).fill(0x61)) }];
    expect(() => canonicalRecordSet("TXT", big)).toThrow(PresentationError);
    const o = observe("TXT", { rcode: "NOERROR", authenticData: false, checkingDisabled: false, answers: big, authorities: [], ede: [], resolver: "x" });
    expect(o.kind).toBe("error");
  });

  it("classifies DNSSEC from the captured answers: validated, insecure, bogus", async () => {
    const obs = async (file: string, type: any) => observe(type, decodeDnsResponse(await wire(file), "lab"));
    expect(classifyDnssec([await obs("01_example_test_A.bin", "A"), await obs("05_example_test_MX.bin", "MX")], null).status).toBe("validated");
    expect(classifyDnssec([await obs("19_insecure_test_A.bin", "A")], null).status).toBe("insecure");
    const bogus = classifyDnssec([await obs("15_bogus_test_A.bin", "A")], await obs("16_bogus_test_A_cd.bin", "A"));
    expect(bogus.status).toBe("bogus");
    expect(bogus.ede).toEqual([{ code: 6, name: "DNSSEC Bogus", text: "" }]);
    expect(bogus.error).toMatch(/SERVFAIL.*EDE 6 DNSSEC Bogus/);
    expect(classifyDnssec([await obs("15_bogus_test_A.bin", "A")], null).status).toBe("unknown");
  });
});

describe("DoH client against the running lab (dnsdist, RFC 8484)", () => {
  it("GET and POST give the same validated answer", async () => {
    const url = await labDohUrl();
    for (const method of ["GET", "POST"] as const) {
      const r = await createDohClient({ resolverUrls: [url], method }).query("example.test", "MX", { dnssecOk: true });
      expect(r.rcode).toBe("NOERROR");
      expect(r.authenticData).toBe(true);
      expect(canonicalRecordSet("MX", r.answers)).toEqual(["10 mx1.example.test.", "20 mx2.example.test."]);
    }
    const bogus = await createDohClient({ resolverUrls: [url], method: "POST" }).query("bogus.test", "A", { dnssecOk: true });
    expect(bogus.rcode).toBe("SERVFAIL");
    expect(bogus.ede.length).toBeGreaterThan(0);
    const cd = await createDohClient({ resolverUrls: [url] }).query("bogus.test", "A", { dnssecOk: true, checkingDisabled: true });
    expect(cd.rcode).toBe("NOERROR");
    expect(canonicalRecordSet("A", cd.answers)).toEqual(["192.0.2.66"]);
  });

  it("retries a transport fault with backoff, then gives up with a typed error", async () => {
    let calls = 0;
    const sleeps: number[] = [];
    const client = createDohClient({
      resolverUrls: ["https://doh.invalid/dns-query"],
      retries: 2,
      backoffMs: 100,
      sleep: async (ms) => void sleeps.push(ms),
      fetch: (async () => {
        calls++;
        return new Response("busy", { status: 503 });
      }) as typeof fetch,
    });
    const err = await client.query("example.test", "A").catch((e) => e);
    expect(err).toBeInstanceOf(DnsLookupError);
    expect(err.code).toBe("http");
    expect(calls).toBe(3);
    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]).toBeGreaterThanOrEqual(50);
    expect(sleeps[1]).toBeGreaterThanOrEqual(100);
    // An HTML page is not retried on the same resolver.
    let htmlCalls = 0;
    const html = createDohClient({
      resolverUrls: ["https://doh.invalid/dns-query"],
      sleep: async () => {},
      fetch: (async () => {
        htmlCalls++;
        return new Response("<html>captive portal</html>", { headers: { "content-type": "text/html" } });
      }) as typeof fetch,
    });
    expect((await html.query("example.test", "A").catch((e) => e)).code).toBe("malformed");
    expect(htmlCalls).toBe(1);
  });

  it("a circuit breaker per resolver: after N consecutive transport faults the resolver is skipped, the next one answers", async () => {
    const asked: string[] = [];
    const client = createDohClient({
      resolverUrls: ["https://down.invalid/dns-query", "https://up.invalid/dns-query"],
      retries: 1,
      breakAfterFailures: 3,
      sleep: async () => {},
      fetch: (async (input: RequestInfo | URL) => {
        const host = new URL(String(input)).host;
        asked.push(host);
        if (host === "down.invalid") return new Response("busy", { status: 503 });
        return new Response(await wire("01_example_test_A.bin"), { headers: { "content-type": "application/dns-message" } });
      }) as typeof fetch,
    });
    for (let i = 0; i < 4; i++) expect((await client.query("example.test", "A", { dnssecOk: true })).rcode).toBe("NOERROR");
    // Question 1: two faults; question 2: one more opens the circuit (its retry is not sent); then down is never asked.
    expect(asked.filter((h) => h === "down.invalid")).toHaveLength(3);
    expect(asked.filter((h) => h === "up.invalid")).toHaveLength(4);
    // With every circuit open, nothing is asked: the error says so (not a fact about the name).
    const alone = createDohClient({ resolverUrls: ["https://down.invalid/dns-query"], retries: 0, breakAfterFailures: 1, fetch: (async () => new Response("", { status: 502 })) as typeof fetch });
    expect((await alone.query("example.test", "A").catch((e) => e)).code).toBe("http");
    const skipped = await alone.query("example.test", "AAAA").catch((e) => e);
    expect([skipped.code, isNotAsked(skipped)]).toEqual(["circuit-open", true]);
  });

  it("a deadline: no attempt starts after it, and one running is cut short at it", async () => {
    let calls = 0;
    const counting = (async () => {
      calls++;
      return new Response("", { status: 500 });
    }) as typeof fetch;
    const late = createDohClient({ resolverUrls: ["https://a.invalid/dns-query"], deadline: Date.now() - 1, fetch: counting });
    const err = await late.query("example.test", "A").catch((e) => e);
    expect([err.code, isNotAsked(err), calls]).toEqual(["deadline", true, 0]);
    // A resolver that never answers, a 10 s timeout, a deadline 300 ms away.
    const hanging = (async (_: RequestInfo | URL, init?: RequestInit) =>
      new Promise<Response>((_, reject) => init?.signal?.addEventListener("abort", () => reject(new Error("aborted"))))) as typeof fetch;
    const started = Date.now();
    const cut = await createDohClient({ resolverUrls: ["https://a.invalid/dns-query"], timeoutMs: 10_000, deadline: Date.now() + 300, fetch: hanging }).query("example.test", "A").catch((e) => e);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(cut.code).toBe("deadline");
  });
});
