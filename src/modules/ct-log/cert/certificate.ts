/**
 * Fast X.509 certificate / precertificate TBS parser for CT ingestion.
 *
 * Accepts either a full Certificate (RFC 5280 §4.1) or a bare TBSCertificate,
 * which is what an RFC 6962 / static-ct-api precert_entry carries. Reads only
 * the fields the CT event needs, with offsets into the input (no copies of the
 * DER). Malformed input throws `DerError`; never anything else.
 */
import ipaddr from "ipaddr.js";
import { DerError, TAG, decodeOid, expectElement, oidEquals, readElement, toHex, latin1, type DerElement } from "./der";
import { decodeDirectoryString, decodeName, formatDn, type Rdn } from "./dn";
import { EC_CURVES, KEY_ALGORITHMS, OID_BYTES, OID, SIGNATURE_ALGORITHMS } from "./oids";
import { parseSctList, type SignedCertificateTimestamp } from "./sct";
import { classifyCertificateName } from "./names";

export interface CertificateInfo {
  /** "certificate" for a full signed certificate, "tbs" for a bare TBSCertificate (precert log entry). */
  kind: "certificate" | "tbs";
  /** The CT poison extension is present (a precertificate), or the input was a precert TBS. */
  isPrecert: boolean;
  /** X.509 version number as written (1, 2 or 3). */
  version: number;
  /** Serial number, lowercase hex of its magnitude (no sign-padding 00, no colons). */
  serial: string;
  /** Issuer DN, RFC 4514. */
  issuer: string;
  /** Issuer RDNs in encoded order (most significant first). */
  issuerRdns: Rdn[];
  /** Subject DN, RFC 4514. */
  subject: string;
  /** Subject common name (the last CN attribute), "" when absent. */
  subjectCn: string;
  /** ISO 8601 (Date.toISOString()). */
  notBefore: string;
  notAfter: string;
  /** e.g. sha256WithRSAEncryption, ecdsa-with-SHA256; the dotted OID when unknown. */
  signatureAlgorithm: string;
  /** "RSA", "EC", "DSA", "Ed25519", ...; the dotted OID when unknown. */
  keyAlgorithm: string;
  /** Bits of the RSA modulus or DSA prime p; null for other key types. */
  keySize: number | null;
  /** Named curve of an EC key (P-256, P-384, ...), null otherwise. */
  curve: string | null;
  /** dNSName SANs exactly as reported (hostile ones included; see names.ts). */
  dnsNames: string[];
  /** iPAddress SANs, textual (RFC 5952 for IPv6). */
  ipAddresses: string[];
  /** AIA caIssuers URIs. */
  aiaIssuing: string[];
  /** AIA OCSP URIs. */
  ocspServers: string[];
  /** Embedded SCTs (empty for precertificates and most non-CT certs). */
  scts: SignedCertificateTimestamp[];
  /** Byte range of the TBSCertificate in the input (for the dedup key). */
  tbsStart: number;
  tbsEnd: number;
  /** Byte range of the SubjectPublicKeyInfo in the input (the key's identity: spki_sha256). */
  spkiStart: number;
  spkiEnd: number;
}

/**
 * Parses a DER Certificate or TBSCertificate.
 * @param options.precertTbs mark a bare TBS as a precertificate (log precert_entry).
 */
