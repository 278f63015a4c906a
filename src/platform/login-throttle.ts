/**
 * Failed-login throttling (the algorithm; the OrgGate Durable Object holds the state,
 * one instance per throttled key, see `loginThrottleKeys`).
 *
 * Two keys per attempt: the account (the normalized email, whether or not such an
 * account exists, so an unknown account behaves exactly like a known one) and the
 * client address (IPv6 by its /64). Each counts consecutive failures; from
 * `threshold` failures on, the key is locked for a delay that doubles with every
 * further failure (`baseDelayMs` * 2^(failures - threshold), at most `maxDelayMs`).
 * While locked, attempts are refused (429 with Retry-After) without checking the
 * password, so the right password does not get in during a lock either.
 *
 * Every attempt is counted as a failure when it starts and forgiven when it succeeds,
 * so a burst of parallel guesses is throttled as surely as a sequence: the Durable
 * Object serializes the starts. Failures are forgotten `forgetAfterMs` after the last.
 */
import ipaddr from "ipaddr.js";

export interface LoginPolicy {
  threshold: number;
  baseDelayMs: number;
  maxDelayMs: number;
  forgetAfterMs: number;
  /** Account keys start over after a success; address keys only forgive that attempt (a NAT shares them). */
  resetOnSuccess: boolean;
}

export const ACCOUNT_POLICY: LoginPolicy = { threshold: 5, baseDelayMs: 1_000, maxDelayMs: 15 * 60_000, forgetAfterMs: 24 * 3_600_000, resetOnSuccess: true };
export const ADDRESS_POLICY: LoginPolicy = { threshold: 20, baseDelayMs: 1_000, maxDelayMs: 15 * 60_000, forgetAfterMs: 3_600_000, resetOnSuccess: false };

export interface LoginState {
  failures: number;
  lastFailureMs: number;
  lockedUntilMs: number;
}

export const FRESH_STATE: LoginState = { failures: 0, lastFailureMs: 0, lockedUntilMs: 0 };

export interface LoginDecision {
  allowed: boolean;
  /** Seconds until the next attempt is allowed (0 when allowed). */
  retryAfterSeconds: number;
}

export function lockDelayMs(policy: LoginPolicy, failures: number): number {
  if (failures < policy.threshold) return 0;
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(30, failures - policy.threshold));
}

/** Starts an attempt: refused while locked, otherwise counted as a failure until `endAttempt` says otherwise. */
export function beginAttempt(state: LoginState, policy: LoginPolicy, nowMs: number): { state: LoginState; decision: LoginDecision } {
  if (state.lockedUntilMs > nowMs) {
    return { state, decision: { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((state.lockedUntilMs - nowMs) / 1000)) } };
  }
  const failures = (nowMs - state.lastFailureMs > policy.forgetAfterMs ? 0 : state.failures) + 1;
  const delay = lockDelayMs(policy, failures);
  return {
    state: { failures, lastFailureMs: nowMs, lockedUntilMs: delay ? nowMs + delay : 0 },
    decision: { allowed: true, retryAfterSeconds: 0 },
  };
}

export type AttemptOutcome = "succeeded" | "failed" | "cancelled";

/** Ends an attempt that `beginAttempt` allowed; `cancelled`: it never ran (the other key refused). */
export function endAttempt(state: LoginState, policy: LoginPolicy, outcome: AttemptOutcome): LoginState {
  if (outcome === "failed") return state;
  if (outcome === "succeeded" && policy.resetOnSuccess) return FRESH_STATE;
  // Forgive this one attempt: back to the count (and lock) before it.
  const failures = Math.max(0, state.failures - 1);
  if (failures === 0) return FRESH_STATE;
  const delay = lockDelayMs(policy, failures);
  return { ...state, failures, lockedUntilMs: delay ? state.lastFailureMs + delay : 0 };
}

/** The throttle keys (Durable Object names) of one attempt. */
export function loginThrottleKeys(emailHash: string, clientIp: string | null): { account: string; address: string } {
  let address = clientIp ?? "unknown";
  // One IPv6 client controls a whole /64: throttle the prefix.
  if (ipaddr.IPv6.isValid(address)) address = `${ipaddr.IPv6.parse(address).parts.slice(0, 4).map((p) => p.toString(16)).join(":")}::/64`;
  return { account: `login:account:${emailHash}`, address: `login:address:${address}` };
}
