// Pure modules: root_ca validation, input normalization, indicators, scan-result analysis.
import { describe, expect, it } from "vitest";
import { monitorIndicators, protocolStatus, validityStatus } from "../../src/modules/cert-watcher/indicators";
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
    expect(protocolStatus(["TLSv1.0", "TLSv1.2"])).toBe("legacy");
    expect(protocolStatus(["TLSv1.2", "TLSv1.3"])).toBe("modern");
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
    expect(a.cipherStatus).toBe("strong");
    expect(a.validationStatus).toBe("trusted");
    expect(a.frameworks.map((f) => f.id)).toEqual(["fips-140", "nist-sp-800-52r2", "pci-dss-4.0.1", "mozilla-intermediate", "mozilla-modern"]);
    expect(a.frameworks.find((f) => f.id === "pci-dss-4.0.1")!.status).toBe("pass");
    expect(a.frameworks.find((f) => f.id === "mozilla-modern")!.status).toBe("fail"); // TLS 1.2 accepted
  });

  it("ignores the agent's verdicts: a forged all-pass is re-evaluated", () => {
    const forged = result("legacyWeak");
    forged.frameworks = forged.frameworks.map((f: any) => ({ ...f, status: "pass", compliant: true, reasons: [] }));
    const a = analyseScan(ScanResultInput.parse(forged), ctx);
    expect(a.frameworks.every((f) => f.status === "fail")).toBe(true);
    expect(a.findings).toMatchObject({ legacyProtocol: true, weakCipher: true, selfSigned: true, scanFailed: false });
    expect(a.weakSuites.map((w) => w.name).sort()).toEqual(["TLS_ECDHE_RSA_WITH_NULL_SHA", "TLS_ECDH_anon_WITH_AES_128_CBC_SHA"]);
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
