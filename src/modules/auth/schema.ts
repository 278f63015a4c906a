import { z } from "@hono/zod-openapi";
import { PASSWORD_MIN_LENGTH } from "../../platform/passwords";
import { safeText } from "../../platform/text";
import { SIGN_IN_METHODS } from "./sessions";

const email = z.string().trim().max(254).email().openapi({ example: "alice@example.com" });
const password = z.string().min(PASSWORD_MIN_LENGTH).max(1024).openapi({ example: "correct horse battery" });

export const SignupRequest = z
  .object({ organization_name: safeText(200).openapi({ example: "Example Corp" }), email, password })
  .openapi("SignupRequest");
export const SessionResponse = z
  .object({
    token: z.string().optional().openapi({ description: "The `tps_` session bearer; absent when it was set as the console's cookie (`X-TrustPlane-Console: 1`)" }),
    expires_at: z.string(),
    mfa_enrollment_required: z
      .boolean()
      .optional()
      .openapi({ description: "Present and true when the organization requires a second factor and this user has none: the session may only enroll one (403 `mfa_enrollment_required` elsewhere)" }),
  })
  .openapi("Session");
export const SignupResponse = SessionResponse.extend({
  organization_id: z.number().int(),
  user_id: z.number().int(),
}).openapi("SignupResponse");
export const LoginRequest = z.object({ email: z.string().trim().max(254), password: z.string().max(1024) }).openapi("LoginRequest");

export const SecondFactorMethod = z.enum(["totp", "webauthn", "recovery_code"]);
/** A WebAuthn options or response object, as @simplewebauthn/browser reads and writes it (JSON, base64url fields). */
const WebAuthnJson = (description: string) => z.record(z.string(), z.unknown()).openapi({ description });

export const MfaRequired = z
  .object({
    mfa_required: z.literal(true),
    mfa_token: z.string().openapi({ description: "`tpf_` token for POST /api/auth/login/mfa: this login only, 5 minutes, used once" }),
    methods: z.array(SecondFactorMethod).openapi({ description: "What completes the sign-in" }),
    expires_at: z.string(),
    webauthn: WebAuthnJson("PublicKeyCredentialRequestOptionsJSON for `navigator.credentials.get()` (when the user has passkeys)").optional(),
  })
  .openapi("MfaRequired");
export const LoginResponse = z.union([SessionResponse, MfaRequired]).openapi("LoginResponse", {
  description: "A session, or (for a user with a second factor) the token of the second step",
});
export const LoginMfaRequest = z
  .object({
    mfa_token: z.string().max(100),
    code: z.string().trim().max(10).optional().openapi({ description: "The authenticator app's 6-digit code", example: "123456" }),
    recovery_code: z.string().trim().max(40).optional().openapi({ description: "One of the recovery codes (used up)", example: "abcde-fghij" }),
    webauthn: WebAuthnJson("The passkey's AuthenticationResponseJSON (`startAuthentication()` of @simplewebauthn/browser)").optional(),
  })
  .refine((v) => [v.code, v.recovery_code, v.webauthn].filter((x) => x !== undefined).length === 1, {
    message: "Give exactly one of code, recovery_code and webauthn",
    path: ["code"],
  })
  .openapi("LoginMfaRequest");
export const LoginMfaResponse = SessionResponse.extend({
  recovery_codes_left: z.number().int().optional().openapi({ description: "After a recovery code: how many remain unused" }),
}).openapi("LoginMfaResponse");

export const PasswordChange = z
  .object({ current_password: z.string().max(1024), new_password: password })
  .openapi("PasswordChange");

export const SignInMethodSchema = z.enum(SIGN_IN_METHODS);
export const SessionInfo = z
  .object({
    id: z.number().int(),
    created_at: z.string(),
    last_used_at: z.string().openapi({ description: "Refreshed at most every 5 minutes" }),
    expires_at: z.string(),
    client_ip: z.string().nullable(),
    user_agent: z.string().nullable(),
    sign_in_method: SignInMethodSchema,
    current: z.boolean().openapi({ description: "The session making this request" }),
  })
  .openapi("SessionInfo");
