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

/** The agent endpoints, relative to the API base URL. */
export const AGENT_PATHS = {
  lease: "/api/cert-watcher/agents/lease",
  results: "/api/cert-watcher/agents/results",
} as const;
