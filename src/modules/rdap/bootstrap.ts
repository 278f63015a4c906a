/**
 * RDAP server discovery through the IANA bootstrap registry for domain names
 * (RFC 9224, https://data.iana.org/rdap/dns.json).
 *
 * The file is `{version, publication, services: [[entries[], baseUrls[]], ...]}`.
 * An entry is a DNS label sequence (normally one TLD such as "com" or
 * "xn--p1ai", but RFC 9224 §4 allows several labels, e.g. "sub.example.com",
 * and the empty string for the root); a domain is served by the entry that
 * matches the most labels at its right end ("longest match").
 *
 * Parsing is strict: a file with a broken service or URL is rejected as a whole
 * with a typed error, and the caller keeps its previous copy (see BootstrapCache)
 * rather than running with a half-understood table.
 */
import bundledJson from "./bootstrap-bundled.json";
import { classifyFailure, httpStatusFailure, sanitizeFailureMessage, type CollectionError } from "../../platform/collection";

export interface BootstrapService {
  /** Lowercased entries; "" is the root. */
  entries: string[];
  /** Base URLs, normalized to end with "/", https first. */
  baseUrls: string[];
}

export interface Bootstrap {
  version: string;
  /** The file's `publication` timestamp, as given. */
  publication: string | null;
  services: BootstrapService[];
  /** entry -> base URLs (merged when an entry is listed twice). */
  byEntry: Map<string, string[]>;
}

export type BootstrapErrorCode =
  /** Empty body or not JSON at all. */
  | "syntax"
  /** JSON, but not a bootstrap object (no services array, wrong member types). */
  | "shape"
  /** A service is not `[string[], string[]]` or lists no URL. */
  | "bad_service"
  /** A base URL is not an absolute http(s) URL or has broken percent-encoding. */
  | "bad_url";

