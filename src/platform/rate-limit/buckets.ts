/**
 * Token buckets of the per-organization rate limiter (the OrgGate Durable Object
 * holds them; this file is the algorithm and the contract, testable without it).
 *
 * OrgGate: the per-organization rate limiter (one instance per organization, plus
 * one per client IP for unauthenticated calls).
 *
 * Algorithm: token buckets. Each key (the organization, and each API token or
 * session within it) has a bucket of `perMinute` tokens refilled continuously at
 * perMinute/60 per second, so bursts up to a minute's allowance are accepted and
 * the sustained rate is capped. A request must find a token in *every* bucket it
 * is charged to; it consumes from all of them or none. Buckets live in memory:
 * losing them on eviction only forgives a little, never blocks wrongly.
 *
 * Being a Durable Object makes this exact across all Worker isolates: every
 * request of one organization is serialized through the same bucket state.
 */
import type { AccountDecision, AttemptOutcome, LoginDecision, LoginPolicy, SignInStep } from "../login-throttle";

export interface BucketSpec {
  key: string;
  perMinute: number;
}

export interface GateDecision {
  allowed: boolean;
  /** Of the tightest bucket: its capacity, whole tokens left, seconds to full. */
  limit: number;
  remaining: number;
  resetSeconds: number;
  /** Seconds until the request would be allowed (0 when allowed). */
  retryAfterSeconds: number;
}

export interface Bucket {
  tokens: number;
  updatedMs: number;
}

export function decide(buckets: Map<string, Bucket>, specs: BucketSpec[], nowMs: number): GateDecision {
  const states = specs.map((spec) => {
    const rate = spec.perMinute / 60_000; // tokens per ms
    const b = buckets.get(spec.key) ?? { tokens: spec.perMinute, updatedMs: nowMs };
    const tokens = Math.min(spec.perMinute, b.tokens + (nowMs - b.updatedMs) * rate);
    return { spec, rate, tokens };
  });
  const allowed = states.every((s) => s.tokens >= 1);
  for (const s of states) {
    const tokens = allowed ? s.tokens - 1 : s.tokens;
    buckets.set(s.spec.key, { tokens, updatedMs: nowMs });
    s.tokens = tokens;
  }
  // Report the bucket closest to empty (relative to its capacity).
  const tight = states.reduce((a, b) => (b.tokens / b.spec.perMinute < a.tokens / a.spec.perMinute ? b : a));
  const retryAfterMs = allowed ? 0 : Math.max(...states.filter((s) => s.tokens < 1).map((s) => (1 - s.tokens) / s.rate));
  return {
    allowed,
    limit: tight.spec.perMinute,
    remaining: Math.max(0, Math.floor(tight.tokens)),
    resetSeconds: Math.ceil((tight.spec.perMinute - tight.tokens) / tight.rate / 1000),
    retryAfterSeconds: Math.ceil(retryAfterMs / 1000),
  };
}

/** The RPC surface of the OrgGate Durable Object. */
export interface OrgGateRpc extends Rpc.DurableObjectBranded {
  take(specs: BucketSpec[]): Promise<GateDecision>;
  /** Sign-in throttling (src/platform/login-throttle.ts), instances named by `loginThrottleKeys`: an address's instance. */
  beginLogin(policy: LoginPolicy, nowMs: number): Promise<LoginDecision>;
  endLogin(policy: LoginPolicy, outcome: AttemptOutcome, nowMs: number): Promise<void>;
  /** An account's instance: the (account, address) pair and the account's ceiling. */
  beginAccountAttempt(address: string, step: SignInStep, nowMs: number): Promise<AccountDecision>;
  endAccountAttempt(address: string, step: SignInStep, outcome: AttemptOutcome, nowMs: number): Promise<{ reportAttack: boolean; failures: number; factorFailures: number }>;
}
