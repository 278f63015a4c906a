import { describe, expect, it } from "vitest";
import fc from "fast-check";
import ipaddr from "ipaddr.js";
import { env } from "cloudflare:workers";
import { normalizeEntries, normalizeListEntry, validateListName } from "../../src/modules/lists/normalize";
import { parseIpAddress, parseIpv4Fast } from "../../src/platform/net/ip";
import { domainLookupKey } from "../../src/platform/net/domain";

const ok = (value: string) => ({ ok: true, value });

describe("list names", () => {
  it("accepts lowercase letters, digits, underscore, hyphen, 1-64 chars", () => {
    for (const n of ["dmz", "vip_domains", "office-ips-2", "a", "x".repeat(64)]) expect(validateListName(n)).toBeNull();
  });
  it("rejects anything else", () => {
    for (const n of ["", "x".repeat(65), "VIP", "with space", "dots.no", "ümlaut", 42]) expect(validateListName(n)).toMatch(/list name/);
  });
});

describe("ip entries (entry rule 1)", () => {
  it.each([
    ["10.0.0.1", "10.0.0.1/32"],
    ["10.0.0.0/8", "10.0.0.0/8"],
    ["0.0.0.0/0", "0.0.0.0/0"],
    [" 192.0.2.7 ", "192.0.2.7/32"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1/128"],
    ["2001:db8::/32", "2001:db8::/32"],
    ["2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1/128"], // leftmost of equal runs (RFC 5952 4.2.3)
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1/128"], // a single zero group is not "::" (4.2.2)
    ["::", "::/128"],
    ["::ffff:192.0.2.1", "::ffff:192.0.2.1/128"], // RFC 5952 section 5 mixed notation
    ["::ffff:c000:201", "::ffff:192.0.2.1/128"],
    ["fe80::/10", "fe80::/10"],
  ])("%s -> %s", (raw, stored) => {
    expect(normalizeListEntry("ip", raw)).toEqual(ok(stored));
  });

  it("rejects host bits and names the network", () => {
    const r = normalizeListEntry("ip", "10.1.2.3/8");
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toContain("10.0.0.0/8");
    const r6 = normalizeListEntry("ip", "2001:db8::1/32");
    expect(!r6.ok && r6.message).toContain("2001:db8::/32");
  });

  it("rejects IPv4 with leading zeros and other garbage", () => {
    const lz = normalizeListEntry("ip", "010.0.0.1");
    expect(!lz.ok && lz.message).toMatch(/leading zeros/);
    for (const bad of ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.4/33", "1.2.3.4/08", "2001:db8::/129", "fe80::1%eth0", "::1.02.3.4", "1::2::3", "example.com", "0x7f.0.0.1", "10.0.0.0/", "1.2.3.4/-1"]) {
      expect(normalizeListEntry("ip", bad).ok, bad).toBe(false);
    }
  });

  it("stores IPv6 in RFC 5952 form for any address (property, against ipaddr.js)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (groups) => {
        const full = groups.map((g) => g.toString(16).padStart(4, "0").toUpperCase()).join(":");
        const r = normalizeListEntry("ip", full);
        if (!r.ok) return false;
        const addr = r.value.slice(0, -"/128".length);
        // Same address as the input, and idempotent: normalizing the stored value changes nothing.
        const same = ipaddr.IPv6.parse(addr).toNormalizedString() === ipaddr.IPv6.parse(full).toNormalizedString();
        const stable = normalizeListEntry("ip", r.value);
        const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
        // Outside the mapped range our formatter must agree with ipaddr.js' RFC 5952 output.
        const rfc = mapped || addr === ipaddr.IPv6.parse(full).toRFC5952String();
        return same && stable.ok && stable.value === r.value && rfc && addr === addr.toLowerCase();
      }),
      { numRuns: 2000 },
    );
  });

  it("the fast IPv4 parser agrees with the strict one (property)", () => {
    const octet = fc.oneof(fc.integer({ min: 0, max: 300 }).map(String), fc.constantFrom("00", "01", "007", "", "a", "-1"));
    fc.assert(
      fc.property(fc.array(octet, { minLength: 3, maxLength: 5 }), (parts) => {
        const s = parts.join(".");
        const strict = parseIpAddress(s);
        const fast = parseIpv4Fast(s);
        return strict && strict.family === 4 ? fast === Number(strict.address) : fast === -1;
      }),
      { numRuns: 3000 },
    );
  });
});

