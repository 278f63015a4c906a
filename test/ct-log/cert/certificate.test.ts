import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { certificateNames, parseCertificate, readCertificateNames } from "../../../src/modules/ct-log/cert/certificate";
import { certificateDedupKey, certificateFingerprint, tbsWithoutCtExtensions } from "../../../src/modules/ct-log/cert/dedup";
import { DerError } from "../../../src/modules/ct-log/cert/der";
import { classifyCertificateName } from "../../../src/modules/ct-log/cert/names";
import { parseDnString } from "../../../src/modules/ct-log/cert/dn";
import { ctBytes, ctJson, hex, navigliPrecerts, pemCertificates, rfc6962Certificates } from "./fixture";

const hexToBase64 = (h: string) => btoa(String.fromCharCode(...h.split(":").map((x) => parseInt(x, 16))));

async function cloudflareChain() {
  return pemCertificates(new TextDecoder().decode(await ctBytes("certs/cloudflare-com-chain-2025.pem")));
}

describe("parseCertificate on the real cloudflare.com leaf", () => {
  it("reads every CT event field as openssl shows them", async () => {
    const [leaf] = await cloudflareChain();
    const c = parseCertificate(leaf);
    expect(c.kind).toBe("certificate");
    expect(c.isPrecert).toBe(false);
    expect(c.version).toBe(3);
    expect(c.serial).toBe("40e5a0d8d73d5e1013d6da11cc0ae157");
    expect(c.issuer).toBe("CN=WE1,O=Google Trust Services,C=US");
    expect(c.subject).toBe("CN=26d54cff.sni.cloudflaressl.com");
    expect(c.subjectCn).toBe("26d54cff.sni.cloudflaressl.com");
    expect(c.notBefore).toBe("2025-09-10T18:11:56.000Z");
    expect(c.notAfter).toBe("2025-12-09T19:11:41.000Z");
    expect(c.signatureAlgorithm).toBe("ecdsa-with-SHA256");
    expect(c.keyAlgorithm).toBe("EC");
    expect(c.keySize).toBeNull();
    expect(c.curve).toBe("P-256");
    expect(c.dnsNames).toEqual(["26d54cff.sni.cloudflaressl.com", "cloudflare.com"]);
    expect(c.ipAddresses).toEqual([]);
    expect(c.aiaIssuing).toEqual(["http://i.pki.goog/we1.crt"]);
    expect(c.ocspServers).toEqual(["http://o.pki.goog/s/we1/QOU"]);
    expect(c.scts).toEqual([
      {
        version: 0,
        log_id: hexToBase64("DD:DC:CA:34:95:D7:E1:16:05:E7:95:32:FA:C7:9F:F8:3D:1C:50:DF:DB:00:3A:14:12:76:0A:2C:AC:BB:C8:2A"),
        timestamp: Date.UTC(2025, 8, 10, 19, 11, 57, 152),
        hash_algorithm: "sha256",
        signature_algorithm: "ecdsa",
      },
      {
        version: 0,
        log_id: hexToBase64("CC:FB:0F:6A:85:71:09:65:FE:95:9B:53:CE:E9:B2:7C:22:E9:85:5C:0D:97:8D:B6:A9:7E:54:C0:FE:4C:0D:B0"),
        timestamp: Date.UTC(2025, 8, 10, 19, 11, 57, 172),
        hash_algorithm: "sha256",
        signature_algorithm: "ecdsa",
      },
    ]);
  });

  it("reads the intermediates (RSA signature over an EC P-384 key)", async () => {
    const [, we1, r4] = await cloudflareChain();
    expect(parseCertificate(we1).issuer).toBe("CN=GTS Root R4,O=Google Trust Services LLC,C=US");
    const root = parseCertificate(r4);
    expect(root.issuer).toBe("CN=GlobalSign Root CA,OU=Root CA,O=GlobalSign nv-sa,C=BE");
    expect(root.signatureAlgorithm).toBe("sha256WithRSAEncryption");
    expect(root.curve).toBe("P-384");
  });

  it("gives RSA key sizes and RFC 4514 subjects of real 2013/2018 log entries (openssl's values)", async () => {
    const expected = await ctJson("rfc6962/expected.json");
    for (const file of ["get-entries.pilot-2013.4-x509.json", "get-entries.letsencrypt-2018.1-x509.json"]) {
      const certs = await rfc6962Certificates(file);
      for (const [i, { leaf, chain }] of certs.entries()) {
        const want = expected.files[file][i];
        const c = parseCertificate(leaf);
        // openssl prints "street="; RFC 4514 §3 names the attribute STREET (types are case-insensitive).
        expect(c.subject).toBe(want.subject.replace(",street=", ",STREET="));
        expect(c.dnsNames).toEqual(want.dns_sans);
        expect(await certificateFingerprint(leaf)).toBe(want.cert_sha256_hex);
        expect(c.keyAlgorithm).toBe("RSA");
        expect(c.keySize).toBeGreaterThanOrEqual(1024);
        expect(chain.map((d) => "subject=" + parseCertificate(d).subject)).toEqual(want.chain_subjects);
      }
    }
    const [danadjs] = await rfc6962Certificates("get-entries.letsencrypt-2018.1-x509.json");
    const c = parseCertificate(danadjs.leaf);
    expect(c.keySize).toBe(2048);
    expect(c.signatureAlgorithm).toBe("sha256WithRSAEncryption");
    expect(c.issuer).toBe("CN=Let's Encrypt Authority X3,O=Let's Encrypt,C=US");
  });
});