/** Why a bootstrap file was rejected; returned (not thrown) by parseBootstrap. */
export class RdapBootstrapError extends Error {
  override readonly name = "RdapBootstrapError";
  constructor(
    readonly code: BootstrapErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function isBootstrapError(v: Bootstrap | RdapBootstrapError): v is RdapBootstrapError {
  return v instanceof RdapBootstrapError;
}

/**
 * A base URL in the form the query builder expects: ending with "/"
 * (IANA lists both "https://rdap.nic.cz" and "https://rdap.registro.br/").
 */
export function normalizeBaseUrl(url: string): string {
  return url.endsWith("/") ? url : url + "/";
}

/** The RFC 9082 domain lookup URL for a base URL. */
export function rdapDomainUrl(baseUrl: string, domain: string): string {
  return normalizeBaseUrl(baseUrl) + "domain/" + encodeURIComponent(domain);
}

function validBaseUrl(raw: string): boolean {
  // WHATWG URL accepts "http://example.org/%%" silently; RFC 3986 does not.
  if (/%(?![0-9A-Fa-f]{2})/.test(raw)) return false;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return false;
  }
  return (u.protocol === "https:" || u.protocol === "http:") && u.hostname !== "";
}

/** https before http, otherwise the file's order (RFC 9224 §3 leaves the choice to the client). */
function preferHttps(urls: string[]): string[] {
  const unique = [...new Set(urls.map(normalizeBaseUrl))];
  return [...unique.filter((u) => u.startsWith("https:")), ...unique.filter((u) => !u.startsWith("https:"))];
}

function normalizeEntry(e: string): string {
  return e.trim().toLowerCase().replace(/\.$/, "");
}

/**
 * Parses an RFC 9224 DNS bootstrap file, given as its text or as parsed JSON.
 * Returns a typed RdapBootstrapError for anything malformed; never throws.
 */
export function parseBootstrap(input: string | unknown): Bootstrap | RdapBootstrapError {
  let doc: unknown = input;
  if (typeof input === "string") {
    if (input.trim() === "") return new RdapBootstrapError("syntax", "bootstrap file is empty");
    try {
      doc = JSON.parse(input);
    } catch (err) {
      return new RdapBootstrapError("syntax", `bootstrap file is not JSON: ${(err as Error).message}`);
    }
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    return new RdapBootstrapError("shape", "bootstrap file is not a JSON object");
  }
  const o = doc as Record<string, unknown>;
  if (!Array.isArray(o.services)) return new RdapBootstrapError("shape", "bootstrap file has no services array");
  if (o.version !== undefined && typeof o.version !== "string") {
    return new RdapBootstrapError("shape", "bootstrap version is not a string");
  }
  if (o.publication !== undefined && typeof o.publication !== "string") {
    return new RdapBootstrapError("shape", "bootstrap publication is not a string");
  }

  const services: BootstrapService[] = [];
  const byEntry = new Map<string, string[]>();
  for (const [i, svc] of o.services.entries()) {
    if (!Array.isArray(svc) || svc.length < 2 || !Array.isArray(svc[0]) || !Array.isArray(svc[1])) {
      return new RdapBootstrapError("bad_service", `service #${i} is not [entries, urls]`);
    }
    const [entries, urls] = svc as [unknown[], unknown[]];
    if (!entries.every((e) => typeof e === "string") || !urls.every((u) => typeof u === "string")) {
      return new RdapBootstrapError("bad_service", `service #${i} has a non-string entry or URL`);
    }
    if (entries.length === 0 || urls.length === 0) {
      return new RdapBootstrapError("bad_service", `service #${i} lists no entries or no URLs`);
    }
    const bad = (urls as string[]).find((u) => !validBaseUrl(u));
    if (bad !== undefined) return new RdapBootstrapError("bad_url", `service #${i} has an invalid base URL: ${bad}`);

    const service: BootstrapService = {
      entries: (entries as string[]).map(normalizeEntry),
      baseUrls: preferHttps(urls as string[]),
    };
    services.push(service);
    for (const e of service.entries) byEntry.set(e, preferHttps([...(byEntry.get(e) ?? []), ...service.baseUrls]));
  }
  return {
    version: typeof o.version === "string" ? o.version : "1.0",
    publication: typeof o.publication === "string" ? o.publication : null,
    services,
    byEntry,
  };
}

/**
 * The name as bootstrap entries are written: lowercase A-labels, no trailing dot.
 * Unicode names go through the WHATWG URL host parser (UTS #46 ToASCII). Null for
 * something that is not a host name.
 */
export function lookupName(domain: string): string | null {
  const d = domain.trim().replace(/\.$/, "").toLowerCase();
  if (d === "" || /[\s/?#@:]/.test(d)) return null;
  if (/^[\x21-\x7e]+$/.test(d)) return d;
  try {
    return new URL("http://" + d + "/").hostname;
  } catch {
    return null;
  }
}

/**
 * Base URLs (https first, each ending in "/") of the RDAP servers for `domain`,
 * by RFC 9224 longest match over whole labels; [] when the bootstrap has none.
 */
export function findRdapServers(bootstrap: Bootstrap, domain: string): string[] {
  const name = lookupName(domain);
  if (name === null) return [];
  const labels = name.split(".");
  for (let i = 0; i < labels.length; i++) {
    const hit = bootstrap.byEntry.get(labels.slice(i).join("."));
    if (hit) return [...hit];
  }
  return [...(bootstrap.byEntry.get("") ?? [])];
}

export interface RdapServerConfig {
  bootstrap: Bootstrap;
  /**
   * A configured base URL used for every TLD instead of the bootstrap (tests,
   * air-gapped sites with an RDAP proxy). Empty string = not configured.
   */
  overrideBaseUrl?: string | null;
}

/** The servers to query for `domain`: the override if configured, else the bootstrap's. */
export function resolveRdapServers(config: RdapServerConfig, domain: string): string[] {
  if (config.overrideBaseUrl) return [normalizeBaseUrl(config.overrideBaseUrl)];
  return findRdapServers(config.bootstrap, domain);
}

/**
 * The copy shipped with the code: IANA dns.json published 2024-02-07
 * (see README.md beside it for provenance). Used until a fresh file has been fetched,
 * and whenever fetching fails with nothing cached.
 */
export function bundledBootstrap(): Bootstrap {
  const parsed = parseBootstrap(bundledJson as unknown);
  // The bundled file is under test (bootstrap.test.ts); failing here is a build defect.
  if (isBootstrapError(parsed)) throw parsed;
  return parsed;
}

export const BOOTSTRAP_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** After a failed refresh, wait this long before trying the network again. */
export const BOOTSTRAP_RETRY_AFTER_FAILURE_MS = 60 * 60 * 1000;

export type BootstrapSource =
  /** Fetched now. */
  | "fetched"
  /** Fetched less than maxAge ago. */
  | "cached"
  /** Older than maxAge, refresh failed: the last good copy is kept. */
  | "stale"
  /** Never fetched successfully: the copy shipped with the code. */
  | "bundled";

export interface BootstrapLookup {
  bootstrap: Bootstrap;
  source: BootstrapSource;
  /** When the copy in use was fetched (epoch ms); null for the bundled copy. */
  fetchedAt: number | null;
  /** Why the last refresh failed, when it did: its message (also `failure.message`). */
  error?: string;
  /** The last refresh's failure, classified (platform/collection), when it failed. */
  failure?: CollectionError;
}

export interface BootstrapCacheOptions {
  /** RDAP_BOOTSTRAP_URL. */
  url: string;
  fetch?: typeof fetch;
  /** Injected clock, epoch ms. */
  now?: () => number;
  maxAgeMs?: number;
  retryAfterFailureMs?: number;
  timeoutMs?: number;
  /** A copy persisted by the caller (e.g. in D1), to start from. */
  initial?: { text: string; fetchedAt: number };
  /** Called with every newly fetched, valid file, so the caller can persist it. */
  onFetched?: (text: string, fetchedAt: number) => void | Promise<void>;
}

/**
 * The bootstrap cache policy: refresh at most every 24 h; a failed or malformed
 * download never replaces a good copy; with no good copy, the bundled one.
 * Holds its state in memory (one per isolate); persistence is the caller's choice
 * through `initial` / `onFetched`.
 */
export class BootstrapCache {
  private current: { bootstrap: Bootstrap; fetchedAt: number } | null = null;
  private lastFailure: { at: number; failure: CollectionError } | null = null;
  private bundled: Bootstrap | null = null;
  private readonly now: () => number;

  constructor(private readonly opts: BootstrapCacheOptions) {
    this.now = opts.now ?? Date.now;
    if (opts.initial) {
      const parsed = parseBootstrap(opts.initial.text);
      if (!isBootstrapError(parsed)) this.current = { bootstrap: parsed, fetchedAt: opts.initial.fetchedAt };
    }
  }

  /** True when the copy in use is missing or older than maxAge and no recent failure blocks a retry. */
  refreshDue(): boolean {
    const now = this.now();
    const maxAge = this.opts.maxAgeMs ?? BOOTSTRAP_MAX_AGE_MS;
    if (this.current && now - this.current.fetchedAt < maxAge) return false;
    const backoff = this.opts.retryAfterFailureMs ?? BOOTSTRAP_RETRY_AFTER_FAILURE_MS;
    return !(this.lastFailure && now - this.lastFailure.at < backoff);
  }

  async get(): Promise<BootstrapLookup> {
    const fetched = this.refreshDue() ? await this.refresh() : false;
    const maxAge = this.opts.maxAgeMs ?? BOOTSTRAP_MAX_AGE_MS;
    const failure = this.lastFailure?.failure;
    const failed = failure ? { error: failure.message, failure } : {};
    if (this.current) {
      const fresh = this.now() - this.current.fetchedAt < maxAge;
      const source: BootstrapSource = fetched ? "fetched" : fresh ? "cached" : "stale";
      return { bootstrap: this.current.bootstrap, source, fetchedAt: this.current.fetchedAt, ...failed };
    }
    this.bundled ??= bundledBootstrap();
    return { bootstrap: this.bundled, source: "bundled", fetchedAt: null, ...failed };
  }

  /** Fetches and validates the file; true when a new copy was taken into use. */
  private async refresh(): Promise<boolean> {
    const doFetch = this.opts.fetch ?? fetch;
    const at = this.now();
    const what = "fetching the RDAP bootstrap registry";
    let text: string;
    try {
      const res = await doFetch(this.opts.url, {
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
      });
      if (!res.ok) {
        await res.body?.cancel();
        this.lastFailure = { at, failure: httpStatusFailure(res.status, this.opts.url, what) };
        return false;
      }
      // Decoded as UTF-8 whatever the content type says (mirrors often send octet-stream).
      text = new TextDecoder().decode(await res.arrayBuffer());
    } catch (err) {
      // Said by the one classifier: a name that does not resolve, a refused connection, a timeout.
      this.lastFailure = { at, failure: classifyFailure(err, { url: this.opts.url, what }) };
      return false;
    }
    const parsed = parseBootstrap(text);
    if (isBootstrapError(parsed)) {
      const message = sanitizeFailureMessage(`${what}: unusable file from ${this.opts.url} (${parsed.code}): ${parsed.message}`);
      this.lastFailure = { at, failure: { class: "protocol", message } };
      return false;
    }
    this.current = { bootstrap: parsed, fetchedAt: at };
    this.lastFailure = null;
    try {
      await this.opts.onFetched?.(text, at);
    } catch {
      // Persisting is best effort: the copy is in use in memory either way.
    }
    return true;
  }
}
