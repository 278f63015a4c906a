import { describe, expect, it } from "vitest";
import fc from "fast-check";
import ipaddr from "ipaddr.js";
import { compileListData } from "../../src/modules/alerting/cel/list-data";

describe("ip list lookups", () => {
  it("network containment for IPv4 and IPv6, including overlapping and adjacent ranges", () => {
    const l = compileListData([{ name: "n", list_type: "ip", values: ["10.0.0.0/8", "10.1.0.0/16", "11.0.0.0/8", "0.0.0.0/32", "255.255.255.255/32", "2001:db8::/32", "::1/128"] }]);
    const m = (v: string) => l.matches("n", v);
    expect([m("10.255.255.255"), m("11.0.0.0"), m("11.255.255.255"), m("12.0.0.0"), m("9.255.255.255")]).toEqual([true, true, true, false, false]);
    expect([m("0.0.0.0"), m("0.0.0.1"), m("255.255.255.255"), m("255.255.255.254")]).toEqual([true, false, true, false]);
    expect([m("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"), m("2001:db9::"), m("::1"), m("::2"), m("::ffff:10.2.3.4")]).toEqual([true, false, true, false, true]);
    expect([m(""), m("10.0.0"), m("10.0.0.1/8"), m("fe80::1%eth0")]).toEqual([false, false, false, false]);
    expect(l.matches("missing", "10.0.0.1")).toBe(false);
    expect(l.matches("n", 42 as unknown as string)).toBe(false);
  });

  it("IPv4 values match IPv4-mapped IPv6 entries and the reverse", () => {
    const l = compileListData([
      { name: "mapped", list_type: "ip", values: ["::ffff:192.0.2.0/120"] },
      { name: "v4", list_type: "ip", values: ["198.51.100.0/24"] },
    ]);
    expect(l.matches("mapped", "192.0.2.77")).toBe(true);
    expect(l.matches("mapped", "192.0.3.77")).toBe(false);
    expect(l.matches("v4", "::ffff:198.51.100.9")).toBe(true);
    expect(l.matches("v4", "::ffff:c633:6409")).toBe(true);
  });

  it("agrees with ipaddr.js range matching (property)", () => {
    const v4net = fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 })).map(([a, p]) => {
      const masked = p === 0 ? 0 : (a >>> (32 - p)) << (32 - p) >>> 0;
      return `${masked >>> 24}.${(masked >>> 16) & 255}.${(masked >>> 8) & 255}.${masked & 255}/${p}`;
    });
    const v4 = fc.integer({ min: 0, max: 0xffffffff }).map((a) => `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`);
    fc.assert(
      fc.property(fc.array(v4net, { minLength: 1, maxLength: 30 }), fc.array(v4, { minLength: 1, maxLength: 30 }), (nets, ips) => {
        const l = compileListData([{ name: "x", list_type: "ip", values: nets }]);
        const parsed = nets.map((n) => ipaddr.IPv4.parseCIDR(n));
        return ips.every((ip) => l.matches("x", ip) === parsed.some((c) => ipaddr.IPv4.parse(ip).match(c)));
      }),
      { numRuns: 300 },
    );
    const group = fc.integer({ min: 0, max: 0xffff }).map((g) => g.toString(16));
    const v6 = fc.array(group, { minLength: 8, maxLength: 8 }).map((g) => g.join(":"));
    fc.assert(
      fc.property(fc.array(fc.tuple(v6, fc.integer({ min: 1, max: 128 })), { minLength: 1, maxLength: 10 }), fc.array(v6, { maxLength: 20 }), (raw, ips) => {
        const nets = raw.map(([a, p]) => `${ipaddr.IPv6.networkAddressFromCIDR(`${a}/${p}`).toString()}/${p}`);
        const l = compileListData([{ name: "x", list_type: "ip", values: nets }]);
        const parsed = nets.map((n) => ipaddr.IPv6.parseCIDR(n));
        // Also probe addresses inside the networks, which random addresses rarely hit.
        const probes = [...ips, ...raw.map(([a]) => a)];
        return probes.every((ip) => l.matches("x", ip) === parsed.some((c) => ipaddr.IPv6.parse(ip).match(c)));
      }),
      { numRuns: 300 },
    );
  });
});

describe("domain list lookups", () => {
  it("exact, case-insensitive, trailing dot ignored, IDN as A-label", () => {
    const l = compileListData([{ name: "d", list_type: "domain", values: ["example.com", "xn--bcher-kva.example"] }]);
    const m = (v: string) => l.matches("d", v);
    expect([m("example.com"), m("EXAMPLE.COM."), m("www.example.com"), m("com"), m("Bücher.example"), m("XN--BCHER-KVA.EXAMPLE"), m("bucher.example")]).toEqual([true, true, false, false, true, true, false]);
    expect([m(""), m("*.example.com"), m("http://example.com"), m("exa mple.com")]).toEqual([false, false, false, false]);
  });
});
