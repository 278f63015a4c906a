/** DMARC parsing and regression classification; SPF policy analysis (effective all, lookups, allows all). */
import { describe, expect, it } from "vitest";
import { dmarcRegressions, dmarcVerdict, effectivePolicies, parseDmarc } from "../../src/modules/dns-watcher/dmarc";
import { analyzeSpf, SpfDnsError, type SpfDns } from "../../src/modules/dns-watcher/spf";

const kinds = (prev: string, cur: string | null) => dmarcRegressions(parseDmarc([prev]), parseDmarc(cur === null ? [] : [cur])).map((r) => `${r.kind}:${r.tag}`);

describe("DMARC (RFC 7489, RFC 9989)", () => {
  it("parses every tag with defaults and effective policies", () => {
    const d = parseDmarc(["v=spf1 -all", "v=DMARC1; p=reject; sp=quarantine; np=none; pct=50; t=y; adkim=s; aspf=s; rua=mailto:a@x.test,mailto:b@x.test!10m; ruf=mailto:f@x.test; psd=n; fo=1"]);
    expect(d).toMatchObject({ valid: true, p: "reject", sp: "quarantine", np: "none", pct: 50, t: true, adkim: "s", aspf: "s", rua: ["mailto:a@x.test", "mailto:b@x.test"], ruf: ["mailto:f@x.test"], psd: "n", fo: "1", errors: [] });
    const minimal = parseDmarc(["v=DMARC1; p=quarantine"]);
    expect(minimal).toMatchObject({ pct: 100, t: false, adkim: "r", aspf: "r", psd: "u", sp: "", np: "" });
    expect(effectivePolicies(minimal)).toEqual({ p: "quarantine", sp: "quarantine", np: "quarantine" });
    expect(parseDmarc(["v=DMARC1; rua=mailto:a@x.test"]).p).toBe("none"); // §6.6.3: rua without p
    expect(parseDmarc(["v=DMARC1; p=bogus"]).valid).toBe(false);
    expect(parseDmarc(["v=DMARC1; p=none", "v=DMARC1; p=reject"]).valid).toBe(false);
    expect(parseDmarc([]).record).toBe("");
  });

  it("classifies each kind of regression, and only regressions", () => {
    expect(kinds("v=DMARC1; p=reject", null)).toEqual(["removed:record"]);
    expect(kinds("v=DMARC1; p=reject", "v=DMARC1; p=quarantine")).toEqual(["policy_lowered:p", "policy_lowered:sp", "policy_lowered:np"]);
    expect(kinds("v=DMARC1; p=reject; sp=reject", "v=DMARC1; p=reject; sp=none")).toEqual(["policy_lowered:sp", "policy_lowered:np"]);
    expect(kinds("v=DMARC1; p=reject; np=reject", "v=DMARC1; p=reject; np=quarantine")).toEqual(["policy_lowered:np"]);
    expect(kinds("v=DMARC1; p=reject", "v=DMARC1; p=reject; pct=20")).toEqual(["pct_lowered:pct"]);
    expect(kinds("v=DMARC1; p=reject", "v=DMARC1; p=reject; t=y")).toEqual(["testing_enabled:t"]);
    expect(kinds("v=DMARC1; p=reject; adkim=s; aspf=s", "v=DMARC1; p=reject")).toEqual(["alignment_relaxed:adkim", "alignment_relaxed:aspf"]);
    expect(kinds("v=DMARC1; p=reject; rua=mailto:a@x.test,mailto:b@x.test", "v=DMARC1; p=reject; rua=mailto:A@x.test")).toEqual(["reporting_removed:rua"]);
    // Improvements and reordering are not regressions.
    expect(kinds("v=DMARC1; p=none", "v=DMARC1; p=reject; pct=100")).toEqual([]);
    expect(kinds("v=DMARC1; p=reject; rua=mailto:a@x.test", "v=DMARC1; rua=mailto:a@x.test; p=reject")).toEqual([]);
    expect(dmarcRegressions(parseDmarc([]), parseDmarc(["v=DMARC1; p=none"]))).toEqual([]);
    const words = dmarcVerdict(dmarcRegressions(parseDmarc(["v=DMARC1; p=reject; rua=mailto:a@x.test"]), parseDmarc(["v=DMARC1; p=none"])));
    expect(words).toBe("DMARC weakened: policy lowered from reject to none; subdomain policy lowered from reject to none; non-existent subdomain policy lowered from reject to none; aggregate report address removed: mailto:a@x.test");
    expect(dmarcVerdict(dmarcRegressions(parseDmarc(["v=DMARC1; p=reject"]), parseDmarc([])))).toBe("DMARC removed: the DMARC record was removed");
  });
});

