/**
 * Rule-list names and entries (docs/decisions.md#rule-lists).
 * Pure: the service calls these before any database write, so a batch that fails here
 * changes nothing.
 */
import type { ListType } from "../../db/schema";
import { normalizeDomain } from "../../platform/net/domain";
import { parseIpEntry } from "../../platform/net/ip";

export type EntryResult = { ok: true; value: string } | { ok: false; message: string };

/** Why one value of a batch is refused; `index` is its position in the request. */
export interface EntryError {
  index: number;
  value: string;
  message: string;
  /** `invalid` -> 400, `duplicate` (within the batch) -> 409 (docs/decisions.md#uniqueness). */
  kind: "invalid" | "duplicate";
}

export type EntriesResult = { values: string[]; errors?: undefined } | { errors: EntryError[]; values?: undefined };

export const LIST_NAME_PATTERN = /^[a-z0-9_-]{1,64}$/;

/** Returns null when the name is valid, otherwise the message for a 400. */
export function validateListName(name: unknown): string | null {
  if (typeof name !== "string") return "list name must be a string";
  if (LIST_NAME_PATTERN.test(name)) return null;
  if (name.length === 0 || name.length > 64) return "list name must be 1-64 characters long";
  return "list name may contain only lowercase letters, digits, underscore and hyphen";
}

/** Normalizes one entry to its stored form (entry rule 3). */
export function normalizeListEntry(listType: ListType, raw: unknown): EntryResult {
  if (typeof raw !== "string") return { ok: false, message: "entry must be a string" };
  if (listType === "ip") {
    const r = parseIpEntry(raw);
    return r.ok ? { ok: true, value: r.value } : r;
  }
  if (listType === "spki") return normalizeSpkiHash(raw);
  return normalizeDomain(raw);
}

/**
 * A key, as the SHA-256 of its SubjectPublicKeyInfo: 64 hex digits (colons and spaces
 * allowed, as `openssl x509 -pubkey | openssl pkey -pubin -outform der | sha256sum` and
 * certificate viewers print it) or the base64 form of HTTP public-key pins
 * (`pin-sha256="..."`, optionally prefixed `sha256/`). Stored as lowercase hex, the
 * form CT events and scans carry (`cert.spki_sha256`).
 */
export function normalizeSpkiHash(raw: string): EntryResult {
  const s = raw.trim();
  const hex = s.replace(/[:\s]/g, "");
  if (/^[0-9a-fA-F]{64}$/.test(hex)) return { ok: true, value: hex.toLowerCase() };
  const b64 = s.replace(/^sha256\//i, "");
  if (/^[A-Za-z0-9+/]{43}=$/.test(b64)) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    if (bytes.length === 32) return { ok: true, value: [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("") };
  }
  return { ok: false, message: "not a SHA-256 key hash: 64 hex digits or the 44-character base64 of a public-key pin" };
}

/**
 * Normalizes a batch as a group: every invalid value and every duplicate (after
 * normalization, so `10.0.0.1` and `10.0.0.1/32` collide) is reported; the batch is usable
 * only when there are no errors. Duplicates against entries already stored are the
 * service's check (it has the database).
 */
export function normalizeEntries(listType: ListType, raws: readonly unknown[]): EntriesResult {
  const errors: EntryError[] = [];
  const values: string[] = [];
  const firstIndexOf = new Map<string, number>();
  raws.forEach((raw, index) => {
    const r = normalizeListEntry(listType, raw);
    const shown = typeof raw === "string" ? raw : String(raw);
    if (!r.ok) {
      errors.push({ index, value: shown, message: r.message, kind: "invalid" });
      return;
    }
    const first = firstIndexOf.get(r.value);
    if (first !== undefined) {
      errors.push({
        index,
        value: shown,
        message: `duplicate of entry ${first} (both are ${r.value})`,
        kind: "duplicate",
      });
      return;
    }
    firstIndexOf.set(r.value, index);
    values.push(r.value);
  });
  return errors.length > 0 ? { errors } : { values };
}
