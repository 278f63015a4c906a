/**
 * What a host in a user-supplied URL really is, and whether the service may connect
 * to it on the user's behalf. Pure: no DNS, no configuration (policy.ts adds those).
 *
 * Attackers spell internal addresses in every form a resolver accepts, so hosts are
 * parsed the way `inet_aton` and the WHATWG URL parser do before they are judged:
 * `2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`, `127.0.0.1.` and
 * `[::ffff:127.0.0.1]` are all 127.0.0.1. IPv6 addresses that embed an IPv4 address
 * (IPv4-mapped, IPv4-compatible, SIIT, NAT64, 6to4) are judged by the embedded one.
 */
import ipaddr from "ipaddr.js";

export type ParsedHost =
  | { kind: "ipv4"; address: string; bytes: number[] }
  | { kind: "ipv6"; address: string; bytes: number[] }
  /** A DNS name, lowercase, without trailing dot. */
  | { kind: "name"; name: string }
  | { kind: "invalid"; reason: string };

/** One IPv4 number part as inet_aton reads it: `0x..` hex, leading `0` octal, else decimal. */
function ipv4Part(part: string): number | null {
  if (part === "") return null;
  let radix = 10;
  let digits = part;
  if (/^0x/i.test(part)) {
    radix = 16;
    digits = part.slice(2);
    if (digits === "") return 0; // "0x" alone is 0 in the WHATWG parser
  } else if (part.length > 1 && part.startsWith("0")) {
    radix = 8;
    digits = part.slice(1);
  }
  const valid = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) return null;
  const n = parseInt(digits, radix);
  return Number.isSafeInteger(n) ? n : Infinity;
}

/**
 * IPv4 in any spelling resolvers accept (1-4 parts; the last part fills the remaining
 * bytes), or null when the text is not numeric. Out-of-range numbers are "invalid".
 */
export function parseLooseIpv4(text: string): number[] | "invalid" | null {
  const parts = text.split(".");
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop(); // one trailing dot
  if (parts.length === 0 || parts.length > 4) return null;
  const numbers = parts.map(ipv4Part);
  if (numbers.some((n) => n === null)) return null;
  const nums = numbers as number[];
  const last = nums[nums.length - 1];
  if (nums.slice(0, -1).some((n) => n > 255) || last >= 256 ** (5 - nums.length)) return "invalid";
  let value = last;
  nums.slice(0, -1).forEach((n, i) => (value += n * 256 ** (3 - i)));
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255];
}

/** Parses a URL host (or a bare host as configured): IP literal in any spelling, or a DNS name. */
export function parseHost(raw: string): ParsedHost {
  let host = raw.trim();
  try {
    host = decodeURIComponent(host);
  } catch {
    return { kind: "invalid", reason: "the host is not valid percent-encoding" };
  }
  host = host.toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host.includes(":")) {
    if (host.includes("%")) return { kind: "invalid", reason: "IPv6 zone identifiers are not allowed" };
    if (!ipaddr.IPv6.isValid(host)) return { kind: "invalid", reason: "not a valid IPv6 address" };
    const v6 = ipaddr.IPv6.parse(host);
    return { kind: "ipv6", address: v6.toString(), bytes: v6.toByteArray() };
  }
  const v4 = parseLooseIpv4(host);
  if (v4 === "invalid") return { kind: "invalid", reason: "a numeric host out of the IPv4 range" };
  if (v4) return { kind: "ipv4", address: v4.join("."), bytes: v4 };
  const name = host.replace(/\.$/, "");
  if (name === "" || name.length > 253 || !/^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/.test(name)) {
    return { kind: "invalid", reason: "not a valid host name" };
  }
  // WHATWG: a name whose last label is numeric is an (invalid) IPv4 address, never a name.
  if (/^(0x[0-9a-f]*|\d+)$/.test(name.slice(name.lastIndexOf(".") + 1))) return { kind: "invalid", reason: "not a valid IPv4 address" };
  return { kind: "name", name };
}

const V4_REASONS: Record<string, string> = {
  unspecified: "an unspecified address (0.0.0.0/8)",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address (169.254.0.0/16, cloud metadata)",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT address (100.64.0.0/10)",
  private: "a private address (RFC 1918)",
  reserved: "a reserved or special-purpose address",
};

