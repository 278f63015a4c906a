/**
 * Failed sign-in throttling (the algorithm; the OrgGate Durable Object holds the state,
 * see `loginThrottleKeys` for the instances).
 *
 * Throttling must not become a way to keep the owner out: anyone who knows an
 * administrator's email could otherwise lock that account by failing on purpose. So
 * failures are counted per (account, client address) first:
 *
 * - **pair** (account, address): from `PAIR_POLICY.threshold` consecutive failures on,
 *   that address is locked out of that account for a delay that doubles with every
 *   further failure (`baseDelayMs` * 2^(failures - threshold), at most `maxDelayMs`).
 *   Failures from other addresses never lock it. A success starts the pair over and
 *   marks the address as known to the account for `KNOWN_ADDRESS_MS`.
 * - **address** (all accounts from one address, IPv6 by its /64): the same, from
 *   `ADDRESS_POLICY.threshold` failures: one address guessing many accounts.
 * - **account ceiling** (one account from all addresses): distributed guessing. At
 *   `ACCOUNT_CEILING.threshold` failures within `forgetAfterMs` of each other the account
 *   is under attack: the owner is emailed (once per attack), and a password alone no
 *   longer signs in from an address the account has not signed in from before. A
 *   password followed by a second factor, and single sign-on, still do: the ceiling
 *   never refuses what only the owner can complete (src/modules/auth/throttle.ts).
 * - **factor ceiling**: `FACTOR_CEILING.threshold` wrong second-factor codes of one
 *   account from all addresses mean someone holds the password and is guessing codes:
 *   the owner is emailed, and the second-factor step is refused from addresses the
 *   account has not signed in from before (password failures never count here).
 *
 * While a pair or address is locked, attempts are refused (429 with Retry-After) without
 * checking anything, so the right password does not get in during a lock either. Every
 * attempt is counted as a failure when it starts and forgiven when it succeeds, so a
 * burst of parallel guesses is throttled as surely as a sequence: the Durable Object
 * serializes the starts. Failed second-factor codes count like failed passwords.
 */
import ipaddr from "ipaddr.js";

export interface LoginPolicy {
  threshold: number;
  baseDelayMs: number;
  maxDelayMs: number;
  forgetAfterMs: number;
  /** Pair keys start over after a success; address keys only forgive that attempt (a NAT shares them). */
  resetOnSuccess: boolean;
}

export const PAIR_POLICY: LoginPolicy = { threshold: 5, baseDelayMs: 1_000, maxDelayMs: 15 * 60_000, forgetAfterMs: 24 * 3_600_000, resetOnSuccess: true };
export const ADDRESS_POLICY: LoginPolicy = { threshold: 20, baseDelayMs: 1_000, maxDelayMs: 15 * 60_000, forgetAfterMs: 3_600_000, resetOnSuccess: false };
/** Failures of one account from every address before it counts as under attack. */
export const ACCOUNT_CEILING = { threshold: 50, forgetAfterMs: 24 * 3_600_000 } as const;
/** Wrong second-factor codes of one account from every address before the code step closes to unknown addresses. */
export const FACTOR_CEILING = { threshold: 20, forgetAfterMs: 24 * 3_600_000 } as const;

/** What an attempt checks: a password, or the second factor after one. */
export type SignInStep = "password" | "second_factor";
/** An address the account signed in from this recently is known to it. */
export const KNOWN_ADDRESS_MS = 30 * 24 * 3_600_000;

export interface LoginState {
  failures: number;
  lastFailureMs: number;
  lockedUntilMs: number;
  /** Pair keys: the last successful sign-in from this address (0: never). */
  lastSuccessMs?: number;
}

export const FRESH_STATE: LoginState = { failures: 0, lastFailureMs: 0, lockedUntilMs: 0 };

export interface CeilingState {
  failures: number;
  lastFailureMs: number;
  /** Of them, wrong second-factor codes (counted apart: a password failure never closes the code step). */
  factorFailures: number;
  lastFactorFailureMs: number;
  /** When the owner was told of this attack (0: not yet); the next attack mails again. */
  reportedAtMs: number;
}

export const FRESH_CEILING: CeilingState = { failures: 0, lastFailureMs: 0, factorFailures: 0, lastFactorFailureMs: 0, reportedAtMs: 0 };

export interface LoginDecision {
  allowed: boolean;
  /** Seconds until the next attempt is allowed (0 when allowed). */
  retryAfterSeconds: number;
}

export interface AccountDecision extends LoginDecision {
  /** The account is under attack (the ceiling is reached). */
  ceilingReached: boolean;
  /** Someone is guessing this account's second-factor codes (the factor ceiling is reached). */
  factorCeilingReached: boolean;
  /** The account signed in from this address within KNOWN_ADDRESS_MS. */
  knownAddress: boolean;
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
    state: { ...state, failures, lastFailureMs: nowMs, lockedUntilMs: delay ? nowMs + delay : 0 },
    decision: { allowed: true, retryAfterSeconds: 0 },
  };
}

