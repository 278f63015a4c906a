// End-to-end scans against real local servers with known configurations.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scanTarget, type ScanReport } from "../src/scan";
import { makePki, type TestPki } from "./helpers/pki";
import {
  garbageServer, gnutlsServer, hangServer, httpServer, nginxServer, opensslServer, oversizedServer, resetServer,
  smtpStartTlsServer, truncatedServer, type Running,
} from "./helpers/servers";

let pki: TestPki;
const running: Running[] = [];
const keep = async (p: Promise<Running>) => { const r = await p; running.push(r); return r; };
const scan = (r: Running, extra: Partial<Parameters<typeof scanTarget>[0]> = {}, timeoutMs = 3000): Promise<ScanReport> =>
  scanTarget({ host: r.host, port: r.port, sni: "localhost", ...extra }, { timeoutMs });
const detail = (r: ScanReport, p: string) => r.protocols_detail.find((d) => d.protocol === p)!;
const verdict = (r: ScanReport, id: string) => r.frameworks.find((f) => f.id === id)!;

beforeAll(() => { pki = makePki(); });
afterAll(async () => { await Promise.all(running.map((r) => r.stop())); });

describe("openssl s_server", () => {
  it("TLS 1.2 only, two RSA suites, server preference, secp384r1/x25519, chain leaf+intermediate validated with root_ca", async () => {
    const s = await keep(opensslServer({ cert: pki.files.rsa, key: pki.files.rsaKey, chain: pki.files.int,
      args: ["-tls1_2", "-cipher", "AES256-SHA:ECDHE-RSA-AES128-GCM-SHA256", "-serverpref", "-groups", "secp384r1:x25519"] }));
    const r = await scan(s, { rootCaPem: pki.caPem });
    expect(r.has_error).toBe(false);
    expect(r.error_class).toBeNull();
    expect(r.protocol).toEqual(["TLSv1.2"]);
    expect(detail(r, "TLSv1.2").cipher_codes).toEqual(["0x0035", "0xC02F"]); // server order
    expect(detail(r, "TLSv1.2").cipher_preference).toBe("server");
    expect(r.ciphers.sort()).toEqual(["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_AES_256_CBC_SHA"]);
    // One judgement: the suite outside Mozilla's intermediate profile is the weak one, and the reason that profile fails.
    expect(r.weak_suites).toEqual([]);
    expect(r.legacy_suites).toEqual([{ code: 0x0035, name: "TLS_RSA_WITH_AES_256_CBC_SHA", weaknesses: ["CBC", "no_forward_secrecy"] }]);
    expect(verdict(r, "mozilla-intermediate").reasons.filter((x) => x.category === "cipher_suite").map((x) => x.item)).toEqual(["TLS_RSA_WITH_AES_256_CBC_SHA"]);
    expect([...r.named_groups].sort()).toEqual(["secp384r1", "x25519"]);
    expect(r.connection_method).toBe("direct_tls");
    expect(r.chain_length).toBe(2);
    expect(r.intermediates[0].subject).toContain("CN=Scanner Test Intermediate");
    // The intermediate as served, for the Worker's DANE-TA match: its DER hashes to the fingerprint reported.
    expect(r.intermediates_der.map((b64) => createHash("sha256").update(Buffer.from(b64, "base64")).digest("hex"))).toEqual([r.intermediates[0].signature_sha256]);
    expect(r.validation).toMatchObject({ trusted: true, error: "", hostname_match: true, anchor: "root_ca" });
    expect(r.validation_path.map((p) => p.certificate_subject)).toEqual(["CN=localhost", "CN=Scanner Test Intermediate, O=Trust-Plane Tests", "CN=Scanner Test Root CA, O=Trust-Plane Tests"]);
    expect(r.certificate).toMatchObject({ public_key_algorithm: "RSA", key_bits: 2048, signature_algorithm: "sha256WithRSAEncryption",
      dns_names: ["localhost", "scan.test"], aia: "http://ca.scan.test/int.der", ocsp: "http://ocsp.scan.test", subject: "CN=localhost" });
    expect(r.self_signed).toBe(false);
    expect(r.validity_days).toBeGreaterThanOrEqual(198);
    expect(r.duration_ms).toBeLessThan(1000);
    // without root_ca the private root is unknown to the system store
    const sys = await scan(s);
    expect(sys.validation?.trusted).toBe(false);
    expect(sys.validation?.error).toMatch(/unable to get issuer/);
  });

  it("TLS 1.3 only with ECDSA: suites via HRR, groups, chain decrypted from the encrypted flight", async () => {
    const s = await keep(opensslServer({ cert: pki.files.ecdsa, key: pki.files.ecdsaKey, chain: pki.files.int,
      args: ["-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256", "-groups", "x25519:secp384r1:ffdhe3072"] }));
    const r = await scan(s, { rootCaPem: pki.caPem });
    expect(r.protocol).toEqual(["TLSv1.3"]);
    expect(detail(r, "TLSv1.3").cipher_codes).toEqual(["0x1302", "0x1303"]);
    expect([...r.named_groups].sort()).toEqual(["ffdhe3072", "secp384r1", "x25519"]);
    expect(r.chain_protocol).toBe("TLSv1.3");
    expect(r.chain_length).toBe(2);
    expect(r.certificate).toMatchObject({ public_key_algorithm: "ECDSA", curve: "prime256v1", key_bits: 256 });
    expect(r.validation?.trusted).toBe(true);
    // ffdhe3072 is not a Mozilla curve; the ECDSA leaf is signed by an RSA intermediate (sha256WithRSAEncryption).
    expect(verdict(r, "mozilla-modern").reasons.map((x) => x.item)).toEqual(["ffdhe3072", "signature_algorithm"]);
  });

  it("legacy TLS 1.0/1.1 accepted at SECLEVEL=0, with client preference", async () => {
    const s = await keep(opensslServer({ cert: pki.files.rsa, key: pki.files.rsaKey, chain: pki.files.int,
      args: ["-no_tls1_3", "-cipher", "AES128-SHA:ECDHE-RSA-AES256-SHA:@SECLEVEL=0"] }));
    const r = await scan(s, { rootCaPem: pki.caPem });
    expect(r.protocol).toEqual(["TLSv1.0", "TLSv1.1", "TLSv1.2"]);
    for (const p of ["TLSv1.0", "TLSv1.1", "TLSv1.2"]) expect(detail(r, p).cipher_codes).toEqual(["0x002F", "0xC014"]);
    expect(detail(r, "TLSv1.2").cipher_preference).toBe("client");
    expect(detail(r, "SSLv3").accepted).toBe(false);
    const pci = verdict(r, "pci-dss-4.0.1");
    expect(pci.status).toBe("fail");
    expect(pci.reasons.map((x) => x.item)).toContain("TLSv1.0");
    expect(pci.reasons.map((x) => x.item)).not.toContain("TLSv1.1");
  });

  it("expired certificate and self-signed certificate (self-signed also with a custom root)", async () => {
    const exp = await keep(opensslServer({ cert: pki.files.expired, key: pki.files.expiredKey, chain: pki.files.int, args: ["-tls1_2"] }));
    const r = await scan(exp, { rootCaPem: pki.caPem });
    expect(r.validity_days).toBeLessThan(0);
    expect(r.validation?.trusted).toBe(false);
    expect(r.validation?.error).toMatch(/expired/);
    expect(verdict(r, "pci-dss-4.0.1").reasons.map((x) => x.item)).toContain("not_after");
    const self = await keep(opensslServer({ cert: pki.files.self, key: pki.files.selfKey }));
    const s = await scan(self, { rootCaPem: pki.caPem });
    expect(s.self_signed).toBe(true);
    expect(s.chain_length).toBe(1);
    expect(s.validation).toMatchObject({ trusted: false, error: "self-signed certificate" });
  });
});

