// Cipher-suite anatomy derived from the IANA name (the registry has no structured columns), and
// the weak-suite classification the weekly audit and the frameworks use. Keyed on code points.
import { IANA_CIPHER_SUITES, IANA_NAMED_GROUPS, type IanaCipherSuite } from "./iana-registry";

export type TlsVersionName = "SSLv3" | "TLSv1.0" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3";
export const TLS_VERSIONS: readonly TlsVersionName[] = ["SSLv3", "TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"];

/** Parts of a suite: key exchange, authentication, bulk cipher, MAC/PRF hash. */
export interface SuiteAnatomy {
  readonly code: number;
  readonly name: string;
  /** "ECDHE", "DHE", "RSA", "ECDH", "DH", "PSK", "ECDHE_PSK", ..., "TLS13" (negotiated separately in TLS 1.3). */
  readonly keyExchange: string;
  /** "RSA", "ECDSA", "DSS", "anon", "PSK", ..., "TLS13". */
  readonly authentication: string;
  /** e.g. "AES_128_GCM", "3DES_EDE_CBC", "RC4_128", "NULL", "CHACHA20_POLY1305". */
  readonly cipher: string;
  /** "SHA", "SHA256", "SHA384", "MD5", or "" for AEADs named without one (CCM). */
  readonly mac: string;
  /** Only usable in TLS 1.3 (0x13xx). */
  readonly tls13: boolean;
  /** Signalling value, never "chosen": TLS_EMPTY_RENEGOTIATION_INFO_SCSV, TLS_FALLBACK_SCSV. */
  readonly scsv: boolean;
}

export type SuiteWeakness = "RC4" | "DES" | "3DES" | "NULL" | "EXPORT" | "anon";

const KX_AUTH: Record<string, [string, string]> = {
  RSA: ["RSA", "RSA"], DH_DSS: ["DH", "DSS"], DH_RSA: ["DH", "RSA"], DHE_DSS: ["DHE", "DSS"], DHE_RSA: ["DHE", "RSA"],
  DH_anon: ["DH", "anon"], ECDH_ECDSA: ["ECDH", "ECDSA"], ECDH_RSA: ["ECDH", "RSA"], ECDHE_ECDSA: ["ECDHE", "ECDSA"],
  ECDHE_RSA: ["ECDHE", "RSA"], ECDH_anon: ["ECDH", "anon"], PSK: ["PSK", "PSK"], DHE_PSK: ["DHE_PSK", "PSK"],
  RSA_PSK: ["RSA_PSK", "RSA"], ECDHE_PSK: ["ECDHE_PSK", "PSK"], NULL: ["NULL", "NULL"],
};

export function suiteAnatomy(s: { code: number; name: string }): SuiteAnatomy {
  const scsv = s.name.endsWith("_SCSV");
  const tls13 = (s.code >> 8) === 0x13;
  if (tls13 || scsv || !s.name.includes("_WITH_")) {
    // TLS 1.3 names: TLS_<AEAD>_<HASH>; TLS_SHA256_SHA256 (RFC 9150) is integrity-only.
    const m = /^TLS_(.+)_(SHA\d*|SM3)$/.exec(s.name);
    const aead = m ? m[1] : s.name;
    return { code: s.code, name: s.name, keyExchange: "TLS13", authentication: "TLS13",
      cipher: /^SHA\d+$/.test(aead) ? "NULL" : aead, mac: m ? m[2] : "", tls13, scsv };
  }
  const [left, right] = s.name.replace(/^TLS_/, "").split("_WITH_");
  const kxPart = left.replace(/_EXPORT(1024)?$/, "");
  const [keyExchange, authentication] = KX_AUTH[kxPart] ?? [kxPart, kxPart.includes("anon") ? "anon" : kxPart];
  const m = /^(.*?)_(SHA|SHA256|SHA384|MD5|NULL|OMAC|IMIT|SM3)$/.exec(right);
  const cipher = m ? m[1] : right;
  return { code: s.code, name: s.name, keyExchange, authentication, cipher, mac: m ? m[2] : "", tls13, scsv };
}

