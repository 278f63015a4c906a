/** Email addresses as accounts know them: one spelling per address, and its domain. */

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The domain part (after the last `@`), lowercased; "" when there is none. */
export function emailDomain(email: string): string {
  const e = normalizeEmail(email);
  const at = e.lastIndexOf("@");
  return at < 0 ? "" : e.slice(at + 1);
}
