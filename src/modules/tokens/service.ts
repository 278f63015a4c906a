/**
 * API tokens: scoped, expiring bearer credentials (docs/decisions.md#api-tokens).
 *
 * States: active -> expired (time), active -> revoked (DELETE), active -> active
 * (renew by the token itself: new expiry = now + original validity days).
 *
 * A token created by another API token (its creator, `created_by_token_id`) never
 * outlives it: at creation its expiry may not pass the creator's (403), and renewal
 * ends at the creator's expiry at the latest; once the creator is revoked or expired,
 * renewal is refused (403) and the token runs out at its current expiry.
 */
import { desc, eq } from "drizzle-orm";
import { apiTokens, users } from "../../db/schema/platform";
import type { Principal } from "../../platform/context";
import { badRequest, forbidden } from "../../platform/errors";
import { isPermission, type Permission } from "../../platform/permissions";
import { generateSecret, hashSecret, TOKEN_PREFIX_LENGTH } from "../../platform/secrets";
import type { Tenant } from "../../platform/tenant";

export const MAX_VALIDITY_DAYS = 30;
const DAY_MS = 86_400_000;

export type TokenStatus = "active" | "expired" | "revoked";

export function tokenStatus(row: { expiresAt: string; revokedAt: string | null }, now: Date): TokenStatus {
  if (row.revokedAt) return "revoked";
  return row.expiresAt <= now.toISOString() ? "expired" : "active";
}

export function listingItem(row: typeof apiTokens.$inferSelect, now: Date) {
  return {
    id: row.id,
    name: row.name,
    token_prefix: row.tokenPrefix,
    scopes: row.scopes,
    validity_days: row.validityDays,
    expires_at: row.expiresAt,
    last_used_at: row.lastUsedAt,
    created_at: row.createdAt,
    revoked_at: row.revokedAt,
    status: tokenStatus(row, now),
  };
}

/**
 * Validates requested scopes: unknown ones are a 400 naming each; scopes beyond
 * what the creator holds right now are a 403.
 */
export function checkScopes(requested: string[], held: ReadonlySet<Permission>): Permission[] {
  const unknown = requested
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => !isPermission(s))
    .map(({ s, i }) => ({ path: `scopes.${i}`, message: `Unknown scope '${s}'; expected <module>:<permission>` }));
  if (unknown.length) throw badRequest("Unknown scope", unknown);
  const scopes = [...new Set(requested)] as Permission[];
  const excess = scopes.filter((s) => !held.has(s));
  if (excess.length) throw forbidden(`Cannot grant scopes you do not hold: ${excess.join(", ")}`);
  return scopes;
}

/**
 * A token never outlives the API token that created it (that would turn a short-lived
 * credential into a long-lived one): 403 naming the latest allowed expiry. A login
 * session may create tokens of any allowed validity.
 */
function assertWithinCreatorLifetime(principal: Principal, expiresAt: string) {
  if (principal.kind !== "api_token" || expiresAt <= principal.expiresAt) return;
  throw forbidden(`A token cannot create a token that expires after itself (this one expires at ${principal.expiresAt}); ask for fewer validity_days`);
}

export async function createToken(t: Tenant, principal: Principal, input: { name: string; validity_days: number; scopes: string[] }, now: Date) {
  const scopes = checkScopes(input.scopes, principal.permissions);
  const expiresAt = new Date(now.getTime() + input.validity_days * DAY_MS).toISOString();
  assertWithinCreatorLifetime(principal, expiresAt);
  const token = generateSecret("api");
  const [row] = await t
    .insert(apiTokens, {
      userId: principal.userId,
      name: input.name,
      tokenHash: await hashSecret(token),
      tokenPrefix: token.slice(0, TOKEN_PREFIX_LENGTH),
      scopes,
      validityDays: input.validity_days,
      expiresAt,
      createdAt: now.toISOString(),
      createdByTokenId: principal.kind === "api_token" ? principal.tokenId : null,
    })
    .returning();
  return {
    id: row.id,
    token,
    name: row.name,
    token_prefix: row.tokenPrefix,
    scopes: row.scopes,
    expires_at: row.expiresAt,
    message: "Token created. Store it now: it is shown only once.",
  };
}

export async function listOwnTokens(t: Tenant, principal: Principal, now: Date) {
  const rows = await t.select(apiTokens, eq(apiTokens.userId, principal.userId)).orderBy(desc(apiTokens.createdAt), desc(apiTokens.id)).all();
  return rows.map((r) => listingItem(r, now));
}

export async function listOrganizationTokens(t: Tenant, now: Date) {
  const rows = await t.db
    .select({ token: apiTokens, email: users.email })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(t.where(apiTokens))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id))
    .all();
  return rows.map((r) => ({ ...listingItem(r.token, now), user_id: r.token.userId, user_email: r.email }));
}

/**
 * Revokes a token: your own with delete_tokens (or
 * revoke_all_tokens), anyone's in the organization with revoke_all_tokens; another
 * user's token with delete_tokens only is 403. Another organization's token is 404.
 */
export async function revokeToken(t: Tenant, principal: Principal, tokenId: number, now: Date) {
  const row = await t.getOr404(apiTokens, tokenId, "Token");
  const own = row.userId === principal.userId;
  const can = principal.permissions.has("api-tokens:revoke_all_tokens") || (own && principal.permissions.has("api-tokens:delete_tokens"));
  if (!can) throw forbidden(own ? "Revoking your token requires api-tokens:delete_tokens" : "Revoking another user's token requires api-tokens:revoke_all_tokens");
  if (row.revokedAt) return { message: "Token was already revoked", revoked_at: row.revokedAt };
  const revokedAt = now.toISOString();
  await t.update(apiTokens, { revokedAt }, eq(apiTokens.id, row.id)).run();
  return { message: "Token revoked", revoked_at: revokedAt };
}

/** Renewal is authenticated by the token itself: whoever holds it keeps it alive, nobody else. */
export async function renewToken(t: Tenant, principal: Principal, tokenId: number, now: Date) {
  if (principal.kind !== "api_token" || principal.tokenId !== tokenId) {
    throw forbidden("A token can only be renewed with itself as the bearer");
  }
  const row = await t.getOr404(apiTokens, tokenId, "Token");
  let expiresAt = new Date(now.getTime() + row.validityDays * DAY_MS).toISOString();
  let message = "Token renewed";
  if (row.createdByTokenId !== null) {
    const creatorExpiry = await creatorExpiryOf(t, row.createdByTokenId, now);
    if (creatorExpiry < expiresAt) {
      expiresAt = creatorExpiry;
      message = "Token renewed until the expiry of the token that created it";
    }
  }
  await t.update(apiTokens, { expiresAt }, eq(apiTokens.id, row.id)).run();
  return { message, expires_at: expiresAt };
}

/**
 * The creator's current expiry, the latest a token it created may be renewed to; 403
 * when the creator is revoked or expired (the token then runs out at its current
 * expiry: a credential cut off upstream cannot keep itself alive).
 */
async function creatorExpiryOf(t: Tenant, creatorId: number, now: Date): Promise<string> {
  const creator = await t.get(apiTokens, creatorId);
  if (!creator || creator.revokedAt) {
    throw forbidden("The API token that created this token has been revoked, so it cannot be renewed; create a new token");
  }
  if (tokenStatus(creator, now) === "expired") {
    throw forbidden(`The API token that created this token expired at ${creator.expiresAt}, so it cannot be renewed; create a new token`);
  }
  return creator.expiresAt;
}