describe("gnutls-serv: suites Debian's OpenSSL no longer has", () => {
  it("finds RC4 and 3DES suites and flags them weak", async () => {
    const s = await keep(gnutlsServer({ cert: pki.files.rsa, key: pki.files.rsaKey,
      priority: "NONE:+VERS-TLS1.2:+VERS-TLS1.0:+RSA:+3DES-CBC:+ARCFOUR-128:+AES-128-CBC:+SHA1:+MD5:+COMP-NULL:+SIGN-ALL:+CTYPE-X509:%SERVER_PRECEDENCE" }));
    const r = await scan(s, { rootCaPem: pki.caPem });
    expect(r.has_error).toBe(false);
    expect(r.protocol).toEqual(["TLSv1.0", "TLSv1.2"]);
    expect(detail(r, "TLSv1.2").cipher_codes.sort()).toEqual(["0x0004", "0x0005", "0x000A", "0x002F"]);
    expect(r.weak_suites.map((w) => [w.name, w.weaknesses])).toEqual(expect.arrayContaining([
      ["TLS_RSA_WITH_RC4_128_MD5", ["RC4", "MD5", "no_forward_secrecy"]], ["TLS_RSA_WITH_RC4_128_SHA", ["RC4", "no_forward_secrecy"]],
      ["TLS_RSA_WITH_3DES_EDE_CBC_SHA", ["3DES", "no_forward_secrecy"]]]));
    expect(r.legacy_suites.map((w) => w.name)).toEqual(["TLS_RSA_WITH_AES_128_CBC_SHA"]);
    expect(detail(r, "TLSv1.2").cipher_preference).toBe("server");
  });
});

