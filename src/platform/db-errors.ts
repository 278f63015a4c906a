/**
 * Recognising constraint violations, however they arrive: D1 reports them as
 * `D1_ERROR: UNIQUE constraint failed: ...`, drizzle wraps that in a "Failed query"
 * error whose `cause` holds it, and a batch error may nest once more. One reader of
 * the whole cause chain, used everywhere a constraint decides a response.
 */

/** Every message in the error's cause chain, joined. */
function messagesOf(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    if (e instanceof Error) {
      parts.push(e.message);
      e = (e as { cause?: unknown }).cause;
    } else {
      parts.push(String(e));
      break;
    }
  }
  return parts.join(" | ");
}

/** A UNIQUE (or PRIMARY KEY) constraint refused the write: the caller's 409. */
export function isUniqueViolation(err: unknown): boolean {
  return /UNIQUE constraint failed|PRIMARY KEY must be unique|SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)/.test(messagesOf(err));
}

/** The quota guard of a batch fired (see `quotaGuard` in tenant.ts): the caller's 403. */
export function isQuotaGuard(err: unknown): boolean {
  return /CHECK constraint failed: quota_exceeded/.test(messagesOf(err));
}

/**
 * A FOREIGN KEY constraint refused the write: the row it hangs from was deleted by a
 * concurrent request between our lookup and our write (a list deleted while an entry is
 * added). The parent is gone, so the caller's answer is the parent's 404.
 */
export function isForeignKeyViolation(err: unknown): boolean {
  return /FOREIGN KEY constraint failed|SQLITE_CONSTRAINT_FOREIGNKEY/.test(messagesOf(err));
}
