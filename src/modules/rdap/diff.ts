/**
 * The difference between two RDAP snapshots, computed on their canonical forms
 * (so volatile parts never show up; see snapshot.ts).
 *
 * Paths are JSONPath-like and name array items by what they are, not where they
 * are, so a path stays valid when the registry reorders a list:
 *   $.nameservers[ns1.example.com]                 nameserver by ldhName
 *   $.events[expiration].eventDate                 event by eventAction
 *   $.entities[registrar:292].vcardArray[1][fn][3] entity by roles:handle,
 *                                                  vCard property by name
 *   $.status[client hold]                          set member by value
 * An item without such a key falls back to its index ($.remarks[0]); a key seen
 * twice in one list gets a suffix ([tel], [tel#2]).
 */
import { canonicalize } from "./snapshot";
import {
  registrantChanged,
  registrantOf,
  registrarChanged,
  registrarOf,
  expirationDate,
  type RegistrantIdentity,
  type RegistrarIdentity,
} from "./facts";
import { nameserverNames, statusValues, type JsonValue, type JsonObject } from "./rdap-json";

export interface DiffEntry {
  path: string;
  value: JsonValue;
}
export interface DiffModification {
  path: string;
  from: JsonValue;
  to: JsonValue;
}

export interface SetChange {
  added: string[];
  removed: string[];
}

export interface DiffSummary {
  registrar?: { from: RegistrarIdentity | null; to: RegistrarIdentity | null };
  registrant?: { from: RegistrantIdentity | null; to: RegistrantIdentity | null };
  nameservers?: SetChange;
  status?: SetChange;
  expiration?: { from: string | null; to: string | null };
}

export interface SnapshotDiff {
  added: DiffEntry[];
  removed: DiffEntry[];
  modified: DiffModification[];
  summary: DiffSummary;
}

/** Arrays of strings compared as sets (their canonical form is sorted and deduplicated). */
const SET_MEMBERS: ReadonlySet<string> = new Set(["status", "roles", "v4", "v6"]);

function asObject(v: JsonValue): JsonObject | null {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v : null;
}

/** The natural key of an array item, or null when it has none. */
function itemKey(item: JsonValue): string | null {
  const o = asObject(item);
  if (o) {
    if (typeof o.ldhName === "string") return o.ldhName;
    if (typeof o.eventAction === "string") return o.eventAction;
    if (Array.isArray(o.roles)) {
      const roles = o.roles.filter((r) => typeof r === "string").join(",");
      return typeof o.handle === "string" ? `${roles}:${o.handle}` : roles;
    }
    if (typeof o.type === "string" && (typeof o.identifier === "string" || typeof o.identifier === "number")) {
      return `${o.type}:${o.identifier}`;
    }
    return null;
  }
  // jCard property [name, params, type, value].
  if (Array.isArray(item) && typeof item[0] === "string" && item.length >= 4) return item[0];
  return null;
}

function memberPath(base: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

/** Keys for every item, unique within the list, or null when some item has no key. */
function keysOf(items: JsonValue[], member: string): string[] | null {
  const raw = items.map((it) => (SET_MEMBERS.has(member) && typeof it === "string" ? it : itemKey(it)));
  if (raw.some((k) => k === null)) return null;
  const seen = new Map<string, number>();
  return raw.map((k) => {
    const n = (seen.get(k!) ?? 0) + 1;
    seen.set(k!, n);
    return n === 1 ? k! : `${k}#${n}`;
  });
}

function equal(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const y = b as JsonValue[];
    return a.length === y.length && a.every((v, i) => equal(v, y[i]));
  }
  const x = a as JsonObject;
  const y = b as JsonObject;
  const kx = Object.keys(x);
  return kx.length === Object.keys(y).length && kx.every((k) => k in y && equal(x[k], y[k]));
}

function walk(a: JsonValue, b: JsonValue, path: string, member: string, out: SnapshotDiff): void {
  if (equal(a, b)) return;
  const oa = asObject(a);
  const ob = asObject(b);
  if (oa && ob) {
    for (const k of [...new Set([...Object.keys(oa), ...Object.keys(ob)])].sort()) {
      const p = memberPath(path, k);
      if (!(k in ob)) out.removed.push({ path: p, value: oa[k] });
      else if (!(k in oa)) out.added.push({ path: p, value: ob[k] });
      else walk(oa[k], ob[k], p, k, out);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const ka = keysOf(a, member);
    const kb = keysOf(b, member);
    if (ka && kb) {
      const ia = new Map(ka.map((k, i) => [k, a[i]]));
      const ib = new Map(kb.map((k, i) => [k, b[i]]));
      for (const [k, v] of ia) if (!ib.has(k)) out.removed.push({ path: `${path}[${k}]`, value: v });
      for (const [k, v] of ib) if (!ia.has(k)) out.added.push({ path: `${path}[${k}]`, value: v });
      for (const [k, v] of ia) if (ib.has(k)) walk(v, ib.get(k)!, `${path}[${k}]`, "", out);
      return;
    }
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const p = `${path}[${i}]`;
      if (i >= b.length) out.removed.push({ path: p, value: a[i] });
      else if (i >= a.length) out.added.push({ path: p, value: b[i] });
      else walk(a[i], b[i], p, "", out);
    }
    return;
  }
  out.modified.push({ path, from: a, to: b });
}

function setChange(before: string[], after: string[]): SetChange | undefined {
  const added = after.filter((x) => !before.includes(x));
  const removed = before.filter((x) => !after.includes(x));
  return added.length || removed.length ? { added, removed } : undefined;
}

/**
 * What changed from snapshot `a` (older) to `b` (newer), both raw RDAP JSON.
 * Identical canonical forms give empty lists and an empty summary.
 */
export function diffSnapshots(a: unknown, b: unknown): SnapshotDiff {
  const out: SnapshotDiff = { added: [], removed: [], modified: [], summary: {} };
  walk(canonicalize(a), canonicalize(b), "$", "", out);

  const s = out.summary;
  const rarA = registrarOf(a);
  const rarB = registrarOf(b);
  if (registrarChanged(rarA, rarB)) s.registrar = { from: rarA, to: rarB };
  const rantA = registrantOf(a);
  const rantB = registrantOf(b);
  if (registrantChanged(rantA, rantB)) s.registrant = { from: rantA, to: rantB };
  const ns = setChange(nameserverNames(a), nameserverNames(b));
  if (ns) s.nameservers = ns;
  const st = setChange(statusValues(a), statusValues(b));
  if (st) s.status = st;
  const expA = expirationDate(a);
  const expB = expirationDate(b);
  if (expA !== expB) s.expiration = { from: expA, to: expB };
  return out;
}