export type AttemptOutcome = "succeeded" | "failed" | "cancelled";

/** Ends an attempt that `beginAttempt` allowed; `cancelled`: it never ran (another key refused, or the sign-in refused it unchecked). */
export function endAttempt(state: LoginState, policy: LoginPolicy, outcome: AttemptOutcome, nowMs: number): LoginState {
  if (outcome === "failed") return state;
  const lastSuccessMs = outcome === "succeeded" ? nowMs : state.lastSuccessMs;
  const known = lastSuccessMs ? { lastSuccessMs } : {};
  if (outcome === "succeeded" && policy.resetOnSuccess) return { ...FRESH_STATE, ...known };
  // Forgive this one attempt: back to the count (and lock) before it.
  const failures = Math.max(0, state.failures - 1);
  if (failures === 0) return { ...FRESH_STATE, ...known };
  const delay = lockDelayMs(policy, failures);
  return { ...state, ...known, failures, lockedUntilMs: delay ? state.lastFailureMs + delay : 0 };
}

/** A state worth keeping (failures not yet forgotten, or an address still known). */
export function isWorthKeeping(state: LoginState, policy: LoginPolicy, nowMs: number): boolean {
  const failing = state.failures > 0 && nowMs - state.lastFailureMs <= policy.forgetAfterMs;
  const known = !!state.lastSuccessMs && nowMs - state.lastSuccessMs <= KNOWN_ADDRESS_MS;
  return failing || known || state.lockedUntilMs > nowMs;
}

/** Counts an attempt against the account's ceilings (forgiven by `endCeiling` unless it failed). */
export function beginCeiling(state: CeilingState, step: SignInStep, nowMs: number): CeilingState {
  const fresh = nowMs - state.lastFailureMs > ACCOUNT_CEILING.forgetAfterMs;
  const freshFactor = nowMs - state.lastFactorFailureMs > FACTOR_CEILING.forgetAfterMs;
  const factorFailures = step === "second_factor" ? (freshFactor ? 0 : state.factorFailures) + 1 : freshFactor ? 0 : state.factorFailures;
  return {
    failures: (fresh ? 0 : state.failures) + 1,
    lastFailureMs: nowMs,
    factorFailures,
    lastFactorFailureMs: step === "second_factor" ? nowMs : state.lastFactorFailureMs,
    reportedAtMs: fresh && freshFactor ? 0 : state.reportedAtMs,
  };
}

export function ceilingReached(state: CeilingState, nowMs: number): boolean {
  return state.failures >= ACCOUNT_CEILING.threshold && nowMs - state.lastFailureMs <= ACCOUNT_CEILING.forgetAfterMs;
}

export function factorCeilingReached(state: CeilingState, nowMs: number): boolean {
  return state.factorFailures >= FACTOR_CEILING.threshold && nowMs - state.lastFactorFailureMs <= FACTOR_CEILING.forgetAfterMs;
}

/**
 * Ends an attempt on the ceilings; `report`: the owner should be told now (the first
 * failure at either ceiling of this attack).
 */
export function endCeiling(state: CeilingState, step: SignInStep, outcome: AttemptOutcome, nowMs: number): { state: CeilingState; report: boolean } {
  if (outcome !== "failed") {
    const failures = Math.max(0, state.failures - 1);
    const factorFailures = step === "second_factor" ? Math.max(0, state.factorFailures - 1) : state.factorFailures;
    return { state: failures || factorFailures ? { ...state, failures, factorFailures } : FRESH_CEILING, report: false };
  }
  const reached = ceilingReached(state, nowMs) || factorCeilingReached(state, nowMs);
  if (reached && !state.reportedAtMs) return { state: { ...state, reportedAtMs: nowMs }, report: true };
  return { state, report: false };
}

/** The address part of a throttle key: IPv6 by its /64 (one client controls a whole /64). */
export function throttledAddress(clientIp: string | null): string {
  const address = clientIp ?? "unknown";
  if (ipaddr.IPv6.isValid(address)) return `${ipaddr.IPv6.parse(address).parts.slice(0, 4).map((p) => p.toString(16)).join(":")}::/64`;
  return address;
}

/**
 * The Durable Object instances of one attempt: the account's (its ceiling and its
 * pairs, one per address) and the address's.
 */
export function loginThrottleKeys(emailHash: string, clientIp: string | null): { account: string; address: string; pair: string } {
  const address = throttledAddress(clientIp);
  return { account: `login:account:${emailHash}`, address: `login:address:${address}`, pair: address };
}