export function parseCertificate(der: Uint8Array, options: { precertTbs?: boolean } = {}): CertificateInfo {
  const outer = expectElement(der, 0, der.length, TAG.SEQUENCE, "Certificate or TBSCertificate");
  const first = readElement(der, outer.valueStart, outer.end);
  let tbs: DerElement;
  let kind: "certificate" | "tbs";
  let outerSigAlg: DerElement | null = null;
  if (first.tag === TAG.SEQUENCE) {
    kind = "certificate";
    tbs = first;
    outerSigAlg = expectElement(der, tbs.end, outer.end, TAG.SEQUENCE, "signatureAlgorithm");
  } else {
    kind = "tbs";
    tbs = outer;
  }

  let p = tbs.valueStart;
  let el = readElement(der, p, tbs.end);
  let version = 1;
  if (el.tag === 0xa0) {
    const v = expectElement(der, el.valueStart, el.end, TAG.INTEGER, "version");
    version = der[v.end - 1] + 1;
    p = el.end;
    el = readElement(der, p, tbs.end);
  }
  if (el.tag !== TAG.INTEGER) throw new DerError("expected serialNumber INTEGER", el.start);
  const serial = serialHex(der, el);
  const tbsSigAlg = expectElement(der, el.end, tbs.end, TAG.SEQUENCE, "signature AlgorithmIdentifier");
  const issuerEl = expectElement(der, tbsSigAlg.end, tbs.end, TAG.SEQUENCE, "issuer Name");
  const validity = expectElement(der, issuerEl.end, tbs.end, TAG.SEQUENCE, "validity");
  const subjectEl = expectElement(der, validity.end, tbs.end, TAG.SEQUENCE, "subject Name");
  const spki = expectElement(der, subjectEl.end, tbs.end, TAG.SEQUENCE, "subjectPublicKeyInfo");

  const nb = readElement(der, validity.valueStart, validity.end);
  const na = readElement(der, nb.end, validity.end);

  const issuerRdns = decodeName(der, issuerEl);
  const subjectRdns = decodeName(der, subjectEl);
  let subjectCn = "";
  for (const rdn of subjectRdns) for (const a of rdn) if (a.oid === OID.commonName) subjectCn = a.value;

  const sigAlgOid = algorithmOid(der, outerSigAlg ?? tbsSigAlg);
  const key = readKey(der, spki);

  const info: CertificateInfo = {
    kind,
    isPrecert: kind === "tbs" && options.precertTbs === true,
    version,
    serial,
    issuer: formatDn(issuerRdns),
    issuerRdns,
    subject: formatDn(subjectRdns),
    subjectCn,
    notBefore: decodeTime(der, nb),
    notAfter: decodeTime(der, na),
    signatureAlgorithm: SIGNATURE_ALGORITHMS[sigAlgOid] ?? sigAlgOid,
    keyAlgorithm: key.algorithm,
    keySize: key.size,
    curve: key.curve,
    dnsNames: [],
    ipAddresses: [],
    aiaIssuing: [],
    ocspServers: [],
    scts: [],
    tbsStart: tbs.start,
    tbsEnd: tbs.end,
    spkiStart: spki.start,
    spkiEnd: spki.end,
  };

  // Optional issuerUniqueID [1], subjectUniqueID [2], extensions [3].
  p = spki.end;
  while (p < tbs.end) {
    const opt = readElement(der, p, tbs.end);
    if (opt.tag === 0xa3) readExtensions(der, opt, info);
    p = opt.end;
  }
  return info;
}

/**
 * The SubjectPublicKeyInfo of a Certificate or TBSCertificate, as a view into `der`: what
 * an issuer's key hash is computed over (RFC 6962 issuer_key_hash) without a full parse.
 */
export function subjectPublicKeyInfo(der: Uint8Array): Uint8Array {
  const outer = expectElement(der, 0, der.length, TAG.SEQUENCE, "Certificate or TBSCertificate");
  const first = readElement(der, outer.valueStart, outer.end);
  const tbs = first.tag === TAG.SEQUENCE ? first : outer;
  let el = readElement(der, tbs.valueStart, tbs.end);
  if (el.tag === 0xa0) el = readElement(der, el.end, tbs.end);
  // serialNumber, signature, issuer, validity, subject, then the key.
  for (let i = 0; i < 4; i++) el = readElement(der, el.end, tbs.end);
  const spki = expectElement(der, el.end, tbs.end, TAG.SEQUENCE, "subjectPublicKeyInfo");
  return der.subarray(spki.start, spki.end);
}

