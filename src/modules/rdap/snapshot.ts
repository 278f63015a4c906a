/**
 * RDAP snapshots: the canonical form of a domain response and its content hash.
 *
 * The monitor stores the full JSON as received, but decides "changed or not" on
 * the canonical form, so that an unchanged registration never produces a change
 * event. Registries regenerate the answer on every query: a timestamp of the
 * query, boilerplate notices, links in arbitrary order. The canonical form keeps
 * every fact about the registration and drops or normalizes only those parts.
 *
 * IGNORED (dropped from the canonical form), at every depth:
 *  - the event "last update of RDAP database": when the registry's RDAP database
 *    was refreshed, i.e. the query time, not a change of the domain (Verisign,
 *    FIR and others move it on every answer; microsoft.click also puts one on
 *    the registrant entity).
 *  - `notices`: terms of service and help text about the service, not the domain.
 *  - `links`: navigation (self, related, about, terms). Their `value` repeats the
 *    query URL in whatever case it was asked ("HHGAMES.COM" vs "hhgames.com"),
 *    and a registrar change is already visible in the registrar entity.
 *  - `rdapConformance`: which profile versions the server implements; a registry
 *    upgrading its software would otherwise "change" every domain it serves.
 *  - members whose value is an empty array: `"status": []` and no status member
 *    say the same; also what remains of `events` after the volatile event went.
 *
 * NORMALIZED (kept, but spelled one way):
 *  - object keys sorted; arrays whose order carries no meaning are sorted:
 *    `status` and `roles` (trimmed, lowercased, deduplicated), `nameservers`
 *    (by ldhName), `entities` (by roles, handle, then content), `events` (by
 *    action, date), vCard properties, `publicIds`, `secureDNS` `dsData`/`keyData`,
 *    `redacted`, `variants`, `ipAddresses` v4/v6. Other arrays (description
 *    lines, vCard structured values such as `adr`) keep their order.
 *  - `ldhName` lowercased without trailing dot (Verisign answers in upper case).
 *  - `eventDate` as one UTC instant spelling (canonicalInstant): ".0Z",
 *    microseconds and "+03:00" offsets are formatting, not changes.
 *
 * KEPT as is: everything else, including `port43`, `remarks`, `secureDNS`,
 * `handle`s and vendor members (`fred_nsset`), because they describe the
 * registration and change only when it does.
 */
import { sha256Hex } from "../../platform/secrets";
import { canonicalInstant, LAST_RDAP_UPDATE_EVENT, type JsonObject, type JsonValue } from "./rdap-json";

/** Members dropped from the canonical form at any depth (see module comment). */
export const IGNORED_MEMBERS: ReadonlySet<string> = new Set(["notices", "links", "rdapConformance"]);

/** Arrays of strings that are sets: sorted, deduplicated, lowercased. */
const STRING_SET_MEMBERS: ReadonlySet<string> = new Set(["status", "roles"]);
/** Arrays whose element order carries no meaning: sorted by canonical JSON. */
const UNORDERED_MEMBERS: ReadonlySet<string> = new Set([
  "publicIds",
  "dsData",
  "keyData",
  "redacted",
  "variants",
  "v4",
  "v6",
]);

/**
 * JSON text with object keys sorted at every depth and no whitespace: the byte
 * string that is hashed. Equal values give equal text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    // undefined / functions cannot appear in parsed JSON; map them to null for totality.
    return JSON.stringify(value ?? null) ?? "null";
  }
  if (Array.isArray(value)) return "[" + value.map(canonicalJson).join(",") + "]";
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonicalJson(obj[k])).join(",") + "}";
}

function byCanonicalJson(a: JsonValue, b: JsonValue): number {
  const x = canonicalJson(a);
  const y = canonicalJson(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function str(v: JsonValue | undefined): string {
  return typeof v === "string" ? v : "";
}

function asObject(v: JsonValue): JsonObject | null {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v : null;
}

/** Sort key of a canonical entity: roles, then handle, then the rest. */
function entitySortKey(e: JsonValue): string {
  const o = asObject(e);
  if (!o) return "\uffff" + canonicalJson(e);
  const roles = Array.isArray(o.roles) ? o.roles.join(",") : "";
  return roles + "\u0000" + str(o.handle) + "\u0000" + canonicalJson(o);
}

function canonicalEvents(list: JsonValue[]): JsonValue[] {
  return list
    .filter((e) => {
      const o = asObject(e);
      return !(o && typeof o.eventAction === "string" && o.eventAction.trim().toLowerCase() === LAST_RDAP_UPDATE_EVENT.toLowerCase());
    })
    .sort((a, b) => {
      const x = asObject(a);
      const y = asObject(b);
      return (
        compareStrings(str(x?.eventAction), str(y?.eventAction)) ||
        compareStrings(str(x?.eventDate), str(y?.eventDate)) ||
        byCanonicalJson(a, b)
      );
    });
}

function canonicalMember(key: string, value: JsonValue): JsonValue | undefined {
  if (key === "ldhName" && typeof value === "string") return value.trim().toLowerCase().replace(/\.$/, "");
  if (key === "eventDate" && typeof value === "string") return canonicalInstant(value);
  if (!Array.isArray(value)) return canonicalValue(value);

  if (STRING_SET_MEMBERS.has(key) && value.every((v) => typeof v === "string")) {
    return [...new Set((value as string[]).map((s) => s.trim().toLowerCase()))].sort();
  }
  const items = value.map(canonicalValue);
  switch (key) {
    case "events":
      return canonicalEvents(items);
    case "nameservers":
      return items.sort(
        (a, b) => compareStrings(str(asObject(a)?.ldhName), str(asObject(b)?.ldhName)) || byCanonicalJson(a, b),
      );
    case "entities":
      return items.sort((a, b) => compareStrings(entitySortKey(a), entitySortKey(b)));
    case "vcardArray":
      // jCard: ["vcard", [properties]]; property order is not meaningful (RFC 6350 §3.3).
      if (items[0] === "vcard" && Array.isArray(items[1])) return ["vcard", [...items[1]].sort(byCanonicalJson), ...items.slice(2)];
      return items;
    default:
      return UNORDERED_MEMBERS.has(key) ? items.sort(byCanonicalJson) : items;
  }
}

function canonicalValue(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(canonicalValue);
  const obj = asObject(value);
  if (!obj) return value;
  const out: JsonObject = {};
  for (const key of Object.keys(obj).sort()) {
    if (IGNORED_MEMBERS.has(key)) continue;
    const v = canonicalMember(key, obj[key]);
    if (v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    out[key] = v;
  }
  return out;
}

/**
 * The canonical form of an RDAP response (see the module comment for exactly
 * what is dropped and normalized). Pure; the input is not modified.
 */
export function canonicalize(rdapJson: unknown): JsonValue {
  // Round-trip through JSON so class instances, undefined members and the like
  // cannot make two equal answers look different.
  let plain: JsonValue;
  try {
    plain = JSON.parse(JSON.stringify(rdapJson ?? null)) as JsonValue;
  } catch {
    plain = null;
  }
  return canonicalValue(plain);
}

/** SHA-256 (hex) of the UTF-8 canonical JSON of the canonical form: the snapshot identity. */
export async function snapshotHash(rdapJson: unknown): Promise<string> {
  return sha256Hex(canonicalJson(canonicalize(rdapJson)));
}

/** SHA-256 (hex) of the exact stored text, to store each distinct body once. */
export function contentHash(text: string): Promise<string> {
  return sha256Hex(text);
}
