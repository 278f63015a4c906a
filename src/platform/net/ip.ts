/**
 * IP addresses and CIDR networks of `ip` rule lists (docs/decisions.md#rule-lists):
 * strict parsing, the stored normal form, and a fast parser for the event
 * values that `in_list` looks up many times per second.
 *
 * Stored form: IPv4 `a.b.c.d/n` (dotted decimal, no leading zeros); IPv6 in RFC 5952
 * compressed lowercase form with its prefix length, e.g. `2001:db8::/32`; an IPv4-mapped
 * IPv6 address keeps the mixed notation RFC 5952 section 5 recommends (`::ffff:192.0.2.1/128`).
 */
import ipaddr from "ipaddr.js";

export type IpFamily = 4 | 6;

/** A network: family, address as an unsigned integer, prefix length. */
export interface IpNetwork {
  family: IpFamily;
  /** IPv4: 0..2^32-1 as a bigint; IPv6: 0..2^128-1. The network address (host bits zero). */
  address: bigint;
  prefixLength: number;
}

export type IpParseResult =
  | { ok: true; network: IpNetwork; value: string }
  | { ok: false; message: string };

// Strict dotted quad: four decimal octets 0-255, no leading zeros (`010.0.0.1`
// is ambiguous, octal in some parsers, so it is refused rather than guessed).
const IPV4_STRICT = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV4_LOOSE = /^\d+(\.\d+){3}$/;
const EMBEDDED_IPV4 = /:(\d+(?:\.\d+){3})$/;

/** Parses one address (no prefix) strictly. Returns null when it is not an address. */
export function parseIpAddress(text: string): { family: IpFamily; address: bigint } | null {
  if (IPV4_STRICT.test(text)) return { family: 4, address: BigInt(ipv4ToUint32(text)) };
  if (!text.includes(":") || text.includes("%")) return null; // zone ids are link-local only
  const embedded = EMBEDDED_IPV4.exec(text);
  if (embedded && !IPV4_STRICT.test(embedded[1])) return null;
  if (!ipaddr.IPv6.isValid(text)) return null;
  const bytes = ipaddr.IPv6.parse(text).toByteArray();
  let address = 0n;
  for (const b of bytes) address = (address << 8n) | BigInt(b);
  return { family: 6, address };
}

/**
 * Parses a list entry: an address or a CIDR network. A network with host bits set is
 * refused with the network address it probably meant (`10.1.2.3/8` -> `10.0.0.0/8`).
 */
export function parseIpEntry(raw: string): IpParseResult {
  const text = raw.trim();
  if (text === "") return { ok: false, message: "empty value is not an IP address or CIDR network" };
  const slash = text.indexOf("/");
  const addrText = slash < 0 ? text : text.slice(0, slash);
  const addr = parseIpAddress(addrText);
  if (!addr) {
    if (IPV4_LOOSE.test(addrText) && /(^|\.)0\d/.test(addrText)) {
      return { ok: false, message: `'${raw}' is not a valid IP address: IPv4 octets must not have leading zeros` };
    }
    return { ok: false, message: `'${raw}' is not a valid IP address or CIDR network` };
  }
  const bits = addr.family === 4 ? 32 : 128;
  let prefixLength = bits;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > bits) {
      return { ok: false, message: `'${raw}' has an invalid prefix length (0-${bits} for IPv${addr.family})` };
    }
    prefixLength = Number(p);
  }
  const network: IpNetwork = { family: addr.family, address: maskAddress(addr.address, bits, prefixLength), prefixLength };
  if (network.address !== addr.address) {
    const meant = formatNetwork(network);
    return { ok: false, message: `'${raw}' has host bits set; the network is ${meant}` };
  }
  return { ok: true, network, value: formatNetwork(network) };
}

export function maskAddress(address: bigint, bits: number, prefixLength: number): bigint {
  const hostBits = BigInt(bits - prefixLength);
  return (address >> hostBits) << hostBits;
}

/** The stored text of a network: `a.b.c.d/n` or RFC 5952 IPv6 with `/n`. */
export function formatNetwork(n: IpNetwork): string {
  return `${formatAddress(n.family, n.address)}/${n.prefixLength}`;
}

export function formatAddress(family: IpFamily, address: bigint): string {
  if (family === 4) return uint32ToIpv4(Number(address));
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((address >> BigInt(i * 16)) & 0xffffn));
  // RFC 5952 section 5: IPv4-mapped addresses are written with the dotted quad.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${uint32ToIpv4(Number(address & 0xffffffffn))}`;
  }
  return rfc5952(groups);
}

/** RFC 5952 section 4: lowercase, no leading zeros, `::` for the longest (leftmost) run of >= 2 zero groups. */
function rfc5952(groups: number[]): string {
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLen).join(":")}`;
}

function ipv4ToUint32(text: string): number {
  const p = text.split(".");
  return ((+p[0] << 24) >>> 0) + (+p[1] << 16) + (+p[2] << 8) + +p[3];
}

function uint32ToIpv4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/**
 * Fast path for event values: a strict dotted quad as an unsigned 32-bit number, or -1.
 * Hand-written because `in_list` runs per SAN per rule; tested against parseIpAddress.
 */
export function parseIpv4Fast(s: string): number {
  const len = s.length;
  if (len < 7 || len > 15) return -1;
  let result = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0) return -1;
      result = result * 256 + octet;
      octet = 0;
      digits = 0;
      if (++dots > 3) return -1;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return -1; // leading zero
      octet = octet * 10 + (c - 48);
      if (octet > 255) return -1;
      digits++;
    } else {
      return -1;
    }
  }
  if (dots !== 3 || digits === 0) return -1;
  return result * 256 + octet;
}