function readExtensions(der: Uint8Array, wrapper: DerElement, info: CertificateInfo): void {
  const seq = expectElement(der, wrapper.valueStart, wrapper.end, TAG.SEQUENCE, "Extensions");
  let p = seq.valueStart;
  while (p < seq.end) {
    const ext = expectElement(der, p, seq.end, TAG.SEQUENCE, "Extension");
    p = ext.end;
    const id = expectElement(der, ext.valueStart, ext.end, TAG.OID, "extnID");
    let v = readElement(der, id.end, ext.end);
    if (v.tag === TAG.BOOLEAN) v = readElement(der, v.end, ext.end);
    if (v.tag !== TAG.OCTET_STRING) throw new DerError("extnValue is not an OCTET STRING", v.start);
    if (oidEquals(der, id, OID_BYTES.subjectAltName)) readSubjectAltNames(der, v, info);
    else if (oidEquals(der, id, OID_BYTES.authorityInfoAccess)) readAia(der, v, info);
    else if (oidEquals(der, id, OID_BYTES.ctSctList)) {
      const inner = expectElement(der, v.valueStart, v.end, TAG.OCTET_STRING, "SignedCertificateTimestampList");
      info.scts = parseSctList(der.subarray(inner.valueStart, inner.end));
    } else if (oidEquals(der, id, OID_BYTES.ctPoison)) info.isPrecert = true;
  }
}

function readSubjectAltNames(der: Uint8Array, value: DerElement, info: CertificateInfo): void {
  const seq = expectElement(der, value.valueStart, value.end, TAG.SEQUENCE, "GeneralNames");
  let p = seq.valueStart;
  while (p < seq.end) {
    const gn = readElement(der, p, seq.end);
    p = gn.end;
    if (gn.tag === 0x82) {
      // dNSName is an IA5String; keep the bytes as reported (Latin-1 keeps NUL and high bytes visible).
      info.dnsNames.push(latin1(der, gn.valueStart, gn.end));
    } else if (gn.tag === 0x87) {
      const len = gn.end - gn.valueStart;
      if (len === 4 || len === 16) {
        info.ipAddresses.push(ipaddr.fromByteArray(Array.from(der.subarray(gn.valueStart, gn.end))).toString());
      } else {
        info.ipAddresses.push(toHex(der, gn.valueStart, gn.end)); // a malformed length: keep as hex evidence
      }
    }
  }
}

function readAia(der: Uint8Array, value: DerElement, info: CertificateInfo): void {
  const seq = expectElement(der, value.valueStart, value.end, TAG.SEQUENCE, "AuthorityInfoAccessSyntax");
  let p = seq.valueStart;
  while (p < seq.end) {
    const ad = expectElement(der, p, seq.end, TAG.SEQUENCE, "AccessDescription");
    p = ad.end;
    const method = expectElement(der, ad.valueStart, ad.end, TAG.OID, "accessMethod");
    const loc = readElement(der, method.end, ad.end);
    if (loc.tag !== 0x86) continue; // only uniformResourceIdentifier locations are useful
    const uri = latin1(der, loc.valueStart, loc.end);
    const m = decodeOid(der, method);
    if (m === OID.accessOcsp) info.ocspServers.push(uri);
    else if (m === OID.accessCaIssuers) info.aiaIssuing.push(uri);
  }
}

function algorithmOid(der: Uint8Array, algId: DerElement): string {
  return decodeOid(der, expectElement(der, algId.valueStart, algId.end, TAG.OID, "algorithm OID"));
}

