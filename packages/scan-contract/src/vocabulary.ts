/**
 * The closed sets of values the agent and the API exchange. No zod here: the scanner's
 * one-shot CLI imports these without loading a validation library (start-up time).
 */

/** STARTTLS dialects the scanner speaks before the TLS handshake. */
export const STARTTLS_PROTOCOLS = ["smtp", "imap", "pop3", "ftp", "ldap", "xmpp", "postgres"] as const;
export type StartTlsProtocol = (typeof STARTTLS_PROTOCOLS)[number];

/** Conventional plaintext ports whose service upgrades with STARTTLS (a monitor's `auto` setting). */
export const STARTTLS_BY_PORT: Readonly<Record<number, StartTlsProtocol>> = {
  21: "ftp", 25: "smtp", 587: "smtp", 110: "pop3", 143: "imap", 389: "ldap", 5222: "xmpp", 5432: "postgres",
};

/** How TLS was reached: the handshake on connect, or after a STARTTLS dialogue. */
export const CONNECTION_METHODS = ["direct_tls", "starttls"] as const;
export type ConnectionMethod = (typeof CONNECTION_METHODS)[number];

/** Whose cipher suite order the server follows. */
export const CIPHER_PREFERENCES = ["server", "client"] as const;
export type CipherPreference = (typeof CIPHER_PREFERENCES)[number];

/** The trust anchor chain validation used: the system store or the monitor's root_ca. */
export const TRUST_ANCHORS = ["system", "root_ca"] as const;
export type TrustAnchor = (typeof TRUST_ANCHORS)[number];

/**
 * Why a scan failed entirely (`has_error`), as a closed set the service turns into the
 * target's collection state:
 *   dns_resolution  the target's name did not resolve
 *   connect         no TCP connection: refused, reset, unreachable
 *   timeout         no complete answer within the time allowed
 *   tls             the server answered but accepted no SSL/TLS version the scanner offered
 *   protocol        the answer was not TLS (or the STARTTLS dialogue failed)
 *   internal        a fault of the scanner itself
 * A subset of the service's collection error classes (platform/collection/vocabulary.ts).
 */
export const SCAN_ERROR_CLASSES = ["dns_resolution", "connect", "timeout", "tls", "protocol", "internal"] as const;
export type ScanErrorClass = (typeof SCAN_ERROR_CLASSES)[number];

/** The agent endpoints, relative to the API base URL. */
export const AGENT_PATHS = {
  lease: "/api/cert-watcher/agents/lease",
  results: "/api/cert-watcher/agents/results",
} as const;