describe("nginx", () => {
  it("matches its ssl_protocols / ssl_ciphers / ssl_ecdh_curve configuration", async () => {
    const s = await keep(nginxServer({ cert: pki.files.rsa, key: pki.files.rsaKey, protocols: "TLSv1.2 TLSv1.3",
      ciphers: "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305", curves: "X25519:prime256v1", preferServer: true }));
    const r = await scan(s, { rootCaPem: pki.caPem });
    expect(r.protocol).toEqual(["TLSv1.2", "TLSv1.3"]);
    expect(detail(r, "TLSv1.2").cipher_codes).toEqual(["0xC02F", "0xCCA8"]);
    expect(detail(r, "TLSv1.2").cipher_preference).toBe("server");
    expect([...r.named_groups].sort()).toEqual(["secp256r1", "x25519"]);
    expect(verdict(r, "mozilla-intermediate")).toMatchObject({ status: "pass", reasons: [] });
    expect([r.weak_suites, r.legacy_suites]).toEqual([[], []]);
  });
  it("one legacy suite among the profile's suites: it alone is listed, and it alone fails the reference profile's cipher check", async () => {
    const s = await keep(nginxServer({ cert: pki.files.rsa, key: pki.files.rsaKey, protocols: "TLSv1.2 TLSv1.3",
      ciphers: "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305:AES128-SHA", curves: "X25519:prime256v1", preferServer: true }));
    const r = await scan(s, { rootCaPem: pki.caPem });
    expect(detail(r, "TLSv1.2").cipher_codes.sort()).toEqual(["0x002F", "0xC02F", "0xCCA8"]);
    expect(r.weak_suites).toEqual([]);
    expect(r.legacy_suites).toEqual([{ code: 0x002f, name: "TLS_RSA_WITH_AES_128_CBC_SHA", weaknesses: ["CBC", "no_forward_secrecy"] }]);
    expect(verdict(r, "mozilla-intermediate")).toMatchObject({ status: "fail", reasons: [{ category: "cipher_suite", item: "TLS_RSA_WITH_AES_128_CBC_SHA" }] });
  });
});

describe("STARTTLS", () => {
  it("SMTP: upgrades, enumerates and records connection_method starttls", async () => {
    const s = await keep(smtpStartTlsServer({ cert: pki.files.rsa, key: pki.files.rsaKey, chain: pki.files.int }));
    const r = await scan(s, { starttls: "smtp", rootCaPem: pki.caPem });
    expect(r.has_error).toBe(false);
    expect(r.connection_method).toBe("starttls");
    expect(r.protocol).toEqual(["TLSv1.2", "TLSv1.3"]);
    expect(r.chain_length).toBe(2);
    expect(r.validation?.trusted).toBe(true);
  });
  it("SMTP STARTTLS against a server that does not speak SMTP is an error, not a crash", async () => {
    const s = await keep(httpServer());
    const r = await scan(s, { starttls: "smtp" }, 1000);
    expect(r.has_error).toBe(true);
    expect(r.error).toMatch(/SMTP/);
    // An HTTP server waits for a request: no SMTP greeting comes.
    expect(r.error_class).toBe("timeout");
  });
});

describe("faults become has_error, never a crash", () => {
  it.each([
    ["garbage", garbageServer, /not a TLS record/, ["protocol"]],
    ["HTTP", httpServer, /not a TLS record: "HTTP\/1.1 400 Bad Request"/, ["protocol"]],
    ["oversized record", oversizedServer, /oversized TLS record/, ["protocol"]],
    ["reset", resetServer, /accepted no SSL\/TLS version|reset/, ["tls", "connect"]],
    ["truncated", truncatedServer, /accepted no SSL\/TLS version|closed/, ["tls", "connect"]],
  ])("%s", async (_n, make, msg, classes) => {
    const s = await keep(make());
    const r = await scan(s, {}, 1500);
    expect(r.has_error).toBe(true);
    expect(r.error).toMatch(msg);
    expect(classes).toContain(r.error_class);
    expect(r.protocol).toEqual([]);
  });
  it("hung handshake: timeout is unknown, reported once, bounded in time", async () => {
    const s = await keep(hangServer());
    const t = Date.now();
    const r = await scan(s, {}, 800);
    expect(Date.now() - t).toBeLessThan(3000);
    expect(r.has_error).toBe(true);
    expect(r.error).toMatch(/timed out/);
    expect(r.error_class).toBe("timeout");
    expect(r.protocols_detail.every((p) => p.accepted !== false)).toBe(true); // unknown (null), not rejected
  });
  it("unreachable port", async () => {
    const r = await scanTarget({ host: "127.0.0.1", port: 1 }, { timeoutMs: 1000 });
    expect(r).toMatchObject({ has_error: true, error: "connect to 127.0.0.1:1 failed: ECONNREFUSED", error_class: "connect" });
  });
  it("a name that does not resolve", async () => {
    const r = await scanTarget({ host: "no-such-host.invalid", port: 443 }, { timeoutMs: 1000 });
    expect(r).toMatchObject({ has_error: true, error: "cannot resolve no-such-host.invalid", error_class: "dns_resolution" });
  });
});
