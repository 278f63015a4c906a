// Parity of the CT hot path with the detector: every name detectLookalike flags for a
// protected domain, TyposquatIndex.match (what the CT path calls) finds for that
// domain's filter, with the same verdict. Lookalikes are drawn at random under the
// detector's policy (edits up to its distance bound, confusables from the Unicode data,
// hyphens, dots, affixes, other suffixes, subdomains, wildcards, case, A-labels), for
// random protected domains (short and long labels, two-level and private suffixes, IDNs)
// that share one index, so their buckets interfere as in production.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { candidateName, detectLookalike, namesBrandKeyword, corroborate, prepareProtected, protectedDomainOf, type LookalikeMatch } from "../../src/modules/ct-log/typosquat/detect";
import { typosquatEligibility } from "../../src/modules/ct-log/typosquat/eligibility";
import { TyposquatIndex } from "../../src/modules/ct-log/typosquat/index";
import { labelToAscii, labelToUnicode } from "../../src/modules/ct-log/typosquat/punycode";
import { skeleton } from "../../src/modules/ct-log/typosquat/skeleton";
import { CLOSURE, CONFUSABLES } from "../../src/modules/ct-log/typosquat/unicode-tables.generated";

const ASCII = "abcdefghijklmnopqrstuvwxyz0123456789";

/** For each ASCII letter or digit, the code points whose skeleton is that letter (from the bundled data). */
const CONFUSABLE_OF = (() => {
  const out = new Map<string, string[]>();
  for (const table of [CONFUSABLES, CLOSURE]) {
    for (const item of table.split(";")) {
      const ch = String.fromCodePoint(parseInt(item.split(":")[0], 16));
      const sk = skeleton(ch);
      if (sk.length === 1 && ASCII.includes(sk) && ch.toLowerCase() === ch) out.set(sk, [...(out.get(sk) ?? []), ch]);
    }
  }
  return out;
})();

const SUFFIXES = ["com", "de", "net", "gov", "co.uk", "com.na", "s3.amazonaws.com", "github.io"];
const IDN_LABELS = ["xn--80ak6aa92e", "xn--bcher-kva", "xn--mller-kva", "xn--l1a5a3a"];
const WORDS = ["login", "secure", "my", "shop", "pay", "x", "24", "abc", "support", "electro"];

const protectedLabel = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9]{1,5}$/) },
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,12}[a-z0-9])?$/) },
  { weight: 1, arbitrary: fc.constantFrom(...IDN_LABELS) },
);
const protectedDomain = fc.tuple(protectedLabel, fc.constantFrom(...SUFFIXES)).map(([l, s]) => `${l}.${s}`);

type Op =
  | { k: "sub" | "ins"; at: number; ch: string }
  | { k: "del" | "swap" | "dup" | "confusable" | "hyphen" | "dot" | "upper"; at: number; pick: number };

const someChar = fc.oneof(fc.constantFrom(...ASCII.split("")), fc.constantFrom("-", "а", "е", "о", "р", "с", "і", "ь", "м", "т", "ӏ", "ɑ", "ə", "0", "1"));
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ k: fc.constantFrom("sub" as const, "ins" as const), at: fc.nat(40), ch: someChar }),
  fc.record({ k: fc.constantFrom("del" as const, "swap" as const, "dup" as const, "confusable" as const, "hyphen" as const, "dot" as const, "upper" as const), at: fc.nat(40), pick: fc.nat(1000) }),
);

function apply(label: string, ops: readonly Op[]): string {
  const cs = [...label];
  for (const o of ops) {
    const i = cs.length ? o.at % cs.length : 0;
    switch (o.k) {
      case "sub":
        if (cs.length) cs[i] = o.ch;
        break;
      case "ins":
        cs.splice(o.at % (cs.length + 1), 0, o.ch);
        break;
      case "del":
        if (cs.length > 1) cs.splice(i, 1);
        break;
      case "swap":
        if (i + 1 < cs.length) [cs[i], cs[i + 1]] = [cs[i + 1], cs[i]];
        break;
      case "dup":
        if (cs.length) cs.splice(i, 0, cs[i]);
        break;
      case "confusable": {
        const options = cs.length ? CONFUSABLE_OF.get(cs[i]) : undefined;
        if (options) cs[i] = options[o.pick % options.length];
        break;
      }
      case "hyphen":
        if (i > 0) cs.splice(i, 0, "-");
        break;
      case "dot":
        if (i > 0 && cs[i - 1] !== "." && cs[i] !== ".") cs.splice(i, 0, ".");
        break;
      case "upper":
        if (cs.length) cs[i] = cs[i].toUpperCase();
        break;
    }
  }
  return cs.join("");
}

