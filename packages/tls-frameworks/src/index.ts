// Framework evaluation of an observed TLS configuration, and the one judgement the indicators
// are read from: pure, dependency-free, shared by the Worker (stored scans) and scanner-node
// (fresh scans).
export * from "./suites";
export * from "./evaluate";
export * from "./judgement";
export * from "./statuses";
export { IANA_CIPHER_SUITES, IANA_NAMED_GROUPS, IANA_SIGNATURE_SCHEMES } from "./iana-registry";
export { MOZILLA_GUIDELINES, MOZILLA_GUIDELINE_VERSIONS, type MozillaGuidelineVersion } from "./mozilla-guidelines";
export { frameworkDefinitions, DEFAULT_MOZILLA_VERSION, FFDHE_BITS, type FrameworkDefinition, type FrameworkId, type CertificateRules, type CodeAndName } from "./definitions";