function readKey(der: Uint8Array, spki: DerElement): { algorithm: string; size: number | null; curve: string | null } {
  const algId = expectElement(der, spki.valueStart, spki.end, TAG.SEQUENCE, "AlgorithmIdentifier");
  const oidEl = expectElement(der, algId.valueStart, algId.end, TAG.OID, "algorithm OID");
  const oid = decodeOid(der, oidEl);
  const algorithm = KEY_ALGORITHMS[oid] ?? oid;
  const bits = expectElement(der, algId.end, spki.end, TAG.BIT_STRING, "subjectPublicKey");
  const params = oidEl.end < algId.end ? readElement(der, oidEl.end, algId.end) : null;
  if (oid === OID.rsaEncryption || oid === OID.rsassaPss) {
    // RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }, after the unused-bits octet.
    const rsa = expectElement(der, bits.valueStart + 1, bits.end, TAG.SEQUENCE, "RSAPublicKey");
    const mod = expectElement(der, rsa.valueStart, rsa.end, TAG.INTEGER, "modulus");
    return { algorithm, size: integerBitLength(der, mod), curve: null };
  }
  if (oid === OID.dsa && params && params.tag === TAG.SEQUENCE) {
    const pEl = expectElement(der, params.valueStart, params.end, TAG.INTEGER, "DSA p");
    return { algorithm, size: integerBitLength(der, pEl), curve: null };
  }
  if (oid === OID.ecPublicKey && params && params.tag === TAG.OID) {
    const c = decodeOid(der, params);
    return { algorithm, size: null, curve: EC_CURVES[c] ?? c };
  }
  return { algorithm, size: null, curve: null };
}

function integerBitLength(der: Uint8Array, el: DerElement): number {
  let i = el.valueStart;
  while (i < el.end && der[i] === 0) i++;
  if (i === el.end) return 0;
  return (el.end - i - 1) * 8 + (32 - Math.clz32(der[i]));
}

function serialHex(der: Uint8Array, el: DerElement): string {
  let start = el.valueStart;
  // Drop the sign-padding octet of a positive INTEGER so the hex is the serial's magnitude.
  if (el.end - start > 1 && der[start] === 0 && der[start + 1] & 0x80) start++;
  return toHex(der, start, el.end);
}

/** UTCTime / GeneralizedTime to ISO 8601; RFC 5280 §4.1.2.5 forms (Z, seconds), fractions tolerated. */
function decodeTime(der: Uint8Array, el: DerElement): string {
  const s = latin1(der, el.valueStart, el.end);
  let m: RegExpExecArray | null;
  let year: number;
  let rest: RegExpExecArray;
  if (el.tag === TAG.UTC_TIME && (m = /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)?Z$/.exec(s))) {
    const yy = Number(m[1]);
    year = yy >= 50 ? 1900 + yy : 2000 + yy; // RFC 5280: 50..99 => 19YY
    rest = m;
  } else if (el.tag === TAG.GENERALIZED_TIME && (m = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(?:\.\d+)?Z$/.exec(s))) {
    year = Number(m[1]);
    rest = m;
  } else {
    throw new DerError(`invalid time '${s.replace(/[^\x20-\x7e]/g, "?")}'`, el.start);
  }
  const ms = Date.UTC(year, Number(rest[2]) - 1, Number(rest[3]), Number(rest[4]), Number(rest[5]), Number(rest[6] ?? 0));
  const d = new Date(ms);
  if (Number.isNaN(ms) || d.getUTCMonth() !== Number(rest[2]) - 1) throw new DerError(`invalid date '${s}'`, el.start);
  return d.toISOString();
}

/** Subject CN and dNSName SANs only: the ingest hot path (every log entry) needs nothing else to match. */
export interface CertificateNameFields {
  subjectCn: string;
  dnsNames: string[];
}

/**
 * Reads only the subject common name and dNSName SANs of a Certificate or TBS,
 * skipping DN formatting, times, keys and SCTs (about twice as fast as
 * parseCertificate). Throws DerError on malformed input like parseCertificate.
 */
