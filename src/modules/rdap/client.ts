/**
 * The RDAP client: one domain lookup (RFC 9082 `GET <base>/domain/<name>`),
 * classified into the outcomes the monitor records as `last_check_status`.
 *
 * Remote faults never throw: every network error, timeout, odd status or odd
 * body becomes a result, with its collection failure (platform/collection: a class
 * and a message naming the server and what failed; the runtime's opaque texts are
 * recognised there and never passed on). Redirects are followed by hand (at most 5, loops
 * detected) because registries redirect thin lookups to registrars and a
 * misconfigured pair can bounce forever; `fetch`'s own redirect handling would
 * hide which URL answered.
 */
import { isRdapDomain, type RdapDomain } from "./rdap-json";
import { rdapDomainUrl } from "./bootstrap";
import { readBodyUpTo } from "../../platform/http-body";
import { blockedFailure, classifyFailure, httpStatusFailure, sanitizeFailureMessage, type CollectionError } from "../../platform/collection";

export type RdapFetchOutcome =
  | "success"
  | "not_found"
  | "rate_limited"
  | "server_error"
  | "timeout"
  | "invalid_response"
  | "no_rdap_server";

export type InvalidResponseReason =
  /** 200 with an HTML (or other non-JSON) content type. */
  | "html"
  /** The body is not JSON. */
  | "malformed_json"
  /** JSON, but not an RFC 9083 domain object (objectClassName "domain"). */
  | "not_domain_object"
  /** A redirect led back to a URL already visited. */
  | "redirect_loop"
  /** More than MAX_REDIRECTS redirects. */
  | "too_many_redirects"
  /** A 3xx without a usable Location. */
  | "bad_redirect"
  /** A redirect to a destination the egress policy refuses (an internal address...). */
  | "redirect_refused"
  /** The body exceeded maxBodyBytes. */
  | "too_large"
  /** A status the protocol does not give meaning to here (400, 401, 403, 410, 1xx...). */
  | "unexpected_status";

interface ResultBase {
  /** The first URL requested (metadata.rdap_server); null when there was no server. */
  requestUrl: string | null;
  /** The URL that produced the final answer (differs after redirects). */
  finalUrl: string | null;
  /** HTTP status of the final answer; null when no answer arrived. */
  httpStatus: number | null;
  /** ISO 8601, from the injected clock, when the lookup started. */
  fetchedAt: string;
  elapsedMs: number;
  redirects: number;
}

/** A lookup that produced no registration data says why, classified. */
type Failed = { failure: CollectionError };

export type RdapFetchResult =
  | (ResultBase & { outcome: "success"; httpStatus: number; domain: RdapDomain; bodyText: string })
  | (ResultBase & Failed & { outcome: "not_found" })
  | (ResultBase & Failed & { outcome: "rate_limited"; retryAfterSeconds: number | null })
  | (ResultBase & Failed & { outcome: "server_error"; message: string })
  | (ResultBase & Failed & { outcome: "timeout"; message: string })
  | (ResultBase & Failed & { outcome: "invalid_response"; reason: InvalidResponseReason; message: string })
  | (ResultBase & Failed & { outcome: "no_rdap_server"; message: string });

export const MAX_REDIRECTS = 5;
export const DEFAULT_TIMEOUT_MS = 15_000;
/** Real domain answers are 2-30 KB; anything this large is not one. */
export const DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface FetchDomainOptions {
  /** Whole lookup, redirects and body included. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Caller cancellation; reported as outcome "timeout" with a message saying so. */
  signal?: AbortSignal;
  /** Injected clock (epoch ms): fetchedAt and HTTP-date Retry-After. */
  now?: () => number;
  maxBodyBytes?: number;
  /**
   * Vets a redirect target before it is followed: the refusal reason, or null to follow.
   * (The service passes its egress policy: a registry must not point it inward.)
   */
  checkRedirect?: (url: string) => Promise<string | null>;
}