export function suiteWeaknesses(a: SuiteAnatomy): SuiteWeakness[] {
  const w: SuiteWeakness[] = [];
  if (/^RC4/.test(a.cipher)) w.push("RC4");
  if (/^DES(40)?_CBC/.test(a.cipher)) w.push("DES");
  if (a.cipher.includes("3DES")) w.push("3DES");
  if (a.cipher === "NULL" || a.keyExchange === "NULL") w.push("NULL");
  if (a.name.includes("EXPORT")) w.push("EXPORT");
  if (a.authentication === "anon") w.push("anon");
  return w;
}

const BY_CODE = new Map<number, IanaCipherSuite>(IANA_CIPHER_SUITES.map((s) => [s.code, s]));
const BY_NAME = new Map<string, IanaCipherSuite>(IANA_CIPHER_SUITES.map((s) => [s.name, s]));
const GROUP_BY_CODE = new Map(IANA_NAMED_GROUPS.map((g) => [g.code, g]));
const GROUP_BY_NAME = new Map(IANA_NAMED_GROUPS.map((g) => [g.name.toLowerCase(), g]));
// OpenSSL / Mozilla spellings of the same groups.
const GROUP_ALIASES: Record<string, string> = { prime256v1: "secp256r1", secp256r1: "secp256r1", x25519: "x25519", x448: "x448" };

/** IANA name of a suite code point, or "0xHHHH" when the registry has none. */
export function cipherSuiteName(code: number): string {
  return BY_CODE.get(code)?.name ?? "0x" + code.toString(16).toUpperCase().padStart(4, "0");
}
export function cipherSuiteCode(name: string): number | undefined {
  return BY_NAME.get(name)?.code;
}
export function namedGroupName(code: number): string {
  return GROUP_BY_CODE.get(code)?.name ?? "0x" + code.toString(16).toUpperCase().padStart(4, "0");
}
/** Group code from an IANA, OpenSSL or Mozilla name (case-insensitive), or from "0xHHHH". */
export function namedGroupCode(name: string): number | undefined {
  const lower = name.toLowerCase();
  if (/^0x[0-9a-f]{1,4}$/.test(lower)) return parseInt(lower, 16);
  return GROUP_BY_NAME.get(GROUP_ALIASES[lower] ?? lower)?.code;
}
const ANATOMY = new Map<number, SuiteAnatomy>();
/** The anatomy of a code point, derived once per process (tables are built from it at import). */
export function anatomyOf(code: number): SuiteAnatomy {
  let a = ANATOMY.get(code);
  if (!a) ANATOMY.set(code, (a = suiteAnatomy({ code, name: cipherSuiteName(code) })));
  return a;
}

/**
 * What is wrong with a suite outside the reference profile (judgement.ts): the broken
 * constructions above, plus
 *   MD5                 an HMAC-MD5 record MAC
 *   CBC                 a CBC-mode cipher (MAC-then-encrypt: padding oracles, Lucky 13)
 *   no_forward_secrecy  static RSA, (EC)DH or PSK key exchange: a leaked server key decrypts recorded traffic
 *   outside_profile     none of these, but not in the profile (e.g. Camellia, ARIA, CCM suites)
 */
export type SuiteConcern = SuiteWeakness | "MD5" | "CBC" | "no_forward_secrecy" | "outside_profile";

const STATIC_KEY_EXCHANGES = new Set(["RSA", "DH", "ECDH", "PSK", "RSA_PSK"]);

/** Every concern about a suite, broken constructions first; "outside_profile" when there is nothing more specific to say. */
export function suiteConcerns(a: SuiteAnatomy): SuiteConcern[] {
  const c: SuiteConcern[] = suiteWeaknesses(a);
  if (a.mac === "MD5") c.push("MD5");
  if (/_CBC(_|$)/.test(a.cipher) && !c.includes("DES") && !c.includes("3DES")) c.push("CBC");
  // Anonymous DH is ephemeral: its problem is "anon", not the lack of forward secrecy.
  if (STATIC_KEY_EXCHANGES.has(a.keyExchange) && a.authentication !== "anon") c.push("no_forward_secrecy");
  return c.length ? c : ["outside_profile"];
}

/** An offered suite outside the reference profile, with what is wrong with it. */
export interface WeakSuiteFinding {
  readonly code: number;
  readonly name: string;
  readonly weaknesses: SuiteConcern[];
}
