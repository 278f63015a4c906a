/**
 * The official RFC 7208 test suite (openspf.org release 2014.04, ../shared/data/dns/spf,
 * read through the fixture hub) run against spf.ts over an in-memory resolver loaded
 * with each scenario's zonedata, the way the suite's own driver (pyspf testspf.py) does:
 *  - `SPF:` records are served as TXT unless the name lists TXT records itself
 *    (`TXT: NONE` = no TXT record and no copy);
 *  - a bare `TIMEOUT` entry makes queries of types not listed before it time out,
 *    `TYPE: TIMEOUT` makes that type time out; an unknown name is NXDOMAIN, except
 *    names under `error.` which time out;
 *  - a CNAME is followed, as a recursive resolver does.
 * A case passes when our result is the expected one (or one of the allowed ones) and,
 * where the suite gives one, the explanation matches.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { parseAllDocuments } from "yaml";
import { analyzeSpf, checkHost, SpfDnsError, type SpfDns, type SpfLookupType } from "../../src/modules/dns-watcher/spf";

const base = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;

/**
 * Cases not run, with the reason. Every other case of the suite must pass.
 * (Empty: every case of the suite concerns record evaluation and passes.)
 */
const SKIPPED: Record<string, string> = {};

type ZoneEntry = string | Record<string, unknown>;

function zoneResolver(zonedata: Record<string, ZoneEntry[]>): SpfDns {
  const zone = new Map<string, ZoneEntry[]>();
  for (const [name, entries] of Object.entries(zonedata)) {
    const list = entries ?? [];
    const hasTxt = list.some((e) => typeof e === "object" && e !== null && "TXT" in e);
    const out: ZoneEntry[] = [];
    for (const e of list) {
      if (typeof e !== "object" || e === null) {
        out.push(e);
        continue;
      }
      const [t, v] = Object.entries(e)[0];
      if (t === "SPF") {
        if (!hasTxt && v !== "NONE") out.push({ TXT: v });
        continue;
      }
      if (v === "NONE") continue;
      out.push(e);
    }
    zone.set(name.toLowerCase().replace(/\.$/, ""), out);
  }
  const present = (type: string, v: unknown): string =>
    type === "TXT" ? (Array.isArray(v) ? v.map(String).join("") : String(v)) : type === "MX" ? `${(v as unknown[])[0]} ${(v as unknown[])[1]}` : String(v);

  const lookup = async (name: string, type: SpfLookupType, hops = 0): Promise<string[]> => {
    const key = name.toLowerCase().replace(/\.$/, "");
    const entries = zone.get(key);
    if (!entries) {
      if (key.startsWith("error.")) throw new SpfDnsError("DNS timeout");
      return [];
    }
    const values: string[] = [];
    let seenType = false;
    let cname: string | null = null;
    for (const e of entries) {
      if (e === "TIMEOUT") {
        if (!seenType) throw new SpfDnsError("DNS timeout");
        break;
      }
      if (typeof e !== "object" || e === null) continue;
      const [t, v] = Object.entries(e)[0];
      if (t === type) seenType = true;
      if (v === "TIMEOUT") {
        if (t === type) throw new SpfDnsError("DNS timeout");
        continue;
      }
      if (t === type) values.push(present(t, v));
      if (t === "CNAME") cname = String(v);
    }
    if (values.length === 0 && cname !== null && hops < 8) return lookup(cname, type, hops + 1);
    return values;
  };
  return { lookup: (name, type) => lookup(name, type) };
}

interface SuiteCase {
  scenario: string;
  id: string;
  helo: string;
  host: string;
  mailfrom: string;
  result: string | string[];
  explanation?: string;
  zonedata: Record<string, ZoneEntry[]>;
}

async function loadSuite(): Promise<SuiteCase[]> {
  const res = await fetch(`${base}/data/dns/spf/rfc7208-tests.yml`);
  if (!res.ok) throw new Error(`the RFC 7208 suite is not readable through the fixture hub: HTTP ${res.status}`);
  const cases: SuiteCase[] = [];
  for (const doc of parseAllDocuments(new TextDecoder().decode(await res.arrayBuffer()))) {
    const d = doc.toJS() as { description: string; tests: Record<string, any>; zonedata: Record<string, ZoneEntry[]> };
    for (const [id, t] of Object.entries(d.tests)) {
      cases.push({ scenario: d.description, id, helo: String(t.helo), host: String(t.host), mailfrom: String(t.mailfrom ?? ""), result: t.result, explanation: t.explanation, zonedata: d.zonedata ?? {} });
    }
  }
  return cases;
}

describe("RFC 7208 test suite (openspf 2014.04)", () => {
  it("passes every case", async () => {
    const cases = await loadSuite();
    expect(cases.length).toBeGreaterThan(150);
    const failures: string[] = [];
    let ran = 0;
    for (const c of cases) {
      if (SKIPPED[c.id]) continue;
      ran++;
      const r = await checkHost({
        ip: c.host,
        sender: c.mailfrom,
        helo: c.helo,
        dns: zoneResolver(c.zonedata),
        defaultExplanation: "DEFAULT",
        receiver: "unknown",
        now: () => 0,
      });
      const allowed = Array.isArray(c.result) ? c.result : [c.result];
      const okResult = allowed.includes(r.result);
      const okExp = c.explanation === undefined || c.explanation === r.explanation;
      if (!okResult || !okExp) {
        failures.push(`${c.scenario} / ${c.id}: expected ${allowed.join("|")}${c.explanation !== undefined ? ` (exp '${c.explanation}')` : ""}, got ${r.result}${r.explanation !== undefined ? ` (exp '${r.explanation}')` : ""}${r.reason ? ` — ${r.reason}` : ""}`);
      }
    }
    expect(failures, failures.join("\n")).toEqual([]);
    expect(ran).toBe(cases.length - Object.keys(SKIPPED).length);
  });
});

