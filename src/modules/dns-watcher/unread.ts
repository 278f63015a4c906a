/**
 * A policy never read (its TXT record set never resolved, or it is not watched), in the
 * shape of a read one: every field null. The parsers' empty values (`allows_all: false`,
 * `pct: 100`, no mechanisms) describe a policy that was read and found empty; standing
 * for one never read they would state what nobody observed. The API, the CEL events and
 * what reads them take null as "not known" (a rule reading such a field does not match).
 */
export function unread<T extends object>(shape: T): { [K in keyof T]: null } {
  return Object.fromEntries(Object.keys(shape).map((k) => [k, null])) as { [K in keyof T]: null };
}
