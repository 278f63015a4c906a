import { z } from "@hono/zod-openapi";
import { TIERS } from "../../platform/quotas";
import { limitOffsetQuery, pathId } from "../../platform/paging";

export const RoleRequest = z.object({
  module_name: z.string().openapi({ example: "rdap" }),
  role_name: z.string().openapi({ example: "Editor" }),
});

export const User = z
  .object({
    id: z.number().int(),
    email: z.string(),
    status: z.enum(["active", "disabled"]),
    is_signup_user: z.boolean(),
    weekly_audit_report_enabled: z.boolean(),
    created_at: z.string(),
    permissions: z.array(z.object({ module: z.string(), role: z.string() })),
    mfa_enabled: z.boolean().openapi({ description: "Has a second factor (authenticator app or passkey)" }),
    sso_only: z.boolean().openapi({ description: "Created by single sign-on: has no password" }),
  })
  .openapi("User");
export const UserList = z.object({ users: z.array(User) }).openapi("UserList");

export const RolesResponse = z
  .object({
    modules: z.array(
      z.object({
        module: z.string(),
        roles: z.array(z.object({ name: z.string(), description: z.string(), permissions: z.array(z.string()) })),
      }),
    ),
  })
  .openapi("Roles");

export const InviteRequest = z
  .object({
    email: z.string().trim().max(254).email(),
    roles: z.array(RoleRequest).max(20).optional(),
    weekly_audit_report_enabled: z.boolean().optional(),
  })
  .openapi("InviteRequest");
export const InviteResponse = z.object({ id: z.number().int(), message: z.string(), expires_at: z.string() });
export const Invitation = z
  .object({
    id: z.number().int(),
    email: z.string(),
    roles: z.array(RoleRequest),
    weekly_audit_report_enabled: z.boolean(),
    status: z.enum(["pending", "expired"]),
    sent_at: z.string(),
    expires_at: z.string(),
    created_at: z.string(),
  })
  .openapi("Invitation");
export const InvitationList = z.object({ invitations: z.array(Invitation) }).openapi("InvitationList");
export const ResendResponse = z.object({ message: z.string(), expires_at: z.string() });

export const SetRolesRequest = z.object({ roles: z.array(RoleRequest).max(20) }).openapi("SetRolesRequest");
export const SetStatusRequest = z.object({ status: z.enum(["active", "disabled"]) }).openapi("SetStatusRequest");
export const Message = z.object({ message: z.string() });

const Quotas = z.record(z.string(), z.number().int());
export const Subscription = z
  .object({ tier: z.enum(TIERS), limits: Quotas, usage: Quotas })
  .openapi("Subscription");
export const SetTierRequest = z.object({ tier: z.enum(TIERS) }).openapi("SetTierRequest");
export const SetTierResponse = Subscription.extend({ message: z.string() });

export const AuditLogQuery = limitOffsetQuery({ defaultLimit: 50, maxLimit: 100 });
export const AuditLogList = z
  .object({
    audit_logs: z.array(
      z.object({
        id: z.number().int(),
        user_id: z.number().int().nullable(),
        user_email: z.string().nullable(),
        token_id: z.number().int().nullable(),
        action: z.string(),
        target_type: z.string().nullable(),
        target_id: z.string().nullable(),
        client_ip: z.string().nullable(),
        created_at: z.string(),
      }),
    ),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .openapi("AuditLogList");

export const OutboxQuery = limitOffsetQuery({ defaultLimit: 20, maxLimit: 100 });
export const OutboxList = z
  .object({
    messages: z.array(
      z.object({
        id: z.number().int(),
        to: z.string(),
        subject: z.string(),
        body: z.string(),
        kind: z.string(),
        status: z.string(),
        attempts: z.number().int(),
        last_error: z.string().nullable(),
        created_at: z.string(),
        sent_at: z.string().nullable(),
        attachments: z
          .array(z.object({ filename: z.string(), content_type: z.string(), size: z.number().int() }))
          .openapi({ description: "Files attached (e.g. the weekly report PDF), by name, type and size in bytes" }),
      }),
    ),
  })
  .openapi("MailOutbox");

export const UserIdParam = z.object({ user_id: pathId("user_id") });
export const InvitationIdParam = z.object({ invitation_id: pathId("invitation_id") });