describe("precertificates and the dedup key", () => {
  it("strips the SCT list from the cloudflare leaf to the golden TBS byte for byte", async () => {
    const [leaf] = await cloudflareChain();
    const golden = await ctBytes("certs/cloudflare-com-tbs-without-sct.der");
    expect(hex(tbsWithoutCtExtensions(leaf))).toBe(hex(golden));
    expect(await certificateDedupKey(leaf)).toBe(await certificateDedupKey(golden));
    // The unstripped TBS differs: the key is not just a TBS hash.
    const c = parseCertificate(leaf);
    expect(hex(leaf.subarray(c.tbsStart, c.tbsEnd))).not.toBe(hex(golden));
  });

  it("all 1024 navigli precerts: names, CN, poison, and precert DER minus poison = the logged TBS", async () => {
    const entries = await navigliPrecerts();
    const expected = (await ctJson("static-ct/navigli2025h2/expected.json")).entries as any[];
    expect(entries).toHaveLength(1024);
    for (const e of entries) {
      const want = expected[e.index];
      expect(e.timestamp).toBe(want.timestamp_ms);
      expect(e.tbs.length).toBe(want.tbs_len);
      const fromTbs = parseCertificate(e.tbs, { precertTbs: true });
      const fromPre = parseCertificate(e.preCertificate);
      expect(fromTbs.kind).toBe("tbs");
      expect(fromTbs.isPrecert).toBe(true);
      expect(fromPre.isPrecert).toBe(true);
      expect(fromTbs.dnsNames).toEqual(want.dns);
      expect(fromTbs.subjectCn).toBe(want.subject_cn ?? "");
      expect(readCertificateNames(e.tbs)).toEqual({ subjectCn: fromTbs.subjectCn, dnsNames: fromTbs.dnsNames });
      // Byte ranges are offsets into each input (the precertificate wraps the TBS): compare what they cover.
      const offsetsOff = { signatureAlgorithm: "", tbsStart: 0, tbsEnd: 0, spkiStart: 0, spkiEnd: 0 };
      expect({ ...fromPre, kind: "tbs", ...offsetsOff }).toEqual({ ...fromTbs, ...offsetsOff });
      expect(hex(e.preCertificate.subarray(fromPre.spkiStart, fromPre.spkiEnd))).toBe(hex(e.tbs.subarray(fromTbs.spkiStart, fromTbs.spkiEnd)));
      expect(hex(tbsWithoutCtExtensions(e.preCertificate))).toBe(hex(e.tbs));
    }
    expect(await certificateDedupKey(entries[7].preCertificate)).toBe(await certificateDedupKey(entries[7].tbs));
  });
});

/** Replaces `from` by `to` (same length) inside a DER, keeping it well-formed. */
function patch(der: Uint8Array, from: string, to: Uint8Array | string): Uint8Array {
  const bytes = typeof to === "string" ? Uint8Array.from(to, (c) => c.charCodeAt(0)) : to;
  expect(bytes.length).toBe(from.length);
  const s = String.fromCharCode(...der);
  const at = s.lastIndexOf(from);
  expect(at).toBeGreaterThan(0);
  const out = der.slice();
  out.set(bytes, at);
  return out;
}

