// The served chain as data: leaf details, intermediates, self-signed detection (subject ==
// issuer, whatever the trust anchor), and path validation with node's X509Certificate against
// the system store or the monitor's root_ca.
import { createHash, X509Certificate } from "node:crypto";
import { createRequire } from "node:module";
import type { ChainEntry, LeafCertificate, PathEntry, Validation } from "@trust-plane/scan-contract";

const require = createRequire(import.meta.url);

/** What the served chain tells: the contract's certificate fields of a scan result (packages/scan-contract). */
export interface ChainReport {
  certificate: LeafCertificate;
  validity_days: number;
  self_signed: boolean;
  chain_length: number;
  intermediates: ChainEntry[];
  /** The intermediates' DER, base64, in served order (DANE-TA matching by the Worker). */
  intermediates_der: string[];
  validation_path: PathEntry[];
  validation: Validation;
}

export class CertificateError extends Error { override name = "CertificateError"; }

// Signature AlgorithmIdentifier OIDs -> OpenSSL names (the names the Mozilla guidelines use).
const SIG_OIDS: Record<string, string> = {
  "1.2.840.113549.1.1.4": "md5WithRSAEncryption", "1.2.840.113549.1.1.5": "sha1WithRSAEncryption",
  "1.2.840.113549.1.1.11": "sha256WithRSAEncryption", "1.2.840.113549.1.1.12": "sha384WithRSAEncryption",
  "1.2.840.113549.1.1.13": "sha512WithRSAEncryption", "1.2.840.113549.1.1.14": "sha224WithRSAEncryption",
  "1.2.840.113549.1.1.10": "rsassaPss", "1.2.840.10045.4.1": "ecdsa-with-SHA1", "1.2.840.10045.4.3.1": "ecdsa-with-SHA224",
  "1.2.840.10045.4.3.2": "ecdsa-with-SHA256", "1.2.840.10045.4.3.3": "ecdsa-with-SHA384", "1.2.840.10045.4.3.4": "ecdsa-with-SHA512",
  "1.3.101.112": "ED25519", "1.3.101.113": "ED448", "1.2.840.10040.4.3": "dsaWithSHA1", "2.16.840.1.101.3.4.3.2": "dsa_with_SHA256",
};
const CURVE_BITS: Record<string, number> = { prime256v1: 256, secp384r1: 384, secp521r1: 521, secp256k1: 256, secp224r1: 224 };

interface Tlv { tag: number; from: number; start: number; end: number }

/** The DER TLV at `pos`: tag, where it begins, where its value starts and ends (definite lengths). */
function tlv(der: Buffer, pos: number): Tlv {
  if (pos + 2 > der.length) throw new CertificateError("truncated DER");
  const tag = der[pos];
  let len = der[pos + 1];
  let start = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n < 1 || n > 4 || start + n > der.length) throw new CertificateError("bad DER length");
    len = der.readUIntBE(start, n);
    start += n;
  }
  if (start + len > der.length) throw new CertificateError("truncated DER");
  return { tag, from: pos, start, end: start + len };
}

/** Minimal DER walk: Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }. */
export function signatureAlgorithmOid(der: Buffer): string {
  const cert = tlv(der, 0);
  const tbs = tlv(der, cert.start);
  const alg = tlv(der, tbs.end);
  const oid = tlv(der, alg.start);
  if (oid.tag !== 0x06) throw new CertificateError("signatureAlgorithm without OID");
  const b = der.subarray(oid.start, oid.end);
  const parts = [Math.floor(b[0] / 40), b[0] % 40];
  let v = 0;
  for (let i = 1; i < b.length; i++) {
    v = v * 128 + (b[i] & 0x7f);
    if (!(b[i] & 0x80)) { parts.push(v); v = 0; }
  }
  return parts.join(".");
}

/**
 * The issuer and subject Names as their raw DER bytes (a latin1 string, for exact
 * comparison and map keys): TBSCertificate ::= SEQUENCE { [0] version OPTIONAL,
 * serialNumber, signature, issuer, validity, subject, ... }.
 */
export function namesOf(der: Buffer): { issuer: string; subject: string } {
  const tbs = tlv(der, tlv(der, 0).start);
  let field = tlv(der, tbs.start);
  if (field.tag === 0xa0) field = tlv(der, field.end); // version: next is the serial number
  const issuer = tlv(der, tlv(der, field.end).end);
  const subject = tlv(der, tlv(der, issuer.end).end);
  return { issuer: der.toString("latin1", issuer.from, issuer.end), subject: der.toString("latin1", subject.from, subject.end) };
}

