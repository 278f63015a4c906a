/**
 * RFC 9083 JSON: the shapes we read from an RDAP domain response, and tolerant
 * accessors over them.
 *
 * Registries differ a lot (thin .com answers carry only the registrar, ccTLDs use
 * vendor members such as `fred_nsset` or `secureDns`, dates come with `.0Z`,
 * microseconds or `+03:00`), so nothing here trusts a member to be present or to
 * have the documented type: every accessor takes `unknown` and degrades to
 * null / [] instead of throwing.
 */

/** A JSON value as parsed by JSON.parse. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** RFC 9083 §4.5 event. */
export interface RdapEvent {
  eventAction: string;
  eventDate: string;
  eventActor?: string;
}

/** RFC 9083 §5.1 entity (only the members this module reads are typed). */
export interface RdapEntity {
  objectClassName?: "entity";
  handle?: string;
  roles?: string[];
  vcardArray?: ["vcard", JsonValue[][]];
  publicIds?: { type: string; identifier: string }[];
  entities?: RdapEntity[];
  events?: RdapEvent[];
  [member: string]: unknown;
}

/** RFC 9083 §5.2 nameserver. */
export interface RdapNameserver {
  objectClassName?: "nameserver";
  ldhName?: string;
  unicodeName?: string;
  ipAddresses?: { v4?: string[]; v6?: string[] };
  [member: string]: unknown;
}

/** RFC 9083 §5.3 domain: what a registry or registrar returns for /domain/<name>. */
export interface RdapDomain {
  objectClassName: "domain";
  ldhName?: string;
  unicodeName?: string;
  handle?: string;
  status?: string[];
  nameservers?: RdapNameserver[];
  entities?: RdapEntity[];
  events?: RdapEvent[];
  port43?: string;
  [member: string]: unknown;
}

/** The event RFC 9083 §10.2.3 / the ICANN profile use for "when this answer was generated". */
export const LAST_RDAP_UPDATE_EVENT = "last update of RDAP database";

export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** True for an RFC 9083 domain object (objectClassName "domain", §5.3). */
export function isRdapDomain(v: unknown): v is RdapDomain {
  return isJsonObject(v) && v.objectClassName === "domain";
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function asString(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/** Top-level entities of a response (not the nested abuse contacts of the registrar). */
export function entitiesOf(domain: unknown): Record<string, unknown>[] {
  return isJsonObject(domain) ? asArray(domain.entities).filter(isJsonObject) : [];
}

/** Roles of an entity, lowercased (`["sponsor","registrar"]` at AFNIC). */
export function rolesOf(entity: unknown): string[] {
  if (!isJsonObject(entity)) return [];
  return asArray(entity.roles).filter((r): r is string => typeof r === "string").map((r) => r.toLowerCase());
}

/** The first top-level entity carrying `role`, or null. */
export function entityWithRole(domain: unknown, role: string): Record<string, unknown> | null {
  return entitiesOf(domain).find((e) => rolesOf(e).includes(role)) ?? null;
}

/**
 * The text value of the first vCard property `name` (jCard, RFC 7095:
 * `["vcard", [[name, params, type, value], ...]]`). Structured values (arrays)
 * are joined with spaces; missing or non-text values give null.
 */
export function vcardText(entity: unknown, name: string): string | null {
  if (!isJsonObject(entity)) return null;
  const card = entity.vcardArray;
  if (!Array.isArray(card) || card[0] !== "vcard") return null;
  for (const prop of asArray(card[1])) {
    if (!Array.isArray(prop) || typeof prop[0] !== "string" || prop[0].toLowerCase() !== name) continue;
    const value = prop[3];
    if (typeof value === "string") return value;
    if (Array.isArray(value)) return value.filter((x) => typeof x === "string").join(" ");
    return null;
  }
  return null;
}

/** The value of the first publicId of the given type (case-insensitive), e.g. "IANA Registrar ID". */
export function publicId(entity: unknown, type: string): string | null {
  if (!isJsonObject(entity)) return null;
  for (const id of asArray(entity.publicIds)) {
    if (isJsonObject(id) && typeof id.type === "string" && id.type.toLowerCase() === type.toLowerCase()) {
      const v = id.identifier;
      if (typeof v === "string") return v;
      if (typeof v === "number") return String(v);
    }
  }
  return null;
}

/** Events of an object (domain, entity or nameserver) that have a string action and date. */
export function eventsOf(obj: unknown): RdapEvent[] {
  if (!isJsonObject(obj)) return [];
  const out: RdapEvent[] = [];
  for (const e of asArray(obj.events)) {
    if (!isJsonObject(e)) continue;
    const action = asString(e.eventAction);
    const date = asString(e.eventDate);
    if (action !== null && date !== null) out.push({ eventAction: action, eventDate: date });
  }
  return out;
}

/** The date of the first event with this action (lowercase comparison), or null. */
export function eventDate(obj: unknown, action: string): string | null {
  return eventsOf(obj).find((e) => e.eventAction.toLowerCase() === action)?.eventDate ?? null;
}

/** Nameserver host names, lowercased, without trailing dot, deduplicated and sorted. */
export function nameserverNames(domain: unknown): string[] {
  if (!isJsonObject(domain)) return [];
  const names = new Set<string>();
  for (const ns of asArray(domain.nameservers)) {
    const n = isJsonObject(ns) ? asString(ns.ldhName) ?? asString(ns.unicodeName) : null;
    if (n) names.add(n.toLowerCase().replace(/\.$/, ""));
  }
  return [...names].sort();
}

/** EPP/RDAP status values (RFC 8056 wording, e.g. "client transfer prohibited"), lowercased and sorted. */
export function statusValues(domainOrObject: unknown): string[] {
  if (!isJsonObject(domainOrObject)) return [];
  const set = new Set<string>();
  for (const s of asArray(domainOrObject.status)) if (typeof s === "string") set.add(s.trim().toLowerCase());
  return [...set].sort();
}

/**
 * An RFC 3339 timestamp in one canonical spelling: UTC, `Z`, milliseconds only
 * when not zero. "2003-10-10T01:55:12.0Z", "2003-10-10T01:55:12Z" and
 * "2003-10-10T04:55:12+03:00" are the same instant and give the same string.
 * Unparseable input is returned unchanged (it is still compared, just not normalized).
 */
export function canonicalInstant(value: string): string {
  // A date-time without offset is read as UTC (not the host's zone) so Node and workerd agree.
  const zoned = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value) ? value + "Z" : value;
  const ms = Date.parse(zoned);
  if (Number.isNaN(ms)) return value;
  return new Date(ms).toISOString().replace(".000Z", "Z");
}
