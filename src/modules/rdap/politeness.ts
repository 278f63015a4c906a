/**
 * Politeness towards RDAP servers, and when a failed check is tried again. Pure.
 *
 * Per server (the origin of its base URL):
 *  - 429: the server asked us to slow down. Nothing more is sent to it until its
 *    Retry-After (seconds or HTTP date; RATE_LIMIT_DEFAULT_SECONDS when absent, capped
 *    at a day); its domains are recorded as `rate_limited` meanwhile.
 *  - 5xx and timeouts: one failing domain says little (a registry may fail a single
 *    name), so the server is backed off only after SERVER_FAILURES_BEFORE_BACKOFF
 *    consecutive failures with no success in between, then exponentially
 *    (30 s, 60 s, 120 s ... at most an hour). A success resets the count.
 *
 * Per monitor: a transient failure (rate_limited, server_error, timeout) is tried
 * again sooner than the full check interval: at the server's "not before" time, else
 * after 1, 2, 4 ... minutes (never later than the interval). Permanent answers
 * (not_found, invalid_response, no_rdap_server) wait for the next interval.
 */
import type { RdapCheckStatus } from "../../db/schema/rdap";

export const RATE_LIMIT_DEFAULT_SECONDS = 60;
export const RATE_LIMIT_MAX_SECONDS = 24 * 3600;
export const SERVER_FAILURES_BEFORE_BACKOFF = 3;
export const SERVER_BACKOFF_BASE_SECONDS = 30;
export const SERVER_BACKOFF_MAX_SECONDS = 3600;
export const MONITOR_RETRY_BASE_SECONDS = 60;

export const TRANSIENT_STATUSES: ReadonlySet<RdapCheckStatus> = new Set(["rate_limited", "server_error", "timeout"]);

/** The politeness key of an RDAP base URL: scheme://host[:port]. */
export function serverKey(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin;
  } catch {
    return baseUrl;
  }
}

export interface ServerState {
  /** Epoch ms before which nothing is sent; 0 = none. */
  notBefore: number;
  reason: RdapCheckStatus | null;
  consecutiveFailures: number;
}

export const FRESH_SERVER: ServerState = { notBefore: 0, reason: null, consecutiveFailures: 0 };

/**
 * The server's state after one lookup outcome at `now` (epoch ms). Returns the same
 * object when nothing changed, so callers can skip a write.
 */
export function nextServerState(
  state: ServerState,
  outcome: RdapCheckStatus,
  now: number,
  retryAfterSeconds: number | null = null,
): ServerState {
  if (outcome === "rate_limited") {
    const seconds = Math.min(RATE_LIMIT_MAX_SECONDS, Math.max(1, retryAfterSeconds ?? RATE_LIMIT_DEFAULT_SECONDS));
    return { notBefore: Math.max(state.notBefore, now + seconds * 1000), reason: "rate_limited", consecutiveFailures: state.consecutiveFailures };
  }
  if (outcome === "server_error" || outcome === "timeout") {
    const failures = state.consecutiveFailures + 1;
    if (failures < SERVER_FAILURES_BEFORE_BACKOFF) return { ...state, consecutiveFailures: failures };
    const exp = failures - SERVER_FAILURES_BEFORE_BACKOFF;
    const seconds = Math.min(SERVER_BACKOFF_MAX_SECONDS, SERVER_BACKOFF_BASE_SECONDS * 2 ** Math.min(exp, 20));
    return { notBefore: Math.max(state.notBefore, now + seconds * 1000), reason: outcome, consecutiveFailures: failures };
  }
  // The server answered (even 404 or garbage is an answer): it is up.
  return state.consecutiveFailures === 0 ? state : { ...state, consecutiveFailures: 0 };
}

/** True while the server must not be asked. */
export function serverBlocked(state: ServerState, now: number): boolean {
  return state.notBefore > now;
}

/**
 * When a monitor whose check ended in `status` is due again before its regular
 * interval (epoch ms), or null to wait for the interval. `failureCount` counts this
 * failure too.
 */
export function monitorRetryAt(
  status: RdapCheckStatus,
  failureCount: number,
  now: number,
  intervalSeconds: number,
  serverNotBefore = 0,
): number | null {
  if (!TRANSIENT_STATUSES.has(status)) return null;
  const backoff = MONITOR_RETRY_BASE_SECONDS * 2 ** Math.min(Math.max(0, failureCount - 1), 20);
  const seconds = Math.min(backoff, Math.max(intervalSeconds, MONITOR_RETRY_BASE_SECONDS));
  return Math.max(now + seconds * 1000, serverNotBefore);
}
