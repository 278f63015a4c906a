/**
 * Bearer resolution: one middleware turns `Authorization: Bearer <secret>` into a
 * `Principal {organization, user, permissions}` with at most one D1 read and no
 * write on the hot path (`last_used_at` is refreshed at most once a minute per
 * API token and once every five minutes per session, after the response, via waitUntil).
 */
import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import type { Db } from "../db/client";
import { apiTokens, sessions, users } from "../db/schema/platform";
import { ApiError, unauthorized } from "./errors";
import type { AgentPrincipal, AppEnv, Principal } from "./context";
import { permissionsOfUser, type Permission } from "./permissions";
import { hashSecret, parseSecret } from "./secrets";
import { csrfFailure, sessionCookieOf } from "./session-cookie";

export const LAST_USED_RESOLUTION_MS = 60_000;
/**
 * A session's "last used" (the sessions page) is as precise as this: a console makes
 * several calls a second, and a write for each would cost more than the read it serves.
 */
export const SESSION_LAST_USED_RESOLUTION_MS = 5 * 60_000;

export type Resolution = { principal: Principal; touch?: () => Promise<unknown> } | { error: ApiError };

export async function resolveBearer(db: Db, bearer: string, now: Date): Promise<Resolution> {
  const kind = parseSecret(bearer);
  // Wrong shape or checksum: rejected without a database read.
  if (kind !== "api" && kind !== "session") return { error: unauthorized() };
  const tokenHash = await hashSecret(bearer);
  const nowIso = now.toISOString();

  if (kind === "session") {
    const row = await db
      .select({ session: sessions, user: users })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(eq(sessions.tokenHash, tokenHash))
      .get();
    if (!row) return { error: unauthorized() };
    if (row.session.expiresAt <= nowIso) return { error: unauthorized("Session has expired", "token_expired") };
    if (row.user.status !== "active") return { error: unauthorized() };
    const sessionId = row.session.id;
    const staleBefore = new Date(now.getTime() - SESSION_LAST_USED_RESOLUTION_MS).toISOString();
    const needsTouch = !row.session.lastUsedAt || row.session.lastUsedAt < staleBefore;
    return {
      principal: {
        kind: "session",
        organizationId: row.user.organizationId,
        userId: row.user.id,
        userEmail: row.user.email,
        isSignupUser: row.user.isSignupUser,
        tokenId: null,
        sessionId,
        permissions: permissionsOfUser(row.user.roles, row.user.isSignupUser),
        expiresAt: row.session.expiresAt,
        mfaEnrollmentRequired: row.session.mfaEnrollmentRequired,
      },
      touch: needsTouch
        ? () =>
            db
              .update(sessions)
              .set({ lastUsedAt: nowIso })
              .where(and(eq(sessions.id, sessionId), or(isNull(sessions.lastUsedAt), lt(sessions.lastUsedAt, staleBefore))))
              .run()
        : undefined,
    };
  }

  const row = await db
    .select({ token: apiTokens, user: users })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(eq(apiTokens.tokenHash, tokenHash))
    .get();
  if (!row) return { error: unauthorized() };
  if (row.token.revokedAt) return { error: unauthorized("Token has been revoked") };
  if (row.token.expiresAt <= nowIso) return { error: unauthorized("Token has expired", "token_expired") };
  // A disabled or removed user's tokens stop working at once.
  if (row.user.status !== "active") return { error: unauthorized() };

  // A token carries its scopes, but never more than its user holds today: demoting
  // a user demotes their tokens too.
  const held = permissionsOfUser(row.user.roles, row.user.isSignupUser);
  const permissions = new Set<Permission>(row.token.scopes.filter((s): s is Permission => held.has(s as Permission)));

  const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS).toISOString();
  const needsTouch = !row.token.lastUsedAt || row.token.lastUsedAt < staleBefore;
  const tokenId = row.token.id;
  return {
    principal: {
      kind: "api_token",
      organizationId: row.token.organizationId,
      userId: row.user.id,
      userEmail: row.user.email,
      isSignupUser: row.user.isSignupUser,
      tokenId,
      sessionId: null,
      permissions,
      expiresAt: row.token.expiresAt,
      // Machine credentials are outside the second-factor policy (docs/identity.md).
      mfaEnrollmentRequired: false,
    },
    touch: needsTouch
      ? () =>
          db
            .update(apiTokens)
            .set({ lastUsedAt: nowIso })
            .where(
              and(eq(apiTokens.id, tokenId), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, staleBefore))),
            )
            .run()
      : undefined,
  };
}

/**
 * Agents are not users: how their tokens are resolved is the cert-watcher module's,
 * connected when the app is built (src/app.ts `connectModules`), so authentication (and
 * with it rate limiting) knows them without the platform depending on that module.
 */
export type AgentResolver = (db: Db, bearer: string, now: Date) => Promise<AgentPrincipal | ApiError>;
let agentResolver: AgentResolver | null = null;

export function connectAgentResolver(resolver: AgentResolver): void {
  agentResolver = resolver;
}

export function bearerOf(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/**
 * Resolves the caller if a bearer (or, without one, the console's session cookie) is
 * present. It never rejects by itself: routes decide (public routes ignore it,
 * protected routes raise `authFailure`).
 */
export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const header = c.req.header("authorization");
  const cookie = header === undefined ? sessionCookieOf(c) : undefined;
  if (cookie !== undefined) {
    // The web console's session cookie (see session-cookie.ts): only a session
    // token is accepted there, and a mutating call must prove it is same-origin.
    const refused = csrfFailure(c) ?? (parseSecret(cookie) === "session" ? undefined : unauthorized());
    if (refused) c.set("authFailure", refused);
    else {
      const r = await resolveBearer(c.get("db"), cookie, c.get("now"));
      if ("error" in r) c.set("authFailure", r.error);
      else {
        c.set("principal", r.principal);
        if (r.touch) c.executionCtx.waitUntil(r.touch().catch(() => undefined));
      }
    }
  } else if (header !== undefined) {
    const bearer = bearerOf(header);
    if (!bearer) {
      c.set("authFailure", unauthorized("Authorization header must be `Bearer <token>`"));
    } else if (parseSecret(bearer) === "agent") {
      const r = agentResolver ? await agentResolver(c.get("db"), bearer, c.get("now")) : unauthorized();
      if (r instanceof ApiError) c.set("authFailure", r);
      else c.set("agent", r);
    } else {
      const r = await resolveBearer(c.get("db"), bearer, c.get("now"));
      if ("error" in r) c.set("authFailure", r.error);
      else {
        c.set("principal", r.principal);
        if (r.touch) c.executionCtx.waitUntil(r.touch().catch(() => undefined));
      }
    }
  }
  await next();
};
