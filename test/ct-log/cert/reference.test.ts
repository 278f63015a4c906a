/**
 * The hand-written DER walker against the reference implementation
 * (@peculiar/asn1-x509 for structure, WebCrypto for key sizes and curves) on
 * every real certificate we have: the 1024 navigli precertificates (full DER and
 * logged TBS), the cloudflare.com chain, the GTS WE1 issuer, the Let's Encrypt
 * staging issuers and the RFC 6962 log entries with their chains.
 */
import { describe, expect, it } from "vitest";
import { AsnConvert } from "@peculiar/asn1-schema";
import {
  AuthorityInfoAccessSyntax,
  Certificate,
  Name,
  SubjectAlternativeName,
  TBSCertificate,
  Time,
  id_pe_authorityInfoAccess,
  id_ce_subjectAltName,
  id_ad_ocsp,
  id_ad_caIssuers,
} from "@peculiar/asn1-x509";
import { parseCertificate, type CertificateInfo } from "../../../src/modules/ct-log/cert/certificate";
import { EC_CURVES, KEY_ALGORITHMS, SIGNATURE_ALGORITHMS } from "../../../src/modules/ct-log/cert/oids";
import { ctBytes, hex, navigliPrecerts, pemCertificates, rfc6962Certificates } from "./fixture";

const ab = (u: Uint8Array) => u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;

function referenceRdns(name: Name) {
  return name.map((rdn) => rdn.map((atv) => ({ oid: atv.type, value: atv.value.toString() })));
}

const time = (t: Time) => t.getTime().toISOString();

function referenceOf(tbs: TBSCertificate, sigAlgOid: string) {
  let serial = hex(new Uint8Array(tbs.serialNumber));
  if (serial.length > 2 && serial.startsWith("00") && parseInt(serial.slice(2, 4), 16) >= 0x80) serial = serial.slice(2);
  const dnsNames: string[] = [];
  const ips: number[] = [];
  const aia: string[] = [];
  const ocsp: string[] = [];
  let poison = false;
  let sctExt = false;
  for (const ext of tbs.extensions ?? []) {
    if (ext.extnID === id_ce_subjectAltName) {
      for (const gn of AsnConvert.parse(ext.extnValue, SubjectAlternativeName)) {
        if (gn.dNSName !== undefined) dnsNames.push(gn.dNSName);
        if (gn.iPAddress !== undefined) ips.push(1);
      }
    } else if (ext.extnID === id_pe_authorityInfoAccess) {
      for (const ad of AsnConvert.parse(ext.extnValue, AuthorityInfoAccessSyntax)) {
        const uri = ad.accessLocation.uniformResourceIdentifier;
        if (uri === undefined) continue;
        if (ad.accessMethod === id_ad_ocsp) ocsp.push(uri);
        if (ad.accessMethod === id_ad_caIssuers) aia.push(uri);
      }
    } else if (ext.extnID === "1.3.6.1.4.1.11129.2.4.3") poison = true;
    else if (ext.extnID === "1.3.6.1.4.1.11129.2.4.2") sctExt = true;
  }
  return {
    version: tbs.version + 1,
    serial,
    issuer: referenceRdns(tbs.issuer),
    subject: referenceRdns(tbs.subject),
    notBefore: time(tbs.validity.notBefore),
    notAfter: time(tbs.validity.notAfter),
    signatureAlgorithm: SIGNATURE_ALGORITHMS[sigAlgOid] ?? sigAlgOid,
    keyAlgorithm: KEY_ALGORITHMS[tbs.subjectPublicKeyInfo.algorithm.algorithm] ?? tbs.subjectPublicKeyInfo.algorithm.algorithm,
    dnsNames,
    ipCount: ips.length,
    aiaIssuing: aia,
    ocspServers: ocsp,
    poison,
    sctExt,
    spki: new Uint8Array(AsnConvert.serialize(tbs.subjectPublicKeyInfo)),
  };
}