/**
 * The watcher's policy analysis (analyzeSpf) is check_host() for a sender no address term
 * names. Over the suite's zones it must therefore agree with check_host() for an address
 * that appears nowhere in them: the same permerror (the 10-lookup, 2-void and MX limits,
 * syntax, loops), the same temperror, and "allows all" exactly when that sender passes.
 */
describe("the policy analysis on the suite's zones", () => {
  const PROBE = "203.0.113.77"; // in no zone of the suite
  const PROBE6 = "2001:db8:ffff::77";

  it("agrees with check_host() for a sender the policy does not name", async () => {
    const cases = await loadSuite();
    const seen = new Set<string>();
    const mismatches: string[] = [];
    let compared = 0;
    for (const c of cases) {
      const domain = (c.mailfrom.includes("@") ? c.mailfrom.slice(c.mailfrom.lastIndexOf("@") + 1) : c.mailfrom || c.helo).toLowerCase();
      if (seen.has(`${c.scenario}|${domain}`)) continue;
      seen.add(`${c.scenario}|${domain}`);
      // Names whose records use sender macros or ptr depend on who sends: the analysis does not follow them.
      if (JSON.stringify(c.zonedata).match(/%\{[^do]|ptr/i)) continue;
      const probe = await checkHost({ ip: PROBE, sender: `postmaster@${domain}`, helo: domain, dns: zoneResolver(c.zonedata), now: () => 0 });
      // An ip6:::/0 term lets every IPv6 sender in: the analysis calls that "allows all", an IPv4 sender cannot see it.
      const probe6 = await checkHost({ ip: PROBE6, sender: `postmaster@${domain}`, helo: domain, dns: zoneResolver(c.zonedata), now: () => 0 });
      if (probe.result === "none") continue; // no record, or not a domain: nothing to analyse
      let txt: string[];
      try {
        txt = await zoneResolver(c.zonedata).lookup(domain, "TXT");
      } catch {
        continue; // the domain's own TXT times out: the watcher records a lookup error, no analysis
      }
      const a = await analyzeSpf(domain, txt, zoneResolver(c.zonedata));
      compared++;
      const expected = probe.result === "permerror" || probe.result === "temperror" ? probe.result : "ok";
      // (a//0 and mx//0 admit every IPv6 sender only if the name has an AAAA record: the analysis follows the IPv4 lookups.)
      const openToIpv6 = expected === "ok" && probe6.result === "pass" && !txt.some((t) => t.includes("//0"));
      if (a.status !== expected || a.allows_all !== (probe.result === "pass" || openToIpv6)) {
        mismatches.push(`${c.scenario} / ${domain}: check_host ${probe.result}${probe.reason ? ` (${probe.reason})` : ""}; analysis ${a.status}, allows_all ${a.allows_all} ${a.errors.join("; ")}`);
      }
    }
    expect(mismatches, mismatches.join("\n")).toEqual([]);
    expect(compared).toBeGreaterThan(80);
  });

  it("counts the limit cases of the suite like check_host()", async () => {
    const limits = (await loadSuite()).filter((c) => c.scenario === "Processing limits");
    const zone = limits[0].zonedata;
    const analyse = async (domain: string) => analyzeSpf(domain, await zoneResolver(zone).lookup(domain, "TXT"), zoneResolver(zone));
    // redirect-loop, include-loop: a loop is permerror.
    expect(await analyse("e1.example.com")).toMatchObject({ status: "permerror", allows_all: false });
    expect(await analyse("e2.example.com")).toMatchObject({ status: "permerror", allows_all: false });
    // mech-over-limit, include-over-limit: the 11th DNS-querying term; at the limit it is fine.
    expect((await analyse("e7.example.com")).status).toBe("permerror"); // its MX lookups are void: the void limit comes first, as in check_host()
    expect(await analyse("e9.example.com")).toMatchObject({ status: "permerror", lookup_count: 11 });
    expect(await analyse("e6.example.com")).toMatchObject({ status: "ok", lookup_count: 10 });
    // include-at-limit: the suite's sender matches ip4: before the 11th term; any other sender meets it.
    expect(await analyse("e8.example.com")).toMatchObject({ status: "permerror", lookup_count: 11 });
    // mx-limit: more than 10 MX names; void-over-limit: a third void lookup; at two it is fine.
    expect((await analyse("e4.example.com")).status).toBe("permerror");
    expect(await analyse("e11.example.com")).toMatchObject({ status: "permerror", void_lookups: 3 });
    expect(await analyse("e12.example.com")).toMatchObject({ status: "ok", void_lookups: 2 });
  });
});