const V6_REASONS: Record<string, string> = {
  unspecified: "the unspecified address (::)",
  loopback: "the loopback address (::1)",
  linkLocal: "a link-local address (fe80::/10)",
  uniqueLocal: "a unique-local address (fc00::/7)",
  multicast: "a multicast address",
  deprecatedSiteLocal: "a site-local address (fec0::/10)",
  teredo: "a Teredo address (embeds an obfuscated IPv4 address)",
};

function embeddedV4(bytes: number[], from: number): number[] {
  return bytes.slice(from, from + 4);
}

function classifyV4(bytes: number[]): string | null {
  const range = ipaddr.fromByteArray(bytes).range();
  if (range === "unicast") return null;
  return V4_REASONS[range] ?? `a special-purpose address (${range})`;
}

/**
 * Why the service must not connect to this address on a user's behalf, or null for a
 * public unicast address. IPv6 forms that carry an IPv4 address are judged by it.
 */
export function forbiddenAddressReason(host: ParsedHost & { kind: "ipv4" | "ipv6" }): string | null {
  if (host.kind === "ipv4") return classifyV4(host.bytes);
  const b = host.bytes;
  const v6 = ipaddr.fromByteArray(b) as ipaddr.IPv6;
  const range = v6.range();
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const viaV4 = (label: string, v4: number[]) => {
    const why = classifyV4(v4);
    return why ? `${label} form of ${why}` : null;
  };
  if (range === "ipv4Mapped") return viaV4("an IPv4-mapped", embeddedV4(b, 12));
  if (range === "rfc6145") return viaV4("an IPv4-translated (SIIT)", embeddedV4(b, 12));
  if (range === "6to4") return viaV4("a 6to4", embeddedV4(b, 2));
  if (range === "rfc6052") {
    // Only the well-known NAT64 prefix 64:ff9b::/96 maps to the public IPv4 internet.
    if (!(b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12))) return "a local-use NAT64 address (64:ff9b:1::/48)";
    return viaV4("a NAT64", embeddedV4(b, 12));
  }
  // IPv4-compatible (::a.b.c.d, deprecated); ipaddr.js reports these as unicast.
  if (zero(0, 12) && range !== "loopback" && range !== "unspecified") return viaV4("an IPv4-compatible", embeddedV4(b, 12));
  if (range === "unicast") return null;
  return V6_REASONS[range] ?? `a special-purpose address (${range})`;
}

/** Names that never denote a public service: they resolve to the host itself or the local network. */
export function forbiddenNameReason(name: string): string | null {
  if (name === "localhost" || name.endsWith(".localhost")) return "a localhost name";
  if (!name.includes(".")) return "a single-label name (resolved through local search domains)";
  for (const suffix of ["internal", "local", "localdomain", "home.arpa", "intranet", "lan"]) {
    if (name === suffix || name.endsWith(`.${suffix}`)) return `a name under .${suffix} (internal)`;
  }
  return null;
}

/**
 * A certificate-monitor scan target (cert-watcher): the scanner agent connects to it
 * from inside the organization's own network, so private addresses are legitimate
 * targets; what can never be scanned is a non-unicast address (unspecified,
 * broadcast, multicast, reserved) in any spelling.
 */
export function isUnicastScanTarget(text: string): boolean {
  const host = parseHost(text);
  if (host.kind === "ipv4") {
    const range = ipaddr.fromByteArray(host.bytes).range();
    return !["unspecified", "broadcast", "multicast", "reserved"].includes(range) || isDocumentationV4(host.bytes);
  }
  if (host.kind === "ipv6") {
    const range = (ipaddr.fromByteArray(host.bytes) as ipaddr.IPv6).range();
    if (range === "ipv4Mapped") return isUnicastScanTarget(embeddedV4(host.bytes, 12).join("."));
    return !["unspecified", "multicast", "reserved", "discard"].includes(range) || isDocumentationV6(host.bytes);
  }
  return false;
}

// Documentation ranges are "reserved" to ipaddr.js but are ordinary unicast for a
// scanner (tests and examples use them): 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24.
function isDocumentationV4(b: number[]): boolean {
  return (b[0] === 192 && b[1] === 0 && b[2] === 2) || (b[0] === 198 && b[1] === 51 && b[2] === 100) || (b[0] === 203 && b[1] === 0 && b[2] === 113);
}
function isDocumentationV6(b: number[]): boolean {
  return b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8;
}
