/**
 * Platform tables: organizations, users, sessions, API tokens, invitations, the
 * mail outbox, the audit log and scheduled-job bookkeeping.
 *
 * Timestamps are ISO 8601 UTC strings (TEXT): they sort lexicographically, read
 * well in `wrangler d1 execute`, and are what the API returns. Every tenant row
 * carries `organization_id`; queries go through src/platform/tenant.ts helpers.
 */
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { id, organizationId, createdAt } from "./columns";
import { organizations } from "./organizations";


export { organizations } from "./organizations";

/** What produces an attachment's bytes at delivery: a registered kind and its key (e.g. a report). */
export interface AttachmentSource {
  kind: string;
  key: string;
}

/** A file attached to an outgoing mail (the weekly report's PDF). */
export interface MailAttachment {
  filename: string;
  content_type: string;
  /** Bytes of the file (before base64). */
  size: number;
  /**
   * base64; "" once the mail has been delivered (like the body, it is not kept), and ""
   * when `source` renders the bytes at delivery (src/platform/mailer.ts).
   */
  content: string;
  source?: AttachmentSource;
}

/** A module role held by a user, e.g. `{module: "rdap", role: "Editor"}`. */
export interface RoleAssignment {
  module: string;
  role: string;
}

export const users = sqliteTable(
  "users",
  {
    id: id(),
    organizationId: organizationId(),
    /** Lowercased; unique across the service because login is by email alone. */
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    passwordSalt: text("password_salt").notNull(),
    passwordIterations: integer("password_iterations").notNull(),
    status: text("status", { enum: ["active", "disabled", "removed"] }).notNull().default("active"),
    isSignupUser: integer("is_signup_user", { mode: "boolean" }).notNull().default(false),
    /** Module roles as JSON; replaced wholesale by PUT /api/admin/users/{id}. */
    roles: text("roles", { mode: "json" }).$type<RoleAssignment[]>().notNull().default(sql`'[]'`),
    weeklyAuditReportEnabled: integer("weekly_audit_report_enabled", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
    removedAt: text("removed_at"),
  },
  (t) => [uniqueIndex("users_email_unique").on(t.email), index("users_org_idx").on(t.organizationId)],
);

export const sessions = sqliteTable(
  "sessions",
  {
    id: id(),
    organizationId: organizationId(),
    userId: integer("user_id").notNull().references(() => users.id),
    tokenHash: text("token_hash").notNull(),
    expiresAt: text("expires_at").notNull(),
    createdAt: createdAt(),
    /** Refreshed at most every LAST_USED_RESOLUTION of a session (src/platform/auth.ts), never per request. */
    lastUsedAt: text("last_used_at"),
    /** The client address and user agent of the sign-in, as the sessions page shows them. */
    clientIp: text("client_ip"),
    userAgent: text("user_agent"),
    /** How the session was signed in: password, password+totp, password+passkey, password+recovery_code, sso, signup, invitation. */
    signInMethod: text("sign_in_method").notNull().default("password"),
    /**
     * The organization requires a second factor and the user has none: the session may
     * only enroll one (src/platform/route.ts lets such a session reach only the routes
     * that say so). Cleared once a factor is enrolled.
     */
    mfaEnrollmentRequired: integer("mfa_enrollment_required", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [
    uniqueIndex("sessions_token_hash_unique").on(t.tokenHash),
    index("sessions_expires_idx").on(t.expiresAt),
    index("sessions_user_idx").on(t.userId),
  ],
);

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: id(),
    organizationId: organizationId(),
    userId: integer("user_id").notNull().references(() => users.id),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull(),
    tokenPrefix: text("token_prefix").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    validityDays: integer("validity_days").notNull(),
    expiresAt: text("expires_at").notNull(),
    lastUsedAt: text("last_used_at"),
    createdAt: createdAt(),
    revokedAt: text("revoked_at"),
    /**
     * The API token that created this one (null when created by a login session): a
     * token never outlives its creator, also not by renewing itself (tokens/service.ts).
     * No foreign key: tokens are revoked, never deleted, and a missing creator counts as revoked.
     */
    createdByTokenId: integer("created_by_token_id"),
  },
  (t) => [
    uniqueIndex("api_tokens_token_hash_unique").on(t.tokenHash),
    index("api_tokens_org_user_idx").on(t.organizationId, t.userId),
  ],
);

export const invitations = sqliteTable(
  "invitations",
  {
    id: id(),
    organizationId: organizationId(),
    email: text("email").notNull(),
    roles: text("roles", { mode: "json" }).$type<RoleAssignment[]>().notNull(),
    weeklyAuditReportEnabled: integer("weekly_audit_report_enabled", { mode: "boolean" }).notNull().default(false),
    tokenHash: text("token_hash").notNull(),
    invitedByUserId: integer("invited_by_user_id").references(() => users.id),
    sentAt: text("sent_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    acceptedAt: text("accepted_at"),
    acceptedUserId: integer("accepted_user_id").references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("invitations_token_hash_unique").on(t.tokenHash),
    index("invitations_org_idx").on(t.organizationId),
    // One open invitation per address and organization, decided by the database so
    // parallel invitations cannot both succeed.
    uniqueIndex("invitations_org_email_open_unique").on(t.organizationId, t.email).where(sql`accepted_at IS NULL`),
  ],
);

/**
 * Every outgoing mail is written here first (in the same batch as the change that
 * caused it). With no SMTP configured this table *is* the mailbox (status
 * `stored`, readable in development); with SMTP it is a queue with retries.
 */
export const mailOutbox = sqliteTable(
  "mail_outbox",
  {
    id: id(),
    organizationId: integer("organization_id").references(() => organizations.id),
    toAddress: text("to_address").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    kind: text("kind").notNull(),
    status: text("status", { enum: ["stored", "pending", "sent", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: text("next_attempt_at"),
    lastError: text("last_error"),
    createdAt: createdAt(),
    sentAt: text("sent_at"),
    /** Files attached (base64 content); null when none. Content is dropped once delivered. */
    attachments: text("attachments", { mode: "json" }).$type<MailAttachment[]>(),
  },
  (t) => [index("mail_outbox_org_idx").on(t.organizationId), index("mail_outbox_status_idx").on(t.status, t.nextAttemptAt)],
);

export const auditLogs = sqliteTable(
  "audit_logs",
  {
    id: id(),
    organizationId: organizationId(),
    userId: integer("user_id"),
    tokenId: integer("token_id"),
    action: text("action").notNull(),
    targetType: text("target_type"),
    targetId: text("target_id"),
    clientIp: text("client_ip"),
    createdAt: createdAt(),
  },
  (t) => [index("audit_logs_org_created_idx").on(t.organizationId, t.createdAt)],
);

/** One row per registered scheduled job: when it last ran and how it went. */
export const jobRuns = sqliteTable("job_runs", {
  name: text("name").primaryKey(),
  lastStartedAt: text("last_started_at"),
  lastFinishedAt: text("last_finished_at"),
  lastStatus: text("last_status"),
  lastError: text("last_error"),
  runCount: integer("run_count").notNull().default(0),
});

/**
 * Never holds a row. A create that must stay within a tier quota ends its D1 batch
 * with `INSERT INTO quota_guard ... WHERE <count after the insert> > <limit>`: over
 * the limit, the CHECK fails and the whole batch (one transaction) rolls back. The
 * count and the insert are thus one atomic step however many requests race
 * (src/platform/tenant.ts, `quotaGuard`).
 */
export const quotaGuard = sqliteTable("quota_guard", { resource: text("resource").notNull() }, () => [check("quota_exceeded", sql`0`)]);
