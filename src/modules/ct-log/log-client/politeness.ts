/**
 * Politeness per log: a request rate, a cap on requests in flight, retries with
 * exponential backoff and full jitter on 429/5xx and network failures, Retry-After
 * honoured, a per-request timeout. A 429 or 5xx pauses every request to the log
 * (not only the one that got it) until its Retry-After or backoff has passed: the
 * log said it is overloaded, so the requests in flight beside it should not press on.
 * A Retry-After longer than `maxBackoffMs` is not slept through: every request to
 * the log fails at once with LogPausedError until it has passed, so the caller can
 * end its run and come back when the log said (instead of asking again too early).
 * Time is injected (clock + sleeper + random), so tests record delays instead of
 * sleeping.
 */
import { LogClientError, LogHttpError, LogPausedError, RequestDroppedError } from "./types";

export interface Clock {
  /** ms since epoch. */
  now(): number;
}
export type Sleeper = (ms: number) => Promise<void>;

export const systemClock: Clock = { now: () => Date.now() };
export const realSleep: Sleeper = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export interface PolitenessOptions {
  /** Maximum request rate to this log; 0 or absent = unlimited. */
  requestsPerSecond?: number;
  /** Requests to this log in flight at once (default 1); retries wait for a free place like new requests. */
  concurrency?: number;
  /** Retries after the first attempt (default 5). */
  maxRetries?: number;
  /**
   * Retries after a failure with no HTTP answer other than a timeout (DNS lookup
   * failed, connection refused): default maxRetries. An unreachable host stays
   * unreachable for a while, so a caller with its own backoff across runs sets 0.
   */
  maxNetworkRetries?: number;
  /** First backoff step (default 1000 ms), doubled per attempt. */
  baseBackoffMs?: number;
  /**
   * Cap of a backoff step, and the longest Retry-After waited for within a call (default
   * 60 000 ms); a longer one makes this and every later request throw LogPausedError until it has passed.
   */
  maxBackoffMs?: number;
  /** Per-request timeout (default 30 000 ms); 0 disables. */
  timeoutMs?: number;
  clock?: Clock;
  sleep?: Sleeper;
  /** [0,1) source for jitter (default Math.random). */
  random?: () => number;
  fetch?: typeof fetch;
}

/** Parses Retry-After (delay-seconds or HTTP-date) into ms from `now`; undefined when absent or invalid. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, t - now);
}

export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/** A fetch wrapper holding one log's politeness state. */
export class PoliteFetcher {
  private nextSlot = 0;
  /** Until when every request waits: set by a 429/5xx answer (Retry-After or backoff). */
  private pausedUntil = 0;
  /** The request whose answer asked for a pause too long to wait (what LogPausedError names). */
  private pausedBy = "";
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  readonly opts: Required<Omit<PolitenessOptions, "fetch">> & { fetch: typeof fetch };

  constructor(opts: PolitenessOptions = {}) {
    this.opts = {
      requestsPerSecond: opts.requestsPerSecond ?? 0,
      concurrency: Math.max(1, Math.floor(opts.concurrency ?? 1)),
      maxRetries: opts.maxRetries ?? 5,
      maxNetworkRetries: opts.maxNetworkRetries ?? opts.maxRetries ?? 5,
      baseBackoffMs: opts.baseBackoffMs ?? 1000,
      maxBackoffMs: opts.maxBackoffMs ?? 60_000,
      timeoutMs: opts.timeoutMs ?? 30_000,
      clock: opts.clock ?? systemClock,
      sleep: opts.sleep ?? realSleep,
      random: opts.random ?? Math.random,
      // Bound so that a bare `fetch` reference does not lose its receiver.
      fetch: opts.fetch ?? ((input, init) => fetch(input, init)),
    };
  }

  /** Waits for this log's next request slot (after any pause a 429/5xx imposed, unless it is too long to wait). */
  private async throttle(url: string): Promise<void> {
    const pause = this.pausedUntil - this.opts.clock.now();
    if (pause > this.opts.maxBackoffMs) throw new LogPausedError(this.pausedBy || url, pause);
    if (pause > 0) await this.opts.sleep(pause);
    const rps = this.opts.requestsPerSecond;
    if (!rps || rps <= 0) return;
    const now = this.opts.clock.now();
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + 1000 / rps;
    if (slot > now) await this.opts.sleep(slot - now);
  }

