/**
 * The one error shape of the API (ADDENDUM 1):
 *   {"success": false, "error": {"code", "message", "details"?}}
 * Code throws `ApiError`; app.ts turns it (and anything else) into that body.
 */
import type { ZodError } from "zod";

export interface ErrorDetail {
  path: string;
  message: string;
}

export type ErrorCode =
  | "validation_error"
  | "invitation_invalid"
  | "typosquat_ineligible"
  | "unauthorized"
  | "token_expired"
  | "forbidden"
  | "quota_exceeded"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "rate_limited"
  | "internal_error"
  | (string & {});

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers (e.g. Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
  }

  body() {
    return {
      success: false as const,
      error: { code: this.code, message: this.message, ...(this.details?.length ? { details: this.details } : {}) },
    };
  }
}

export const badRequest = (message: string, details?: ErrorDetail[], code: ErrorCode = "validation_error") =>
  new ApiError(400, code, message, details);
export const unauthorized = (message = "Missing or invalid bearer token", code: ErrorCode = "unauthorized") =>
  new ApiError(401, code, message);
export const forbidden = (message = "The token lacks the required permission") => new ApiError(403, "forbidden", message);
export const quotaExceeded = (message: string) => new ApiError(403, "quota_exceeded", message);
export const notFound = (what = "Resource") => new ApiError(404, "not_found", `${what} not found`);
export const conflict = (message: string, details?: ErrorDetail[]) => new ApiError(409, "conflict", message, details);

/** Converts zod issues into ADDENDUM 1 `details`: one `{path, message}` per field. */
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
