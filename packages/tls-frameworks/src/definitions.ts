// The five frameworks as data. Every rule is expressed in IANA code points (suites, groups), TLS
// version names and certificate properties, so the same definitions drive the evaluation of a
// fresh scan (scanner-node) and of a stored one (the Worker), and are listed verbatim by
// GET /api/cert-watcher/security-standards.
import { IANA_CIPHER_SUITES, IANA_NAMED_GROUPS } from "./iana-registry";
import { MOZILLA_GUIDELINES, type MozillaGuidelineVersion, type MozillaProfile } from "./mozilla-guidelines";
import { anatomyOf, namedGroupCode, suiteWeaknesses, type SuiteAnatomy, type TlsVersionName } from "./suites";

export type FrameworkId = "fips-140" | "nist-sp-800-52r2" | "pci-dss-4.0.1" | "mozilla-intermediate" | "mozilla-modern";

export interface CodeAndName { readonly code: number; readonly name: string }

export interface CertificateRules {
  /** Public key types accepted, "RSA", "ECDSA", "Ed25519", "Ed448". */
  readonly keyTypes: readonly string[];
  readonly minRsaBits: number | null;
  /** OpenSSL curve names (prime256v1, secp384r1, secp521r1) for ECDSA keys; null = not restricted. */
  readonly ecCurves: readonly string[] | null;
  /** OpenSSL signature algorithm names accepted (sha256WithRSAEncryption, ecdsa-with-SHA256, ...). */
  readonly signatureAlgorithms: readonly string[];
  /** not_after - not_before, days; null = not restricted. */
  readonly maxLifespanDays: number | null;
  readonly requireTrusted: boolean;
  readonly requireUnexpired: boolean;
}

export interface FrameworkDefinition {
  readonly id: FrameworkId;
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly reference: string;
  readonly protocols: {
    /** Accepting any other version fails. */
    readonly allowed: readonly TlsVersionName[];
    /** Each of these must be accepted. */
    readonly required: readonly TlsVersionName[];
  };
  readonly cipherSuites: { readonly rule: string; readonly allowed: readonly CodeAndName[] };
  /** null = named groups are not part of this framework. */
  readonly namedGroups: { readonly rule: string; readonly allowed: readonly CodeAndName[] } | null;
  /** Minimum finite-field DH size (TLS <= 1.2 DHE ServerKeyExchange and ffdhe groups); null = not checked. */
  readonly minDhBits: number | null;
  readonly certificate: CertificateRules;
}

const ALL_SUITES: SuiteAnatomy[] = IANA_CIPHER_SUITES.map((s) => anatomyOf(s.code)).filter((a) => !a.scsv);
const suitesWhere = (p: (a: SuiteAnatomy) => boolean): CodeAndName[] =>
  ALL_SUITES.filter(p).map(({ code, name }) => ({ code, name }));
const suitesNamed = (names: readonly string[]): CodeAndName[] => {
  const set = new Set(names);
  return ALL_SUITES.filter((a) => set.has(a.name)).map(({ code, name }) => ({ code, name }));
};
const groupsNamed = (names: readonly string[]): CodeAndName[] =>
  names.map((n) => {
    const code = namedGroupCode(n);
    if (code === undefined) throw new Error(`unknown group ${n}`);
    return { code, name: IANA_NAMED_GROUPS.find((g) => g.code === code)?.name ?? n };
  });

/** FFDHE group sizes (RFC 7919), needed for dh-size rules on groups. */
export const FFDHE_BITS: Readonly<Record<number, number>> = { 256: 2048, 257: 3072, 258: 4096, 259: 6144, 260: 8192 };

const STRONG_SIGNATURES = [
  "sha256WithRSAEncryption", "sha384WithRSAEncryption", "sha512WithRSAEncryption", "rsassaPss",
  "ecdsa-with-SHA256", "ecdsa-with-SHA384", "ecdsa-with-SHA512", "ED25519", "ED448",
];
const FIPS_AES = new Set(["AES_128_CBC", "AES_256_CBC", "AES_128_GCM", "AES_256_GCM", "AES_128_CCM", "AES_256_CCM", "AES_128_CCM_8", "AES_256_CCM_8"]);

