/**
 * The email transport security parsers (src/modules/dns-watcher/email/): MTA-STS record and
 * policy, TLS-RPT, TLSA validity and matching, DKIM keys with the RSA modulus length, BIMI,
 * and the per-domain view with its regressions, on real-shaped and hostile values.
 */
import { describe, expect, it } from "vitest";
import { dmarcEnforcedForBimi, parseBimi } from "../../src/modules/dns-watcher/email/bimi";
import { parseDkimKey, rsaModulusBits } from "../../src/modules/dns-watcher/email/dkim";
import { mxPatternMatches, parseMtaStsPolicy, parseMtaStsRecord, policyFingerprint, uncoveredMxHosts } from "../../src/modules/dns-watcher/email/mta-sts";
import { matchTlsa, parseTlsa, parseTlsaSet } from "../../src/modules/dns-watcher/email/tlsa";
import { parseTlsRpt } from "../../src/modules/dns-watcher/email/tls-rpt";
import { emailRegressions, emailSecurityView, mxHostsOf, NEVER_ATTEMPTED, type EmailInputs, type EmailState } from "../../src/modules/dns-watcher/email/view";
import { parseDmarc } from "../../src/modules/dns-watcher/dmarc";
import { presentRecord } from "../../src/platform/dns/presentation";
import * as K from "./email-keys";

const der = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

