/**
 * API tokens: scoped, expiring bearer credentials (spec "API tokens", ADDENDUM 4).
 *
 * States: active -> expired (time), active -> revoked (DELETE), active -> active
 * (renew by the token itself: new expiry = now + original validity days).
 */
import { and, desc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiTokens, users } from "../../db/schema/platform";
import type { Principal } from "../../platform/context";
import { ApiError, badRequest, forbidden, notFound } from "../../platform/errors";
import { isPermission, type Permission } from "../../platform/permissions";
import { generateSecret, hashSecret, TOKEN_PREFIX_LENGTH } from "../../platform/secrets";

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

export async function createToken(
  db: Db,
  principal: Principal,
  input: { name: string; validity_days: number; scopes: string[] },
  now: Date,
) {
  const scopes = checkScopes(input.scopes, principal.permissions);
  const token = generateSecret("api");
  const expiresAt = new Date(now.getTime() + input.validity_days * DAY_MS).toISOString();
  const row = await db
    .insert(apiTokens)
    .values({
      organizationId: principal.organizationId,
      userId: principal.userId,
      name: input.name,
      tokenHash: await hashSecret(token),
      tokenPrefix: token.slice(0, TOKEN_PREFIX_LENGTH),
      scopes,
      validityDays: input.validity_days,
      expiresAt,
      createdAt: now.toISOString(),
    })
    .returning()
    .get();
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

export async function listOwnTokens(db: Db, principal: Principal, now: Date) {
  const rows = await db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.organizationId, principal.organizationId), eq(apiTokens.userId, principal.userId)))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id))
    .all();
  return rows.map((r) => listingItem(r, now));
}

export async function listOrganizationTokens(db: Db, organizationId: number, now: Date) {
  const rows = await db
    .select({ token: apiTokens, email: users.email })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(eq(apiTokens.organizationId, organizationId))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id))
    .all();
  return rows.map((r) => ({ ...listingItem(r.token, now), user_id: r.token.userId, user_email: r.email }));
}

/** A token of the organization, or 404 (another organization's id included). */
async function tokenOf(db: Db, organizationId: number, tokenId: number) {
  const row = await db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.organizationId, organizationId)))
    .get();
  if (!row) throw notFound("Token");
  return row;
}

/**
 * Revokes a token: your own with delete_tokens (or revoke_all_tokens), anyone's
 * in the organization with revoke_all_tokens. A token you may not even see is a
 * 404, so its existence does not leak.
 */
export async function revokeToken(db: Db, principal: Principal, tokenId: number, now: Date) {
  const row = await tokenOf(db, principal.organizationId, tokenId);
  const own = row.userId === principal.userId;
  const can = principal.permissions.has("api-tokens:revoke_all_tokens") || (own && principal.permissions.has("api-tokens:delete_tokens"));
  if (!can) {
    if (own || principal.permissions.has("api-tokens:view_all_tokens")) throw forbidden("Revoking this token requires api-tokens:revoke_all_tokens");
    throw notFound("Token");
  }
  if (row.revokedAt) return { message: "Token was already revoked", revoked_at: row.revokedAt };
  const revokedAt = now.toISOString();
  await db.update(apiTokens).set({ revokedAt }).where(eq(apiTokens.id, row.id)).run();
  return { message: "Token revoked", revoked_at: revokedAt };
}

/** Renewal is authenticated by the token itself (spec "Authentication" 6). */
export async function renewToken(db: Db, principal: Principal, tokenId: number, now: Date) {
  if (principal.kind !== "api_token" || principal.tokenId !== tokenId) {
    throw new ApiError(403, "forbidden", "A token can only be renewed with itself as the bearer");
  }
  const row = await tokenOf(db, principal.organizationId, tokenId);
  const expiresAt = new Date(now.getTime() + row.validityDays * DAY_MS).toISOString();
  await db.update(apiTokens).set({ expiresAt }).where(eq(apiTokens.id, row.id)).run();
  return { message: "Token renewed", expires_at: expiresAt };
}