const dn = (s: string) => s.split("\n").filter(Boolean).join(", ");
const iso = (s: string) => new Date(s).toISOString().replace(/\.000Z$/, "Z");

function infoAccess(x: X509Certificate, kind: "CA Issuers" | "OCSP"): string {
  const line = (x.infoAccess ?? "").split("\n").find((l) => l.startsWith(kind + " - URI:"));
  return line ? line.slice(kind.length + 7).trim() : "";
}

function leafOf(x: X509Certificate, der: Buffer): LeafCertificate {
  const type = x.publicKey.asymmetricKeyType;
  const details = x.publicKey.asymmetricKeyDetails ?? {};
  const curve = (details.namedCurve as string | undefined) ?? null;
  const oid = signatureAlgorithmOid(der);
  return {
    sha256: createHash("sha256").update(der).digest("hex"),
    subject: dn(x.subject),
    issuer: dn(x.issuer),
    serial: x.serialNumber.toLowerCase(),
    signature_algorithm: SIG_OIDS[oid] ?? oid,
    aia: infoAccess(x, "CA Issuers"),
    ocsp: infoAccess(x, "OCSP"),
    dns_names: (x.subjectAltName ?? "").split(", ").filter((s) => s.startsWith("DNS:")).map((s) => s.slice(4)),
    not_before: iso(x.validFrom),
    not_after: iso(x.validTo),
    public_key_algorithm: type === "rsa" || type === "rsa-pss" ? "RSA" : type === "ec" ? "ECDSA" : type === "ed25519" ? "Ed25519" : type === "ed448" ? "Ed448" : String(type ?? "unknown").toUpperCase(),
    key_bits: (details.modulusLength as number | undefined) ?? (curve ? CURVE_BITS[curve] ?? null : type === "ed25519" ? 256 : type === "ed448" ? 456 : null),
    curve,
    // The key's identity across certificates (a renewal that keeps the key keeps it), and the
    // leaf itself: the service ties it to the certificate's CT entries (precertificates differ).
    spki_sha256: createHash("sha256").update(x.publicKey.export({ type: "spki", format: "der" })).digest("hex"),
    der: der.toString("base64"),
  };
}

/**
 * Trust anchors indexed by their subject Name, so a chain is checked against the few
 * anchors that can have issued it. System anchors (~140) are kept as DER and parsed only
 * when named: parsing the whole store took more CPU than a scan's own work.
 */
class AnchorStore {
  private readonly bySubject = new Map<string, (Buffer | X509Certificate)[]>();

  constructor(anchors: readonly (Buffer | X509Certificate)[]) {
    for (const a of anchors) {
      const subject = namesOf(a instanceof X509Certificate ? a.raw : a).subject;
      this.bySubject.set(subject, [...(this.bySubject.get(subject) ?? []), a]);
    }
  }

  /**
   * The anchors that can have issued the certificate (or are it): those whose subject is
   * its issuer byte for byte. Equal names may be encoded differently (X.520 matching), so
   * when none matches exactly and the certificate is not self-issued, every anchor is.
   */
  candidatesFor(cert: X509Certificate): X509Certificate[] {
    const { issuer, subject } = namesOf(cert.raw);
    const exact = this.bySubject.get(issuer);
    if (exact || issuer === subject) return (exact ?? []).map(parsed);
    return [...this.bySubject.values()].flat().map(parsed);
  }
}

const parsed = (a: Buffer | X509Certificate) => (a instanceof X509Certificate ? a : new X509Certificate(a));

const pemBlocks = (pem: string) => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
const derOfPem = (block: string) => Buffer.from(block.replace(/-----[A-Z ]+-----|\s+/g, ""), "base64");

let systemStore: AnchorStore | null = null;
/**
 * The roots of NODE_EXTRA_CA_CERTS: Node's own TLS clients trust them beside the bundled
 * store, so an agent run with it (a site that adds its roots this way, the tests' public
 * test CAs) judges trust as everything else on that host does. Read once, like Node does.
 */