/** The name in certificate form: each label as its A-label (a label that cannot be encoded stays as is). */
function asCertificateName(name: string): string {
  return name
    .split(".")
    .map((l) => {
      try {
        return labelToAscii(l.toLowerCase());
      } catch {
        return l;
      }
    })
    .join(".");
}

const lookalike = (domains: fc.Arbitrary<string[]>) =>
  domains.chain((ds) =>
    fc
      .record({
        base: fc.nat(ds.length - 1),
        ops: fc.array(op, { maxLength: 3 }),
        affix: fc.option(fc.tuple(fc.constantFrom(...WORDS), fc.boolean(), fc.boolean()), { freq: 3 }),
        suffix: fc.option(fc.constantFrom(...SUFFIXES), { freq: 2 }),
        sub: fc.constantFrom("", "", "", "www.", "*.", "login.", "a.b.", "PROTECTED."),
        dot: fc.constantFrom("", "", "", "."),
        encode: fc.boolean(),
      })
      .map((r) => {
        const p = protectedDomainOf(ds[r.base]);
        let label = p ? labelToUnicode(p.label) : "x";
        label = apply(label, r.ops);
        if (r.affix) {
          const [word, before, hyphen] = r.affix;
          label = before ? `${word}${hyphen ? "-" : ""}${label}` : `${label}${hyphen ? "-" : ""}${word}`;
        }
        const suffix = r.suffix ?? p?.suffix ?? "com";
        const sub = r.sub === "PROTECTED." ? `${ds[r.base]}.` : r.sub;
        const name = `${sub}${label}.${suffix}${r.dot}`;
        return { domains: ds, name: r.encode ? asCertificateName(name) : name };
      }),
  );

/** What the CT path must report for one protected domain: the detector's verdict, corroborated as match() does. */
function expected(domain: string, names: string[], name: string): LookalikeMatch | null {
  const p = prepareProtected(protectedDomainOf(domain)!);
  const m = detectLookalike(p, name);
  if (m && m.confidence === "low" && namesBrandKeyword(p, names, candidateName(name)!.label)) return corroborate(m, p.length, ["brand_keyword"]);
  return m;
}

function checkParity(domains: string[], name: string): void {
  const eligible = [...new Set(domains)].filter((d) => typosquatEligibility(d).eligible && protectedDomainOf(d));
  const index = TyposquatIndex.from(eligible.map((pattern, i) => ({ filterId: i + 1, organizationId: 1, pattern })));
  const hits = index.match([name]);
  eligible.forEach((d, i) => {
    const want = expected(d, [name], name);
    const got = hits.filter((h) => h.filterId === i + 1).map((h) => h.match);
    expect(got, `${name} for ${d}`).toEqual(want ? [want] : []);
  });
}

describe("CT path parity with the detector", () => {
  const domains = fc.array(protectedDomain, { minLength: 1, maxLength: 4 });

  it("every lookalike the detector flags under its policy is found by TyposquatIndex.match, with the same verdict", () => {
    let flagged = 0;
    fc.assert(
      fc.property(lookalike(domains), ({ domains: ds, name }) => {
        checkParity(ds, name);
        if (ds.some((d) => protectedDomainOf(d) && detectLookalike(protectedDomainOf(d)!, name))) flagged++;
      }),
      { numRuns: 4000 },
    );
    // The generator mostly draws lookalikes (otherwise the property would say little).
    expect(flagged).toBeGreaterThan(1200);
  });

  it("holds on arbitrary names too (no lookalike the index misses, no crash on garbage)", () => {
    const garbage = fc.stringMatching(/^[a-z0-9.*_ -]{0,30}$/).map((s) => (s.length % 3 === 0 ? s : s + ".com"));
    fc.assert(fc.property(domains, garbage, (ds, name) => checkParity(ds, name)), { numRuns: 1500 });
  });

  it("long labels at distance 2 with one edit near each end (what the old ends-only prefilter missed)", () => {
    for (const name of ["bamkofamer1ca.com", "banikofameriea.com", "xankofamericx.com", "ankofameric.com", "bnakofamerciа.com"]) {
      expect(detectLookalike(protectedDomainOf("bankofamerica.com")!, name), name).not.toBeNull();
      checkParity(["bankofamerica.com", "paypal.com", "nic.de"], name);
    }
  });
});
