/**
 * The one classifier of outside failures: any exception (or HTTP status) met while
 * collecting from a source becomes a `CollectionError` — a class from the closed set and
 * a message naming the host and the step, in words a person can act on.
 *
 * The Workers runtime reports some failures opaquely: a fetch to a name that does not
 * resolve throws "internal error; reference = <id>", a refused or reset connection
 * "Network connection lost.". Those texts never leave this file: they are recognised
 * and said as what they mean ("DNS lookup of rdap.example failed", "connection to
 * 192.0.2.44:443 failed: refused or closed before an answer").
 *
 * Errors of the service's own code can declare their class with a `collectionClass`
 * property (e.g. a tampered CT tile is `protocol`), or be thrown as `CollectionFailure`
 * with the class and message already decided; the platform never imports module code.
 */
import { COLLECTION_ERROR_CLASSES, type CollectionError, type CollectionErrorClass } from "./vocabulary";

/** A failure whose class and message the thrower already decided. */
export class CollectionFailure extends Error {
  override readonly name = "CollectionFailure";
  constructor(
    readonly collectionClass: CollectionErrorClass,
    message: string,
  ) {
    super(message);
  }
  get collectionError(): CollectionError {
    return { class: this.collectionClass, message: this.message };
  }
}

/** Where the failed attempt was going: a URL, or a host (and port), and the step in words. */
export interface FailureTarget {
  url?: string;
  host?: string;
  port?: number;
  /** The step, for the message: "RDAP lookup of example.com", "tile 0/x/001 of log ...". */
  what?: string;
}

const MAX_MESSAGE = 300;
const RUNTIME_OPAQUE = /internal error;\s*reference\s*=\s*[\w-]+/gi;

/** Whether a text carries the runtime's opaque internal-error reference. */
export function isOpaqueRuntimeError(text: string): boolean {
  return /internal error;\s*reference/i.test(text);
}

/**
 * A message safe to show: the runtime's opaque reference removed, control characters
 * folded to spaces, at most MAX_MESSAGE characters.
 */
export function sanitizeFailureMessage(text: string): string {
  const clean = text
    .replace(RUNTIME_OPAQUE, "the runtime gave no reason")
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return clean.length > MAX_MESSAGE ? `${clean.slice(0, MAX_MESSAGE - 1)}…` : clean;
}

function targetOf(t: FailureTarget): { host: string; port?: number; url?: string } {
  if (t.url) {
    try {
      const u = new URL(t.url);
      const port = u.port ? Number(u.port) : u.protocol === "https:" ? 443 : u.protocol === "http:" ? 80 : undefined;
      return { host: u.hostname.replace(/^\[|\]$/g, ""), port: t.port ?? port, url: t.url };
    } catch {
      /* fall through */
    }
  }
  return { host: t.host ?? "the source", port: t.port, url: t.url };
}

function isIpLiteral(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(":");
}