function ours(c: CertificateInfo) {
  return {
    version: c.version,
    serial: c.serial,
    issuer: c.issuerRdns.map((rdn) => rdn.map((a) => ({ oid: a.oid, value: a.value }))),
    notBefore: c.notBefore,
    notAfter: c.notAfter,
    signatureAlgorithm: c.signatureAlgorithm,
    keyAlgorithm: c.keyAlgorithm,
    dnsNames: c.dnsNames,
    ipCount: c.ipAddresses.length,
    aiaIssuing: c.aiaIssuing,
    ocspServers: c.ocspServers,
  };
}

/** Key size / curve from WebCrypto, the independent reference for SPKI decoding. */
async function webCryptoKey(spki: Uint8Array, keyAlgorithm: string): Promise<{ size: number | null; curve: string | null }> {
  if (keyAlgorithm === "RSA") {
    const k = await crypto.subtle.importKey("spki", ab(spki), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, true, ["verify"]);
    const jwk = (await crypto.subtle.exportKey("jwk", k)) as JsonWebKey;
    const n = atob(jwk.n!.replace(/-/g, "+").replace(/_/g, "/"));
    return { size: (n.length - 1) * 8 + (32 - Math.clz32(n.charCodeAt(0))), curve: null };
  }
  if (keyAlgorithm === "EC") {
    for (const curve of ["P-256", "P-384", "P-521"]) {
      try {
        await crypto.subtle.importKey("spki", ab(spki), { name: "ECDSA", namedCurve: curve }, true, ["verify"]);
        return { size: null, curve };
      } catch {
        /* try the next curve */
      }
    }
  }
  return { size: null, curve: null };
}

async function compareCertificate(der: Uint8Array) {
  const ref = AsnConvert.parse(ab(der), Certificate);
  const want = referenceOf(ref.tbsCertificate, ref.signatureAlgorithm.algorithm);
  const got = parseCertificate(der);
  const { poison, sctExt, spki, subject, ...rest } = want;
  expect(ours(got)).toEqual(rest);
  expect(got.isPrecert).toBe(poison);
  expect(got.scts.length > 0).toBe(sctExt);
  expect({ size: got.keySize, curve: got.curve }).toEqual(await webCryptoKey(spki, got.keyAlgorithm));
  const cn = subject.flat().filter((a) => a.oid === "2.5.4.3").pop()?.value ?? "";
  expect(got.subjectCn).toBe(cn);
  return { ref, got };
}

describe("DER walker agrees with @peculiar/asn1-x509", () => {
  it("on all 1024 navigli precertificates and their logged TBS", async () => {
    const entries = await navigliPrecerts();
    expect(entries).toHaveLength(1024);
    for (const e of entries) {
      await compareCertificate(e.preCertificate);
      const refTbs = AsnConvert.parse(ab(e.tbs), TBSCertificate);
      const want = referenceOf(refTbs, refTbs.signature.algorithm);
      const got = parseCertificate(e.tbs, { precertTbs: true });
      const { poison, sctExt, spki, subject, ...rest } = want;
      expect(ours(got)).toEqual(rest);
      expect(poison).toBe(false); // the log removed it; the flag comes from the entry type
      expect(got.isPrecert).toBe(true);
    }
  });

  it("on the real certificate chains", async () => {
    const pems = [
      "certs/cloudflare-com-chain-2025.pem",
      "certs/gts-we1-issuer.pem",
      ...["stg-e5-cross", "stg-e6-cross", "stg-r10", "stg-r11", "stg-root-x1"].map((n) => `static-ct/navigli2025h2/issuers/${n}.pem`),
    ];
    let count = 0;
    for (const p of pems) {
      for (const der of pemCertificates(new TextDecoder().decode(await ctBytes(p)))) {
        await compareCertificate(der);
        count++;
      }
    }
    for (const f of ["get-entries.pilot-2013.4-x509.json", "get-entries.letsencrypt-2018.1-x509.json"]) {
      for (const { leaf, chain } of await rfc6962Certificates(f)) {
        for (const der of [leaf, ...chain]) {
          await compareCertificate(der);
          count++;
        }
      }
    }
    expect(count).toBeGreaterThanOrEqual(20);
  });

  it("names curves the way the OID table says", () => {
    expect(EC_CURVES["1.2.840.10045.3.1.7"]).toBe("P-256");
  });
});