export const SessionList = z.object({ sessions: z.array(SessionInfo) }).openapi("SessionList");
export const SessionsEnded = z.object({ ended: z.number().int() }).openapi("SessionsEnded");
export const SessionIdParam = z.object({ session_id: z.coerce.number().int().positive().openapi({ param: { name: "session_id", in: "path" }, example: 1 }) });

export const MfaStatus = z
  .object({
    mfa_enabled: z.boolean().openapi({ description: "At least one second factor (app or passkey)" }),
    totp_enabled: z.boolean(),
    passkeys: z.number().int(),
    recovery_codes_left: z.number().int(),
  })
  .openapi("MfaStatus");
export const TotpEnrollment = z
  .object({
    secret: z.string().openapi({ description: "Base32, for typing into the app by hand" }),
    otpauth_uri: z.string().openapi({ description: "`otpauth://totp/...` (shown as a QR code)" }),
    issuer: z.string(),
    account: z.string(),
  })
  .openapi("TotpEnrollment");
export const TotpCode = z.object({ code: z.string().trim().max(10).openapi({ example: "123456" }) }).openapi("TotpCode");
export const TotpRemoval = z
  .object({
    code: z.string().trim().max(10).optional().openapi({ description: "A current code of the app", example: "123456" }),
    recovery_code: z.string().trim().max(40).optional().openapi({ description: "Or one recovery code (used up)" }),
  })
  .refine((v) => (v.code === undefined) !== (v.recovery_code === undefined), { message: "Give the app's code or a recovery code", path: ["code"] })
  .openapi("TotpRemoval");
export const RecoveryCodes = z
  .object({ recovery_codes: z.array(z.string()).openapi({ description: "Ten single-use codes, shown this once (only their hashes are kept)" }) })
  .openapi("RecoveryCodes");

