// The closed sets of a scan's stored indicators, each declared once, worst value first (a
// monitor shows the worst over its targets): the judgement produces the protocol and cipher
// statuses, the Worker's cert-watcher the validation status; the cert_scans table, the API
// schemas and the indicators derive their enums from these lists.

export const PROTOCOL_STATUSES = ["legacy", "modern", "unknown"] as const;
export const CIPHER_STATUSES = ["weak", "legacy", "strong", "unknown"] as const;
export const VALIDATION_STATUSES = ["self_signed", "untrusted", "hostname_mismatch", "trusted", "unknown"] as const;

export type ProtocolStatus = (typeof PROTOCOL_STATUSES)[number];
export type CipherStatus = (typeof CIPHER_STATUSES)[number];
export type ValidationStatus = (typeof VALIDATION_STATUSES)[number];