export function readCertificateNames(der: Uint8Array): CertificateNameFields {
  const outer = expectElement(der, 0, der.length, TAG.SEQUENCE, "Certificate or TBSCertificate");
  const first = readElement(der, outer.valueStart, outer.end);
  const tbs = first.tag === TAG.SEQUENCE ? first : outer;
  let el = readElement(der, tbs.valueStart, tbs.end);
  if (el.tag === 0xa0) el = readElement(der, el.end, tbs.end);
  if (el.tag !== TAG.INTEGER) throw new DerError("expected serialNumber INTEGER", el.start);
  const sigAlg = readElement(der, el.end, tbs.end);
  const issuer = readElement(der, sigAlg.end, tbs.end);
  const validity = readElement(der, issuer.end, tbs.end);
  const subject = expectElement(der, validity.end, tbs.end, TAG.SEQUENCE, "subject Name");
  const spki = readElement(der, subject.end, tbs.end);
  const out: CertificateNameFields = { subjectCn: readCommonName(der, subject), dnsNames: [] };
  let p = spki.end;
  while (p < tbs.end) {
    const opt = readElement(der, p, tbs.end);
    p = opt.end;
    if (opt.tag !== 0xa3) continue;
    const seq = expectElement(der, opt.valueStart, opt.end, TAG.SEQUENCE, "Extensions");
    let q = seq.valueStart;
    while (q < seq.end) {
      const ext = expectElement(der, q, seq.end, TAG.SEQUENCE, "Extension");
      q = ext.end;
      const id = expectElement(der, ext.valueStart, ext.end, TAG.OID, "extnID");
      if (!oidEquals(der, id, OID_BYTES.subjectAltName)) continue;
      let v = readElement(der, id.end, ext.end);
      if (v.tag === TAG.BOOLEAN) v = readElement(der, v.end, ext.end);
      if (v.tag !== TAG.OCTET_STRING) throw new DerError("extnValue is not an OCTET STRING", v.start);
      const names = expectElement(der, v.valueStart, v.end, TAG.SEQUENCE, "GeneralNames");
      let r = names.valueStart;
      while (r < names.end) {
        const gn = readElement(der, r, names.end);
        r = gn.end;
        if (gn.tag === 0x82) out.dnsNames.push(latin1(der, gn.valueStart, gn.end));
      }
    }
  }
  return out;
}

/** The last CN attribute of a Name, decoded like decodeName does; "" when absent. */
function readCommonName(der: Uint8Array, name: DerElement): string {
  let cn = "";
  let p = name.valueStart;
  while (p < name.end) {
    const set = readElement(der, p, name.end);
    p = set.end;
    let q = set.valueStart;
    while (q < set.end) {
      const atv = readElement(der, q, set.end);
      q = atv.end;
      const type = readElement(der, atv.valueStart, atv.end);
      if (type.tag === TAG.OID && oidEquals(der, type, OID_BYTES.commonName)) {
        cn = decodeDirectoryString(der, readElement(der, type.end, atv.end));
      }
    }
  }
  return cn;
}

/** Names of a certificate split into those that can be matched (normalized) and those skipped with a reason. */
export interface CertificateNames {
  /** Normalized, de-duplicated dNSNames plus the subject CN when it is a DNS name. */
  matchable: string[];
  skipped: { name: string; problem: string }[];
}

export function certificateNames(info: Pick<CertificateInfo, "dnsNames" | "subjectCn">): CertificateNames {
  const matchable: string[] = [];
  const skipped: { name: string; problem: string }[] = [];
  const seen = new Set<string>();
  const consider = (raw: string, fromCn: boolean) => {
    const v = classifyCertificateName(raw);
    if (v.name === null) {
      // A CN that is not a hostname (an organization name, an IP) is normal; only SANs are reported as skipped.
      if (!fromCn) skipped.push({ name: raw, problem: v.problem });
      return;
    }
    if (!seen.has(v.name)) {
      seen.add(v.name);
      matchable.push(v.name);
    }
  };
  for (const n of info.dnsNames) consider(n, false);
  if (info.subjectCn) consider(info.subjectCn, true);
  return { matchable, skipped };
}