function hostPort(host: string, port?: number): string {
  if (port === undefined) return host;
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

function prefix(t: FailureTarget): string {
  return t.what ? `${t.what}: ` : "";
}

/** The failure an HTTP answer with an error status is (429 is `rate_limited`). */
export function httpStatusFailure(status: number, url: string, what?: string, retryAfterSeconds?: number): CollectionError {
  const shown = sanitizeFailureMessage(url);
  if (status === 429) {
    const wait = retryAfterSeconds !== undefined ? ` (asked to wait ${retryAfterSeconds} s)` : "";
    return { class: "rate_limited", message: `${prefix({ what })}HTTP 429 Too Many Requests from ${shown}${wait}` };
  }
  return { class: "http_status", message: `${prefix({ what })}HTTP ${status} from ${shown}` };
}

/** The failure the egress policy's refusal is. */
export function blockedFailure(reason: string, what?: string): CollectionError {
  return { class: "blocked", message: `${prefix({ what })}destination refused by the egress policy: ${sanitizeFailureMessage(reason)}` };
}

function declaredClass(err: unknown): CollectionErrorClass | null {
  const c = (err as { collectionClass?: unknown } | null)?.collectionClass;
  return typeof c === "string" && (COLLECTION_ERROR_CLASSES as readonly string[]).includes(c) ? (c as CollectionErrorClass) : null;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return typeof err === "string" ? err : String(err);
}

function errorName(err: unknown): string {
  return (err as { name?: unknown } | null)?.name && typeof (err as { name: unknown }).name === "string" ? (err as { name: string }).name : "";
}

/** DnsLookupError codes (platform/dns/message.ts), by structure to keep this file free of imports. */
const DNS_CODE_CLASS: Record<string, CollectionErrorClass> = {
  timeout: "timeout",
  deadline: "timeout",
  network: "connect",
  "circuit-open": "connect",
  http: "http_status",
  malformed: "protocol",
  "no-resolvers": "internal",
};

/** One resolver's failure as a DnsLookupError lists it (platform/dns/message.ts DnsResolverFailure). */
interface ResolverFailure {
  resolver: string;
  code: string;
  message: string;
  lastFault?: { code: string; message: string };
}

function resolverName(url: string): string {
  if (!url) return "the DoH resolver";
  const { host, port } = targetOf({ url });
  return `DoH resolver ${hostPort(host, port)}`;
}

/** One resolver's failure (`code`, the client's `message`) in words, with its class. */
function classifyResolverFailure(resolver: string, code: string, message: string, p: string): CollectionError {
  const who = resolverName(resolver);
  // The client's messages start with the resolver's URL; what follows is the cause.
  const cause = message.startsWith(`${resolver}: `) ? message.slice(resolver.length + 2) : message;
  switch (code) {
    case "timeout":
      return { class: "timeout", message: `${p}no answer from ${who} in time` };
    case "network": {
      const c = classifyFailure(new Error(cause), { url: resolver });
      // A refused/reset connection, a name that does not resolve: said by the generic rules, with the resolver named.
      if (c.class === "internal") return { class: "connect", message: sanitizeFailureMessage(`${p}${who} could not be reached: ${cause}`) };
      return { class: c.class, message: `${p}${c.message.replace(/^(connection to|DNS lookup of) /, `$1 ${resolver ? "DoH resolver " : ""}`)}` };
    }
    case "http": {
      const status = Number(/HTTP (\d{3})/.exec(message)?.[1] ?? 0);
      return status ? httpStatusFailure(status, resolver, p ? p.slice(0, -2) : undefined) : { class: "http_status", message: sanitizeFailureMessage(`${p}${message}`) };
    }
    case "malformed":
      // "answer from <url> is truncated", "<url> answered more than 65535 bytes": said once, after the resolver's name.
      return { class: "protocol", message: sanitizeFailureMessage(`${p}unusable answer from ${who}: ${resolver ? cause.replace(`${resolver} `, "").replace(` from ${resolver}`, "") : cause}`) };
    case "deadline":
      return { class: "timeout", message: `${p}not asked: the run's time ran out first` };
    case "no-resolvers":
      return { class: "internal", message: `${p}no DoH resolver is configured (DOH_RESOLVER_URLS)` };
    default:
      return { class: DNS_CODE_CLASS[code] ?? "dns_resolution", message: sanitizeFailureMessage(`${p}${message}`) };
  }
}

/** Said after a failure when the question was not put at all: the resolver had failed again and again during the run. */
export const NOT_ASKED_AGAIN = " (not asked again during this run after repeated failures)";

/**
 * A DnsLookupError: the resolver failure that decided its code, said with the
 * resolver's name. A question refused because the resolver's circuit is open (it failed
 * again and again during the run) reports the fault that opened it.
 */
function classifyDnsLookup(err: { code?: unknown; message: string; attempts?: unknown }, p: string): CollectionError {
  const code = String(err.code ?? "");
  const attempts = (Array.isArray(err.attempts) ? err.attempts : []) as ResolverFailure[];
  const decisive = attempts.find((a) => a.code === code) ?? attempts[attempts.length - 1];
  if (!decisive) return classifyResolverFailure("", code, err.message, p);
  if (decisive.code === "circuit-open") {
    if (!decisive.lastFault) return { class: "connect", message: `${p}${resolverName(decisive.resolver)} not asked: it failed repeatedly during this run` };
    const fault = classifyResolverFailure(decisive.resolver, decisive.lastFault.code, decisive.lastFault.message, p);
    return { class: fault.class, message: `${fault.message}${NOT_ASKED_AGAIN}` };
  }
  return classifyResolverFailure(decisive.resolver, decisive.code, decisive.message, p);
}

/** Classifies one failure of an attempt to reach `target`. Never returns the runtime's opaque text. */
export function classifyFailure(err: unknown, target: FailureTarget = {}): CollectionError {
  if (err instanceof CollectionFailure) return { class: err.collectionClass, message: sanitizeFailureMessage(err.message) };
  const text = errorText(err);
  const name = errorName(err);
  const { host, port } = targetOf(target);
  const p = prefix(target);
  const declared = declaredClass(err);
  if (declared) return { class: declared, message: sanitizeFailureMessage(p + text) };

  if (name === "DnsLookupError") return classifyDnsLookup(err as { code?: unknown; message: string; attempts?: unknown }, p);
  if (name === "TimeoutError" || /\btimed? ?out\b|timeout/i.test(text)) {
    return { class: "timeout", message: sanitizeFailureMessage(`${p}no answer from ${hostPort(host, port)} in time`) };
  }
  if (name === "AbortError") {
    return { class: "timeout", message: sanitizeFailureMessage(`${p}the request to ${hostPort(host, port)} was abandoned before an answer`) };
  }
  if (isOpaqueRuntimeError(text)) {
    // What the runtime throws when the name does not resolve; an address literal cannot fail that way.
    if (!isIpLiteral(host) && host !== "the source") return { class: "dns_resolution", message: `${p}DNS lookup of ${host} failed` };
    return { class: "connect", message: `${p}connection to ${hostPort(host, port)} failed (the runtime gave no reason)` };
  }
  // "cannot connect to the specified address": what workerd's cloudflare:sockets throws for a refused connection (SMTP).
  if (/network connection lost|connection (refused|reset|closed)|cannot connect to the specified address|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|socket hang up/i.test(text)) {
    return { class: "connect", message: `${p}connection to ${hostPort(host, port)} failed: refused or closed before an answer` };
  }
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo|name (or service )?not known|could not resolve|NXDOMAIN/i.test(text)) {
    return { class: "dns_resolution", message: `${p}DNS lookup of ${host} failed` };
  }
  // A stored text that already says the status ("HTTP 503 from https://…"): what a collector recorded before it classified.
  const status = /\bHTTP (\d{3})\b/.exec(text);
  if (status) {
    return { class: status[1] === "429" ? "rate_limited" : "http_status", message: sanitizeFailureMessage(`${p}${text}`) };
  }
  if (/\btls\b|\bssl\b|certificate|handshake/i.test(text)) {
    return { class: "tls", message: sanitizeFailureMessage(`${p}TLS with ${hostPort(host, port)} failed: ${text}`) };
  }
  if (err instanceof SyntaxError) {
    return { class: "protocol", message: sanitizeFailureMessage(`${p}the answer from ${host} does not parse: ${text}`) };
  }
  return { class: "internal", message: sanitizeFailureMessage(`${p}${text || "failed"}`) };
}