function fips(): FrameworkDefinition {
  return {
    id: "fips-140",
    name: "FIPS 140-3 approved algorithms",
    version: "140-3 (SP 800-140C/D, SP 800-131A Rev. 2, SP 800-56A Rev. 3, FIPS 203)",
    description:
      "Only NIST-approved algorithms: TLS 1.2/1.3 KDFs; AES (CBC, GCM, CCM) with SHA-1/SHA-2 HMAC or AEAD; ephemeral (EC)DH or PSK key agreement " +
      "(RSA PKCS#1 v1.5 key transport is disallowed after 2023); NIST P-curves, RFC 7919 FFDHE and ML-KEM (alone or as the approved part of a hybrid); " +
      "RSA >= 2048, ECDSA on P-256/384/521 or EdDSA certificate keys with SHA-2 signatures. ChaCha20, Camellia, ARIA, SEED, GOST, SM4, X25519/X448 alone are not approved.",
    reference: "https://csrc.nist.gov/pubs/sp/800/140/c/r2/final",
    protocols: { allowed: ["TLSv1.2", "TLSv1.3"], required: [] },
    cipherSuites: {
      rule: "AES-CBC/GCM/CCM with (EC)DHE, static (EC)DH or PSK key agreement, RSA/ECDSA/PSK authentication, SHA-1/SHA-2 MAC; TLS 1.3 AES-GCM/CCM",
      allowed: suitesWhere((a) =>
        a.tls13
          ? ["AES_128_GCM", "AES_256_GCM", "AES_128_CCM", "AES_128_CCM_8"].includes(a.cipher)
          : ["ECDHE", "DHE", "ECDH", "DH", "PSK", "DHE_PSK", "ECDHE_PSK"].includes(a.keyExchange) &&
            ["RSA", "ECDSA", "PSK"].includes(a.authentication) && FIPS_AES.has(a.cipher) &&
            ["SHA", "SHA256", "SHA384", ""].includes(a.mac) && suiteWeaknesses(a).length === 0,
      ),
    },
    namedGroups: {
      rule: "NIST P-256/P-384/P-521, FFDHE 2048-8192, ML-KEM and ML-KEM hybrids",
      allowed: groupsNamed(["secp256r1", "secp384r1", "secp521r1", "ffdhe2048", "ffdhe3072", "ffdhe4096", "ffdhe6144", "ffdhe8192",
        "MLKEM512", "MLKEM768", "MLKEM1024", "SecP256r1MLKEM768", "X25519MLKEM768", "SecP384r1MLKEM1024"]),
    },
    minDhBits: 2048,
    certificate: { keyTypes: ["RSA", "ECDSA", "Ed25519", "Ed448"], minRsaBits: 2048, ecCurves: ["prime256v1", "secp384r1", "secp521r1"],
      signatureAlgorithms: STRONG_SIGNATURES, maxLifespanDays: null, requireTrusted: false, requireUnexpired: false },
  };
}

