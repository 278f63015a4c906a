// Framework evaluation of an observed TLS configuration against the definitions (definitions.ts).
import { frameworkDefinitions, DEFAULT_MOZILLA_VERSION, FFDHE_BITS, type FrameworkDefinition, type FrameworkId } from "./definitions";
import { MOZILLA_GUIDELINE_VERSIONS, type MozillaGuidelineVersion } from "./mozilla-guidelines";
import { cipherSuiteName, namedGroupCode, namedGroupName, TLS_VERSIONS, type TlsVersionName } from "./suites";

/** The leaf certificate's properties the frameworks look at. */
export interface ObservedCertificate {
  /** "RSA", "ECDSA", "Ed25519", "Ed448" (case-insensitive). */
  keyAlgorithm: string;
  keyBits?: number | null;
  /** OpenSSL curve name of an EC key (prime256v1, secp384r1, ...). */
  curve?: string | null;
  /** OpenSSL signature algorithm name (sha256WithRSAEncryption, ecdsa-with-SHA256, ...). */
  signatureAlgorithm: string;
  notBefore?: string | null;
  notAfter?: string | null;
  /** Chain validated to a trust anchor (system store or the monitor's root_ca). */
  trusted?: boolean | null;
  selfSigned?: boolean | null;
}

export interface ObservedConfiguration {
  /** Accepted versions: "SSLv3", "TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3". */
  protocols: readonly string[];
  /** Accepted cipher suites over all versions, IANA code points (0xC02F). */
  cipherCodes: readonly number[];
  /** Accepted named groups, as IANA codes or names (IANA, OpenSSL or Mozilla spelling). */
  groups: readonly (number | string)[];
  /** Smallest finite-field DH size seen in a TLS <= 1.2 DHE key exchange, if any. */
  dhBits?: number | null;
  certificate?: ObservedCertificate | null;
}

export type ReasonCategory = "protocol" | "cipher_suite" | "named_group" | "key_exchange" | "certificate" | "scan";

export interface FrameworkReason {
  category: ReasonCategory;
  /** The offending item: a version name, an IANA suite or group name, or a certificate property. */
  item: string;
  code?: number;
  message: string;
}

export interface FrameworkVerdict {
  id: FrameworkId;
  name: string;
  version: string;
  /** "unknown" when there is nothing to judge (scan failed: no protocol accepted). */
  status: "pass" | "fail" | "unknown";
  compliant: boolean;
  reasons: FrameworkReason[];
}

export interface EvaluateOptions {
  mozillaVersion?: MozillaGuidelineVersion | string;
  /** Reference time for expiry checks (default now). */
  now?: Date;
}

function mozillaVersionOf(v: string | undefined): MozillaGuidelineVersion {
  if (v === undefined) return DEFAULT_MOZILLA_VERSION;
  const hit = MOZILLA_GUIDELINE_VERSIONS.find((x) => x === v || Number(x) === Number(v));
  if (!hit) throw new RangeError(`unknown Mozilla guideline version ${v} (known: ${MOZILLA_GUIDELINE_VERSIONS.join(", ")})`);
  return hit;
}

/** Full definitions of the five frameworks (GET /api/cert-watcher/security-standards). */
export function securityStandards(opts: { mozillaVersion?: string } = {}): FrameworkDefinition[] {
  return frameworkDefinitions(mozillaVersionOf(opts.mozillaVersion));
}

const DAY = 86_400_000;

