/** Second factors: a user's own (under /api/auth/mfa) and the organization's policy (under /api/admin). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { z } from "@hono/zod-openapi";
import { principalOf, type AppContext, type AppEnv } from "../../../platform/context";
import { body, defineRoute, json } from "../../../platform/route";
import * as s from "../schema";
import * as mfa from "./service";
import * as policy from "./policy";

const tags = ["Accounts"];
const enrollmentNote = "Answers also a session that must enroll a second factor first (the organization requires one).";
const changeNote = "Your other sessions end (they must sign in again).";

export const mfaStatusRoute = defineRoute({
  method: "get", path: "/api/auth/mfa", tags, summary: "Your second factors",
  description: enrollmentNote,
  access: { session: true }, duringMfaEnrollment: true,
  responses: { 200: json(s.MfaStatus) },
});
export const totpStartRoute = defineRoute({
  method: "post", path: "/api/auth/mfa/totp", tags, summary: "Start setting up an authenticator app (TOTP)",
  description: `Returns a new secret and its \`otpauth://\` URI (the console shows it as a QR code). It is not a factor until POST /api/auth/mfa/totp/verify proves the app has it; starting again replaces an unconfirmed secret. 409 when an app is set up already. ${enrollmentNote}`,
  access: { session: true }, duringMfaEnrollment: true,
  audit: { action: "mfa.totp.start", targetType: "user" },
  responses: { 201: json(s.TotpEnrollment, "Created") },
});
export const totpVerifyRoute = defineRoute({
  method: "post", path: "/api/auth/mfa/totp/verify", tags, summary: "Complete the app's setup with a code; returns ten recovery codes",
  description: `A code of the current 30-second step or one on either side. A wrong code: 400 naming \`code\`. The ten single-use recovery codes are shown this once. ${changeNote} ${enrollmentNote}`,
  access: { session: true }, duringMfaEnrollment: true,
  audit: { action: "mfa.totp.enable", targetType: "user" },
  request: { body: body(s.TotpCode) },
  responses: { 200: json(s.RecoveryCodes) },
});
export const totpRemoveRoute = defineRoute({
  method: "delete", path: "/api/auth/mfa/totp", tags, summary: "Remove the authenticator app",
  description: `Proven by a current code of the app (each code is accepted once) or by a recovery code. With no factor left, the recovery codes go too. 409 when the organization requires a second factor and this is your last one. ${changeNote}`,
  access: { session: true },
  audit: { action: "mfa.totp.remove", targetType: "user" },
  request: { body: body(s.TotpRemoval) },
  responses: { 200: json(s.MfaStatus) },
});
export const recoveryCodesRoute = defineRoute({
  method: "post", path: "/api/auth/mfa/recovery-codes", tags, summary: "New recovery codes (the old ones stop working)",
  access: { session: true },
  audit: { action: "mfa.recovery_codes.regenerate", targetType: "user" },
  responses: { 200: json(s.RecoveryCodes) },
});
export const passkeyOptionsRoute = defineRoute({
  method: "post", path: "/api/auth/mfa/passkeys/options", tags, summary: "Start registering a passkey: options for the browser",
  description: `Pass them to \`startRegistration()\` of @simplewebauthn/browser (or \`navigator.credentials.create()\`), then POST the answer to /api/auth/mfa/passkeys within 5 minutes. The relying party is this deployment: its id is the host of PUBLIC_BASE_URL. ${enrollmentNote}`,
  access: { session: true }, duringMfaEnrollment: true,
  responses: { 200: json(s.PasskeyRegistrationOptions) },
});
export const passkeyRegisterRoute = defineRoute({
  method: "post", path: "/api/auth/mfa/passkeys", tags, summary: "Register the passkey the browser created",
  description: `An answer to no open registration of yours, or one the library refuses (origin, RP id, challenge, signature): 400 naming \`response\`; nothing is saved. The account's first factor also returns its ten recovery codes. ${changeNote} ${enrollmentNote}`,
  access: { session: true }, duringMfaEnrollment: true,
  audit: { action: "mfa.passkey.add", targetType: "passkey" },
  request: { body: body(s.PasskeyRegistration) },
  responses: { 201: json(s.PasskeyRegistered, "Created") },
});
export const passkeyListRoute = defineRoute({
  method: "get", path: "/api/auth/mfa/passkeys", tags, summary: "Your passkeys",
  description: enrollmentNote,
  access: { session: true }, duringMfaEnrollment: true,
  responses: { 200: json(s.PasskeyList) },
});
export const passkeyRenameRoute = defineRoute({
  method: "patch", path: "/api/auth/mfa/passkeys/{passkey_id}", tags, summary: "Rename a passkey",
  access: { session: true },
  audit: { action: "mfa.passkey.rename", targetType: "passkey", idParam: "passkey_id" },
  request: { params: s.PasskeyIdParam, body: body(s.PasskeyRename) },
  responses: { 200: json(s.Passkey) },
});
export const passkeyRemoveRoute = defineRoute({
  method: "delete", path: "/api/auth/mfa/passkeys/{passkey_id}", tags, summary: "Remove a passkey",
  description: `409 when the organization requires a second factor and this is your last one. ${changeNote}`,
  access: { session: true },
  audit: { action: "mfa.passkey.remove", targetType: "passkey", idParam: "passkey_id" },
  request: { params: s.PasskeyIdParam },
  responses: { 200: json(s.MfaStatus) },
});

const adminTags = ["Administration"];
export const getPolicyRoute = defineRoute({
  method: "get", path: "/api/admin/security-policy", tags: adminTags, summary: "The organization's sign-in policy",
  access: { anyOf: ["admin:view_users", "admin:manage_users"] },
  responses: { 200: json(s.SecurityPolicyView) },
});
export const putPolicyRoute = defineRoute({
  method: "put", path: "/api/admin/security-policy", tags: adminTags, summary: "Require a second factor of every member",
  description:
    "Takes effect at once: members without a factor can do nothing but enroll one until they have (403 `mfa_enrollment_required` elsewhere), now and at each sign-in. Members signed in through the organization's SSO are left to their identity provider. API tokens are unaffected. 409 when you have no second factor yourself.",
  access: { permission: "admin:manage_users" },
  audit: { action: "security_policy.update", targetType: "organization" },
  request: { body: body(s.SecurityPolicy) },
  responses: { 200: json(s.SecurityPolicyView) },
});
export const resetMfaRoute = defineRoute({
  method: "delete", path: "/api/admin/users/{user_id}/mfa", tags: adminTags, summary: "Reset a member's second factors (a lost phone)",
  description: "Removes the member's authenticator app, passkeys and recovery codes, ends their sessions and tells them by email. 409 when they have none.",
  access: { permission: "admin:manage_users" },
  audit: { action: "user.mfa.reset", targetType: "user", idParam: "user_id" },
  request: { params: z.object({ user_id: z.coerce.number().int().positive().openapi({ param: { name: "user_id", in: "path" }, example: 1 }) }) },
  responses: { 200: json(s.MessageResponse) },
});

const ctx = (c: AppContext) => ({ db: c.get("db"), config: c.get("config"), principal: principalOf(c), now: c.get("now") });

export function registerMfaRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(mfaStatusRoute, async (c) => c.json(await mfa.factorsOfCaller(ctx(c)), 200));
  app.openapi(totpStartRoute, async (c) => {
    c.set("audit", { targetId: principalOf(c).userId });
    return c.json(await mfa.startTotp(ctx(c)), 201);
  });
  app.openapi(totpVerifyRoute, async (c) => {
    c.set("audit", { targetId: principalOf(c).userId });
    return c.json(await mfa.confirmTotp(ctx(c), c.req.valid("json").code), 200);
  });
  app.openapi(totpRemoveRoute, async (c) => {
    c.set("audit", { targetId: principalOf(c).userId });
    return c.json(await mfa.removeTotp(ctx(c), c.req.valid("json")), 200);
  });
  app.openapi(recoveryCodesRoute, async (c) => {
    c.set("audit", { targetId: principalOf(c).userId });
    return c.json(await mfa.regenerateRecoveryCodes(ctx(c)), 200);
  });
  app.openapi(passkeyOptionsRoute, async (c) => c.json(await mfa.passkeyRegistrationOptions(ctx(c)), 200));
  app.openapi(passkeyRegisterRoute, async (c) => {
    const input = c.req.valid("json");
    const result = await mfa.registerPasskey(ctx(c), { name: input.name, response: input.response as unknown as RegistrationResponseJSON });
    c.set("audit", { targetId: result.passkey.id });
    return c.json(result, 201);
  });
  app.openapi(passkeyListRoute, async (c) => c.json(await mfa.listPasskeys(ctx(c)), 200));
  app.openapi(passkeyRenameRoute, async (c) => c.json(await mfa.renamePasskey(ctx(c), c.req.valid("param").passkey_id, c.req.valid("json").name), 200));
  app.openapi(passkeyRemoveRoute, async (c) => c.json(await mfa.removePasskey(ctx(c), c.req.valid("param").passkey_id), 200));

  app.openapi(getPolicyRoute, async (c) => c.json(await policy.securityPolicy(c.get("db"), principalOf(c).organizationId), 200));
  app.openapi(putPolicyRoute, async (c) => {
    c.set("audit", { targetId: principalOf(c).organizationId });
    return c.json(await policy.setSecurityPolicy(c.get("db"), principalOf(c), c.req.valid("json")), 200);
  });
  app.openapi(resetMfaRoute, async (c) => c.json(await policy.resetMemberFactors(c.get("db"), c.get("config"), principalOf(c), c.req.valid("param").user_id, c.get("now")), 200));
}