/**
 * Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, as seconds from
 * `now` (never negative). Null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  // Only a date-shaped value: Date.parse would also accept "5" or "2024".
  if (!/[a-z]{3},?\s/i.test(v) && !/\d{4}-\d{2}-\d{2}/.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

class BodyTooLarge extends Error {}

async function readLimited(res: Response, limit: number): Promise<string> {
  const body = await readBodyUpTo(res, limit);
  if (body === null) throw new BodyTooLarge();
  return new TextDecoder().decode(body);
}

type Hop = { requestUrl: string; finalUrl: string; httpStatus: number; redirects: number };
/** What `fetchDomain` reports, before the timing fields and the failure (unless already classified) are added. */
type Outcome = DistributiveOmit<RdapFetchResult, "fetchedAt" | "elapsedMs" | "redirects" | "failure"> & { redirects?: number; failure?: CollectionError };
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * A 3xx answer: the next URL to ask, or why the lookup ends here (no Location, a loop,
 * too many hops, or a target the egress policy refuses).
 */
async function redirectTarget(
  res: Response,
  at: Hop,
  visited: Set<string>,
  checkRedirect: FetchDomainOptions["checkRedirect"],
): Promise<{ next: string } | { end: Outcome }> {
  await res.body?.cancel();
  const location = res.headers.get("location");
  let next: string;
  try {
    if (!location) throw new Error("no Location");
    next = new URL(location, at.finalUrl).href;
  } catch {
    return { end: { ...at, outcome: "invalid_response", reason: "bad_redirect", message: `HTTP ${at.httpStatus} without a usable Location` } };
  }
  if (visited.has(next)) return { end: { ...at, outcome: "invalid_response", reason: "redirect_loop", message: `redirect loop back to ${next}` } };
  if (at.redirects >= MAX_REDIRECTS) {
    return { end: { ...at, outcome: "invalid_response", reason: "too_many_redirects", message: `more than ${MAX_REDIRECTS} redirects` } };
  }
  const refused = checkRedirect ? await checkRedirect(next) : null;
  if (refused !== null) return { end: { ...at, outcome: "invalid_response", reason: "redirect_refused", message: `redirect to ${next} refused: ${refused}` } };
  return { next };
}

/** Any final status other than 200: not found, rate limited, server error, unexpected. */
async function statusOutcome(res: Response, at: Hop, now: number): Promise<Outcome> {
  await res.body?.cancel();
  const status = res.status;
  if (status === 404) return { ...at, outcome: "not_found" };
  if (status === 429) return { ...at, outcome: "rate_limited", retryAfterSeconds: parseRetryAfter(res.headers.get("retry-after"), now) };
  if (status >= 500) return { ...at, outcome: "server_error", message: `HTTP ${status}` };
  return { ...at, outcome: "invalid_response", reason: "unexpected_status", message: `HTTP ${status}` };
}

/** A 200 answer: its body, bounded, must be an RDAP domain object in JSON. */
async function answerOutcome(res: Response, at: Hop, maxBodyBytes: number, timedOut: () => string | null): Promise<Outcome> {
  const contentType = (res.headers.get("content-type") ?? "").toLowerCase();
  let text: string;
  try {
    text = await readLimited(res, maxBodyBytes);
  } catch (err) {
    if (err instanceof BodyTooLarge) return { ...at, outcome: "invalid_response", reason: "too_large", message: "response body too large" };
    const timeout = timedOut();
    if (timeout) return { ...at, outcome: "timeout", message: timeout };
    const failure = classifyFailure(err, { url: at.finalUrl, what: "reading the RDAP answer" });
    return { ...at, outcome: "server_error", message: failure.message, failure };
  }
  // Servers send application/rdap+json, application/json or nothing; HTML is a
  // portal or an error page, never an RDAP answer.
  if (contentType.includes("html") || /^\s*</.test(text)) {
    return { ...at, outcome: "invalid_response", reason: "html", message: `HTML instead of RDAP JSON (${contentType || "no content type"})` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ...at, outcome: "invalid_response", reason: "malformed_json", message: `body is not JSON: ${(err as Error).message}` };
  }
  if (!isRdapDomain(json)) return { ...at, outcome: "invalid_response", reason: "not_domain_object", message: "JSON is not an RDAP domain object" };
  return { ...at, outcome: "success", domain: json, bodyText: text };
}

/**
 * Looks `domain` up at the RDAP server `baseUrl` (a bootstrap base URL; null or
 * "" means discovery found none). Sends `Accept: application/rdap+json`, follows up
 * to MAX_REDIRECTS redirects the caller's policy allows, and classifies the answer.
 */