function evaluateOne(def: FrameworkDefinition, o: ObservedConfiguration, now: Date): FrameworkVerdict {
  const reasons: FrameworkReason[] = [];
  const base = { id: def.id, name: def.name, version: def.version };
  if (o.protocols.length === 0) {
    return { ...base, status: "unknown", compliant: false,
      reasons: [{ category: "scan", item: "protocols", message: "no TLS version was accepted; nothing to evaluate" }] };
  }
  for (const p of o.protocols) {
    if (!def.protocols.allowed.includes(p as TlsVersionName)) reasons.push({ category: "protocol", item: p, message: `${p} is accepted but not allowed (allowed: ${def.protocols.allowed.join(", ")})` });
  }
  for (const p of def.protocols.required) {
    if (!o.protocols.includes(p)) reasons.push({ category: "protocol", item: p, message: `${p} is required but not accepted` });
  }
  if (!o.protocols.some((p) => def.protocols.allowed.includes(p as TlsVersionName))) {
    reasons.push({ category: "protocol", item: "none", message: `none of the allowed versions (${def.protocols.allowed.join(", ")}) is accepted` });
  }
  const allowedSuites = new Set(def.cipherSuites.allowed.map((s) => s.code));
  for (const code of new Set(o.cipherCodes)) {
    if (!allowedSuites.has(code)) reasons.push({ category: "cipher_suite", item: cipherSuiteName(code), code, message: `${cipherSuiteName(code)} is offered but not allowed (${def.cipherSuites.rule})` });
  }
  if (def.namedGroups) {
    const allowedGroups = new Set(def.namedGroups.allowed.map((g) => g.code));
    const seen = new Set<number>();
    for (const g of o.groups) {
      const code = typeof g === "number" ? g : namedGroupCode(g);
      if (code === undefined) { reasons.push({ category: "named_group", item: String(g), message: `unknown group ${g}` }); continue; }
      if (seen.has(code)) continue;
      seen.add(code);
      if (!allowedGroups.has(code)) reasons.push({ category: "named_group", item: namedGroupName(code), code, message: `${namedGroupName(code)} is accepted but not allowed (${def.namedGroups.rule})` });
    }
  }
  if (def.minDhBits !== null && o.dhBits != null && o.dhBits < def.minDhBits) {
    reasons.push({ category: "key_exchange", item: "dh_bits", message: `DHE with ${o.dhBits}-bit group, at least ${def.minDhBits} required` });
  }
  const c = o.certificate;
  const r = def.certificate;
  if (c) {
    const keyType = normKeyType(c.keyAlgorithm);
    if (!r.keyTypes.includes(keyType)) reasons.push({ category: "certificate", item: "public_key_algorithm", message: `${keyType} certificate key not allowed (allowed: ${r.keyTypes.join(", ")})` });
    if (keyType === "RSA" && r.minRsaBits !== null && c.keyBits != null && c.keyBits < r.minRsaBits) reasons.push({ category: "certificate", item: "key_bits", message: `RSA key of ${c.keyBits} bits, at least ${r.minRsaBits} required` });
    if (keyType === "ECDSA" && r.ecCurves && c.curve && !r.ecCurves.includes(c.curve)) reasons.push({ category: "certificate", item: "curve", message: `ECDSA key on ${c.curve} not allowed (allowed: ${r.ecCurves.join(", ")})` });
    if (!r.signatureAlgorithms.includes(c.signatureAlgorithm)) reasons.push({ category: "certificate", item: "signature_algorithm", message: `signature algorithm ${c.signatureAlgorithm} not allowed (allowed: ${r.signatureAlgorithms.join(", ")})` });
    const nb = c.notBefore ? Date.parse(c.notBefore) : NaN;
    const na = c.notAfter ? Date.parse(c.notAfter) : NaN;
    if (r.maxLifespanDays !== null && !Number.isNaN(nb) && !Number.isNaN(na)) {
      const days = Math.round((na - nb) / DAY);
      if (days > r.maxLifespanDays) reasons.push({ category: "certificate", item: "lifespan", message: `certificate lifespan ${days} days exceeds ${r.maxLifespanDays}` });
    }
    if (r.requireUnexpired && !Number.isNaN(na) && na < now.getTime()) reasons.push({ category: "certificate", item: "not_after", message: `certificate expired on ${c.notAfter}` });
    if (r.requireUnexpired && !Number.isNaN(nb) && nb > now.getTime()) reasons.push({ category: "certificate", item: "not_before", message: `certificate not valid before ${c.notBefore}` });
    if (r.requireTrusted && c.trusted === false) reasons.push({ category: "certificate", item: "trust", message: c.selfSigned ? "self-signed certificate is not trusted" : "certificate chain does not validate to a trusted root" });
  }
  return { ...base, status: reasons.length ? "fail" : "pass", compliant: reasons.length === 0, reasons };
}

function normKeyType(k: string): string {
  const l = k.toLowerCase();
  if (l === "rsa" || l === "rsa-pss") return "RSA";
  if (l === "ec" || l === "ecdsa") return "ECDSA";
  if (l === "ed25519") return "Ed25519";
  if (l === "ed448") return "Ed448";
  return k;
}

/** Verdicts of the five frameworks, in the order FIPS 140, NIST SP 800-52r2, PCI DSS, Mozilla intermediate, Mozilla modern. */
export function evaluateFrameworks(observed: ObservedConfiguration, opts: EvaluateOptions = {}): FrameworkVerdict[] {
  const now = opts.now ?? new Date();
  const order = new Map(TLS_VERSIONS.map((v, i) => [v as string, i]));
  const protocols = [...new Set(observed.protocols)].sort((a, b) => (order.get(a) ?? 9) - (order.get(b) ?? 9));
  const o = { ...observed, protocols };
  return frameworkDefinitions(mozillaVersionOf(opts.mozillaVersion)).map((d) => evaluateOne(d, o, now));
}

/** FFDHE group size in bits for a group code, or null. */
export function ffdheBits(code: number): number | null {
  return FFDHE_BITS[code] ?? null;
}
