// Pure modules: root_ca validation, input normalization, indicators, scan-result analysis.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { IANA_CIPHER_SUITES, legacySuitesOf, TLS_VERSIONS } from "@trust-plane/tls-frameworks";
import { monitorIndicators, validityStatus } from "../../src/modules/cert-watcher/indicators";
import { normalizeHostname, normalizeIp, resolveStartTls } from "../../src/modules/cert-watcher/names";
import { RootCaError, validateRootCaPem } from "../../src/modules/cert-watcher/root-ca";
import { ScanResult as ScanResultInput } from "@trust-plane/scan-contract";
import { analyseScan } from "../../src/modules/cert-watcher/scan-result";
import { SELF_SIGNED_PEM, TEST_LEAF_PEM, TEST_ROOT_CA_PEM } from "./fixtures/pems";
import { result } from "./helpers";

const now = new Date();
const ctx = { monitorId: 1, monitorCn: "www.example.test", port: 443, sni: "www.example.test", ipAddress: "127.0.0.1", starttls: null, now };

describe("root_ca validation", () => {
  it("accepts CA certificates, alone or as a bundle", () => {
    expect(validateRootCaPem(TEST_ROOT_CA_PEM)).toEqual({ certificates: 1 });
    expect(validateRootCaPem(TEST_ROOT_CA_PEM + SELF_SIGNED_PEM)).toEqual({ certificates: 2 });
  });
  it("refuses a leaf, garbage, truncation and other PEM kinds with a reason", () => {
    expect(() => validateRootCaPem(TEST_LEAF_PEM)).toThrow(/not a CA/);
    expect(() => validateRootCaPem("hello")).toThrow(RootCaError);
    expect(() => validateRootCaPem(TEST_ROOT_CA_PEM.slice(0, 200))).toThrow(/no PEM certificate block|outside/);
    const corrupted = TEST_ROOT_CA_PEM.replace(/\n([A-Za-z0-9+/]{20})/, "\nAAAAAAAAAAAAAAAAAAAA");
    expect(() => validateRootCaPem(corrupted)).toThrow(RootCaError);
    expect(() => validateRootCaPem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")).toThrow(/not a CERTIFICATE/);
    expect(() => validateRootCaPem("-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n")).toThrow(/base64/);
  });
});

describe("names", () => {
  it("normalizes hostnames and IPs, refuses the rest", () => {
    expect(normalizeHostname("WWW.Example.COM.")).toBe("www.example.com");
    expect(normalizeHostname("bücher.example")).toBe("xn--bcher-kva.example");
    for (const bad of ["", "*.example.com", "a..b", "-a.example", "192.0.2.1", "a b.example", "x".repeat(64) + ".com"]) expect(normalizeHostname(bad)).toBeNull();
    expect(normalizeIp("2001:DB8:0:0::1")).toBe("2001:db8::1");
    expect(normalizeIp("192.0.2.1")).toBe("192.0.2.1");
    for (const bad of ["010.0.0.1", "256.1.1.1", "10.0.0.0/8", "fe80::1%eth0", "host"]) expect(normalizeIp(bad)).toBeNull();
  });
  it("resolves the STARTTLS setting from the port", () => {
    expect(resolveStartTls("auto", 587)).toBe("smtp");
    expect(resolveStartTls("auto", 443)).toBeNull();
    expect(resolveStartTls("none", 25)).toBeNull();
    expect(resolveStartTls("imap", 9993)).toBe("imap");
  });
});

describe("indicators", () => {
  it("validity from the certificate dates at read time", () => {
    const iso = (d: number) => new Date(now.getTime() + d * 86_400_000).toISOString();
    expect(validityStatus(iso(-100), iso(100), now)).toBe("valid");
    expect(validityStatus(iso(-100), iso(29), now)).toBe("expiring_soon");
    expect(validityStatus(iso(-100), iso(-1), now)).toBe("expired");
    expect(validityStatus(iso(1), iso(100), now)).toBe("not_yet_valid");
    expect(validityStatus(null, null, now)).toBe("unknown");
  });
  it("aggregates the worst over enabled targets; unknown only alone", () => {
    const iso = (d: number) => new Date(now.getTime() + d * 86_400_000).toISOString();
    const scan = (over: object) => ({ hasError: false, certNotBefore: iso(-10), certNotAfter: iso(100), protocolStatus: "modern", cipherStatus: "strong", validationStatus: "trusted", ...over });
    const ind = monitorIndicators(
      [
        { enabled: true, scan: scan({}) },
        { enabled: true, scan: scan({ certNotAfter: iso(5), validationStatus: "self_signed" }) },
        { enabled: true, scan: { ...scan({ hasError: true, certNotAfter: null, certNotBefore: null, protocolStatus: "unknown", cipherStatus: "unknown", validationStatus: "unknown" }) } },
        { enabled: false, scan: scan({ certNotAfter: iso(-3), protocolStatus: "legacy" }) },
        { enabled: true, scan: null },
      ],
      now,
    );
    expect(ind).toEqual({
      validity_status: "expiring_soon", protocol_status: "modern", cipher_status: "strong", validation_status: "self_signed",
      error_count: 1, target_count: 5, min_days_left: 5,
    });
    expect(monitorIndicators([], now)).toMatchObject({ validity_status: "unknown", protocol_status: "unknown", min_days_left: null, target_count: 0 });
  });
});

describe("scan result analysis", () => {
  it("strips unknown fields, caps sizes, refuses wrong types", () => {
    const raw = { ...result("ecdsaTrusted"), evil: "x", ciphers: Array(2000).fill("TLS_AES_128_GCM_SHA256"), error: "e".repeat(10_000) };
    const parsed = ScanResultInput.parse(raw);
    expect("evil" in parsed).toBe(false);
    expect("frameworks" in parsed).toBe(false);
    expect(parsed.ciphers.length).toBe(512);
    expect(parsed.error.length).toBe(2000);
    expect(ScanResultInput.safeParse({ ...raw, has_error: "no" }).success).toBe(false);
    expect(ScanResultInput.safeParse({ ...raw, protocol: "TLSv1.2" }).success).toBe(false);
    expect(ScanResultInput.safeParse({ has_error: true }).success).toBe(true);
  });

  it("a trusted ECDSA scan: event fields, statuses, recomputed verdicts", () => {
    const r = ScanResultInput.parse(result("ecdsaTrusted", { daysLeft: 150, now }));
    const a = analyseScan(r, ctx);
    expect(a.event).toMatchObject({
      monitor_cn: "www.example.test", dns_name: "www.example.test", ip_address: "127.0.0.1", connection_method: "direct_tls",
      protocol: ["TLSv1.2", "TLSv1.3"], has_error: false, error: "", validity_days: 150,
      certificate: { subject: "CN=www.example.test", issuer: "CN=Trust-Plane Test Root CA", public_key_algorithm: "ECDSA", aia: "http://ca.example.test/root.der", ocsp: "http://ocsp.example.test" },
    });
    expect(a.protocolStatus).toBe("modern");
    expect(a.validationStatus).toBe("trusted");
    expect(a.frameworks.map((f) => f.id)).toEqual(["fips-140", "nist-sp-800-52r2", "pci-dss-4.0.1", "mozilla-intermediate", "mozilla-modern"]);
    expect(a.frameworks.find((f) => f.id === "pci-dss-4.0.1")!.status).toBe("pass");
    expect(a.frameworks.find((f) => f.id === "mozilla-modern")!.status).toBe("fail"); // TLS 1.2 accepted
    // OpenSSL's default suites include CBC ones, outside Mozilla's intermediate profile: legacy, as that verdict says.
    expect(a.cipherStatus).toBe("legacy");
    expect(a.weakSuites).toEqual([]);
    expect(a.frameworks.find((f) => f.id === "mozilla-intermediate")!.reasons.filter((x) => x.category === "cipher_suite").map((x) => x.item).sort()).toEqual(a.legacySuites.map((w) => w.name).sort());
    expect(a.legacySuites.find((w) => w.name === "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA")?.weaknesses).toEqual(["CBC"]);
  });

  it("exactly Mozilla's intermediate profile: strong ciphers, modern protocols, the reference verdict passes", () => {
    const a = analyseScan(ScanResultInput.parse(result("ecdsaIntermediate", { daysLeft: 60, now })), { ...ctx, monitorCn: "localhost", sni: "localhost" });
    expect(a).toMatchObject({ protocolStatus: "modern", cipherStatus: "strong", validationStatus: "trusted", weakSuites: [], legacySuites: [] });
    expect(a.findings).toMatchObject({ legacyProtocol: false, weakCipher: false });
    expect(a.frameworks.find((f) => f.id === "mozilla-intermediate")).toMatchObject({ status: "pass", reasons: [] });
    // Stricter frameworks may still fail a strong configuration: ChaCha20 is not FIPS-approved.
    expect(a.frameworks.find((f) => f.id === "fips-140")!.reasons.map((x) => x.item)).toContain("TLS_CHACHA20_POLY1305_SHA256");
  });

  it("OpenSSL's defaults with TLS_RSA_WITH_AES_128_CBC_SHA: all five frameworks fail and the ciphers are legacy, never strong", () => {
    const a = analyseScan(ScanResultInput.parse(result("rsaSelfSigned", { daysLeft: 30, now })), { ...ctx, monitorCn: "localhost", sni: "localhost" });
    expect(a.frameworks.map((f) => f.status)).toEqual(["fail", "fail", "fail", "fail", "fail"]);
    expect(a.cipherStatus).toBe("legacy");
    // Nothing broken: the weekly audit's weak-cipher finding stays for RC4, DES, 3DES, NULL, EXPORT and anonymous suites.
    expect(a.findings.weakCipher).toBe(false);
    expect(a.legacySuites.find((w) => w.name === "TLS_RSA_WITH_AES_128_CBC_SHA")?.weaknesses).toEqual(["CBC", "no_forward_secrecy"]);
    expect(a.legacySuites.find((w) => w.name === "TLS_RSA_WITH_AES_128_GCM_SHA256")?.weaknesses).toEqual(["no_forward_secrecy"]);
    // The profile's own suites are not listed.
    expect(a.legacySuites.map((w) => w.name)).not.toContain("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
  });

  it("the indicators never contradict the reference verdict, whatever is offered (property)", () => {
    const suites = IANA_CIPHER_SUITES.filter((s) => !s.name.endsWith("_SCSV")).map((s) => s.name);
    fc.assert(
      fc.property(fc.subarray([...TLS_VERSIONS]), fc.subarray(suites, { maxLength: 12 }), (protocol, ciphers) => {
        const a = analyseScan(ScanResultInput.parse({ has_error: false, protocol, ciphers }), ctx);
        const ref = a.frameworks.find((f) => f.id === "mozilla-intermediate")!;
        const about = (category: string) => ref.reasons.filter((x) => x.category === category);
        if (protocol.length === 0) {
          expect([a.protocolStatus, a.cipherStatus, ref.status]).toEqual(["unknown", "unknown", "unknown"]);
          return;
        }
        expect(a.cipherStatus === "strong").toBe(ciphers.length > 0 && about("cipher_suite").length === 0);
        expect(["legacy", "weak"].includes(a.cipherStatus)).toBe(about("cipher_suite").length > 0);
        expect(a.cipherStatus === "weak").toBe(a.weakSuites.length > 0);
        expect([...a.weakSuites, ...a.legacySuites].map((w) => w.name).sort()).toEqual(about("cipher_suite").map((x) => x.item).sort());
        expect(legacySuitesOf(a.frameworks)).toEqual(a.legacySuites);
        expect(a.protocolStatus === "legacy").toBe(about("protocol").length > 0);
        expect(a.findings.weakCipher).toBe(a.cipherStatus === "weak");
        expect(a.findings.legacyProtocol).toBe(a.protocolStatus === "legacy");
        // A configuration judged legacy or weak fails the reference profile; one it passes is strong and modern.
        if (["legacy", "weak"].includes(a.cipherStatus) || a.protocolStatus === "legacy") expect(ref.status).toBe("fail");
        if (ref.status === "pass") expect([a.cipherStatus, a.protocolStatus]).toEqual([ciphers.length ? "strong" : "unknown", "modern"]);
      }),
      { numRuns: 300 },
    );
  });

  it("ignores the agent's verdicts: a forged all-pass is re-evaluated", () => {
    const forged = result("legacyWeak");
    forged.frameworks = forged.frameworks.map((f: any) => ({ ...f, status: "pass", compliant: true, reasons: [] }));
    const a = analyseScan(ScanResultInput.parse(forged), ctx);
    expect(a.frameworks.every((f) => f.status === "fail")).toBe(true);
    expect(a.findings).toMatchObject({ legacyProtocol: true, weakCipher: true, selfSigned: true, scanFailed: false });
    expect(a.weakSuites.map((w) => [w.name, w.weaknesses])).toEqual([
      ["TLS_ECDHE_RSA_WITH_NULL_SHA", ["NULL"]],
      ["TLS_ECDH_anon_WITH_AES_128_CBC_SHA", ["anon", "CBC"]],
    ]);
    expect(a.legacySuites.map((w) => [w.name, w.weaknesses])).toEqual([["TLS_RSA_WITH_AES_128_CBC_SHA", ["CBC", "no_forward_secrecy"]]]);
  });

  it("a refused connection is a failed scan with unknown verdicts; an empty 'success' is a failure too", () => {
    const a = analyseScan(ScanResultInput.parse(result("refused")), ctx);
    expect(a.event).toMatchObject({ has_error: true, error: "connect to 127.0.0.1:18447 failed: ECONNREFUSED", certificate: null, validity_days: null });
    expect(a.frameworks.every((f) => f.status === "unknown")).toBe(true);
    const empty = analyseScan(ScanResultInput.parse({ has_error: false }), ctx);
    expect(empty.event.has_error).toBe(true);
    expect(empty.event.error).not.toBe("");
  });
});
