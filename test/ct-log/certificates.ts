/**
 * Self-signed ECDSA P-256 certificates naming given DNS names, built with
 * @peculiar/asn1-x509 over WebCrypto, to append to the fixture CT logs.
 */
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { ECDSASigValue } from "@peculiar/asn1-ecc";
import {
  AlgorithmIdentifier, AttributeTypeAndValue, AttributeValue, Certificate, Extension, Extensions, GeneralName, Name, RelativeDistinguishedName,
  SubjectAlternativeName, SubjectPublicKeyInfo, TBSCertificate, Validity, Version, id_ce_subjectAltName,
} from "@peculiar/asn1-x509";

const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";

/** A self-signed ECDSA P-256 certificate naming `names` (CN = the first); returns base64 DER and its SHA-256 hex. */
export async function certificate(names: string[]): Promise<{ b64: string; sha256: string }> {
  const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const spki = AsnConvert.parse(new Uint8Array((await crypto.subtle.exportKey("spki", keys.publicKey)) as ArrayBuffer), SubjectPublicKeyInfo);
  const name = new Name([new RelativeDistinguishedName([new AttributeTypeAndValue({ type: "2.5.4.3", value: new AttributeValue({ utf8String: names[0] }) })])]);
  const serial = crypto.getRandomValues(new Uint8Array(8));
  serial[0] &= 0x7f;
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: serial.buffer as ArrayBuffer,
    signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
    issuer: name,
    validity: new Validity({ notBefore: new Date(Date.now() - 3600_000), notAfter: new Date(Date.now() + 30 * 86400_000) }),
    subject: name,
    subjectPublicKeyInfo: spki,
    extensions: new Extensions([
      new Extension({
        extnID: id_ce_subjectAltName,
        critical: false,
        extnValue: new OctetString(AsnConvert.serialize(new SubjectAlternativeName(names.map((dNSName) => new GeneralName({ dNSName }))))),
      }),
    ]),
  });
  const tbsDer = AsnConvert.serialize(tbs);
  const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, tbsDer));
  const sig = AsnConvert.serialize(new ECDSASigValue({ r: raw.slice(0, 32).buffer, s: raw.slice(32).buffer }));
  const cert = new Certificate({ tbsCertificate: tbs, signatureAlgorithm: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }), signatureValue: sig });
  const der = new Uint8Array(AsnConvert.serialize(cert));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", der));
  return { b64: btoa(String.fromCharCode(...der)), sha256: Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("") };
}
