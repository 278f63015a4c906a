/**
 * The service's one DNS-over-HTTPS client (RFC 8484), platform-free: fetch + Web APIs
 * only, so it runs in workerd and in Node (benchmarks, scripts). Used by CT (CAA at
 * observation time) and the DNS watcher.
 *
 * - GET {resolver}?dns=<base64url wire query> (the default: cache friendly) or POST with
 *   an application/dns-message body; `accept: application/dns-message`; message ID 0
 *   (RFC 8484 §4.1). EDNS0 always, with DO and CD on request (message.ts).
 * - Resolver URLs come from configuration (DOH_RESOLVER_URLS, comma-separated) and are
 *   tried in order. Per resolver, a transport fault (timeout, refused connection, HTTP
 *   429/5xx) is retried `retries` times with exponential backoff and jitter; an answer
 *   that is not a DNS message (HTML, wrong content type, truncated, malformed, for
 *   another question, oversize) is not retried on the same resolver. A SERVFAIL/REFUSED
 *   answer moves on to the next resolver. When every resolver failed at transport level
 *   a `DnsLookupError` is thrown; when some resolver answered (even SERVFAIL) that answer
 *   is returned, with its Extended DNS Errors (RFC 8914).
 * - Bounds for a batch of lookups (a scheduled run creates one client per run): a
 *   `deadline` after which no attempt starts and a running one is cut short, and a
 *   circuit breaker per resolver: after `breakAfterFailures` consecutive transport faults
 *   (timeouts, refused connections, HTTP 429/5xx) this client stops asking that resolver
 *   and goes straight to the next. A question no resolver was asked for either reason
 *   fails with code `deadline` / `circuit-open` (`isNotAsked`): it says nothing about the
 *   name. Without them a hanging resolver costs timeout x attempts x resolvers per
 *   question, for every question.
 * - An optional `DnsCache` is consulted first and filled with the answer's TTL
 *   (minimum of the answer TTLs; for NXDOMAIN/NODATA the SOA negative TTL,
 *   RFC 2308 §5). Transport errors and SERVFAIL are never cached.
 */
import {
  buildDnsQuery,
  decodeDnsResponse,
  DnsLookupError,
  MAX_DNS_MESSAGE_BYTES,
  stripDot,
  type DnsLookupErrorCode,
  type DnsQueryOptions,
  type DnsResolverFailure,
  type DnsRecordType,
  type DnsResponse,
} from "./message";
import { readBodyUpTo } from "../http-body";

export * from "./message";

/** What DNS consumers (CAA evaluation, dns-watcher) depend on; the DoH client implements it. */
export interface DnsResolver {
  query(name: string, type: DnsRecordType, options?: DnsQueryOptions): Promise<DnsResponse>;
}

/** A TTL-respecting cache the ingest path can share (in memory, or backed by KV/DO storage). */
export interface DnsCache {
  get(key: string): DnsResponse | undefined | Promise<DnsResponse | undefined>;
  set(key: string, value: DnsResponse, ttlSeconds: number): void | Promise<void>;
}

/** Simple in-memory DnsCache with an injected clock and a size bound (oldest entries evicted first). */
export class MemoryDnsCache implements DnsCache {
  private readonly entries = new Map<string, { value: DnsResponse; expiresAt: number }>();
  constructor(private readonly options: { now?: () => number; maxEntries?: number } = {}) {}

