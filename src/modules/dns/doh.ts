/**
 * DNS-over-HTTPS client (RFC 8484), platform-free: fetch + Web APIs only, so it
 * runs in workerd and in Node (benchmarks, scripts).
 *
 * - Queries are GET {resolver}?dns=<base64url wire query> with
 *   `accept: application/dns-message`, message ID 0 (RFC 8484 §4.1: cache friendly).
 * - Resolver URLs come from configuration (DOH_RESOLVER_URLS, comma-separated) and
 *   are tried in order: a transport failure, an HTTP error, an undecodable body
 *   or a SERVFAIL/REFUSED answer moves on to the next one. When every resolver
 *   failed at transport level a `DnsLookupError` is thrown; when some resolver
 *   answered (even SERVFAIL) that answer is returned.
 * - An optional `DnsCache` is consulted first and filled with the answer's TTL
 *   (minimum of the answer TTLs; for NXDOMAIN/NODATA the SOA negative TTL,
 *   RFC 2308 §5). Transport errors are never cached.
 * - Wire encoding/decoding is @leichtgewicht/dns-packet.
 */
import * as dnsPacket from "@leichtgewicht/dns-packet";

export type DnsRecordType = dnsPacket.RecordType;

/** One resource record of an answer, as decoded by dns-packet (data shape depends on type). */
export interface DnsRecord {
  /** Owner name, lowercase, without trailing dot. */
  name: string;
  type: string;
  ttl: number;
  data: unknown;
}

export interface DnsResponse {
  /** "NOERROR", "NXDOMAIN", "SERVFAIL", ... */
  rcode: string;
  /** AD flag: the resolver validated the answer with DNSSEC. */
  authenticData: boolean;
  answers: DnsRecord[];
  authorities: DnsRecord[];
  /** The resolver URL that produced the answer ("cache:" prefix when served from the cache). */
  resolver: string;
}

export interface DnsQueryOptions {
  /** Set the EDNS DO bit (ask for DNSSEC records). Default false. */
  dnssecOk?: boolean;
  /** Set CD (checking disabled): get data even when validation fails. Default false. */
  checkingDisabled?: boolean;
}

/** What DNS consumers (CAA evaluation, dns-watcher) depend on; the DoH client implements it. */
export interface DnsResolver {
  query(name: string, type: DnsRecordType, options?: DnsQueryOptions): Promise<DnsResponse>;
}

export type DnsLookupErrorCode = "no-resolvers" | "timeout" | "network" | "http" | "malformed";

/** Every resolver failed at transport level (or none is configured). */
export class DnsLookupError extends Error {
  override readonly name = "DnsLookupError";
  constructor(
    readonly code: DnsLookupErrorCode,
    message: string,
    /** Per-resolver failures, in the order tried. */
    readonly attempts: { resolver: string; code: DnsLookupErrorCode; message: string }[] = [],
  ) {
    super(message);
  }
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
  /** Per-resolver timeout in milliseconds. Default 5000. */
  timeoutMs?: number;
  cache?: DnsCache;
  /** Upper bound for cached TTLs in seconds. Default 3600. */
  maxCacheTtlSeconds?: number;
  /** Injected fetch (tests, service bindings). Default globalThis.fetch. */
  fetch?: typeof fetch;
}

