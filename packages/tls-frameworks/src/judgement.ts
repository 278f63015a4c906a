// The one judgement of a TLS configuration. The five framework verdicts are evaluated from
// the observed configuration; the indicators a person reads first (protocols, cipher suites)
// and the lists of weak and legacy suites are read from the verdict of ONE reference
// profile among them, Mozilla's intermediate configuration, so they never contradict it.
// Each offered suite is in one of three grades:
//
//   recommended  one of the profile's suites
//   legacy       outside the profile, nothing broken (CBC mode, no forward secrecy, MD5 MAC, ...)
//   weak         broken: RC4, DES, 3DES, NULL, EXPORT or anonymous
//
//   protocol status  modern  every accepted version is one the profile allows (TLS 1.2, 1.3)
//                    legacy  some accepted version is not (SSLv3, TLS 1.0, TLS 1.1)
//   cipher status    strong  every offered suite is recommended
//                    legacy  some offered suite is legacy, none is weak
//                    weak    some offered suite is weak
//   either           unknown nothing was accepted (or no suite seen): nothing to judge
//
// Stricter frameworks (FIPS 140, NIST SP 800-52r2, Mozilla modern) may still fail a "strong"
// configuration (ChaCha20 is not FIPS-approved, modern wants TLS 1.3 only); a "legacy" or
// "weak" one always fails the reference profile. docs/tls-judgement.md says the same for users.
import type { FrameworkId } from "./definitions";
import { evaluateFrameworks, type EvaluateOptions, type FrameworkVerdict, type ObservedConfiguration } from "./evaluate";
import type { CipherStatus, ProtocolStatus } from "./statuses";
import { anatomyOf, suiteConcerns, suiteWeaknesses, type WeakSuiteFinding } from "./suites";

/** The profile the indicators are read from. */
export const REFERENCE_PROFILE: FrameworkId = "mozilla-intermediate";

export type JudgedProtocolStatus = ProtocolStatus;
export type JudgedCipherStatus = CipherStatus;

export interface TlsJudgement {
  /** The five verdicts, in the order FIPS 140, NIST SP 800-52r2, PCI DSS, Mozilla intermediate, Mozilla modern. */
  frameworks: FrameworkVerdict[];
  /** The reference profile's verdict (one of `frameworks`). */
  reference: FrameworkVerdict;
  protocolStatus: JudgedProtocolStatus;
  cipherStatus: JudgedCipherStatus;
  /** Offered suites that are broken (RC4, DES, 3DES, NULL, EXPORT, anonymous), with everything wrong with each. */
  weakSuites: WeakSuiteFinding[];
  /** Offered suites outside the reference profile that are not broken, with what keeps them out of it. */
  legacySuites: WeakSuiteFinding[];
}

/** The offered suites the reference verdict names as outside its profile, with every concern about each. */
function outsideProfile(reference: FrameworkVerdict | undefined): WeakSuiteFinding[] {
  return (reference?.reasons ?? []).flatMap((r) => {
    if (r.category !== "cipher_suite" || r.code === undefined) return [];
    const a = anatomyOf(r.code);
    return [{ code: r.code, name: a.name, weaknesses: suiteConcerns(a) }];
  });
}

/** Whether a suite is broken (weak) rather than merely legacy: RC4, DES, 3DES, NULL, EXPORT or anonymous. */
const isBroken = (f: WeakSuiteFinding) => suiteWeaknesses(anatomyOf(f.code)).length > 0;

export function judgeTlsConfiguration(observed: ObservedConfiguration, opts: EvaluateOptions = {}): TlsJudgement {
  const frameworks = evaluateFrameworks(observed, opts);
  const reference = frameworks.find((v) => v.id === REFERENCE_PROFILE)!;
  if (reference.status === "unknown") return { frameworks, reference, protocolStatus: "unknown", cipherStatus: "unknown", weakSuites: [], legacySuites: [] };
  const outside = outsideProfile(reference);
  const weakSuites = outside.filter(isBroken);
  const legacySuites = outside.filter((f) => !isBroken(f));
  return {
    frameworks,
    reference,
    protocolStatus: reference.reasons.some((r) => r.category === "protocol") ? "legacy" : "modern",
    cipherStatus: new Set(observed.cipherCodes).size === 0 ? "unknown" : weakSuites.length ? "weak" : legacySuites.length ? "legacy" : "strong",
    weakSuites,
    legacySuites,
  };
}

/**
 * The legacy suites of a stored scan, read back from its reference verdict: the same list
 * the judgement made at acceptance, also for scans stored before the list was kept.
 */
export function legacySuitesOf(frameworks: readonly FrameworkVerdict[]): WeakSuiteFinding[] {
  return outsideProfile(frameworks.find((v) => v.id === REFERENCE_PROFILE)).filter((f) => !isBroken(f));
}
