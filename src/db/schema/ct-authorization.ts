/**
 * Authorized issuance as stored (modules/ct-log/authorization.ts decides it): the verdict
 * and reason kept on a CT match (`ct_matches.authorization`) and on an inventory
 * certificate, and the authorized issuers declared on a filter or an organization's
 * issuance policy. Declared below the CT module so the tables, the CT event
 * (ct-log/events.ts) and the module derive from one place without importing each other.
 * No table here, so it is not in index.ts (drizzle-kit reads that).
 */

export const AUTHORIZATION_VERDICTS = ["authorized", "unexpected_issuer", "unknown_key", "caa_violation"] as const;
export type AuthorizationVerdict = (typeof AUTHORIZATION_VERDICTS)[number];

export interface Authorization {
  verdict: AuthorizationVerdict;
  reason: string;
}

/** An authorized issuer: a CA by name (issuer O or CN, a CA name or CAA identifier such as "letsencrypt.org"), or by the SHA-256 of its key. */
export type AuthorizedIssuer = { name: string } | { spki_sha256: string };
