// Framework verdicts on known configurations (pure module shared with the Worker).
import { describe, expect, it } from "vitest";
import {
  cipherSuiteCode, evaluateFrameworks, judgeTlsConfiguration, legacySuitesOf, MOZILLA_GUIDELINES, securityStandards, type ObservedConfiguration,
} from "@trust-plane/tls-frameworks";

const code = (n: string) => { const c = cipherSuiteCode(n); if (c === undefined) throw new Error(n); return c; };
const rsaCert = { keyAlgorithm: "RSA", keyBits: 2048, signatureAlgorithm: "sha256WithRSAEncryption", notBefore: "2026-01-01T00:00:00Z", notAfter: "2026-12-01T00:00:00Z", trusted: true };
const now = new Date("2026-06-01T00:00:00Z");
const byId = (o: ObservedConfiguration, v?: string) => Object.fromEntries(evaluateFrameworks(o, { mozillaVersion: v, now }).map((x) => [x.id, x]));

describe("evaluateFrameworks", () => {
  it("exactly the Mozilla 5.7 intermediate configuration passes intermediate, fails modern on TLS 1.2", () => {
    const p = MOZILLA_GUIDELINES["5.7"].profiles.intermediate;
    const v = byId({ protocols: ["TLSv1.2", "TLSv1.3"], cipherCodes: p.cipher_codes, groups: ["x25519", "secp256r1", "secp384r1"], certificate: rsaCert, dhBits: 2048 });
    expect(v["mozilla-intermediate"]).toMatchObject({ status: "pass", reasons: [] });
    expect(v["mozilla-modern"].status).toBe("fail");
    expect(v["mozilla-modern"].reasons.map((r: { item: string }) => r.item)).toContain("TLSv1.2");
    // ChaCha20 and X25519 are not FIPS-approved; DHE-RSA-CHACHA is outside SP 800-52r2's list
    expect(v["fips-140"].reasons.map((r: { item: string }) => r.item)).toEqual(expect.arrayContaining(["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "x25519"]));
    expect(v["nist-sp-800-52r2"].reasons.map((r: { item: string }) => r.item)).toContain("TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256");
    expect(v["pci-dss-4.0.1"]).toMatchObject({ status: "pass" });
  });
  it("guideline version is a parameter: DHE suites are outside 6.0 intermediate", () => {
    const dhe = code("TLS_DHE_RSA_WITH_AES_128_GCM_SHA256");
    const o = { protocols: ["TLSv1.2"], cipherCodes: [dhe], groups: [], certificate: rsaCert };
    expect(byId(o, "5.7")["mozilla-intermediate"].status).toBe("pass");
    expect(byId(o, "6.0")["mozilla-intermediate"].reasons[0]).toMatchObject({ category: "cipher_suite", item: "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256" });
    expect(() => evaluateFrameworks(o, { mozillaVersion: "4.0" })).toThrow(RangeError);
  });
  it("a legacy server fails PCI on TLS 1.0 and weak suites, with one reason each", () => {
    const v = byId({ protocols: ["TLSv1.0", "TLSv1.2"], cipherCodes: [code("TLS_RSA_WITH_3DES_EDE_CBC_SHA"), code("TLS_RSA_WITH_RC4_128_MD5"), code("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")], groups: [23],
      certificate: { ...rsaCert, notAfter: "2026-05-01T00:00:00Z", trusted: false } });
    const pci = v["pci-dss-4.0.1"];
    expect(pci.status).toBe("fail");
    expect(pci.reasons.map((r: { item: string }) => r.item)).toEqual(["TLSv1.0", "TLS_RSA_WITH_3DES_EDE_CBC_SHA", "TLS_RSA_WITH_RC4_128_MD5", "not_after", "trust"]);
    expect(v["nist-sp-800-52r2"].reasons.map((r: { item: string }) => r.item)).toEqual(expect.arrayContaining(["TLSv1.0", "TLS_RSA_WITH_3DES_EDE_CBC_SHA"]));
  });
  it("TLS 1.3-only ECDSA server passes Mozilla modern and FIPS with approved groups", () => {
    const ec = { keyAlgorithm: "ECDSA", keyBits: 256, curve: "prime256v1", signatureAlgorithm: "ecdsa-with-SHA256", notBefore: "2026-05-01T00:00:00Z", notAfter: "2026-07-25T00:00:00Z" };
    const v = byId({ protocols: ["TLSv1.3"], cipherCodes: [0x1301, 0x1302], groups: ["secp256r1", "secp384r1"], certificate: ec });
    expect(v["mozilla-modern"].status).toBe("pass");
    expect(v["fips-140"].status).toBe("pass");
    expect(v["nist-sp-800-52r2"].reasons.map((r: { item: string }) => r.item)).toEqual(["TLSv1.2"]); // SP 800-52r2: TLS 1.2 shall be supported
  });
  it("nothing accepted: unknown", () => {
    expect(evaluateFrameworks({ protocols: [], cipherCodes: [], groups: [] }).every((v) => v.status === "unknown")).toBe(true);
  });
});

describe("the judgement of suites, and securityStandards", () => {
  it("grades every offered suite outside Mozilla's intermediate profile, by code point: broken ones weak, the others legacy", () => {
    const j = judgeTlsConfiguration({ protocols: ["TLSv1.2", "TLSv1.3"], groups: ["x25519"],
      cipherCodes: [0x0003, 0x0009, 0x000a, 0x0002, 0x0018, 0xc02f, 0x0003, 0x002f, 0xc013, 0x009c, 0xc09c, 0x1304] });
    expect(j.weakSuites).toEqual([
      { code: 0x0003, name: "TLS_RSA_EXPORT_WITH_RC4_40_MD5", weaknesses: ["RC4", "EXPORT", "MD5", "no_forward_secrecy"] },
      { code: 0x0009, name: "TLS_RSA_WITH_DES_CBC_SHA", weaknesses: ["DES", "no_forward_secrecy"] },
      { code: 0x000a, name: "TLS_RSA_WITH_3DES_EDE_CBC_SHA", weaknesses: ["3DES", "no_forward_secrecy"] },
      { code: 0x0002, name: "TLS_RSA_WITH_NULL_SHA", weaknesses: ["NULL", "no_forward_secrecy"] },
      { code: 0x0018, name: "TLS_DH_anon_WITH_RC4_128_MD5", weaknesses: ["RC4", "anon", "MD5"] },
    ]);
    expect(j.legacySuites).toEqual([
      { code: 0x002f, name: "TLS_RSA_WITH_AES_128_CBC_SHA", weaknesses: ["CBC", "no_forward_secrecy"] },
      { code: 0xc013, name: "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", weaknesses: ["CBC"] },
      { code: 0x009c, name: "TLS_RSA_WITH_AES_128_GCM_SHA256", weaknesses: ["no_forward_secrecy"] },
      { code: 0xc09c, name: "TLS_RSA_WITH_AES_128_CCM", weaknesses: ["no_forward_secrecy"] },
      { code: 0x1304, name: "TLS_AES_128_CCM_SHA256", weaknesses: ["outside_profile"] },
    ]);
    // TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (0xC02F) is in the profile: in neither list.
    expect(j.cipherStatus).toBe("weak");
    expect(legacySuitesOf(j.frameworks)).toEqual(j.legacySuites);
  });
  it("the judgement's statuses are read from the reference verdict", () => {
    const strong = judgeTlsConfiguration({ protocols: ["TLSv1.2", "TLSv1.3"], cipherCodes: [0xc02f, 0x1301], groups: ["x25519"] });
    expect(strong).toMatchObject({ protocolStatus: "modern", cipherStatus: "strong", weakSuites: [], legacySuites: [], reference: { id: "mozilla-intermediate", status: "pass" } });
    const legacy = judgeTlsConfiguration({ protocols: ["TLSv1.1", "TLSv1.2"], cipherCodes: [0xc02f, 0x002f], groups: ["x25519"] });
    expect(legacy).toMatchObject({ protocolStatus: "legacy", cipherStatus: "legacy", weakSuites: [], reference: { status: "fail" } });
    expect(legacy.reference.reasons.map((r) => r.item)).toEqual(["TLSv1.1", "TLS_RSA_WITH_AES_128_CBC_SHA"]);
    expect(judgeTlsConfiguration({ protocols: [], cipherCodes: [], groups: [] })).toMatchObject({ protocolStatus: "unknown", cipherStatus: "unknown", weakSuites: [], legacySuites: [] });
  });
  it("lists five frameworks with explicit code points", () => {
    const s = securityStandards({ mozillaVersion: "6.0" });
    expect(s.map((d) => d.id)).toEqual(["fips-140", "nist-sp-800-52r2", "pci-dss-4.0.1", "mozilla-intermediate", "mozilla-modern"]);
    expect(s[4].cipherSuites.allowed.map((c) => c.code)).toEqual([0x1301, 0x1302, 0x1303]);
    expect(s[4].namedGroups?.allowed.map((g) => g.name)).toEqual(["X25519MLKEM768", "x25519", "secp256r1", "secp384r1"]);
    expect(s[0].cipherSuites.allowed.some((c) => c.name.includes("CHACHA20"))).toBe(false);
  });
});