// SP 800-52 Rev. 2 §3.3.1.1 (TLS 1.2 suites for ECDSA, RSA, DSA, DH and ECDH certificates) and §3.3.1.2 (TLS 1.3).
const NIST_SUITES = [
  "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_128_CCM",
  "TLS_ECDHE_ECDSA_WITH_AES_256_CCM", "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8", "TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8",
  "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
  "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_DHE_RSA_WITH_AES_128_CCM",
  "TLS_DHE_RSA_WITH_AES_256_CCM", "TLS_DHE_RSA_WITH_AES_128_CCM_8", "TLS_DHE_RSA_WITH_AES_256_CCM_8",
  "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256", "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256", "TLS_DHE_RSA_WITH_AES_128_CBC_SHA",
  "TLS_DHE_RSA_WITH_AES_256_CBC_SHA",
  "TLS_DHE_DSS_WITH_AES_128_GCM_SHA256", "TLS_DHE_DSS_WITH_AES_256_GCM_SHA384", "TLS_DHE_DSS_WITH_AES_128_CBC_SHA256",
  "TLS_DHE_DSS_WITH_AES_256_CBC_SHA256", "TLS_DHE_DSS_WITH_AES_128_CBC_SHA", "TLS_DHE_DSS_WITH_AES_256_CBC_SHA",
  "TLS_DH_DSS_WITH_AES_128_GCM_SHA256", "TLS_DH_DSS_WITH_AES_256_GCM_SHA384", "TLS_DH_DSS_WITH_AES_128_CBC_SHA256",
  "TLS_DH_DSS_WITH_AES_256_CBC_SHA256", "TLS_DH_DSS_WITH_AES_128_CBC_SHA", "TLS_DH_DSS_WITH_AES_256_CBC_SHA",
  "TLS_DH_RSA_WITH_AES_128_GCM_SHA256", "TLS_DH_RSA_WITH_AES_256_GCM_SHA384", "TLS_DH_RSA_WITH_AES_128_CBC_SHA256",
  "TLS_DH_RSA_WITH_AES_256_CBC_SHA256", "TLS_DH_RSA_WITH_AES_128_CBC_SHA", "TLS_DH_RSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDH_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA256",
  "TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA384", "TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDH_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDH_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDH_RSA_WITH_AES_128_CBC_SHA256",
  "TLS_ECDH_RSA_WITH_AES_256_CBC_SHA384", "TLS_ECDH_RSA_WITH_AES_128_CBC_SHA", "TLS_ECDH_RSA_WITH_AES_256_CBC_SHA",
  "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256",
];

function nist(): FrameworkDefinition {
  return {
    id: "nist-sp-800-52r2",
    name: "NIST SP 800-52 Rev. 2",
    version: "Rev. 2 (2019), government-only profile",
    description:
      "Servers shall support TLS 1.2, should support TLS 1.3, and shall not support SSL 3.0, TLS 1.0 or TLS 1.1; only the cipher suites " +
      "listed in §3.3.1 (AES with ephemeral or static (EC)DH; no RSA key transport, no ChaCha20); server certificates with RSA >= 2048 " +
      "or ECDSA P-256/P-384 keys and SHA-2 signatures.",
    reference: "https://doi.org/10.6028/NIST.SP.800-52r2",
    protocols: { allowed: ["TLSv1.2", "TLSv1.3"], required: ["TLSv1.2"] },
    cipherSuites: { rule: "SP 800-52 Rev. 2 §3.3.1.1 and §3.3.1.2 lists", allowed: suitesNamed(NIST_SUITES) },
    namedGroups: null,
    minDhBits: 2048,
    certificate: { keyTypes: ["RSA", "ECDSA"], minRsaBits: 2048, ecCurves: ["prime256v1", "secp384r1", "secp521r1"],
      signatureAlgorithms: STRONG_SIGNATURES.filter((s) => !s.startsWith("ED")), maxLifespanDays: null, requireTrusted: false, requireUnexpired: false },
  };
}

