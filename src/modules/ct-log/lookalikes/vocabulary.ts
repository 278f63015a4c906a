/**
 * The words of the lookalike lifecycle, declared once: states, sources, timeline kinds
 * and the DNS a check records. The API schemas, the CEL event schema, the D1 columns and
 * the console derive from these.
 *
 * States, from what the latest check saw (lifecycle.ts stateAfterCheck):
 *   new           found, not checked yet
 *   registered    delegated (NS at the name) but no address
 *   resolving     has an A or AAAA address
 *   mail_capable  has an MX: it can receive mail (the phishing and invoice-fraud one)
 *   serving       accepts connections on the HTTPS port at one of its addresses
 *   gone          no longer registered (NXDOMAIN)
 *   dismissed     a person dismissed it (a defensive registration, a known partner):
 *                 never checked nor alerted again
 * A lookalike that is serving and has an MX is `serving`; `has_mx` says the rest.
 */
export const LOOKALIKE_STATES = ["new", "registered", "resolving", "mail_capable", "serving", "gone", "dismissed"] as const;
export type LookalikeState = (typeof LOOKALIKE_STATES)[number];

/** States of an open lookalike: what the export and the default list show. */
export const OPEN_STATES: readonly LookalikeState[] = ["new", "registered", "resolving", "mail_capable", "serving"];

/**
 *   ct           a certificate in a CT log named it
 *   permutation  the discovery generated it from a protected domain and found it registered
 */
export const LOOKALIKE_SOURCES = ["ct", "permutation"] as const;
export type LookalikeSource = (typeof LOOKALIKE_SOURCES)[number];

/**
 *   detected           first found (by its source)
 *   certificate        a (new) certificate named it
 *   state_changed      a check moved it to another state
 *   confidence_raised  corroborating evidence made a low-confidence candidate high
 *   registration       RDAP told its registration date and registrar
 *   dismissed          a person dismissed it, with the reason
 */
export const LOOKALIKE_TIMELINE_KINDS = ["detected", "certificate", "state_changed", "confidence_raised", "registration", "dismissed"] as const;
export type LookalikeTimelineKind = (typeof LOOKALIKE_TIMELINE_KINDS)[number];

/** DNS of a lookalike as a check saw it (names lowercase without the final dot; MX as "preference host"). */
export interface LookalikeDns {
  registered: boolean;
  ns: string[];
  a: string[];
  aaaa: string[];
  mx: string[];
}

/** Export formats of GET /api/ct-log/lookalikes/export. */
export const EXPORT_FORMATS = ["csv", "json", "txt", "rpz"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