  get(key: string): DnsResponse | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: DnsResponse, ttlSeconds: number): void {
    if (ttlSeconds <= 0) return;
    const max = this.options.maxEntries ?? 10_000;
    if (this.entries.size >= max && !this.entries.has(key)) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expiresAt: this.now() + ttlSeconds * 1000 });
  }

  get size(): number {
    return this.entries.size;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

export interface DohClientOptions {
  /** Resolver endpoints, tried in order (e.g. https://cloudflare-dns.com/dns-query). */
  resolverUrls: string[];
  /** RFC 8484 method. Default "GET". */
  method?: "GET" | "POST";
  /** Per-attempt timeout in milliseconds (headers and body). Default 5000. */
  timeoutMs?: number;
  /** Extra attempts per resolver after a transport fault. Default 2. */
  retries?: number;
  /** First backoff delay in ms, doubled per retry, with ±50 % jitter. Default 200. */
  backoffMs?: number;
  cache?: DnsCache;
  /** Upper bound for cached TTLs in seconds. Default 3600. */
  maxCacheTtlSeconds?: number;
  /** Injected fetch (tests, service bindings). Default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Injected sleep (tests). Default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Called once per HTTP request sent (benchmarks count queries). */
  onRequest?: (resolver: string, name: string, type: string) => void;
  /** Epoch ms after which no attempt starts and a running one is cut short (code `deadline`). Default: none. */
  deadline?: number;
  /** Consecutive transport faults after which a resolver is not asked again by this client (code `circuit-open`). Default: never. */
  breakAfterFailures?: number;
  /** Clock of the deadline (tests). Default Date.now. */
  now?: () => number;
}

/** Parses the DOH_RESOLVER_URLS configuration value (comma-separated, blanks and non-http(s) entries ignored). */
export function parseResolverUrls(config: string | undefined): string[] {
  return (config ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => {
      if (s.length === 0) return false;
      try {
        const u = new URL(s);
        return u.protocol === "https:" || u.protocol === "http:";
      } catch {
        return false;
      }
    });
}

/** Transport faults worth another attempt on the same resolver. */
const RETRYABLE: ReadonlySet<DnsLookupErrorCode> = new Set(["timeout", "network", "http"]);

class AttemptError extends DnsLookupError {
  constructor(
    code: DnsLookupErrorCode,
    message: string,
    readonly retryable: boolean,
  ) {
    super(code, message);
  }
}

export function createDohClient(options: DohClientOptions): DnsResolver {
  return new DohClient(options);
}

type Question = { name: string; type: string };

class DohClient implements DnsResolver {
  private readonly doFetch: typeof fetch;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly backoffMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  /** Consecutive transport faults per resolver (reset by any DNS answer). */
  private readonly faults = new Map<string, number>();
  /** The latest transport fault per resolver: what a question refused by its open circuit reports as the cause. */
  private readonly lastFault = new Map<string, { code: DnsLookupErrorCode; message: string }>();

  constructor(private readonly options: DohClientOptions) {
    this.doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.retries = Math.max(0, options.retries ?? 2);
    this.backoffMs = options.backoffMs ?? 200;
    this.sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    this.now = options.now ?? Date.now;
  }

  private circuitOpen(url: string): boolean {
    const limit = this.options.breakAfterFailures;
    return limit !== undefined && limit > 0 && (this.faults.get(url) ?? 0) >= limit;
  }

  /** Milliseconds left before the deadline (Infinity without one). */
  private remaining(): number {
    return this.options.deadline === undefined ? Infinity : this.options.deadline - this.now();
  }

  /** Before an attempt: refuse it when the deadline passed or the resolver's circuit is open. */
  private mayAsk(url: string, question: Question): void {
    if (this.remaining() <= 0) throw new AttemptError("deadline", `the deadline passed before ${question.name} ${question.type} was asked`, false);
    if (this.circuitOpen(url)) throw new AttemptError("circuit-open", `${url} not asked: ${this.faults.get(url)} consecutive transport failures`, false);
  }

  /** The cache first; then each resolver in turn until one answers something other than SERVFAIL/REFUSED. */
  async query(name: string, type: DnsRecordType, queryOptions: DnsQueryOptions = {}): Promise<DnsResponse> {
    const qname = stripDot(name).toLowerCase();
    const key = `${qname}|${type}|${queryOptions.dnssecOk ? 1 : 0}${queryOptions.checkingDisabled ? 1 : 0}`;
    const { cache } = this.options;
    if (cache) {
      const hit = await cache.get(key);
      if (hit) return { ...hit, resolver: hit.resolver.startsWith("cache:") ? hit.resolver : "cache:" + hit.resolver };
    }
    if (this.options.resolverUrls.length === 0) throw new DnsLookupError("no-resolvers", "no DoH resolver is configured");
    const wire = buildDnsQuery(qname, type, queryOptions);
    const failures: DnsResolverFailure[] = [];
    let fallback: DnsResponse | undefined;
    for (const url of this.options.resolverUrls) {
      let answer: DnsResponse;
      try {
        answer = await this.askResolver(url, wire, { name: qname, type });
      } catch (err) {
        const e = err as DnsLookupError;
        const lastFault = e.code === "circuit-open" ? this.lastFault.get(url) : undefined;
        failures.push({ resolver: url, code: e.code, message: e.message, ...(lastFault ? { lastFault } : {}) });
        continue;
      }
      if (answer.rcode === "SERVFAIL" || answer.rcode === "REFUSED") {
        fallback ??= answer; // keep the first such answer, try the others
        continue;
      }
      if (cache) await cache.set(key, answer, Math.min(this.options.maxCacheTtlSeconds ?? 3600, cacheTtl(answer)));
      return answer;
    }
    if (fallback) return fallback;
    // A resolver that was asked and failed is a lookup error; when none was asked, say why (deadline first).
    const asked = failures.filter((f) => f.code !== "deadline" && f.code !== "circuit-open");
    const last = asked[asked.length - 1] ?? failures.find((f) => f.code === "deadline") ?? failures[failures.length - 1];
    throw new DnsLookupError(last.code, `every DoH resolver failed: ${failures.map((a) => a.message).join("; ")}`, failures);
  }

  /** One resolver, with retries and exponential backoff (with jitter) on transport faults. */
  private async askResolver(url: string, wire: Uint8Array, question: Question): Promise<DnsResponse> {
    let fault: AttemptError | undefined;
    for (let n = 0; ; n++) {
      try {
        this.mayAsk(url, question);
      } catch (err) {
        throw fault ?? err; // once asked, the question failed for the reason the resolver gave
      }
      try {
        const answer = await this.attempt(url, wire, question);
        this.faults.set(url, 0);
        return answer;
      } catch (err) {
        const e = err as AttemptError;
        const transport = e.retryable && RETRYABLE.has(e.code);
        if (transport) {
          this.faults.set(url, (this.faults.get(url) ?? 0) + 1);
          this.lastFault.set(url, { code: e.code, message: e.message });
        }
        if (!transport || n >= this.retries) throw e.code === "deadline" ? (fault ?? e) : e;
        fault = e;
        const delay = this.backoffMs * 2 ** n * (0.5 + Math.random());
        if (delay >= this.remaining()) throw e;
        await this.sleep(delay);
      }
    }
  }

  /** One HTTP exchange: the request within the timeout, then a DNS message or the reason it is not one. */
  private async attempt(url: string, wire: Uint8Array, question: Question): Promise<DnsResponse> {
    const controller = new AbortController();
    // Cut short at the deadline: then it is the deadline, not the resolver, that ended the attempt.
    const cutByDeadline = this.remaining() < this.timeoutMs;
    const timer = setTimeout(() => controller.abort(), Math.max(0, Math.min(this.timeoutMs, this.remaining())));
    const timedOut = () =>
      cutByDeadline && this.remaining() <= 0
        ? new AttemptError("deadline", `the deadline passed while ${url} was asked ${question.name} ${question.type}`, false)
        : new AttemptError("timeout", `${url} did not answer within ${this.timeoutMs} ms`, true);
    this.options.onRequest?.(url, question.name, question.type);
    try {
      let res: Response;
      try {
        res = await this.doFetch(...this.request(url, wire, controller.signal));
      } catch (err) {
        throw controller.signal.aborted ? timedOut() : new AttemptError("network", `${url}: ${(err as Error).message}`, true);
      }
      return await this.readAnswer(url, res, question);
    } catch (err) {
      if (err instanceof AttemptError) throw err;
      if (err instanceof DnsLookupError) throw new AttemptError(err.code, err.message, false);
      if (controller.signal.aborted) throw timedOut();
      throw new AttemptError("network", `${url}: ${(err as Error).message}`, true);
    } finally {
      clearTimeout(timer);
    }
  }

  /** RFC 8484 §4.1: GET with the base64url query in `dns` (cache friendly, the default) or POST with the message as body. */
  private request(url: string, wire: Uint8Array, signal: AbortSignal): [string, RequestInit] {
    const target = new URL(url);
    const headers: Record<string, string> = { accept: "application/dns-message" };
    if ((this.options.method ?? "GET") === "GET") {
      target.searchParams.set("dns", base64Url(wire));
      return [target.toString(), { method: "GET", headers, signal }];
    }
    return [target.toString(), { method: "POST", headers: { ...headers, "content-type": "application/dns-message" }, body: wire, signal }];
  }

  private async readAnswer(url: string, res: Response, question: Question): Promise<DnsResponse> {
    if (!res.ok) {
      await res.body?.cancel();
      // 429 and 5xx are the resolver's trouble (worth a retry); other 4xx are final.
      throw new AttemptError("http", `${url} answered HTTP ${res.status}`, res.status === 429 || res.status >= 500);
    }
    const type = res.headers.get("content-type") ?? "";
    if (!type.toLowerCase().startsWith("application/dns-message")) {
      await res.body?.cancel();
      throw new AttemptError("malformed", `${url} answered with content-type '${type}', not a DNS message`, false);
    }
    const body = await readBodyUpTo(res, MAX_DNS_MESSAGE_BYTES);
    if (body === null) throw new AttemptError("malformed", `${url} answered more than ${MAX_DNS_MESSAGE_BYTES} bytes`, false);
    return decodeDnsResponse(body, url, question);
  }
}

/** Answer TTL: the minimum answer TTL; negative answers use min(SOA TTL, SOA minimum) (RFC 2308 §5). */
export function cacheTtl(r: DnsResponse): number {
  if (r.answers.length > 0) return Math.min(...r.answers.map((a) => a.ttl));
  const soa = r.authorities.find((a) => a.type === "SOA");
  if (soa) {
    const min = (soa.data as { minimum?: number } | undefined)?.minimum ?? soa.ttl;
    return Math.min(soa.ttl, min);
  }
  return 0;
}

function base64Url(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