function extraSystemRoots(): Buffer[] {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file) return [];
  try {
    return pemBlocks((require("node:fs") as typeof import("node:fs")).readFileSync(file, "utf8")).map(derOfPem);
  } catch {
    // Node itself only warns about an unreadable file; the bundled store still applies.
    return [];
  }
}

/**
 * Node's bundled root store plus NODE_EXTRA_CA_CERTS (node:tls is loaded on first use: a
 * one-shot scan that brings its own root_ca never pays for it). `scanTarget` calls this
 * while the first probes wait on the network, so the work overlaps I/O.
 */
export function systemAnchors(): AnchorStore {
  return (systemStore ??= new AnchorStore([...(require("node:tls") as typeof import("node:tls")).rootCertificates.map(derOfPem), ...extraSystemRoots()]));
}

function anchorsFrom(rootCaPem: string | null): AnchorStore {
  if (!rootCaPem) return systemAnchors();
  const blocks = pemBlocks(rootCaPem);
  if (!blocks.length) throw new CertificateError("root_ca holds no PEM certificate");
  return new AnchorStore(blocks.map((b) => new X509Certificate(b)));
}

const isIp = (s: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(s) || s.includes(":");

/** Builds the report for a chain as served (leaf first). `now` fixes the clock for expiry. */
export function analyseChain(chain: readonly Buffer[], opts: { rootCaPem: string | null; hostname: string; now?: Date }): ChainReport {
  if (!chain.length) throw new CertificateError("server sent an empty certificate chain");
  const now = opts.now ?? new Date();
  let certs: X509Certificate[];
  try {
    certs = chain.map((d) => new X509Certificate(d));
  } catch (e) {
    throw new CertificateError(`unparseable certificate in served chain: ${(e as Error).message}`);
  }
  const leafX = certs[0];
  const leaf = leafOf(leafX, chain[0]);
  const entry = (x: X509Certificate): ChainEntry => ({
    subject: dn(x.subject), issuer: dn(x.issuer), not_before: iso(x.validFrom), not_after: iso(x.validTo),
    signature_sha256: x.fingerprint256.replace(/:/g, "").toLowerCase(),
  });

  // Path building: leaf, then issuers from the served chain (any order), ending at an anchor.
  const anchors = anchorsFrom(opts.rootCaPem);
  const issuedBy = (child: X509Certificate, parent: X509Certificate) => {
    try { return child.checkIssued(parent) && child.verify(parent.publicKey); } catch { return false; }
  };
  const path: X509Certificate[] = [leafX];
  let error = "";
  let trusted = false;
  for (;;) {
    const cur = path[path.length - 1];
    const anchor = anchors.candidatesFor(cur).find((a) => a.fingerprint256 === cur.fingerprint256 || issuedBy(cur, a));
    if (anchor) {
      if (anchor.fingerprint256 !== cur.fingerprint256) path.push(anchor);
      trusted = true;
      break;
    }
    const next = certs.find((c) => !path.includes(c) && issuedBy(cur, c));
    if (!next) {
      error = issuedBy(cur, cur)
        ? (path.length === 1 ? "self-signed certificate" : "self-signed certificate in chain")
        : `unable to get issuer certificate of ${dn(cur.subject)}`;
      break;
    }
    path.push(next);
  }
  if (trusted) {
    for (const c of path) {
      if (new Date(c.validTo).getTime() < now.getTime()) { trusted = false; error = `certificate has expired: ${dn(c.subject)} (${iso(c.validTo)})`; break; }
      if (new Date(c.validFrom).getTime() > now.getTime()) { trusted = false; error = `certificate is not yet valid: ${dn(c.subject)}`; break; }
    }
  }
  let hostname_match: boolean | null = null;
  if (opts.hostname) hostname_match = (isIp(opts.hostname) ? leafX.checkIP(opts.hostname) : leafX.checkHost(opts.hostname)) !== undefined;
  return {
    certificate: leaf,
    validity_days: Math.floor((Date.parse(leaf.not_after) - now.getTime()) / 86_400_000),
    self_signed: leafX.subject === leafX.issuer,
    chain_length: chain.length,
    intermediates: certs.slice(1).map(entry),
    intermediates_der: chain.slice(1).map((d) => d.toString("base64")),
    validation_path: path.map((c) => ({ certificate_subject: dn(c.subject), certificate_issuer: dn(c.issuer) })),
    validation: { trusted, error, hostname_match, anchor: opts.rootCaPem ? "root_ca" : "system" },
  };
}
