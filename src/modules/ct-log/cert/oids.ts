/**
 * Object identifiers the certificate parser names. Names follow OpenSSL's
 * long/short names (what `openssl x509 -text` prints), because that is what
 * operators search for: sha256WithRSAEncryption, ecdsa-with-SHA256.
 */
import { encodeOid } from "./der";

export const OID = {
  subjectAltName: "2.5.29.17",
  authorityInfoAccess: "1.3.6.1.5.5.7.1.1",
  accessOcsp: "1.3.6.1.5.5.7.48.1",
  accessCaIssuers: "1.3.6.1.5.5.7.48.2",
  /** RFC 6962 §3.3: the embedded SignedCertificateTimestampList. */
  ctSctList: "1.3.6.1.4.1.11129.2.4.2",
  /** RFC 6962 §3.1: the critical poison extension that marks a precertificate. */
  ctPoison: "1.3.6.1.4.1.11129.2.4.3",
  commonName: "2.5.4.3",
  rsaEncryption: "1.2.840.113549.1.1.1",
  rsassaPss: "1.2.840.113549.1.1.10",
  dsa: "1.2.840.10040.4.1",
  ecPublicKey: "1.2.840.10045.2.1",
  ed25519: "1.3.101.112",
  ed448: "1.3.101.113",
} as const;

/** Encoded content octets, for byte comparisons on the hot path. */
export const OID_BYTES = {
  subjectAltName: encodeOid(OID.subjectAltName),
  authorityInfoAccess: encodeOid(OID.authorityInfoAccess),
  ctSctList: encodeOid(OID.ctSctList),
  ctPoison: encodeOid(OID.ctPoison),
  commonName: encodeOid(OID.commonName),
};

export const SIGNATURE_ALGORITHMS: Record<string, string> = {
  "1.2.840.113549.1.1.2": "md2WithRSAEncryption",
  "1.2.840.113549.1.1.4": "md5WithRSAEncryption",
  "1.2.840.113549.1.1.5": "sha1WithRSAEncryption",
  "1.2.840.113549.1.1.11": "sha256WithRSAEncryption",
  "1.2.840.113549.1.1.12": "sha384WithRSAEncryption",
  "1.2.840.113549.1.1.13": "sha512WithRSAEncryption",
  "1.2.840.113549.1.1.14": "sha224WithRSAEncryption",
  "1.2.840.113549.1.1.10": "rsassaPss",
  "1.2.840.10045.4.1": "ecdsa-with-SHA1",
  "1.2.840.10045.4.3.1": "ecdsa-with-SHA224",
  "1.2.840.10045.4.3.2": "ecdsa-with-SHA256",
  "1.2.840.10045.4.3.3": "ecdsa-with-SHA384",
  "1.2.840.10045.4.3.4": "ecdsa-with-SHA512",
  "1.2.840.10040.4.3": "dsa-with-SHA1",
  "2.16.840.1.101.3.4.3.2": "dsa-with-SHA256",
  "1.3.101.112": "ED25519",
  "1.3.101.113": "ED448",
};

/** Key algorithm names as the CT event schema spells them ("RSA", "EC"). */
export const KEY_ALGORITHMS: Record<string, string> = {
  [OID.rsaEncryption]: "RSA",
  [OID.rsassaPss]: "RSA-PSS",
  [OID.dsa]: "DSA",
  [OID.ecPublicKey]: "EC",
  [OID.ed25519]: "Ed25519",
  [OID.ed448]: "Ed448",
};

/** Named curves (NIST names where one exists). */
export const EC_CURVES: Record<string, string> = {
  "1.2.840.10045.3.1.7": "P-256",
  "1.3.132.0.34": "P-384",
  "1.3.132.0.35": "P-521",
  "1.3.132.0.10": "secp256k1",
  "1.2.840.10045.3.1.1": "P-192",
  "1.3.132.0.33": "P-224",
};

/** RFC 4514 §3 short names, plus the common ones OpenSSL prints. */
export const DN_ATTRIBUTE_NAMES: Record<string, string> = {
  "2.5.4.3": "CN",
  "2.5.4.7": "L",
  "2.5.4.8": "ST",
  "2.5.4.10": "O",
  "2.5.4.11": "OU",
  "2.5.4.6": "C",
  "2.5.4.9": "STREET",
  "0.9.2342.19200300.100.1.25": "DC",
  "0.9.2342.19200300.100.1.1": "UID",
  "2.5.4.5": "serialNumber",
  "2.5.4.4": "SN",
  "2.5.4.42": "GN",
  "2.5.4.12": "title",
  "2.5.4.15": "businessCategory",
  "2.5.4.17": "postalCode",
  "2.5.4.97": "organizationIdentifier",
  "1.2.840.113549.1.9.1": "emailAddress",
  "1.3.6.1.4.1.311.60.2.1.3": "jurisdictionC",
  "1.3.6.1.4.1.311.60.2.1.2": "jurisdictionST",
  "1.3.6.1.4.1.311.60.2.1.1": "jurisdictionL",
};

/** RFC 5246 §7.4.1.4.1 HashAlgorithm, as used in SCTs' DigitallySigned. */
export const TLS_HASH_ALGORITHMS = ["none", "md5", "sha1", "sha224", "sha256", "sha384", "sha512"];
/** RFC 5246 SignatureAlgorithm (+ RFC 8422 ed25519/ed448 = 7/8). */
export const TLS_SIGNATURE_ALGORITHMS = ["anonymous", "rsa", "dsa", "ecdsa", "4", "5", "6", "ed25519", "ed448"];