/** Parses the DOH_RESOLVER_URLS configuration value (comma-separated, blanks ignored). */
export function parseResolverUrls(config: string | undefined): string[] {
  return (config ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The wire-format query (ID 0, RD set, EDNS0 with 1232-byte payload). */
export function buildDnsQuery(name: string, type: DnsRecordType, options: DnsQueryOptions = {}): Uint8Array {
  let flags = dnsPacket.RECURSION_DESIRED;
  if (options.checkingDisabled) flags |= dnsPacket.CHECKING_DISABLED;
  return dnsPacket.encode({
    type: "query",
    id: 0,
    flags,
    questions: [{ type, name: stripDot(name), class: "IN" }],
    additionals: [
      { type: "OPT", name: ".", udpPayloadSize: 1232, flags: options.dnssecOk ? dnsPacket.DNSSEC_OK : 0, options: [] } as unknown as dnsPacket.Answer,
    ],
  });
}

/** Decodes a wire-format response into DnsResponse (throws DnsLookupError "malformed"). */
export function decodeDnsResponse(wire: Uint8Array, resolver: string): DnsResponse {
  let p: dnsPacket.Packet;
  try {
    p = dnsPacket.decode(wire);
  } catch (err) {
    throw new DnsLookupError("malformed", `undecodable DNS message from ${resolver}: ${(err as Error).message}`);
  }
  if (p.type !== "response") throw new DnsLookupError("malformed", `message from ${resolver} is not a response`);
  const flags = p.flags ?? 0;
  const conv = (list: dnsPacket.Answer[] | undefined): DnsRecord[] =>
    (list ?? [])
      .filter((a) => a.type !== "OPT")
      .map((a) => ({ name: stripDot(a.name).toLowerCase(), type: a.type, ttl: (a as { ttl?: number }).ttl ?? 0, data: (a as { data?: unknown }).data }));
  return {
    rcode: (p as { rcode?: string }).rcode ?? "NOERROR",
    authenticData: (flags & dnsPacket.AUTHENTIC_DATA) !== 0,
    answers: conv(p.answers),
    authorities: conv(p.authorities),
    resolver,
  };
}

export function createDohClient(options: DohClientOptions): DnsResolver {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxTtl = options.maxCacheTtlSeconds ?? 3600;

  async function ask(url: string, wire: Uint8Array): Promise<DnsResponse> {
    const target = new URL(url);
    target.searchParams.set("dns", base64Url(wire));
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let res: Response;
    try {
      res = await doFetch(target.toString(), {
        method: "GET",
        headers: { accept: "application/dns-message" },
        signal: controller.signal,
      });
    } catch (err) {
      clearTimeout(timer);
      if (controller.signal.aborted) throw new DnsLookupError("timeout", `${url} did not answer within ${timeoutMs} ms`);
      throw new DnsLookupError("network", `${url}: ${(err as Error).message}`);
    }
    try {
      if (!res.ok) {
        await res.body?.cancel();
        throw new DnsLookupError("http", `${url} answered HTTP ${res.status}`);
      }
      const type = res.headers.get("content-type") ?? "";
      const body = new Uint8Array(await res.arrayBuffer());
      if (!type.toLowerCase().startsWith("application/dns-message")) {
        throw new DnsLookupError("malformed", `${url} answered with content-type '${type}'`);
      }
      return decodeDnsResponse(body, url);
    } catch (err) {
      if (err instanceof DnsLookupError) throw err;
      if (controller.signal.aborted) throw new DnsLookupError("timeout", `${url} did not answer within ${timeoutMs} ms`);
      throw new DnsLookupError("network", `${url}: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async query(name, type, queryOptions = {}) {
      const qname = stripDot(name).toLowerCase();
      const key = `${qname}|${type}|${queryOptions.dnssecOk ? 1 : 0}${queryOptions.checkingDisabled ? 1 : 0}`;
      if (options.cache) {
        const hit = await options.cache.get(key);
        if (hit) return { ...hit, resolver: hit.resolver.startsWith("cache:") ? hit.resolver : "cache:" + hit.resolver };
      }
      if (options.resolverUrls.length === 0) throw new DnsLookupError("no-resolvers", "no DoH resolver is configured");
      const wire = buildDnsQuery(qname, type, queryOptions);
      const attempts: { resolver: string; code: DnsLookupErrorCode; message: string }[] = [];
      let fallback: DnsResponse | undefined;
      for (const url of options.resolverUrls) {
        let answer: DnsResponse;
        try {
          answer = await ask(url, wire);
        } catch (err) {
          const e = err as DnsLookupError;
          attempts.push({ resolver: url, code: e.code, message: e.message });
          continue;
        }
        if (answer.rcode === "SERVFAIL" || answer.rcode === "REFUSED") {
          fallback ??= answer; // keep the first such answer, try the others
          continue;
        }
        if (options.cache) await options.cache.set(key, answer, Math.min(maxTtl, cacheTtl(answer)));
        return answer;
      }
      if (fallback) return fallback;
      const last = attempts[attempts.length - 1];
      throw new DnsLookupError(last.code, `every DoH resolver failed: ${attempts.map((a) => a.message).join("; ")}`, attempts);
    },
  };
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

function stripDot(name: string): string {
  return name.endsWith(".") && name.length > 1 ? name.slice(0, -1) : name;
}

function base64Url(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
