/**
 * `defineRoute`: one declaration per endpoint that reads like a row of an
 * endpoint table: method, path, required permission, request/response schemas.
 * The same declaration enforces the permission, feeds the OpenAPI document
 * (security + `x-required-permission`), and records the audit entry of a
 * successful mutating call.
 */
import { createRoute, z, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import { auditInsert } from "./audit";
import { ApiError, forbidden, unauthorized } from "./errors";
import type { Permission } from "./permissions";

export type Access =
  /** No bearer needed. */
  | { public: true }
  /** Any valid bearer. */
  | { authenticated: true }
  /** A login session only, not an API token (a user's own sign-in settings: factors, sessions, password). */
  | { session: true }
  /** Every listed permission is required. */
  | { permission: Permission }
  /** Any one of the listed permissions suffices (the handler may narrow further). */
  | { anyOf: Permission[] };

export interface AuditSpec {
  /** e.g. `api_token.create`. */
  action: string;
  /** e.g. `api_token`. */
  targetType: string;
  /** Path parameter holding the target id; otherwise the response's `id`. */
  idParam?: string;
}

export const ErrorBody = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.string().openapi({ example: "validation_error" }),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .openapi("Error");

/**
 * The error answers every route shares, declared once as OpenAPI response components
 * (`#/components/responses/<name>`, registered by `registerErrorResponses`) that each
 * route references: the document states each of them once instead of once per route. A
 * route whose answer means something else (an agent's 401, a job's 404) declares its own.
 */
const SHARED_ERRORS = {
  ValidationError: "Validation error",
  RateLimited: "Rate limited (see Retry-After)",
  Unauthorized: "Missing, invalid, revoked or expired token (`unauthorized`, `token_expired`)",
  Forbidden: "Token lacks the required permission (`forbidden`), or the session must enroll a second factor first (`mfa_enrollment_required`)",
  NotFound: "Unknown id, or an id of another organization",
  PayloadTooLarge: "Request body over 1 MiB (`payload_too_large`)",
  UnsupportedMediaType: "Request body is not JSON (`unsupported_media_type`)",
};
const shared = (name: keyof typeof SHARED_ERRORS) => ({ $ref: `#/components/responses/${name}` });

/** Declares the error body and the shared error responses in the app's OpenAPI document (once, beside the security scheme). */
export function registerErrorResponses(registry: OpenAPIHono["openAPIRegistry"]) {
  registry.register("Error", ErrorBody);
  for (const [name, description] of Object.entries(SHARED_ERRORS)) {
    registry.registerComponent("responses", name, { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });
  }
}

function describeAccess(access: Access): string {
  if ("public" in access) return "No authentication.";
  if ("authenticated" in access) return "Any valid bearer token.";
  if ("session" in access) return "A login session (`tps_`, or the console's cookie); API tokens are refused.";
  if ("permission" in access) return `Requires \`${access.permission}\`.`;
  return `Requires one of ${access.anyOf.map((p) => `\`${p}\``).join(", ")}.`;
}

export const MFA_ENROLLMENT_REQUIRED_MESSAGE =
  "Your organization requires a second factor: set up an authenticator app or a passkey (POST /api/auth/mfa/totp, POST /api/auth/mfa/passkeys/options) before anything else";

function guard(access: Access, duringMfaEnrollment: boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!("public" in access)) {
      const principal = c.get("principal");
      if (!principal) throw c.get("authFailure") ?? unauthorized();
      if (principal.mfaEnrollmentRequired && !duringMfaEnrollment) throw new ApiError("mfa_enrollment_required", MFA_ENROLLMENT_REQUIRED_MESSAGE);
      if ("session" in access && principal.kind !== "session") {
        throw forbidden("This operation needs a login session; API tokens cannot change sign-in settings");
      }
      const ok =
        "authenticated" in access ||
        "session" in access ||
        ("permission" in access && principal.permissions.has(access.permission)) ||
        ("anyOf" in access && access.anyOf.some((p) => principal.permissions.has(p)));
      if (!ok) throw forbidden(`This operation requires ${describeAccess(access).replace(/^Requires /, "").replace(/\.$/, "")}`);
    }
    await next();
  };
}

function auditAfter(spec: AuditSpec): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.res.status >= 300) return;
    const principal = c.get("principal");
    const note = c.get("audit");
    const organizationId = note?.organizationId ?? principal?.organizationId;
    if (organizationId === undefined) return;
    let targetId: string | number | null | undefined = note?.targetId;
    if (targetId === undefined && spec.idParam) targetId = c.req.param(spec.idParam);
    if (targetId === undefined && c.res.headers.get("content-type")?.includes("json")) {
      const body = (await c.res.clone().json().catch(() => null)) as { id?: unknown } | null;
      if (body && (typeof body.id === "number" || typeof body.id === "string")) targetId = body.id;
    }
    await auditInsert(c.get("db"), {
      organizationId,
      userId: note?.userId !== undefined ? note.userId : (principal?.userId ?? null),
      tokenId: principal?.tokenId ?? null,
      action: note?.action ?? spec.action,
      targetType: note?.targetType ?? spec.targetType,
      targetId: targetId === undefined || targetId === null ? null : String(targetId),
      clientIp: c.get("clientIp"),
      at: c.get("now"),
    }).run();
  };
}

type Declared = Omit<RouteConfig, "middleware" | "security"> & {
  access: Access;
  audit?: AuditSpec;
  /** Also answers a session that must enroll a second factor first (the enrollment routes, me, logout). */
  duringMfaEnrollment?: boolean;
};

export function defineRoute<const R extends Declared>(declared: R) {
  const { access, audit, duringMfaEnrollment = false, ...route } = declared;
  const isPublic = "public" in access;
  const permissionNote = describeAccess(access);
  const errors: Record<string, ReturnType<typeof shared>> = { 400: shared("ValidationError"), 429: shared("RateLimited") };
  if (!isPublic) {
    errors[401] = shared("Unauthorized");
    errors[403] = shared("Forbidden");
  }
  if (route.path.includes("{")) errors[404] = shared("NotFound");
  if (route.request?.body) {
    errors[413] = shared("PayloadTooLarge");
    errors[415] = shared("UnsupportedMediaType");
  }
  const middleware: MiddlewareHandler<AppEnv>[] = [guard(access, duringMfaEnrollment)];
  if (audit) middleware.push(auditAfter(audit));
  return createRoute({
    ...route,
    ...(duringMfaEnrollment ? { "x-during-mfa-enrollment": true } : {}),
    description: [route.description, permissionNote].filter(Boolean).join("\n\n"),
    security: isPublic ? [] : [{ bearerAuth: [] }],
    "x-required-permission":
      "permission" in access ? access.permission : "anyOf" in access ? access.anyOf : isPublic ? "none" : "session" in access ? "session" : "authenticated",
    responses: { ...errors, ...route.responses },
    middleware,
  } as Omit<R, "access" | "audit"> & { middleware: MiddlewareHandler<AppEnv>[] });
}

/** `{description, content: application/json schema}` for a success response. */
export function json<T extends z.ZodType>(schema: T, description = "OK") {
  return { description, content: { "application/json": { schema } } };
}

/** A required JSON request body. */
export function body<T extends z.ZodType>(schema: T) {
  return { content: { "application/json": { schema } }, required: true };
}