  /** Takes one of the log's `concurrency` places; the returned function gives it back. */
  private async acquire(): Promise<() => void> {
    if (this.inFlight >= this.opts.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.inFlight++;
    return () => {
      const next = this.waiting.shift();
      if (next) next(); // the place passes on directly
      else this.inFlight--;
    };
  }

  /** Backoff before retry number `attempt` (0-based): full jitter over base*2^attempt, capped. */
  backoffDelay(attempt: number): number {
    const ceiling = Math.min(this.opts.maxBackoffMs, this.opts.baseBackoffMs * 2 ** attempt);
    return Math.floor(this.opts.random() * ceiling);
  }

  private async once(url: string, init?: RequestInit): Promise<Response> {
    const timeoutMs = this.opts.timeoutMs;
    if (!timeoutMs) return this.opts.fetch(url, init);
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs);
    // The caller's signal (a reader that stopped) aborts the request as well as the timeout does.
    const outer = init?.signal;
    const drop = () => ctrl.abort(outer?.reason);
    outer?.addEventListener("abort", drop, { once: true });
    try {
      const res = await this.opts.fetch(url, { ...init, signal: ctrl.signal });
      // Read the body under the same timeout, so a stalled body also times out.
      const body = await res.arrayBuffer();
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener("abort", drop);
    }
  }

  /**
   * Fetches with throttling and retries. Returns the first non-retryable
   * response (including 4xx other than 429, which the caller interprets); throws
   * LogHttpError when retries are exhausted, LogPausedError when the log asked for
   * a pause longer than maxBackoffMs, RequestDroppedError when `init.signal` aborted
   * (the request is then not sent, or its answer is not waited for).
   */
  async fetch(url: string, init?: RequestInit): Promise<Response> {
    const signal = init?.signal ?? undefined;
    const dropped = () => new RequestDroppedError(`${url}: dropped, its reader stopped`);
    let lastError = "";
    let lastCause: unknown;
    let lastStatus = 0;
    let networkFailures = 0;
    for (let attempt = 0; ; attempt++) {
      let delay: number | undefined;
      const release = await this.acquire();
      try {
        if (signal?.aborted) throw dropped();
        await this.throttle(url);
        if (signal?.aborted) throw dropped();
        const res = await this.once(url, init);
        if (!isRetryableStatus(res.status)) return res;
        lastStatus = res.status;
        lastError = `HTTP ${res.status}`;
        const ra = parseRetryAfter(res.headers.get("retry-after"), this.opts.clock.now());
        if (ra !== undefined && ra > this.opts.maxBackoffMs) {
          // Too long to wait within a call: every request to the log stops until then.
          this.pausedUntil = Math.max(this.pausedUntil, this.opts.clock.now() + ra);
          this.pausedBy = url;
          throw new LogPausedError(url, ra);
        }
        if (ra !== undefined) delay = ra;
      } catch (err) {
        if (err instanceof LogClientError) throw err;
        if (signal?.aborted) throw dropped();
        lastStatus = 0;
        lastCause = err;
        lastError = (err as Error).message || String(err);
        // A timeout or a connection dropped mid-request (a pooled keep-alive connection the
        // server had closed) is worth another try; an unreachable host (DNS, refused) is not.
        if (!lastError.startsWith("timeout after") && !/connection lost|connection reset|ECONNRESET/i.test(lastError)) networkFailures++;
      } finally {
        release();
      }
      if (attempt >= this.opts.maxRetries || networkFailures > this.opts.maxNetworkRetries) {
        throw new LogHttpError(url, lastStatus, `${lastError} from ${url} after ${attempt + 1} attempts`, lastStatus === 0 ? lastCause : undefined);
      }
      const wait = delay ?? this.backoffDelay(attempt);
      // The log is overloaded (429/5xx): nobody else asks it before this retry would.
      if (lastStatus !== 0) this.pausedUntil = Math.max(this.pausedUntil, this.opts.clock.now() + wait);
      await this.opts.sleep(wait);
      if (signal?.aborted) throw dropped();
    }
  }
}
