import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { FilterIndex, InvalidFilterPatternError, type FilterRow } from "../../../src/modules/ct-log/filters/label-index";
import { parseFilterPattern, type MatchType } from "../../../src/modules/ct-log/filters/pattern";
import { filterMatchesName } from "../../../src/modules/ct-log/filters/semantics";
import { classifyCertificateName } from "../../../src/modules/ct-log/cert/names";
import { ctJson } from "../cert/fixture";

let nextId = 1;
const row = (pattern: string, matchType: MatchType, organizationId = 1): FilterRow => ({ filterId: nextId++, organizationId, pattern, matchType });
const matches = (index: FilterIndex, names: string[]) => index.match(names).map((m) => m.filter.filterId).sort((a, b) => a - b);

describe("CT filter semantics (wide / exact)", () => {
  const cases: [string, MatchType, string, boolean][] = [
    ["example.com", "wide", "example.com", true],
    ["example.com", "wide", "www.example.com", true],
    ["example.com", "wide", "a.b.example.com", true],
    ["example.com", "wide", "notexample.com", false],
    ["example.com", "wide", "example.com.evil.net", false],
    ["example.com", "wide", "example.co", false],
    ["example.com", "exact", "example.com", true],
    ["example.com", "exact", "www.example.com", false],
    ["sub.example.com", "exact", "*.example.com", true],
    ["example.com", "exact", "*.example.com", false],
    ["example.com", "wide", "*.example.com", true],
    ["sub.example.com", "wide", "*.example.com", true],
    ["a.sub.example.com", "exact", "*.example.com", false],
    ["a.sub.example.com", "wide", "*.example.com", false],
    ["example.com", "wide", "*.a.b.example.com", true],
    ["Example.COM.", "exact", "EXAMPLE.com.", true],
    ["bücher.example", "exact", "xn--bcher-kva.example", true],
    ["BÜCHER.example", "wide", "www.xn--bcher-kva.example", true],
    ["*.example.com", "exact", "www.example.com", true],
    ["*.example.com", "exact", "a.www.example.com", false],
    ["*.example.com", "exact", "example.com", false],
    ["*.example.com", "exact", "*.example.com", true],
    ["*.example.com", "wide", "a.www.example.com", true],
    ["*.example.com", "wide", "example.com", false],
    [".example.com", "exact", "a.b.example.com", true],
    [".example.com", "wide", "example.com", false],
  ];
  for (const [pattern, type, name, want] of cases) {
    it(`${type} ${pattern} ${want ? "matches" : "does not match"} ${JSON.stringify(name)}`, () => {
      const index = FilterIndex.from([row(pattern, type)]);
      expect(index.match([name]).length).toBe(want ? 1 : 0);
      const p = parseFilterPattern(pattern);
      if (!p.ok) throw new Error(p.error);
      expect(filterMatchesName(p.value, type, classifyCertificateName(name).name!)).toBe(want);
    });
  }

  it("rejects invalid patterns with a reason", () => {
    expect(parseFilterPattern("https://example.com/").ok).toBe(false);
    expect(parseFilterPattern("ex*ample.com").ok).toBe(false);
    expect(parseFilterPattern("a..b").ok).toBe(false);
    expect(parseFilterPattern("").ok).toBe(false);
    expect(() => FilterIndex.from([row("exa mple.com", "wide")])).toThrow(InvalidFilterPatternError);
    expect(parseFilterPattern("WWW.Bücher.Example.").ok && (parseFilterPattern("WWW.Bücher.Example.") as any).value.pattern).toBe("www.xn--bcher-kva.example");
  });
});

describe("FilterIndex", () => {
  it("returns every organization's matching filters with the names that matched", () => {
    const a = row("example.com", "wide", 1);
    const b = row("example.com", "wide", 2);
    const c = row("www.example.com", "exact", 2);
    const d = row("other.org", "wide", 3);
    const index = FilterIndex.from([a, b, c, d]);
    const result = index.match(["www.example.com", "api.example.com", "unrelated.net", "bad\0name.example.com"]);
    const byId = new Map(result.map((m) => [m.filter.filterId, m.names]));
    expect([...byId.keys()].sort((x, y) => x - y)).toEqual([a.filterId, b.filterId, c.filterId]);
    expect(byId.get(a.filterId)).toEqual(["www.example.com", "api.example.com"]);
    expect(byId.get(c.filterId)).toEqual(["www.example.com"]);
  });

  it("remove (soft delete) stops matching at once; add replaces; nodes are pruned", () => {
    const f = row("shop.example.com", "exact");
    const g = row("example.com", "wide");
    const index = FilterIndex.from([f, g]);
    expect(matches(index, ["shop.example.com"])).toEqual([f.filterId, g.filterId]);
    expect(index.remove(f.filterId)).toBe(true);
    expect(matches(index, ["shop.example.com"])).toEqual([g.filterId]);
    expect(index.remove(f.filterId)).toBe(false);
    index.add({ ...g, pattern: "example.org" });
    expect(matches(index, ["shop.example.com"])).toEqual([]);
    expect(matches(index, ["a.example.org"])).toEqual([g.filterId]);
    expect(index.size).toBe(1);
    index.remove(g.filterId);
    expect(index.size).toBe(0);
    expect((index as any).root.children).toBeUndefined();
  });

  it("agrees with the plain semantics on random filters and names (property)", () => {
    const label = fc.constantFrom("com", "example", "a", "b", "www", "xn--bcher-kva", "co", "uk", "exa", "mple");
    const domain = fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => l.join("."));
    const pattern = fc.tuple(fc.constantFrom("", "", "*.", "."), domain).map(([p, d]) => p + d);
    const certName = fc.tuple(fc.constantFrom("", "", "*."), domain).map(([p, d]) => p + d);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(pattern, fc.constantFrom<MatchType>("wide", "exact")), { maxLength: 25 }),
        fc.array(certName, { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(30), { maxLength: 5 }),
        (filters, names, removals) => {
          const rows = filters.map(([p, t], i) => ({ filterId: i, organizationId: i % 3, pattern: p, matchType: t }));
          const index = FilterIndex.from(rows);
          for (const r of removals) index.remove(r);
          const live = rows.filter((r) => !removals.includes(r.filterId));
          const expected = live
            .filter((r) => {
              const p = parseFilterPattern(r.pattern);
              return p.ok && names.some((n) => filterMatchesName(p.value, r.matchType, classifyCertificateName(n).name!));
            })
            .map((r) => r.filterId)
            .sort((a, b) => a - b);
          expect(matches(index, names)).toEqual(expected);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("matches the real navigli names (wide on a registrable domain, exact on a SAN)", async () => {
    const entries = (await ctJson("static-ct/navigli2025h2/expected.json")).entries as { dns: string[] }[];
    const wide = row("drive-platform.io", "wide");
    const exact = row("379y4cn892427n987l.mexi.my", "exact");
    const lookalike = row("platform.io", "wide");
    const index = FilterIndex.from([wide, exact, lookalike]);
    const hits = entries.map((e) => matches(index, e.dns));
    expect(hits[0]).toEqual([wide.filterId]);
    expect(hits[1]).toEqual([exact.filterId]);
    const wantWide = entries.filter((e) => e.dns.some((d) => d === "drive-platform.io" || d.endsWith(".drive-platform.io"))).length;
    expect(hits.filter((h) => h.includes(wide.filterId)).length).toBe(wantWide);
    expect(hits.some((h) => h.includes(lookalike.filterId))).toBe(entries.some((e) => e.dns.some((d) => d === "platform.io" || d.endsWith(".platform.io"))));
  });
});