export async function fetchDomain(
  baseUrl: string | null | undefined,
  domain: string,
  options: FetchDomainOptions = {},
): Promise<RdapFetchResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const done = (r: Outcome) =>
    ({ fetchedAt: new Date(started).toISOString(), redirects: 0, elapsedMs: Math.max(0, now() - started), ...r, ...(r.outcome === "success" ? {} : { failure: r.failure ?? failureOf(r, domain) }) }) as RdapFetchResult;

  if (!baseUrl) return done({ outcome: "no_rdap_server", requestUrl: null, finalUrl: null, httpStatus: null, message: `no RDAP server known for ${domain}` });
  let requestUrl: string;
  try {
    requestUrl = new URL(rdapDomainUrl(baseUrl, domain)).href;
  } catch {
    return done({ outcome: "no_rdap_server", requestUrl: null, finalUrl: null, httpStatus: null, message: `invalid RDAP base URL: ${baseUrl}` });
  }

  const doFetch = options.fetch ?? fetch;
  const timeout = new AbortController();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
  /** Why the lookup was cut short, or null while it was not. */
  const timedOut = () => (!signal.aborted ? null : options.signal?.aborted ? "lookup cancelled by caller" : `no complete answer within ${timeoutMs} ms`);

  let url = requestUrl;
  const visited = new Set<string>([url]);
  let redirects = 0;
  try {
    for (;;) {
      let res: Response;
      try {
        res = await doFetch(url, { headers: { accept: "application/rdap+json" }, redirect: "manual", signal });
      } catch (err) {
        const timeout = timedOut();
        if (timeout) return done({ outcome: "timeout", requestUrl, finalUrl: url, httpStatus: null, redirects, message: timeout });
        // Refused connection, DNS failure, TLS failure: the server is not serving. Said by the one classifier.
        const failure = classifyFailure(err, { url, what: `RDAP lookup of ${domain}` });
        return done({ outcome: "server_error", requestUrl, finalUrl: url, httpStatus: null, redirects, message: failure.message, failure });
      }
      const at: Hop = { requestUrl, finalUrl: url, httpStatus: res.status, redirects };
      if (res.status >= 300 && res.status < 400 && res.status !== 304) {
        const hop = await redirectTarget(res, at, visited, options.checkRedirect);
        if ("end" in hop) return done(hop.end);
        visited.add(hop.next);
        url = hop.next;
        redirects++;
        continue;
      }
      if (res.status !== 200) return done(await statusOutcome(res, at, now()));
      return done(await answerOutcome(res, at, options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, timedOut));
    }
  } finally {
    clearTimeout(timer);
  }
}

const hostOf = (url: string | null): string => {
  try {
    return url ? new URL(url).host : "the RDAP server";
  } catch {
    return "the RDAP server";
  }
};

/** The collection failure of a lookup that took no snapshot (network errors are classified where they are caught). */
function failureOf(r: Outcome, domain: string): CollectionError {
  const what = `RDAP lookup of ${domain}`;
  const url = r.finalUrl ?? r.requestUrl ?? "";
  switch (r.outcome) {
    case "not_found": {
      const f = httpStatusFailure(404, url, what);
      return { ...f, message: `${f.message}: the registry does not know the domain` };
    }
    case "rate_limited":
      return httpStatusFailure(429, url, what, r.retryAfterSeconds ?? undefined);
    case "server_error":
      return r.httpStatus !== null ? httpStatusFailure(r.httpStatus, url, what) : { class: "connect", message: sanitizeFailureMessage(`${what}: ${r.message}`) };
    case "timeout":
      return { class: "timeout", message: sanitizeFailureMessage(`${what}: ${hostOf(url)} gave ${r.message}`) };
    case "no_rdap_server":
      // Discovery's answer (the IANA bootstrap registry) names no server to ask.
      return { class: "protocol", message: sanitizeFailureMessage(`${what}: ${r.message}`) };
    case "invalid_response":
      if (r.reason === "redirect_refused") return blockedFailure(r.message, what);
      if (r.reason === "unexpected_status" && r.httpStatus !== null) return httpStatusFailure(r.httpStatus, url, what);
      return { class: "protocol", message: sanitizeFailureMessage(`${what}: unusable answer from ${hostOf(url)}: ${r.message}`) };
    default:
      return { class: "internal", message: `${what}: failed` };
  }
}