export const Passkey = z
  .object({
    id: z.number().int(),
    name: z.string(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    device_type: z.enum(["singleDevice", "multiDevice"]).openapi({ description: "multiDevice: a synced passkey" }),
    backed_up: z.boolean(),
  })
  .openapi("Passkey");
export const PasskeyList = z.object({ passkeys: z.array(Passkey) }).openapi("PasskeyList");
export const PasskeyRegistrationOptions = WebAuthnJson("PublicKeyCredentialCreationOptionsJSON for `startRegistration()` of @simplewebauthn/browser").openapi(
  "PasskeyRegistrationOptions",
);
export const PasskeyRegistration = z
  .object({
    name: safeText(100).openapi({ example: "Laptop" }),
    response: WebAuthnJson("The RegistrationResponseJSON `startRegistration()` returned"),
  })
  .openapi("PasskeyRegistration");
export const PasskeyRegistered = z
  .object({ passkey: Passkey, recovery_codes: z.array(z.string()).nullable().openapi({ description: "With the first factor of the account: its ten recovery codes, shown this once" }) })
  .openapi("PasskeyRegistered");
export const PasskeyRename = z.object({ name: safeText(100) }).openapi("PasskeyRename");
export const PasskeyIdParam = z.object({ passkey_id: z.coerce.number().int().positive().openapi({ param: { name: "passkey_id", in: "path" }, example: 1 }) });

export const SecurityPolicy = z
  .object({
    require_mfa: z.boolean().openapi({ description: "Every member must sign in with a second factor; members without one must enroll one before doing anything else" }),
  })
  .openapi("SecurityPolicy");
export const SecurityPolicyView = SecurityPolicy.extend({
  members_without_mfa: z.number().int().openapi({ description: "Active members with no second factor (SSO-only members included)" }),
}).openapi("SecurityPolicyView");
export const AcceptInvitationRequest = z
  .object({ token: z.string().max(200).openapi({ description: "The `tpi_` token from the invitation mail" }), password })
  .openapi("AcceptInvitationRequest");
export const AcceptInvitationResponse = SignupResponse.extend({ invitation_id: z.number().int() });
export const RoleRef = z.object({ module: z.string(), role: z.string() });
export const MeResponse = z
  .object({
    user: z.object({
      id: z.number().int(),
      email: z.string(),
      status: z.string(),
      is_signup_user: z.boolean(),
      created_at: z.string(),
      permissions: z.array(RoleRef),
      weekly_audit_report_enabled: z.boolean().openapi({ description: "Receives the weekly audit report by mail (PUT /api/auth/me/preferences)" }),
    }),
    organization: z.object({ id: z.number().int(), name: z.string(), tier: z.string(), created_at: z.string(), require_mfa: z.boolean() }),
    credential: z.enum(["session", "api_token"]),
    mfa: MfaStatus,
    mfa_enrollment_required: z.boolean().openapi({ description: "This session may only enroll a second factor (the organization requires one)" }),
    permissions: z.array(z.string()).openapi({ description: "Effective permissions (for an API token: its scopes)" }),
  })
  .openapi("Me");
export const MessageResponse = z.object({ message: z.string() }).openapi("Message");

export const Preferences = z
  .object({
    weekly_audit_report_enabled: z.boolean().openapi({ description: "Mail me the weekly security audit report (PDF attached)" }),
  })
  .openapi("Preferences");
export const PreferencesUpdate = Preferences.partial().strict().openapi("PreferencesUpdate");

const RoleRequest = z.object({ module_name: z.string(), role_name: z.string() });
const SsoDomain = z
  .object({
    domain: z.string(),
    verified: z.boolean().openapi({ description: "The TXT record proved it: sign-ins of this domain go to this organization" }),
    verified_at: z.string().nullable(),
    txt_record_name: z.string().openapi({ example: "_trust-plane-verification.corp.example" }),
    txt_record_value: z.string().openapi({ example: "trust-plane-domain-verification=3kq..." }),
    last_checked_at: z.string().nullable(),
    last_check_error: z.string().nullable().openapi({ description: "Why the last check did not verify it, in words" }),
  })
  .openapi("SsoDomain");
export const SsoConfig = z
  .object({
    issuer: z.string(),
    client_id: z.string(),
    client_secret_set: z.literal(true).openapi({ description: "The secret is sealed and never returned" }),
    email_domains: z.array(SsoDomain),
    default_roles: z.array(RoleRequest),
    enforce: z.boolean(),
    break_glass_user_id: z.number().int().nullable(),
    redirect_uri: z.string().openapi({ description: "Register this at the identity provider" }),
    discovered_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("SsoConfig");
export const SsoConfigInput = z
  .object({
    issuer: z.string().trim().url().max(500).openapi({ example: "https://login.corp.example/realms/main" }),
    client_id: z.string().trim().min(1).max(255).openapi({ example: "trust-plane" }),
    client_secret: z.string().min(1).max(1024).optional().openapi({ description: "Required the first time; left out, the saved one is kept" }),
    email_domains: z.array(z.string().max(253)).min(1).max(20).openapi({ example: ["corp.example"] }),
    default_roles: z.array(RoleRequest).max(20).default([]),
    enforce: z.boolean().default(false),
    break_glass_user_id: z.number().int().positive().nullable().optional().openapi({ description: "With `enforce`: the administrator who keeps a password (default: you)" }),
  })
  .openapi("SsoConfigInput");
export const SsoStartQuery = z.object({
  email: z.string().trim().max(254).openapi({ param: { name: "email", in: "query" }, example: "alice@corp.example" }),
  return_to: z.string().max(500).optional().openapi({ param: { name: "return_to", in: "query" }, description: "A console path to land on", example: "/ct" }),
});
export const SsoCallbackQuery = z.object({
  state: z.string().max(500).optional().openapi({ param: { name: "state", in: "query" } }),
  code: z.string().max(4000).optional().openapi({ param: { name: "code", in: "query" } }),
  error: z.string().max(200).optional().openapi({ param: { name: "error", in: "query" } }),
  error_description: z.string().max(2000).optional().openapi({ param: { name: "error_description", in: "query" } }),
});
