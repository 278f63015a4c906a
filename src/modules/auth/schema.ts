import { z } from "@hono/zod-openapi";
import { PASSWORD_MIN_LENGTH } from "../../platform/passwords";
import { safeText } from "../../platform/text";

const email = z.string().trim().max(254).email().openapi({ example: "alice@example.com" });
const password = z.string().min(PASSWORD_MIN_LENGTH).max(1024).openapi({ example: "correct horse battery" });

export const SignupRequest = z
  .object({ organization_name: safeText(200).openapi({ example: "Example Corp" }), email, password })
  .openapi("SignupRequest");
export const SessionResponse = z
  .object({
    token: z.string().optional().openapi({ description: "The `tps_` session bearer; absent when it was set as the console's cookie (`X-TrustPlane-Console: 1`)" }),
    expires_at: z.string(),
  })
  .openapi("Session");
export const SignupResponse = SessionResponse.extend({
  organization_id: z.number().int(),
  user_id: z.number().int(),
}).openapi("SignupResponse");
export const LoginRequest = z.object({ email: z.string().trim().max(254), password: z.string().max(1024) }).openapi("LoginRequest");
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
    organization: z.object({ id: z.number().int(), name: z.string(), tier: z.string(), created_at: z.string() }),
    credential: z.enum(["session", "api_token"]),
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