describe("hostile names are kept as reported and skipped for matching", () => {
  it("NUL, non-ASCII, an IP and a URL in dNSName", async () => {
    const [leaf] = await cloudflareChain();
    const nul = patch(leaf, "cloudflare.com", "cloudflare\0com");
    const nonAscii = patch(leaf, "cloudflare.com", Uint8Array.from([0x63, 0x6c, 0xc3, 0xb6, 0x75, 0x64, 0x66, 0x6c, 0x61, 0x72, 0x65, 0x2e, 0x63, 0x6f]));
    const ip = patch(leaf, "cloudflare.com", "192.168.100.14");
    const url = patch(leaf, "26d54cff.sni.cloudflaressl.com", "https://x.example/aaaaaaaaaaaa");
    const cases: [Uint8Array, string, RegExp][] = [
      [nul, "cloudflare\0com", /NUL/],
      [nonAscii, "cl\u00c3\u00b6udflare.co", /non-ASCII/],
      [ip, "192.168.100.14", /IP address/],
      [url, "https://x.example/aaaaaaaaaaaa", /URL/],
    ];
    for (const [der, reported, problem] of cases) {
      const c = parseCertificate(der);
      expect(c.dnsNames).toContain(reported);
      const names = certificateNames(c);
      expect(names.matchable).not.toContain(reported);
      expect(names.skipped).toEqual([{ name: reported, problem: expect.stringMatching(problem) }]);
    }
  });

  it("classifies names", () => {
    expect(classifyCertificateName("WWW.Example.COM.")).toEqual({ name: "www.example.com", problem: "" });
    expect(classifyCertificateName("*.example.com").name).toBe("*.example.com");
    expect(classifyCertificateName("_acme.example.com").name).toBe("_acme.example.com");
    expect(classifyCertificateName("f*.example.com").problem).toMatch(/wildcard/);
    expect(classifyCertificateName("a.*.example.com").problem).toMatch(/wildcard/);
    expect(classifyCertificateName("a..b").problem).toMatch(/empty label/);
    expect(classifyCertificateName("user@example.com").problem).toMatch(/e-mail/);
    expect(classifyCertificateName("a b.com").problem).toMatch(/whitespace/);
    expect(classifyCertificateName("x".repeat(64) + ".com").problem).toMatch(/63/);
    expect(classifyCertificateName("").problem).toMatch(/empty/);
  });
});

describe("garbage never crashes the parser", () => {
  it("every truncation of a real certificate throws DerError", async () => {
    const [leaf] = await cloudflareChain();
    for (let n = 0; n < leaf.length; n++) {
      expect(() => parseCertificate(leaf.subarray(0, n)), `prefix ${n}`).toThrow(DerError);
    }
  });

  it("random byte flips and random bytes: parse or DerError, nothing else", async () => {
    const [leaf] = await cloudflareChain();
    const outcome = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        if (!(err instanceof DerError)) throw err;
      }
    };
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(leaf.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (flips) => {
        const d = leaf.slice();
        for (const [i, v] of flips) d[i] = v;
        outcome(() => parseCertificate(d));
        outcome(() => readCertificateNames(d));
        outcome(() => tbsWithoutCtExtensions(d));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (d) => {
        outcome(() => parseCertificate(d));
        outcome(() => tbsWithoutCtExtensions(d));
      }),
      { numRuns: 1000 },
    );
  });
});

describe("RFC 4514 strings parse back", () => {
  it("handles escapes", () => {
    expect(parseDnString("CN=GeoTrust SSL CA,O=GeoTrust\\, Inc.,C=US")).toEqual([
      { type: "CN", oid: "2.5.4.3", value: "GeoTrust SSL CA" },
      { type: "O", oid: "2.5.4.10", value: "GeoTrust, Inc." },
      { type: "C", oid: "2.5.4.6", value: "US" },
    ]);
    expect(parseDnString("CN=Caf\\C3\\A9+OU=x")[0].value).toBe("Café");
  });
});
