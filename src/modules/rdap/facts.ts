/**
 * Facts about a registration that alerts and the weekly audit reason about:
 * who the registrar is, who the registrant is, nameservers, status, expiry; and
 * whether they changed between two snapshots.
 *
 * Registrant data is often withheld: thin registries (.com) never send it,
 * ICANN-profile registries send a registrant entity with empty or
 * "REDACTED FOR PRIVACY" values, some send only the organization. A withheld
 * value is "unknown", not "empty", so it never compares as a change: a change
 * is reported only when the same attribute is disclosed on both sides and
 * differs. Absent -> absent, absent -> disclosed and disclosed -> absent are not
 * registrant changes (the raw diff still shows them).
 */
import {
  canonicalInstant,
  entityWithRole,
  eventDate,
  isJsonObject,
  nameserverNames,
  publicId,
  statusValues,
  vcardText,
} from "./rdap-json";

export interface RegistrarIdentity {
  /** Registry handle of the registrar entity (at Verisign: the IANA id again). */
  handle: string | null;
  /** vCard fn. */
  name: string | null;
  /** publicIds "IANA Registrar ID". */
  iana_id: string | null;
}

export interface RegistrantIdentity {
  handle: string | null;
  /** vCard fn. */
  name: string | null;
  /** vCard org. */
  organization: string | null;
}

/**
 * Placeholder values registries put where data is withheld. Matched against
 * whole values (after trimming), except "redacted", which is distinctive enough
 * to match anywhere ("REDACTED FOR PRIVACY", "Redacted | EU Data Subject").
 */
const WITHHELD_PATTERNS: RegExp[] = [
  /\bredacted\b/i,
  /^(data )?protected$/i,
  /^not (disclosed|available|provided|applicable)\b/i,
  /^(withheld|private|hidden|masked|n\/?a|none|null|unknown|-+|\.+)$/i,
  /statutory masking/i,
  /^gdpr masked$/i,
];

/** True for an empty or placeholder value that stands for withheld data. */
export function isWithheldValue(value: string | null | undefined): boolean {
  if (value === null || value === undefined) return true;
  const v = value.trim();
  return v === "" || WITHHELD_PATTERNS.some((p) => p.test(v));
}

function disclosed(value: string | null): string | null {
  return isWithheldValue(value) ? null : value!.trim();
}

/** The registrar entity's identity, or null when the response names no registrar. */
export function registrarOf(rdapJson: unknown): RegistrarIdentity | null {
  const e = entityWithRole(rdapJson, "registrar");
  if (!e) return null;
  const id: RegistrarIdentity = {
    handle: disclosed(typeof e.handle === "string" ? e.handle : null),
    name: disclosed(vcardText(e, "fn")),
    iana_id: disclosed(publicId(e, "IANA Registrar ID")),
  };
  return id.handle || id.name || id.iana_id ? id : null;
}

/**
 * The registrant's disclosed identity, or null when absent or entirely withheld
 * (both mean "unknown" for change detection).
 */
export function registrantOf(rdapJson: unknown): RegistrantIdentity | null {
  const e = entityWithRole(rdapJson, "registrant");
  if (!e) return null;
  const id: RegistrantIdentity = {
    handle: disclosed(typeof e.handle === "string" ? e.handle : null),
    name: disclosed(vcardText(e, "fn")),
    organization: disclosed(vcardText(e, "org")),
  };
  return id.handle || id.name || id.organization ? id : null;
}

/** Case, spacing and punctuation do not make another company ("MarkMonitor, Inc." = "MarkMonitor Inc."). */
function sameName(a: string, b: string): boolean {
  const norm = (s: string) =>
    s
      .normalize("NFKC")
      .toLowerCase()
      .replace(/[.,;:"'()]/g, " ")
      .replace(/\s+/g, " ")
      .trim();
  return norm(a) === norm(b);
}

/**
 * Compares the strongest attribute disclosed on both sides, in order; a weaker
 * attribute is not consulted when a stronger one is comparable (a registrar
 * keeping its IANA id but rewording its name is the same registrar).
 */
function differ<T>(a: T | null, b: T | null, order: { key: keyof T; exact: boolean }[]): boolean {
  if (!a || !b) return false;
  for (const { key, exact } of order) {
    const x = a[key] as unknown as string | null;
    const y = b[key] as unknown as string | null;
    if (x === null || y === null) continue;
    return exact ? x.toLowerCase() !== y.toLowerCase() : !sameName(x, y);
  }
  return false;
}

/** Registrar changed: by IANA id, else handle, else name, whichever both sides disclose first. */
export function registrarChanged(previous: RegistrarIdentity | null, current: RegistrarIdentity | null): boolean {
  return differ(previous, current, [
    { key: "iana_id", exact: true },
    { key: "handle", exact: true },
    { key: "name", exact: false },
  ]);
}

/**
 * Registrant changed: by organization, else name, else handle. The organization
 * is the owner; a new contact handle for the same organization (FIR issues one
 * per update) is not an ownership change.
 */
export function registrantChanged(previous: RegistrantIdentity | null, current: RegistrantIdentity | null): boolean {
  return differ(previous, current, [
    { key: "organization", exact: false },
    { key: "name", exact: false },
    { key: "handle", exact: true },
  ]);
}

/** The "registration" event as a canonical ISO instant, or null (the lookalike lifecycle reads it). */
export function registrationDate(rdapJson: unknown): string | null {
  const d = eventDate(rdapJson, "registration");
  return d === null ? null : canonicalInstant(d);
}

/** The "expiration" event (not the ICANN "registrar expiration") as a canonical ISO instant, or null. */
export function expirationDate(rdapJson: unknown): string | null {
  const d = eventDate(rdapJson, "expiration");
  return d === null ? null : canonicalInstant(d);
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export interface RdapFacts {
  registrar_changed: boolean;
  registrant_changed: boolean;
  nameservers_changed: boolean;
  status_changed: boolean;
  /** Current expiry (ISO 8601 UTC) or null when the registry publishes none (e.g. .no). */
  expiration_date: string | null;
  previous_expiration_date: string | null;
}

/**
 * Facts for one check. `previous` null (first snapshot) reports no changes.
 * Inputs are raw RDAP JSON (stored snapshots); malformed input yields "unknown"
 * (nulls, no change), never an exception.
 */
export function deriveFacts(previous: unknown, current: unknown): RdapFacts {
  const hasPrevious = isJsonObject(previous);
  return {
    registrar_changed: hasPrevious && registrarChanged(registrarOf(previous), registrarOf(current)),
    registrant_changed: hasPrevious && registrantChanged(registrantOf(previous), registrantOf(current)),
    nameservers_changed: hasPrevious && !sameSet(nameserverNames(previous), nameserverNames(current)),
    status_changed: hasPrevious && !sameSet(statusValues(previous), statusValues(current)),
    expiration_date: expirationDate(current),
    previous_expiration_date: hasPrevious ? expirationDate(previous) : null,
  };
}