function zone(records: Record<string, string[]>, failing: string[] = []): SpfDns & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async lookup(name, type) {
      asked.push(`${name} ${type}`);
      if (failing.includes(name)) throw new SpfDnsError("timeout");
      return records[`${name} ${type}`] ?? [];
    },
  };
}

describe("SPF analysis", () => {
  it("parses mechanisms, counts lookups over the include tree, finds the effective all", async () => {
    const dns = zone({ "_spf.example.test TXT": ["v=spf1 ip4:198.51.100.0/24 ~all"], "example.test MX": ["10 mx1.example.test"] });
    const a = await analyzeSpf("example.test", ["v=spf1 ip4:192.0.2.0/24 include:_spf.example.test mx -all", "other text"], dns);
    expect(a).toMatchObject({
      status: "ok",
      record: "v=spf1 ip4:192.0.2.0/24 include:_spf.example.test mx -all",
      mechanisms: ["ip4:192.0.2.0/24", "include:_spf.example.test", "mx", "-all"],
      includes: ["_spf.example.test"],
      lookup_count: 2,
      all: "-all",
      allows_all: false,
    });
  });

  it("allows all: +all directly, through an include, through redirect=, or ip4:0.0.0.0/0", async () => {
    const dns = zone({ "open.example TXT": ["v=spf1 +all"], "strict.example TXT": ["v=spf1 -all"] });
    expect(await analyzeSpf("d.test", ["v=spf1 +all"], dns)).toMatchObject({ all: "+all", allows_all: true, allows_all_via: "+all" });
    expect(await analyzeSpf("d.test", ["v=spf1 all"], dns)).toMatchObject({ all: "+all", allows_all: true });
    expect(await analyzeSpf("d.test", ["v=spf1 include:open.example -all"], dns)).toMatchObject({ all: "-all", allows_all: true, allows_all_via: "include:open.example" });
    expect(await analyzeSpf("d.test", ["v=spf1 -include:open.example ~all"], dns)).toMatchObject({ allows_all: false });
    expect(await analyzeSpf("d.test", ["v=spf1 include:strict.example ~all"], dns)).toMatchObject({ all: "~all", allows_all: false });
    expect(await analyzeSpf("d.test", ["v=spf1 redirect=open.example"], dns)).toMatchObject({ all: "+all", allows_all: true, allows_all_via: "redirect=open.example" });
    expect(await analyzeSpf("d.test", ["v=spf1 ip4:0.0.0.0/0 -all"], dns)).toMatchObject({ allows_all: true, allows_all_via: "ip4:0.0.0.0/0" });
    // Terms after "all" are never reached.
    expect(await analyzeSpf("d.test", ["v=spf1 -all include:open.example"], dns)).toMatchObject({ all: "-all", allows_all: false });
  });

  it("reports exactly-one violations, syntax errors, the lookup and void limits, loops and DNS failures", async () => {
    expect((await analyzeSpf("d.test", ["v=spf1 -all", "v=spf1 +all"], zone({}))).status).toBe("permerror");
    expect(await analyzeSpf("d.test", ["v=spf1 foo:bar -all"], zone({}))).toMatchObject({ status: "permerror", errors: [expect.stringMatching(/unknown mechanism/)] });
    expect((await analyzeSpf("d.test", ["nothing here"], zone({}))).status).toBe("none");
    const many = Array.from({ length: 11 }, (_, i) => `a:h${i}.example`).join(" ");
    const hosts = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`h${i}.example A`, ["192.0.2.1"]]));
    expect(await analyzeSpf("d.test", [`v=spf1 ${many} -all`], zone(hosts))).toMatchObject({ status: "permerror", lookup_count: 11 });
    expect(await analyzeSpf("d.test", ["v=spf1 a:x1.example a:x2.example a:x3.example -all"], zone({}))).toMatchObject({ status: "permerror", void_lookups: 3 });
    const loop = zone({ "a.example TXT": ["v=spf1 include:b.example -all"], "b.example TXT": ["v=spf1 include:a.example -all"] });
    expect((await analyzeSpf("d.test", ["v=spf1 include:a.example -all"], loop)).errors.join()).toMatch(/loop/);
    expect((await analyzeSpf("d.test", ["v=spf1 include:down.example -all"], zone({}, ["down.example"]))).status).toBe("temperror");
  });
});
