/**
 * The module's JSON columns (record set values, parsed SPF / DMARC policies, history
 * analysis) read back. A value that does not parse counts as absent (null) rather than
 * failing the read: the next resolution writes it again.
 */
export function parseStoredJson<T>(text: string | null): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}
