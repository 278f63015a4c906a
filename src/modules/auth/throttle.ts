/**
 * Sign-in throttling around one attempt (a password, or a second factor after one):
 * the account's instance (its pair with this client address, and its ceilings) and the
 * address's instance must both allow it; the outcome is reported to both. State and
 * serialization: the OrgGate Durable Object; policy and algorithm:
 * src/platform/login-throttle.ts. When a failure takes the account to a ceiling, the
 * owner is emailed and the organization's audit log says so.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { users } from "../../db/schema/platform";
import type { Bindings, Config } from "../../env";
import { auditInsert } from "../../platform/audit";
import { ApiError } from "../../platform/errors";
import { ADDRESS_POLICY, loginThrottleKeys, type AccountDecision, type AttemptOutcome, type SignInStep } from "../../platform/login-throttle";
import { enqueueMail } from "../../platform/mailer";
import { sha256Hex } from "../../platform/secrets";
import { normalizeEmail } from "./email";

export interface ThrottleContext {
  env: Bindings;
  db: Db;
  config: Config;
  now: Date;
  clientIp: string | null;
}

/** What the throttle saw of the account, for the sign-in to decide with. */
export type ThrottleGate = Pick<AccountDecision, "ceilingReached" | "factorCeilingReached" | "knownAddress">;

/**
 * An attempt's own verdict on itself: `succeeded` (a sign-in completed), `failed` (a
 * wrong password or code) or `cancelled` (neither: a correct password still waiting for
 * its second factor, or an attempt the sign-in refused unchecked).
 */
export interface Attempted<R> {
  value: R;
  outcome: AttemptOutcome;
}

export function tooManyAttempts(retryAfterSeconds: number, message = `Too many failed sign-ins; retry in ${retryAfterSeconds} s`): ApiError {
  return new ApiError("rate_limited", message, undefined, { "Retry-After": String(retryAfterSeconds) });
}

/** Runs `attempt` under the throttle: 429 with Retry-After while the pair or the address is locked. */
export async function throttledSignIn<R>(
  ctx: ThrottleContext,
  email: string,
  step: SignInStep,
  attempt: (gate: ThrottleGate) => Promise<Attempted<R>>,
): Promise<R> {
  const keys = loginThrottleKeys(await sha256Hex(normalizeEmail(email)), ctx.clientIp);
  const nowMs = ctx.now.getTime();
  const account = ctx.env.ORG_GATE.get(ctx.env.ORG_GATE.idFromName(keys.account));
  const address = ctx.env.ORG_GATE.get(ctx.env.ORG_GATE.idFromName(keys.address));
  const [forAccount, forAddress] = await Promise.all([account.beginAccountAttempt(keys.pair, step, nowMs), address.beginLogin(ADDRESS_POLICY, nowMs)]);
  if (!forAccount.allowed || !forAddress.allowed) {
    // A key that did allow counted this attempt; it never ran, so forgive it there.
    await Promise.all([
      forAccount.allowed ? account.endAccountAttempt(keys.pair, step, "cancelled", nowMs) : undefined,
      forAddress.allowed ? address.endLogin(ADDRESS_POLICY, "cancelled", nowMs) : undefined,
    ]);
    throw tooManyAttempts(Math.max(forAccount.retryAfterSeconds, forAddress.retryAfterSeconds));
  }
  let outcome: AttemptOutcome = "failed";
  try {
    const done = await attempt(forAccount);
    outcome = done.outcome;
    return done.value;
  } catch (err) {
    // Only a wrong credential is a failure; a refusal that checked nothing is not.
    if (!(err instanceof ApiError && (err.code === "unauthorized" || err.code === "token_expired"))) outcome = "cancelled";
    throw err;
  } finally {
    const [ended] = await Promise.all([account.endAccountAttempt(keys.pair, step, outcome, nowMs), address.endLogin(ADDRESS_POLICY, outcome, nowMs)]);
    if (ended.reportAttack) await reportAttack(ctx, email, ended).catch((err) => console.error("sign-in throttle: telling the owner failed", err));
  }
}

/** The owner's mail and the audit entry when an account reaches a ceiling (nothing for an unknown account). */
async function reportAttack(ctx: ThrottleContext, email: string, counts: { failures: number; factorFailures: number }) {
  const user = await ctx.db.select().from(users).where(eq(users.email, normalizeEmail(email))).get();
  if (!user) return;
  const codes = counts.factorFailures > 0;
  const body = [
    `Trust-Plane saw ${counts.failures} failed sign-ins to your account (${user.email}) in the last 24 hours, from many addresses${codes ? `, ${counts.factorFailures} of them wrong second-factor codes after a correct password` : ""}.`,
    "",
    codes
      ? "Someone who knows your password is guessing your second-factor codes. Change your password now (Account › Password in the console)."
      : "Someone is guessing your password. Until the attempts stop, a password alone signs in only from addresses you signed in from before; your second factor and single sign-on work as usual.",
    "",
    "If this was you, nothing needs doing. Your sessions are listed in the console under Account › Sessions.",
  ].join("\n");
  await ctx.db.batch([
    enqueueMail(ctx.db, ctx.config, { organizationId: user.organizationId, to: user.email, subject: "Trust-Plane: many failed sign-ins to your account", body, kind: "security_notice" }, ctx.now),
    auditInsert(ctx.db, {
      organizationId: user.organizationId,
      userId: user.id,
      tokenId: null,
      action: "auth.throttle.account_under_attack",
      targetType: "user",
      targetId: String(user.id),
      clientIp: ctx.clientIp,
      at: ctx.now,
    }),
  ]);
}
