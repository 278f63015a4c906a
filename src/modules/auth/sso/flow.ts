/**
 * Signing in through the organization's identity provider (Authorization Code flow
 * with PKCE, `state` and `nonce`).
 *
 * `start`: the email's domain names the organization (a verified domain only); the
 * request is remembered for 10 minutes (state, nonce, PKCE verifier) together with a
 * random value kept in this browser's cookie, and the browser goes to the provider.
 *
 * `complete`: the callback must carry a state we issued, in the browser we issued it to,
 * once; the code is redeemed and the ID token checked (sso/oidc.ts); its `email` must
 * be present, verified by the provider, and in one of the organization's verified
 * domains. The member is signed in, or created on this first sign-in with the
 * configuration's default roles and no password.
 */
import { and, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { AuthorizationServer } from "oauth4webapi";
import type { Db } from "../../../db/client";
import { ssoConnections, ssoDomains, ssoLogins } from "../../../db/schema/identity";
import { users } from "../../../db/schema/platform";
import type { Config } from "../../../env";
import { auditInsert } from "../../../platform/audit";
import { isUniqueViolation } from "../../../platform/db-errors";
import { NO_PASSWORD } from "../../../platform/passwords";
import { unseal } from "../../../platform/sealed";
import { sha256Hex } from "../../../platform/secrets";
import { emailDomain, normalizeEmail } from "../email";
import type { SignInContext, User } from "../service";
import { redirectUriOf } from "./config";
import { authorizationUrl, newCodeVerifier, newNonce, newState, redeemCallback, SsoError, type ProviderClient } from "./oidc";

export const SSO_LOGIN_TTL_MS = 10 * 60_000;

/** A console path to land on after the sign-in (anything else lands on the overview). */
export function safeReturnTo(raw: string | undefined): string {
  return raw && raw.startsWith("/") && !raw.startsWith("//") && !raw.startsWith("/\\") && !raw.startsWith("/api/") ? raw.slice(0, 500) : "/";
}

/** Thrown when the email's domain has no single sign-on (404 to an API caller). */
export class NoSsoForDomain extends SsoError {}

async function connectionForDomain(db: Db, domain: string) {
  return db
    .select({ connection: ssoConnections })
    .from(ssoDomains)
    .innerJoin(ssoConnections, eq(ssoConnections.organizationId, ssoDomains.organizationId))
    .where(and(eq(ssoDomains.domain, domain), isNotNull(ssoDomains.verifiedAt)))
    .get();
}

export async function startSso(db: Db, config: Config, rawEmail: string, returnTo: string, now: Date): Promise<{ location: string; binding: string }> {
  const email = normalizeEmail(rawEmail);
  const domain = emailDomain(email);
  if (!domain) throw new SsoError("Give your work email address: its domain tells which organization signs you in");
  const found = await connectionForDomain(db, domain);
  if (!found) throw new NoSsoForDomain(`No organization signs in with single sign-on for ${domain}: sign in with your password`);
  const c = found.connection;
  const state = newState();
  const nonce = newNonce();
  const codeVerifier = newCodeVerifier();
  const binding = newState();
  await db.insert(ssoLogins).values({
    organizationId: c.organizationId,
    stateHash: await sha256Hex(state),
    bindingHash: await sha256Hex(binding),
    nonce,
    codeVerifier,
    returnTo: safeReturnTo(returnTo),
    expiresAt: new Date(now.getTime() + SSO_LOGIN_TTL_MS).toISOString(),
    createdAt: now.toISOString(),
  });
  const location = await authorizationUrl(await providerClient(config, c), state, nonce, codeVerifier, email);
  return { location, binding };
}

async function providerClient(config: Config, c: typeof ssoConnections.$inferSelect): Promise<ProviderClient> {
  return {
    as: c.metadata as unknown as AuthorizationServer,
    issuer: c.issuer,
    clientId: c.clientId,
    clientSecret: await unseal(config.secretsKey, c.clientSecretSealed),
    redirectUri: redirectUriOf(config),
  };
}

/** Completes the sign-in at the callback; the member (created if new) and where to land. Throws SsoError with the reason. */
export async function completeSso(ctx: SignInContext, callback: URL, binding: string | undefined): Promise<{ user: User; returnTo: string; created: boolean }> {
  const { db, config, now } = ctx;
  const state = callback.searchParams.get("state");
  const login = state ? await db.select().from(ssoLogins).where(eq(ssoLogins.stateHash, await sha256Hex(state))).get() : undefined;
  if (!login || login.consumedAt || login.expiresAt <= now.toISOString()) throw new SsoError("This sign-in is unknown, expired (10 minutes) or was used already: start again");
  if (!binding || (await sha256Hex(binding)) !== login.bindingHash) throw new SsoError("This sign-in did not start in this browser: start again from the sign-in page");
  // One use, whatever follows: a second callback with the same state is refused.
  const taken = await db
    .update(ssoLogins)
    .set({ consumedAt: now.toISOString() })
    .where(and(eq(ssoLogins.id, login.id), isNull(ssoLogins.consumedAt)))
    .returning({ id: ssoLogins.id })
    .all();
  if (!taken.length) throw new SsoError("This sign-in was used already: start again");
  const error = callback.searchParams.get("error");
  if (error) throw new SsoError(`The identity provider refused the sign-in: ${error}${callback.searchParams.get("error_description") ? ` (${callback.searchParams.get("error_description")!.slice(0, 200)})` : ""}`);

  const c = await db.select().from(ssoConnections).where(eq(ssoConnections.organizationId, login.organizationId)).get();
  if (!c) throw new SsoError("Single sign-on was removed from this organization meanwhile");
  const claims = await redeemCallback(config, await providerClient(config, c), callback, { state: state!, nonce: login.nonce, codeVerifier: login.codeVerifier }, now);

  if (typeof claims.email !== "string" || !claims.email.includes("@")) {
    throw new SsoError("The identity provider sent no email address: allow the `email` scope (and claim) for this application");
  }
  // Entra ID marks a verified email with xms_edov (optional claim) instead of email_verified.
  if (claims.email_verified !== true && claims.xms_edov !== true) {
    throw new SsoError(`The identity provider has not verified ${claims.email}: only a verified email address signs in`);
  }
  const email = normalizeEmail(claims.email);
  const domain = emailDomain(email);
  const claimed = await db
    .select({ id: ssoDomains.id })
    .from(ssoDomains)
    .where(and(eq(ssoDomains.organizationId, c.organizationId), eq(ssoDomains.domain, domain), isNotNull(ssoDomains.verifiedAt)))
    .get();
  if (!claimed) throw new SsoError(`${domain} is not a verified email domain of this organization's single sign-on`);

  const existing = await db.select().from(users).where(eq(users.email, email)).get();
  if (existing) {
    if (existing.organizationId !== c.organizationId) throw new SsoError(`${email} belongs to another organization on this service`);
    if (existing.status !== "active") throw new SsoError(`The account ${email} is ${existing.status}`);
    return { user: existing, returnTo: login.returnTo, created: false };
  }
  return { user: await createMember(ctx, c.organizationId, email, c.defaultRoles), returnTo: login.returnTo, created: true };
}

/** The member's first SSO sign-in: created with the default roles and no password (audited). */
async function createMember(ctx: SignInContext, organizationId: number, email: string, roles: { module: string; role: string }[]): Promise<User> {
  const { db, now } = ctx;
  try {
    await db.batch([
      db.insert(users).values({
        organizationId,
        email,
        passwordHash: NO_PASSWORD.hash,
        passwordSalt: NO_PASSWORD.salt,
        passwordIterations: NO_PASSWORD.iterations,
        roles,
        createdAt: now.toISOString(),
      }),
      auditInsert(db, {
        organizationId,
        userId: null,
        tokenId: null,
        action: "user.sso_create",
        targetType: "user",
        // The id the insert just above produced (one transaction).
        targetId: sql`CAST(last_insert_rowid() AS TEXT)` as unknown as string,
        clientIp: ctx.clientIp,
        at: now,
      }),
    ]);
  } catch (err) {
    // The same person's two first sign-ins at once: the other one created them.
    if (!isUniqueViolation(err)) throw err;
  }
  const user = await db.select().from(users).where(eq(users.email, email)).get();
  if (!user || user.organizationId !== organizationId) throw new SsoError(`${email} belongs to another organization on this service`);
  return user;
}
