/**
 * Rule lists compiled for lookups: what `in_list(value, lists["name"])` consults.
 * Built once per list version (the AlertState DO rebuilds it when lists change), read
 * millions of times.
 *
 * - ip lists: IPv4 networks as sorted, merged [start, end] ranges of numbers (binary
 *   search); IPv6 networks as one Set of masked prefixes per prefix length present.
 *   An IPv4 value (or an IPv4-mapped IPv6 value) is looked up both as IPv4 and as its
 *   mapped IPv6 form `::ffff:a.b.c.d`, so entries of either spelling match it.
 * - domain lists: a Set of A-labels (see domainLookupKey).
 * - spki lists: a Set of lowercase hex SHA-256 key hashes (normalizeSpkiHash).
 */
import type { ListType } from "../../../db/schema";
import { domainLookupKey } from "../../../platform/net/domain";
import { parseIpEntry, parseIpv4Fast, parseIpAddress } from "../../../platform/net/ip";
import { normalizeSpkiHash } from "../../lists/contract";

export interface RuleListInput {
  name: string;
  list_type: ListType;
  /** Stored (normalized) values; a value that does not parse is skipped. */
  values: readonly string[];
}

export interface CompiledList {
  readonly name: string;
  readonly listType: ListType;
  readonly size: number;
  matches(value: string): boolean;
}

const MAPPED_PREFIX = 0xffffn << 32n;

class IpListMatcher implements CompiledList {
  readonly listType = "ip" as const;
  /** Merged IPv4 ranges: starts[i]..ends[i] inclusive, ascending, disjoint. */
  private readonly starts: Float64Array;
  private readonly ends: Float64Array;
  /** IPv6: [128 - prefix length, set of address >> (128 - prefix length)] per length present. */
  private readonly v6: Array<[shift: bigint, prefixes: Set<bigint>]>;

  /** Number of networks the list holds. */
  readonly size: number;

  constructor(readonly name: string, values: readonly string[]) {
    this.size = values.length;
    const ranges: Array<[number, number]> = [];
    const v6 = new Map<number, Set<bigint>>();
    for (const v of values) {
      const r = parseIpEntry(v);
      if (!r.ok) continue;
      const n = r.network;
      if (n.family === 4) {
        const start = Number(n.address);
        ranges.push([start, start + 2 ** (32 - n.prefixLength) - 1]);
      } else {
        let set = v6.get(n.prefixLength);
        if (!set) v6.set(n.prefixLength, (set = new Set()));
        set.add(n.address >> BigInt(128 - n.prefixLength));
      }
    }
    ranges.sort((a, b) => a[0] - b[0]);
    const merged: Array<[number, number]> = [];
    for (const r of ranges) {
      const last = merged[merged.length - 1];
      if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
      else merged.push([r[0], r[1]]);
    }
    this.starts = Float64Array.from(merged, (r) => r[0]);
    this.ends = Float64Array.from(merged, (r) => r[1]);
    this.v6 = [...v6].map(([len, set]) => [BigInt(128 - len), set]);
  }

  matches(value: string): boolean {
    const v4 = parseIpv4Fast(value);
    if (v4 >= 0) return this.matchesV4(v4) || (this.v6.length > 0 && this.matchesV6(MAPPED_PREFIX | BigInt(v4)));
    if (!value.includes(":")) return false;
    const addr = parseIpAddress(value);
    if (!addr) return false;
    if ((addr.address >> 32n) === 0xffffn) {
      if (this.matchesV4(Number(addr.address & 0xffffffffn))) return true;
    }
    return this.matchesV6(addr.address);
  }

  private matchesV4(ip: number): boolean {
    const starts = this.starts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid] <= ip) lo = mid + 1;
      else hi = mid - 1;
    }
    return hi >= 0 && ip <= this.ends[hi];
  }

  private matchesV6(address: bigint): boolean {
    for (const [shift, set] of this.v6) if (set.has(address >> shift)) return true;
    return false;
  }
}

class DomainListMatcher implements CompiledList {
  readonly listType = "domain" as const;
  private readonly names = new Set<string>();

  constructor(readonly name: string, values: readonly string[]) {
    for (const v of values) {
      const key = domainLookupKey(v);
      if (key) this.names.add(key);
    }
  }

  get size(): number {
    return this.names.size;
  }

  matches(value: string): boolean {
    if (this.names.size === 0) return false;
    const key = domainLookupKey(value);
    return key !== null && this.names.has(key);
  }
}

class SpkiListMatcher implements CompiledList {
  readonly listType = "spki" as const;
  private readonly keys: Set<string>;

  constructor(readonly name: string, values: readonly string[]) {
    this.keys = new Set(values);
  }

  get size(): number {
    return this.keys.size;
  }

  matches(value: string): boolean {
    if (this.keys.size === 0) return false;
    const key = normalizeSpkiHash(value);
    return key.ok && this.keys.has(key.value);
  }
}

const MATCHERS: Record<ListType, new (name: string, values: readonly string[]) => CompiledList> = { ip: IpListMatcher, domain: DomainListMatcher, spki: SpkiListMatcher };

/** All lists of one organization, by name. */
export class ListData {
  private readonly lists = new Map<string, CompiledList>();

  constructor(lists: readonly RuleListInput[]) {
    for (const l of lists) {
      this.lists.set(l.name, new MATCHERS[l.list_type](l.name, l.values));
    }
  }

  get(name: string): CompiledList | undefined {
    return this.lists.get(name);
  }

  names(): string[] {
    return [...this.lists.keys()];
  }

  /** Entry rule 5: a value that is not an IP/domain, or a list absent at runtime, does not match. */
  matches(listName: string, value: unknown): boolean {
    if (typeof value !== "string") return false;
    const list = this.lists.get(listName);
    return list !== undefined && list.matches(value);
  }
}

export function compileListData(lists: readonly RuleListInput[]): ListData {
  return new ListData(lists);
}

export const EMPTY_LIST_DATA = new ListData([]);
