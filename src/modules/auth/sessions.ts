/**
 * Login sessions: bearer tokens (`tps_`, or the console's cookie) stored hashed, valid
 * 12 hours. Each remembers how and from where it was signed in, and when it was last
 * used (refreshed at most every SESSION_LAST_USED_RESOLUTION_MS, src/platform/auth.ts),
 * so a user can see their sessions and end any of them. Changing the password or a
 * second factor ends every other session of the user (`endOtherSessions`).
 */
import { and, desc, eq, gt, ne, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sessions } from "../../db/schema/platform";
import type { Principal } from "../../platform/context";
import { notFound } from "../../platform/errors";
import { generateSecret, hashSecret } from "../../platform/secrets";

export const SESSION_HOURS = 12;
/** Longer user agents are cut (the sessions page shows them; nothing parses them). */
export const USER_AGENT_MAX = 300;

export const SIGN_IN_METHODS = ["password", "password+totp", "password+passkey", "password+recovery_code", "sso", "signup", "invitation"] as const;
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];

/** Where a sign-in comes from. */
export interface SignInClient {
  clientIp: string | null;
  userAgent: string | null;
}

export interface NewSession {
  token: string;
  tokenHash: string;
  expiresAt: string;
}

export async function newSession(now: Date): Promise<NewSession> {
  const token = generateSecret("session");
  return { token, tokenHash: await hashSecret(token), expiresAt: new Date(now.getTime() + SESSION_HOURS * 3_600_000).toISOString() };
}

/** The row of a new session (ids may be SQL, e.g. `last_insert_rowid()` inside a batch). */
export function sessionRow(opts: {
  organizationId: number | SQL;
  userId: number | SQL;
  session: NewSession;
  client: SignInClient;
  method: SignInMethod;
  now: Date;
  mfaEnrollmentRequired?: boolean;
}) {
  const nowIso = opts.now.toISOString();
  return {
    organizationId: opts.organizationId as number,
    userId: opts.userId as number,
    tokenHash: opts.session.tokenHash,
    expiresAt: opts.session.expiresAt,
    createdAt: nowIso,
    lastUsedAt: nowIso,
    clientIp: opts.client.clientIp,
    userAgent: opts.client.userAgent ? opts.client.userAgent.slice(0, USER_AGENT_MAX) : null,
    signInMethod: opts.method,
    mfaEnrollmentRequired: opts.mfaEnrollmentRequired ?? false,
  };
}

export function insertSession(db: Db, row: ReturnType<typeof sessionRow>) {
  return db.insert(sessions).values(row);
}

/** Deletes every session of `userId` but `keep` (none kept when null): a statement for a batch. */
export function endOtherSessions(db: Db, userId: number, keep: number | null) {
  return db.delete(sessions).where(keep === null ? eq(sessions.userId, userId) : and(eq(sessions.userId, userId), ne(sessions.id, keep)));
}

/** The user's sessions that have not expired, newest first. */
export async function listSessions(db: Db, principal: Principal, now: Date) {
  const rows = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, principal.userId), eq(sessions.organizationId, principal.organizationId), gt(sessions.expiresAt, now.toISOString())))
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .all();
  return {
    sessions: rows.map((s) => ({
      id: s.id,
      created_at: s.createdAt,
      last_used_at: s.lastUsedAt ?? s.createdAt,
      expires_at: s.expiresAt,
      client_ip: s.clientIp,
      user_agent: s.userAgent,
      sign_in_method: s.signInMethod as SignInMethod,
      current: s.id === principal.sessionId,
    })),
  };
}

/** Ends one of the caller's sessions (404 for anyone else's); returns whether it was the calling one. */
export async function endSession(db: Db, principal: Principal, sessionId: number): Promise<{ current: boolean }> {
  const deleted = await db
    .delete(sessions)
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, principal.userId), eq(sessions.organizationId, principal.organizationId)))
    .returning({ id: sessions.id })
    .all();
  if (!deleted.length) throw notFound("Session");
  return { current: sessionId === principal.sessionId };
}

/** "Sign out everywhere else": every session of the caller but the calling one. */
export async function endOtherSessionsOf(db: Db, principal: Principal): Promise<{ ended: number }> {
  const deleted = await endOtherSessions(db, principal.userId, principal.sessionId).returning({ id: sessions.id }).all();
  return { ended: deleted.length };
}