describe("domain entries (entry rule 2)", () => {
  it.each([
    ["Example.COM", "example.com"],
    ["www.example.com.", "www.example.com"],
    ["Bücher.example", "xn--bcher-kva.example"],
    ["xn--bcher-kva.example", "xn--bcher-kva.example"],
    ["faß.de", "xn--fa-hia.de"], // non-transitional: ß is kept, not mapped to "ss"
    ["ＥＸＡＭＰＬＥ．ｃｏｍ", "example.com"], // fullwidth forms map to ASCII
    ["例え.テスト", "xn--r8jz45g.xn--zckzah"],
  ])("%s -> %s", (raw, stored) => {
    expect(normalizeListEntry("domain", raw)).toEqual(ok(stored));
  });

  it("rejects wildcards, URLs, bad labels and lengths", () => {
    expect(normalizeListEntry("domain", "*.example.com")).toMatchObject({ ok: false, message: expect.stringMatching(/wildcard/) });
    expect(normalizeListEntry("domain", "https://example.com/login")).toMatchObject({ ok: false, message: expect.stringMatching(/URL/) });
    const bad = ["", "localhost", "-bad.example.com", "bad-.example.com", "a..b.com", "under_score.com", `${"a".repeat(64)}.com`, `${"abcdefghi.".repeat(26)}com`, "example.com:443", "1.2.3.4", "ab--cd.com", "xn--zz.com", "ex ample.com"];
    for (const b of bad) expect(normalizeListEntry("domain", b).ok, b).toBe(false);
    expect(normalizeListEntry("domain", `${"a".repeat(63)}.com`).ok).toBe(true);
  });

  it("agrees with the UTS #46 conformance vectors on valid names (IdnaTestV2, non-transitional)", async () => {
    const res = await fetch(`${(env as any).FIXTURE_URL}/data/ct/unicode/17.0.0/IdnaTestV2.txt`);
    expect(res.status).toBe(200);
    let checked = 0;
    for (const line of new TextDecoder().decode(await res.arrayBuffer()).split("\n")) {
      if (!line || line.startsWith("#")) continue;
      const cols = line.split(";").map((c) => c.replace(/#.*$/, "").trim());
      // Columns: source; toUnicode; toUnicodeStatus; toAsciiN; toAsciiNStatus; ... A blank
      // toUnicode means "same as source", a blank toAsciiN "same as toUnicode", a blank
      // toAsciiNStatus "same as toUnicodeStatus".
      const [source, toUnicode, toUnicodeStatus, toAsciiN, toAsciiNStatusRaw] = cols;
      const toAsciiNStatus = toAsciiNStatusRaw || toUnicodeStatus;
      const unescape = (s: string) => s.replace(/\\u([0-9A-F]{4})|\\x\{([0-9A-F]+)\}/gi, (_m, a, b) => String.fromCodePoint(parseInt(a ?? b, 16)));
      const src = unescape(source);
      // Only vectors that UTS #46 accepts (empty status) and that are plain DNS hostnames.
      if (toAsciiNStatus !== "" && toAsciiNStatus !== "[]") continue;
      const expected = unescape(toAsciiN || toUnicode || source);
      if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(expected) || /(^|\.)\d+$/.test(expected) || src.trim() !== src) continue;
      if (/[\/?#@:*]/.test(src) || /\.$/.test(expected)) continue;
      const r = normalizeListEntry("domain", src);
      if (r.ok) {
        expect(r.value, line).toBe(expected);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it("event lookup keys match the stored form", () => {
    expect(domainLookupKey("WWW.Example.com.")).toBe("www.example.com");
    expect(domainLookupKey("bücher.example")).toBe("xn--bcher-kva.example");
    expect(domainLookupKey("*.bücher.example")).toBeNull();
  });
});

describe("batches (entry rules 3-4)", () => {
  it("returns normalized values in order", () => {
    expect(normalizeEntries("ip", ["10.0.0.1", "2001:db8::/32"])).toEqual({ values: ["10.0.0.1/32", "2001:db8::/32"] });
    expect(normalizeEntries("domain", [])).toEqual({ values: [] });
  });

  it("reports duplicates after normalization and every invalid value", () => {
    const r = normalizeEntries("ip", ["10.0.0.1", "bad", "10.0.0.1/32", "10.1.2.3/8"]);
    expect(r.values).toBeUndefined();
    expect(r.errors).toEqual([
      { index: 1, value: "bad", message: expect.any(String), kind: "invalid" },
      { index: 2, value: "10.0.0.1/32", message: expect.stringContaining("10.0.0.1/32"), kind: "duplicate" },
      { index: 3, value: "10.1.2.3/8", message: expect.stringContaining("10.0.0.0/8"), kind: "invalid" },
    ]);
    const d = normalizeEntries("domain", ["Example.com", "example.com."]);
    expect(d.errors?.map((e) => [e.index, e.kind])).toEqual([[1, "duplicate"]]);
  });

  it("refuses non-string entries without throwing", () => {
    expect(normalizeEntries("domain", [null, 5]).errors?.map((e) => e.kind)).toEqual(["invalid", "invalid"]);
  });
});