function pci(): FrameworkDefinition {
  return {
    id: "pci-dss-4.0.1",
    name: "PCI DSS",
    version: "4.0.1",
    description:
      "Requirement 4.2.1 (strong cryptography for PAN in transit): no SSL or early TLS (TLS 1.0); no weak cipher suites (RC4, DES, 3DES, NULL, " +
      "EXPORT, anonymous, MD5 MAC); key exchange of at least 112-bit strength; certificates valid, trusted and not expired, RSA >= 2048, no SHA-1/MD5 signatures.",
    reference: "https://docs-prv.pcisecuritystandards.org/PCI%20DSS/Standard/PCI-DSS-v4_0_1.pdf",
    protocols: { allowed: ["TLSv1.1", "TLSv1.2", "TLSv1.3"], required: [] },
    cipherSuites: {
      rule: "every suite except RC4, DES, 3DES, NULL, EXPORT, anonymous and MD5-MAC suites",
      allowed: suitesWhere((a) => suiteWeaknesses(a).length === 0 && a.mac !== "MD5"),
    },
    namedGroups: {
      rule: "groups of at least 112-bit strength (no curves under 224 bits)",
      allowed: IANA_NAMED_GROUPS.filter((g) => !/^(sect163|sect193|secp160|secp192)/.test(g.name)).map(({ code, name }) => ({ code, name })),
    },
    minDhBits: 2048,
    certificate: { keyTypes: ["RSA", "ECDSA", "Ed25519", "Ed448"], minRsaBits: 2048, ecCurves: null, signatureAlgorithms: STRONG_SIGNATURES,
      maxLifespanDays: null, requireTrusted: true, requireUnexpired: true },
  };
}

function mozilla(version: MozillaGuidelineVersion, profile: "intermediate" | "modern"): FrameworkDefinition {
  const g = MOZILLA_GUIDELINES[version];
  const p: MozillaProfile = g.profiles[profile];
  const ecGroups = groupsNamed(p.tls_curves);
  const ffdhe = p.dh_param_size === null ? [] : Object.entries(FFDHE_BITS).filter(([, bits]) => bits >= (p.dh_param_size ?? 0))
    .map(([code]) => ({ code: Number(code), name: IANA_NAMED_GROUPS.find((x) => x.code === Number(code))?.name ?? code }));
  return {
    id: profile === "modern" ? "mozilla-modern" : "mozilla-intermediate",
    name: `Mozilla Server Side TLS ${profile}`,
    version,
    description: `Mozilla ${profile} configuration, guidelines ${version}: protocols ${p.tls_versions.join(", ")}; only the profile's cipher suites and curves; ` +
      `certificate types ${p.certificate_types.join("/")}` + (p.rsa_key_size ? `, RSA >= ${p.rsa_key_size}` : "") +
      (p.maximum_certificate_lifespan ? `, lifespan <= ${p.maximum_certificate_lifespan} days` : "") + ".",
    reference: g.href,
    protocols: { allowed: p.tls_versions as TlsVersionName[], required: [] },
    cipherSuites: { rule: `Mozilla ${version} ${profile} ciphers (IANA) and TLS 1.3 ciphersuites`, allowed: p.cipher_codes.map((code) => ({ code, name: ALL_SUITES.find((a) => a.code === code)?.name ?? String(code) })) },
    namedGroups: { rule: `tls_curves ${p.tls_curves.join(", ")}` + (ffdhe.length ? ` and FFDHE groups >= ${p.dh_param_size} bits` : ""), allowed: [...ecGroups, ...ffdhe] },
    minDhBits: p.dh_param_size,
    certificate: {
      keyTypes: p.certificate_types.map((t) => (t === "ecdsa" ? "ECDSA" : t === "rsa" ? "RSA" : t)),
      minRsaBits: p.rsa_key_size, ecCurves: p.certificate_curves, signatureAlgorithms: p.certificate_signatures,
      maxLifespanDays: p.maximum_certificate_lifespan, requireTrusted: false, requireUnexpired: false,
    },
  };
}

export const DEFAULT_MOZILLA_VERSION: MozillaGuidelineVersion = "5.7";

export function frameworkDefinitions(mozillaVersion: MozillaGuidelineVersion = DEFAULT_MOZILLA_VERSION): FrameworkDefinition[] {
  if (!MOZILLA_GUIDELINES[mozillaVersion]) throw new RangeError(`unknown Mozilla guideline version ${mozillaVersion}`);
  return [fips(), nist(), pci(), mozilla(mozillaVersion, "intermediate"), mozilla(mozillaVersion, "modern")];
}
