/**
 * The one error shape of the API (docs/decisions.md#errors-and-validation):
 *   {"success": false, "error": {"code", "message", "details"?}}
 * Code throws `ApiError`; app.ts turns it (and anything else) into that body.
 *
 * The set of codes is closed and each code has exactly one HTTP status, so a
 * handler names what went wrong and the status follows; a new code is added here.
 */
import type { ZodError } from "zod";

export interface ErrorDetail {
  path: string;
  message: string;
}

export const ERROR_STATUS = {
  validation_error: 400,
  invitation_invalid: 400,
  typosquat_ineligible: 400,
  unauthorized: 401,
  token_expired: 401,
  forbidden: 403,
  quota_exceeded: 403,
  /** A cookie-authenticated change without the console header (session-cookie.ts). */
  csrf_failed: 403,
  /** The organization requires a second factor and this session has none yet: enroll one first. */
  mfa_enrollment_required: 403,
  /** The account's organization signs its domain's members in through its identity provider. */
  sso_required: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  /** An upstream the service depends on (a resolver, a registry) failed. */
  upstream_error: 502,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers (e.g. Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = ERROR_STATUS[code];
  }

  body() {
    return {
      success: false as const,
      error: { code: this.code, message: this.message, ...(this.details?.length ? { details: this.details } : {}) },
    };
  }
}

export const badRequest = (message: string, details?: ErrorDetail[], code: "validation_error" | "invitation_invalid" | "typosquat_ineligible" = "validation_error") =>
  new ApiError(code, message, details);
/** A 400 naming one field: the common case of a value the schema accepted but the domain rules do not. */
export const invalidField = (path: string, message: string, summary = "Invalid request") => badRequest(summary, [{ path, message }]);
export const unauthorized = (message = "Missing or invalid bearer token", code: "unauthorized" | "token_expired" = "unauthorized") =>
  new ApiError(code, message);
export const forbidden = (message = "The token lacks the required permission") => new ApiError("forbidden", message);
export const quotaExceeded = (message: string) => new ApiError("quota_exceeded", message);
export const notFound = (what = "Resource") => new ApiError("not_found", `${what} not found`);
export const conflict = (message: string, details?: ErrorDetail[]) => new ApiError("conflict", message, details);

/** Converts zod issues into the error body's `details`: one `{path, message}` per field. */
export function zodDetails(error: ZodError, prefix?: string): ErrorDetail[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    return { path: [prefix, path].filter(Boolean).join("."), message: issue.message };
  });
}

export function validationError(error: ZodError, target?: string): ApiError {
  const where = target === "query" ? "query string" : target === "param" ? "path" : "request body";
  return badRequest(`Invalid ${where}`, zodDetails(error, target === "json" ? undefined : target));
}