describe("MTA-STS (RFC 8461)", () => {
  it("reads the TXT record: version first, id of 1-32 letters and digits, one record only", () => {
    expect(parseMtaStsRecord(["v=STSv1; id=20160831085700Z;"])).toEqual({ record: "v=STSv1; id=20160831085700Z;", id: "20160831085700Z", errors: [] });
    expect(parseMtaStsRecord(["google-site-verification=x", "v=STSv1;id=abc"]).id).toBe("abc");
    expect(parseMtaStsRecord([]).record).toBe("");
    expect(parseMtaStsRecord(["id=1; v=STSv1"]).record).toBe(""); // v= not first: not an MTA-STS record
    expect(parseMtaStsRecord(["v=STSv1"]).errors).toEqual(["no id= tag: senders cannot tell when the policy changes"]);
    expect(parseMtaStsRecord(["v=STSv1; id=has-dash"]).errors[0]).toMatch(/not 1-32 letters and digits/);
    expect(parseMtaStsRecord(["v=STSv1; id=" + "a".repeat(33)]).errors[0]).toMatch(/not 1-32/);
    expect(parseMtaStsRecord(["v=STSv1; id=1", "v=STSv1; id=2"]).errors[0]).toMatch(/2 v=STSv1 records: senders ignore MTA-STS/);
    // Hostile: a huge value is quoted cut short, never echoed whole.
    const hostile = parseMtaStsRecord([`v=STSv1; id=<script>${"x".repeat(500)}`]);
    expect(hostile.errors[0].length).toBeLessThan(200);
  });

  it("parses a policy with CRLF or LF, repeated mx, extension fields; flags what senders would not use", () => {
    const p = parseMtaStsPolicy("version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmx: *.example.net\r\nmx: backupmx.example.com.\r\nmax_age: 604800\r\nx_ext: 1\r\n");
    expect(p).toEqual({ mode: "enforce", max_age: 604800, mx: ["mail.example.com", "*.example.net", "backupmx.example.com"], errors: [], warnings: [] });
    expect(policyFingerprint(p)).toBe(policyFingerprint(parseMtaStsPolicy("max_age: 604800\nversion: STSv1\nmx: *.example.net\nmode: enforce\nmx: backupmx.example.com\nmx: mail.example.com\n")));
    expect(parseMtaStsPolicy("version: STSv1\nmode: none\nmax_age: 86400\n").errors).toEqual([]);
    expect(parseMtaStsPolicy("version: STSv1\nmode: enforce\nmax_age: 86400\n").errors).toEqual(["mode enforce without any mx field: no mail server is allowed"]);
    expect(parseMtaStsPolicy("version: STSv2\nmode: enforce\nmx: a.example\nmax_age: 1").errors).toEqual(["version 'STSv2' is not STSv1"]);
    expect(parseMtaStsPolicy("version: STSv1\nmode: strict\nmx: a.example\nmax_age: x").errors).toEqual(["mode 'strict' is not enforce, testing or none", "max_age 'x' is not a number of seconds"]);
    expect(parseMtaStsPolicy("version: STSv1\nmode: testing\nmode: enforce\nmx: a.example\nmax_age: 99999999999").errors[0]).toMatch(/max_age/);
    expect(parseMtaStsPolicy("version: STSv1\nmode: testing\nmode: enforce\nmx: a.example\nmax_age: 40000000").warnings).toEqual([
      "field mode given twice (the first counts)",
      "max_age 40000000 is above the limit of 31557600 s (senders cap it)",
    ]);
    expect(parseMtaStsPolicy("mx: *.*.example\nmx: exa mple.com\nmx: <b>x</b>").errors.slice(0, 3)).toEqual([
      "mx '*.*.example' is not a host name or *.host name",
      "mx 'exa mple.com' is not a host name or *.host name",
      "mx '<b>x</b>' is not a host name or *.host name",
    ]);
    // An HTML error page served as the policy: unusable, and said so.
    expect(parseMtaStsPolicy("<html><body>Not found</body></html>").errors[0]).toMatch(/^unreadable line '<html>/);
  });

  it("matches MX hosts against patterns: exact, or a wildcard for exactly one leftmost label", () => {
    expect(mxPatternMatches("mail.example.com", "MAIL.example.com.")).toBe(true);
    expect(mxPatternMatches("*.example.com", "mx1.example.com")).toBe(true);
    expect(mxPatternMatches("*.example.com", "a.b.example.com")).toBe(false);
    expect(mxPatternMatches("*.example.com", "example.com")).toBe(false);
    expect(mxPatternMatches("*.example.com", "mx1.badexample.com")).toBe(false);
    expect(uncoveredMxHosts({ mx: ["*.mail.test"] }, ["mx1.mail.test", "mx2.other.test"])).toEqual(["mx2.other.test"]);
  });
});

describe("TLS-RPT (RFC 8460)", () => {
  it("reads rua URIs and refuses unusable ones", () => {
    expect(parseTlsRpt(["v=TLSRPTv1; rua=mailto:tlsrpt@example.com,https://reports.example.com/v1"])).toEqual({
      record: "v=TLSRPTv1; rua=mailto:tlsrpt@example.com,https://reports.example.com/v1", rua: ["mailto:tlsrpt@example.com", "https://reports.example.com/v1"], errors: [],
    });
    expect(parseTlsRpt(["v=TLSRPTv1;"]).errors).toEqual(["no rua= tag: senders have nowhere to report"]);
    expect(parseTlsRpt(["v=TLSRPTv1; rua=http://x.example/r,mailto:nobody,ftp://x"]).errors).toEqual([
      "'http://x.example/r' is neither mailto: nor https:",
      "'mailto:nobody' has no usable mail address",
      "'ftp://x' is neither mailto: nor https:",
    ]);
    expect(parseTlsRpt(["v=TLSRPTv1; rua=mailto:a@x.test", "v=TLSRPTv1; rua=mailto:b@x.test"]).errors[0]).toMatch(/2 v=TLSRPTv1 records/);
    expect(parseTlsRpt(["v=spf1 -all"]).record).toBe("");
  });
});

describe("TLSA for SMTP (RFC 6698, RFC 7672)", () => {
  it("presents TLSA RDATA canonically and checks usage, selector, matching type and digest length", () => {
    expect(presentRecord("TLSA", Uint8Array.from([3, 1, 1, 0xab, 0xcd]))).toBe("3 1 1 ABCD");
    expect(() => presentRecord("TLSA", Uint8Array.from([3, 1]))).toThrow(/too short/);
    expect(parseTlsa(`3 1 1 ${K.MX_SPKI_SHA256.toLowerCase()}`)).toEqual({ usage: 3, selector: 1, matching_type: 1, data: K.MX_SPKI_SHA256, problem: "" });
    expect(parseTlsa(`1 1 1 ${K.MX_SPKI_SHA256}`)!.problem).toMatch(/usage 1 \(PKIX-EE\) is ignored by SMTP senders/);
    expect(parseTlsa(`3 2 1 ${K.MX_SPKI_SHA256}`)!.problem).toMatch(/selector 2 is not defined/);
    expect(parseTlsa(`3 1 7 ${K.MX_SPKI_SHA256}`)!.problem).toMatch(/matching type 7/);
    expect(parseTlsa("3 1 1 ABCD")!.problem).toBe("a SHA2-256 digest is 32 bytes, this one has 2");
    expect(parseTlsa(`3 1 2 ${K.MX_SPKI_SHA256}`)!.problem).toBe("a SHA2-512 digest is 64 bytes, this one has 32");
    expect(parseTlsa("garbage")).toBeNull();
    expect(parseTlsaSet(["<x>"])[0].problem).toMatch(/unreadable TLSA record/);
  });

  it("matches a served chain: DANE-EE against the server certificate, DANE-TA against the chain (digests from openssl)", async () => {
    const chain = [der(K.MX_CERT_DER_B64), der(K.CA_CERT_DER_B64)];
    const rec = (s: string) => parseTlsa(s)!;
    expect(await matchTlsa([rec(`3 1 1 ${K.MX_SPKI_SHA256}`)], chain)).toMatchObject({ chain_index: 0 });
    expect(await matchTlsa([rec(`3 0 1 ${K.MX_CERT_SHA256}`)], chain)).toMatchObject({ chain_index: 0 });
    expect(await matchTlsa([rec(`3 1 2 ${K.MX_SPKI_SHA512}`)], chain)).toMatchObject({ chain_index: 0 });
    expect(await matchTlsa([rec(`2 0 1 ${K.CA_CERT_SHA256}`)], chain)).toMatchObject({ chain_index: 1 });
    expect(await matchTlsa([rec(`2 1 1 ${K.CA_SPKI_SHA256}`)], chain)).toMatchObject({ chain_index: 1 });
    // DANE-EE names the server's own key only; the CA's digest under usage 3 matches nothing.
    expect(await matchTlsa([rec(`3 0 1 ${K.CA_CERT_SHA256}`)], chain)).toEqual({ record: null, chain_index: -1 });
    // Unusable records never match, even with the right digest.
    expect(await matchTlsa([rec(`1 1 1 ${K.MX_SPKI_SHA256}`)], chain)).toEqual({ record: null, chain_index: -1 });
    expect(await matchTlsa([rec(`3 1 1 ${K.MX_SPKI_SHA256}`)], [Uint8Array.from([0x30, 0x03, 0x02, 0x01, 0x01])])).toEqual({ record: null, chain_index: -1 });
  });
});

describe("DKIM keys (RFC 6376, RFC 8301, RFC 8463)", () => {
  it("reads RSA modulus lengths from SubjectPublicKeyInfo and PKCS#1 keys", () => {
    expect(rsaModulusBits(der(K.RSA512_SPKI))).toBe(512);
    expect(rsaModulusBits(der(K.RSA1024_SPKI))).toBe(1024);
    expect(rsaModulusBits(der(K.RSA2048_SPKI))).toBe(2048);
    expect(rsaModulusBits(der(K.RSA1024_PKCS1))).toBe(1024);
    expect(rsaModulusBits(der(K.RSA2048_PKCS1))).toBe(2048);
    expect(rsaModulusBits(Uint8Array.from([1, 2, 3]))).toBeNull();
  });

  it("classifies weak, legacy and strong keys, revoked, testing, Ed25519, and broken records", async () => {
    // A real-shaped record: base64 folded over several strings with spaces.
    const folded = `v=DKIM1; k=rsa; t=s; p=${K.RSA2048_SPKI.slice(0, 100)} ${K.RSA2048_SPKI.slice(100)}`;
    expect(await parseDkimKey([folded])).toMatchObject({ key_type: "rsa", bits: 2048, strength: "strong", revoked: false, testing: false, errors: [] });
    expect(await parseDkimKey([`v=DKIM1; p=${K.RSA1024_SPKI}`])).toMatchObject({ bits: 1024, strength: "legacy" });
    expect(await parseDkimKey([`p=${K.RSA512_SPKI}; t=y:s`])).toMatchObject({ bits: 512, strength: "weak", testing: true });
    expect(await parseDkimKey(["v=DKIM1; k=rsa; p="])).toMatchObject({ revoked: true, strength: "", errors: [] });
    // RFC 8463 §A.2's example key.
    expect(await parseDkimKey(["v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="])).toMatchObject({ key_type: "ed25519", bits: 256, strength: "strong" });
    expect((await parseDkimKey(["v=DKIM1; k=ed25519; p=AAAA"])).errors).toEqual(["an Ed25519 key is 32 bytes, p= has 3"]);
    expect((await parseDkimKey(["v=DKIM1; p=!!notbase64"])).errors).toEqual(["p= is not base64"]);
    expect((await parseDkimKey(["v=DKIM1; p=AAAA"])).errors).toEqual(["p= is not an RSA public key"]);
    expect((await parseDkimKey(["v=DKIM1; k=dsa; p=AAAA"])).errors).toEqual(["k='dsa' is not rsa or ed25519"]);
    expect((await parseDkimKey(["k=rsa; v=DKIM1; p=" + K.RSA2048_SPKI])).errors).toEqual(["v= must come first and be DKIM1"]);
    expect((await parseDkimKey(["v=DKIM1; p=a", "v=DKIM1; p=b"])).errors[0]).toMatch(/2 key records/);
    expect((await parseDkimKey(["some verification token"])).errors).toEqual(["no DKIM key record (no v=DKIM1 or p= tag)"]);
    const a = await parseDkimKey([`p=${K.RSA2048_SPKI}`]);
    const b = await parseDkimKey([`v=DKIM1; p=${K.RSA2048_PKCS1}`]);
    expect(a.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(a.fingerprint).not.toBe(b.fingerprint);
  });
});

describe("BIMI", () => {
  it("reads the logo and evidence locations and says whether DMARC enforcement holds", () => {
    expect(parseBimi(["v=BIMI1; l=https://brand.example/logo.svg; a=https://brand.example/vmc.pem"])).toMatchObject({ location: "https://brand.example/logo.svg", authority: "https://brand.example/vmc.pem", declined: false, errors: [] });
    expect(parseBimi(["v=BIMI1; l=; a=;"])).toMatchObject({ declined: true, errors: [] });
    expect(parseBimi(["v=BIMI1; l=http://brand.example/logo.svg"]).errors).toEqual(["l='http://brand.example/logo.svg' is not an https URL"]);
    expect(parseBimi(["v=BIMI1; l=https://brand.example/logo.png"]).errors).toEqual(["l='https://brand.example/logo.png' does not name an SVG file"]);
    expect(parseBimi(["v=BIMI1; l=javascript:alert(1)"]).errors).toEqual(["l='javascript:alert(1)' is not an https URL"]);
    expect(dmarcEnforcedForBimi(parseDmarc(["v=DMARC1; p=reject"]))).toBe(true);
    expect(dmarcEnforcedForBimi(parseDmarc(["v=DMARC1; p=quarantine; pct=50"]))).toBe(false);
    expect(dmarcEnforcedForBimi(parseDmarc(["v=DMARC1; p=reject; sp=none"]))).toBe(false);
    expect(dmarcEnforcedForBimi(parseDmarc(["v=DMARC1; p=none"]))).toBe(false);
  });
});

describe("the email_security view and its regressions", () => {
  const D = "mail.test";
  const policy = (body: string, id = "1") => {
    const p = parseMtaStsPolicy(body);
    return {
      url: `https://mta-sts.${D}/.well-known/mta-sts.txt`, fetched_for_id: id, fetched_at: "2026-11-29T00:00:00.000Z", next_fetch_at: "2026-11-30T00:00:00.000Z",
      outcome: p.errors.length ? ("invalid" as const) : ("ok" as const), problem: p.errors.length ? `the policy is invalid: ${p.errors.join("; ")}` : "", policy: p, fingerprint: policyFingerprint(p),
      collection: { ...NEVER_ATTEMPTED, last_attempt_at: "2026-11-29T00:00:00.000Z", last_success_at: "2026-11-29T00:00:00.000Z" },
    };
  };
  const GOOD_POLICY = "version: STSv1\nmode: enforce\nmx: *.mail.test\nmax_age: 604800\n";
  const tlsa = (values: string[], validated = true) => ({ values, validated, rcode: values.length ? "NOERROR" : "NXDOMAIN", collection: { ...NEVER_ATTEMPTED, last_success_at: "2026-11-29T00:00:00.000Z" } });
  const inputs = (over: { txt?: Record<string, string[]>; mx?: string[] | null; state?: Partial<EmailState>; dmarc?: string; selectors?: string[] } = {}): EmailInputs => {
    const txt: Record<string, string[]> = {
      [`_mta-sts.${D}`]: ["v=STSv1; id=1"],
      [`_smtp._tls.${D}`]: ["v=TLSRPTv1; rua=mailto:tls@mail.test"],
      [`default._bimi.${D}`]: ["v=BIMI1; l=https://mail.test/l.svg; a=https://mail.test/a.pem"],
      [`s1._domainkey.${D}`]: [`v=DKIM1; p=${K.RSA2048_SPKI}`],
      ...over.txt,
    };
    return {
      domain: D,
      txt: (n) => txt[n] ?? null,
      mx: over.mx === undefined ? [`10 mx1.${D}.`, `20 mx2.${D}.`] : over.mx,
      dmarc: parseDmarc([over.dmarc ?? "v=DMARC1; p=reject"]),
      selectors: over.selectors ?? ["s1"],
      state: { policy: policy(GOOD_POLICY), tlsa: { [`mx1.${D}`]: tlsa([`3 1 1 ${K.MX_SPKI_SHA256}`]), [`mx2.${D}`]: tlsa([`3 1 1 ${K.MX_SPKI_SHA256}`]) }, ...over.state },
    };
  };

  it("says ok for a complete setup and unknown for what was never observed", async () => {
    const v = await emailSecurityView(inputs());
    expect([v.mta_sts.status, v.tls_rpt.status, v.dane.status, v.dkim.status, v.bimi.status]).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    expect(v.mta_sts.mx_hosts).toEqual(["mx1.mail.test", "mx2.mail.test"]);
    expect(v.dkim.selectors[0]).toMatchObject({ selector: "s1", bits: 2048, strength: "strong" });
    const never = await emailSecurityView({ ...inputs({ mx: null, selectors: [] }), txt: () => null, state: { policy: null, tlsa: {} } });
    expect([never.mta_sts.status, never.tls_rpt.status, never.dane.status, never.dkim.status, never.bimi.status]).toEqual(["unknown", "unknown", "unknown", "unknown", "unknown"]);
    expect(never.dkim.findings[0]).toMatch(/No DKIM selector is declared/);
  });

  it("a policy fetch that fails leaves MTA-STS unknown with the reason, and compares as no change", async () => {
    const before = await emailSecurityView(inputs());
    const failing = inputs({ state: { policy: { ...policy(GOOD_POLICY), outcome: null, policy: null, fingerprint: "", collection: { ...NEVER_ATTEMPTED, failures: 1, error: "connection to mta-sts.mail.test:443 failed" } } } });
    const after = await emailSecurityView(failing);
    expect(after.mta_sts.status).toBe("unknown");
    expect(after.mta_sts.findings[0]).toBe("The policy could not be fetched: connection to mta-sts.mail.test:443 failed.");
    expect(emailRegressions(before, after, D)).toEqual([]);
  });

  it("names each regression, and none for improvements, reordering or first observations", async () => {
    const before = await emailSecurityView(inputs());
    const regress = async (over: Parameters<typeof inputs>[0]) => (emailRegressions(before, await emailSecurityView(inputs(over)), D)).map((r) => `${r.mechanism}:${r.kind}:${r.subject}`);
    expect(await regress({ state: { policy: policy(GOOD_POLICY.replace("enforce", "testing")) } })).toEqual(["mta_sts:mode_lowered:mail.test", "mta_sts:changed_without_id:mail.test"]);
    expect(await regress({ state: { policy: policy(GOOD_POLICY.replace("enforce", "testing"), "2") }, txt: { [`_mta-sts.${D}`]: ["v=STSv1; id=2"] } })).toEqual(["mta_sts:mode_lowered:mail.test"]);
    expect(await regress({ state: { policy: policy("version: STSv1\nmode: enforce\nmax_age: 604800\nmx: mx1.mail.test\n", "2") }, txt: { [`_mta-sts.${D}`]: ["v=STSv1; id=2"] } })).toEqual(["mta_sts:mx_not_covered:mail.test"]);
    expect(await regress({ state: { policy: policy(GOOD_POLICY.replace("604800", "3600"), "2") }, txt: { [`_mta-sts.${D}`]: ["v=STSv1; id=2"] } })).toEqual(["mta_sts:max_age_short:mail.test"]);
    expect(await regress({ state: { policy: policy("<html>oops</html>", "1") } })).toEqual(["mta_sts:policy_invalid:mail.test"]);
    expect(await regress({ txt: { [`_mta-sts.${D}`]: [] } })).toEqual(["mta_sts:removed:mail.test"]);
    expect(await regress({ txt: { [`_smtp._tls.${D}`]: [] } })).toEqual(["tls_rpt:removed:mail.test"]);
    expect(await regress({ txt: { [`_smtp._tls.${D}`]: ["v=TLSRPTv1; rua=http://x"] } })).toEqual(["tls_rpt:invalid:mail.test"]);
    expect(await regress({ state: { tlsa: { [`mx1.${D}`]: tlsa([]), [`mx2.${D}`]: tlsa([`3 1 1 ${K.MX_SPKI_SHA256}`], false) } } })).toEqual(["dane:removed:mx1.mail.test", "dane:unusable:mx2.mail.test"]);
    expect(await regress({ txt: { [`s1._domainkey.${D}`]: [`v=DKIM1; p=${K.RSA512_SPKI}`] } })).toEqual(["dkim:key_changed:s1", "dkim:weakened:s1"]);
    expect(await regress({ txt: { [`s1._domainkey.${D}`]: ["v=DKIM1; p="] } })).toEqual(["dkim:revoked:s1"]);
    expect(await regress({ txt: { [`s1._domainkey.${D}`]: [] } })).toEqual(["dkim:removed:s1"]);
    expect(await regress({ txt: { [`s1._domainkey.${D}`]: [`v=DKIM1; t=y; p=${K.RSA2048_SPKI}`] } })).toEqual(["dkim:testing_enabled:s1"]);
    expect(await regress({ txt: { [`default._bimi.${D}`]: [] } })).toEqual(["bimi:removed:mail.test"]);
    expect(await regress({ txt: { [`default._bimi.${D}`]: ["v=BIMI1; l=https://mail.test/new.svg; a=https://mail.test/a.pem"] } })).toEqual(["bimi:changed:mail.test"]);
    // Not regressions: the same policy in another field order, a stronger key, reordered MX, a first observation.
    expect(await regress({ state: { policy: policy("max_age: 604800\nmx: *.mail.test\nmode: enforce\nversion: STSv1\n") } })).toEqual([]);
    expect(await regress({ mx: [`20 mx2.${D}.`, `10 mx1.${D}.`] })).toEqual([]);
    const unknownBefore = await emailSecurityView({ ...inputs(), txt: () => null, state: { policy: null, tlsa: {} } });
    expect(emailRegressions(unknownBefore, before, D)).toEqual([]);
  });

  it("reads MX hosts in preference order, a null MX as none", () => {
    expect(mxHostsOf(["20 b.test.", "10 A.test.", "10 a.test."])).toEqual(["a.test", "b.test"]);
    expect(mxHostsOf(["0 ."])).toEqual([]);
  });
});
