/**
 * Identity: second factors (TOTP, passkeys, recovery codes), the short-lived challenges
 * of a sign-in in progress, and single sign-on (one OpenID provider per organization,
 * the email domains it answers for, and the authorization requests under way).
 * Rules: src/modules/auth/ (mfa/, sso/); guide: docs/identity.md.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id, organizationId, timestamps } from "./columns";
import { users } from "./platform";

/**
 * One authenticator app per user (RFC 6238). `confirmed_at` null: enrollment started,
 * not completed (the secret was shown, no code proved it yet); such a row is not a factor.
 */
export const totpCredentials = sqliteTable(
  "totp_credentials",
  {
    id: id(),
    organizationId: organizationId(),
    userId: integer("user_id").notNull().references(() => users.id),
    /** The shared secret, sealed (src/platform/sealed.ts). */
    secretSealed: text("secret_sealed").notNull(),
    confirmedAt: text("confirmed_at"),
    /** The last time step a code was accepted for: a code of that step or earlier is a replay. */
    lastUsedStep: integer("last_used_step").notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("totp_credentials_user_unique").on(t.userId)],
);

/** Single-use codes for when the factors are out of reach; SHA-256 of each, never the code. */
export const recoveryCodes = sqliteTable(
  "recovery_codes",
  {
    id: id(),
    organizationId: organizationId(),
    userId: integer("user_id").notNull().references(() => users.id),
    codeHash: text("code_hash").notNull(),
    usedAt: text("used_at"),
    createdAt: createdAt(),
  },
  (t) => [index("recovery_codes_user_idx").on(t.userId), uniqueIndex("recovery_codes_hash_unique").on(t.codeHash)],
);

/** A WebAuthn credential (passkey or security key) registered as a second factor. */
export const passkeys = sqliteTable(
  "passkeys",
  {
    id: id(),
    organizationId: organizationId(),
    userId: integer("user_id").notNull().references(() => users.id),
    name: text("name").notNull(),
    /** The credential id, base64url, as the authenticator gave it. */
    credentialId: text("credential_id").notNull(),
    /** COSE public key, base64url. */
    publicKey: text("public_key").notNull(),
    /** Signature counter (0 for authenticators that keep none, e.g. synced passkeys). */
    counter: integer("counter").notNull().default(0),
    transports: text("transports", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    /** `singleDevice` or `multiDevice` (synced). */
    deviceType: text("device_type").notNull(),
    backedUp: integer("backed_up", { mode: "boolean" }).notNull().default(false),
    lastUsedAt: text("last_used_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("passkeys_credential_unique").on(t.credentialId), index("passkeys_user_idx").on(t.userId)],
);

/**
 * A step of a sign-in or an enrollment that waits for the browser or the user:
 * - `mfa_login`: a correct password waiting for its second factor. `token_hash` is the
 *   SHA-256 of the `mfa_token` handed out (5 minutes, one use, this user only);
 *   `challenge` the WebAuthn challenge offered with it; `failures` wrong codes so far.
 * - `passkey_registration`: the challenge of a passkey being registered by a session.
 */
export const authChallenges = sqliteTable(
  "auth_challenges",
  {
    id: id(),
    organizationId: organizationId(),
    userId: integer("user_id").notNull().references(() => users.id),
    purpose: text("purpose", { enum: ["mfa_login", "passkey_registration"] }).notNull(),
    tokenHash: text("token_hash").notNull(),
    /** WebAuthn challenge (base64url), when one was offered. */
    challenge: text("challenge"),
    failures: integer("failures").notNull().default(0),
    clientIp: text("client_ip"),
    expiresAt: text("expires_at").notNull(),
    consumedAt: text("consumed_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("auth_challenges_token_unique").on(t.tokenHash), index("auth_challenges_expires_idx").on(t.expiresAt)],
);

/** An organization's OpenID provider (at most one). */
export const ssoConnections = sqliteTable(
  "sso_connections",
  {
    id: id(),
    organizationId: organizationId(),
    issuer: text("issuer").notNull(),
    clientId: text("client_id").notNull(),
    clientSecretSealed: text("client_secret_sealed").notNull(),
    /** Roles a user created at their first SSO sign-in gets. */
    defaultRoles: text("default_roles", { mode: "json" }).$type<{ module: string; role: string }[]>().notNull().default(sql`'[]'`),
    /** Members whose email is in a verified domain of this connection cannot sign in with a password. */
    enforce: integer("enforce", { mode: "boolean" }).notNull().default(false),
    /** The one administrator who keeps a password while `enforce` is on (break-glass). */
    breakGlassUserId: integer("break_glass_user_id").references(() => users.id),
    /** The provider's discovery document as last read (endpoints, JWKS URI, algorithms). */
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    discoveredAt: text("discovered_at").notNull(),
    ...timestamps(),
  },
  (t) => [uniqueIndex("sso_connections_org_unique").on(t.organizationId)],
);

/**
 * An email domain an organization's SSO answers for. Claimed (`verified_at` set) only
 * after its DNS TXT record proved ownership; one organization per verified domain.
 */
export const ssoDomains = sqliteTable(
  "sso_domains",
  {
    id: id(),
    organizationId: organizationId(),
    domain: text("domain").notNull(),
    /** The value the TXT record must hold. */
    verificationToken: text("verification_token").notNull(),
    verifiedAt: text("verified_at"),
    lastCheckedAt: text("last_checked_at"),
    /** Why the last check did not verify, in words ("no TXT record at ...", "DNS lookup failed: ..."). */
    lastCheckError: text("last_check_error"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("sso_domains_org_domain_unique").on(t.organizationId, t.domain),
    uniqueIndex("sso_domains_verified_unique").on(t.domain).where(sql`verified_at IS NOT NULL`),
  ],
);

/**
 * An authorization request sent to the provider and not yet answered (10 minutes). The
 * callback finds it by `state`, and only in the browser that started it: `binding_hash`
 * is the SHA-256 of a value kept in that browser's cookie.
 */
export const ssoLogins = sqliteTable(
  "sso_logins",
  {
    id: id(),
    organizationId: organizationId(),
    stateHash: text("state_hash").notNull(),
    bindingHash: text("binding_hash").notNull(),
    nonce: text("nonce").notNull(),
    codeVerifier: text("code_verifier").notNull(),
    /** Where the console goes after the sign-in (a path of the console). */
    returnTo: text("return_to").notNull().default("/"),
    expiresAt: text("expires_at").notNull(),
    consumedAt: text("consumed_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("sso_logins_state_unique").on(t.stateHash), index("sso_logins_expires_idx").on(t.expiresAt)],
);
