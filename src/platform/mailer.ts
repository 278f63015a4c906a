/**
 * The mailer: every message the service sends (invitations now; alert e-mails
 * use the same transport) goes through here.
 *
 * Outbox pattern: a message is first a row in `mail_outbox`, written in the same
 * D1 batch as the change that caused it, so an invitation never exists without
 * its mail (and vice versa). Then the transport delivers it:
 *  - local (default, no SMTP_URL): the outbox *is* the mailbox; status `stored`,
 *    readable with GET /api/admin/mail-outbox or `wrangler d1 execute`.
 *  - SMTP (SMTP_URL=smtp://user:pass@host:port, or smtps:// for implicit TLS):
 *    sent over `cloudflare:sockets` with worker-mailer; failures stay `pending`
 *    with exponential backoff and are retried by the `mail.deliver` job; after
 *    MAX_ATTEMPTS they are `failed`. Sent bodies are redacted (they may carry
 *    invitation links, which are secrets), and attachments keep only their name,
 *    type and size.
 *
 * An attachment is stored in the row (base64 `content`) or, when many messages carry
 * the same file, named by a `source` and produced when the message is sent: the weekly
 * report goes to every recipient of an organization, and its PDF (a few hundred KB) is
 * rendered from the stored report rather than copied into each row of one D1 batch. A
 * module registers the renderer of its source kind (registerAttachmentRenderer); a
 * delivery run renders each distinct source once.
 */
import { Buffer } from "node:buffer";
import { and, eq, inArray, lte } from "drizzle-orm";
import type { Db } from "../db/client";
import { mailOutbox, type AttachmentSource, type MailAttachment } from "../db/schema/platform";
import type { Config } from "../env";
import { encodeHeaderText, headerText } from "./mail-header";

export interface MailMessage {
  organizationId: number | null;
  to: string;
  subject: string;
  body: string;
  /** An HTML alternative of `body` (sent over SMTP; the outbox keeps the text). */
  html?: string;
  /** What the message is about, e.g. `invitation`, `alert`, `test`, `weekly_report`. */
  kind: string;
  attachments?: MailAttachment[];
}

/** Produces the bytes of a source for the message's organization (null for service mail); throws when it cannot. */
export type AttachmentRenderer = (db: Db, organizationId: number | null, key: string) => Promise<Uint8Array>;

const renderers = new Map<string, AttachmentRenderer>();

/** Registers the renderer of one source kind (once per kind, at module load). */
export function registerAttachmentRenderer(kind: string, render: AttachmentRenderer): void {
  const known = renderers.get(kind);
  if (known && known !== render) throw new Error(`attachment source ${kind} registered twice`);
  renderers.set(kind, render);
}

/** An attachment rendered at delivery from `source`; `size` is the rendered file's, known to the caller. */
export function renderedAttachment(filename: string, contentType: string, size: number, source: AttachmentSource): MailAttachment {
  return { filename, content_type: contentType, size, content: "", source };
}

/**
 * The attachments of one outbox row with their bytes: stored content as is, sources
 * rendered through `cache` (one rendering per source and organization per delivery run).
 */
async function withContent(db: Db, organizationId: number | null, attachments: MailAttachment[], cache: Map<string, Promise<string>>): Promise<MailAttachment[]> {
  return Promise.all(
    attachments.map(async (a) => {
      if (!a.source || a.content) return { filename: a.filename, content_type: a.content_type, size: a.size, content: a.content };
      const { kind, key } = a.source;
      const render = renderers.get(kind);
      if (!render) throw new Error(`no renderer for attachment source ${kind}`);
      const cacheKey = JSON.stringify([kind, key, organizationId]);
      let content = cache.get(cacheKey);
      if (!content) {
        content = render(db, organizationId, key).then((bytes) => Buffer.from(bytes).toString("base64"));
        cache.set(cacheKey, content);
      }
      return { filename: a.filename, content_type: a.content_type, size: a.size, content: await content };
    }),
  );
}

/** Sends one message; throws on failure. */
export interface MailTransport {
  readonly name: "local" | "smtp";
  send(message: MailMessage): Promise<void>;
}

export const MAX_ATTEMPTS = 6;

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  username?: string;
  password?: string;
}

export function parseSmtpUrl(url: string): SmtpSettings {
  const u = new URL(url);
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") throw new Error("SMTP_URL must be smtp:// or smtps://");
  const secure = u.protocol === "smtps:";
  return {
    host: u.hostname,
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
  };
}

function parseFrom(from: string): { name?: string; email: string } {
  const m = /^\s*(.*?)\s*<([^>]+)>\s*$/.exec(from);
  return m ? { name: m[1] || undefined, email: m[2] } : { email: from.trim() };
}

/** SMTP delivery; `settings` default to the service's SMTP_URL (a channel passes its own, host already vetted). */
export function smtpTransport(config: Config, settings: SmtpSettings = parseSmtpUrl(config.smtpUrl)): MailTransport {
  return {
    name: "smtp",
    async send(message) {
      // Imported lazily: cloudflare:sockets exists only in the Workers runtime.
      const { WorkerMailer } = await import("worker-mailer");
      const mailer = await WorkerMailer.connect({
        host: settings.host,
        port: settings.port,
        secure: settings.secure,
        startTls: !settings.secure,
        credentials: settings.username ? { username: settings.username, password: settings.password ?? "" } : undefined,
        authType: settings.username ? ["plain", "login"] : undefined,
        socketTimeoutMs: 10_000,
        responseTimeoutMs: 10_000,
      });
      try {
        await mailer.send({
          from: parseFrom(config.mailFrom),
          to: { email: message.to },
          // Never a raw line break or control character in a header (mail-header.ts).
          subject: encodeHeaderText(message.subject),
          text: message.body,
          html: message.html,
          attachments: message.attachments?.map((a) => ({ filename: a.filename, content: a.content, mimeType: a.content_type })),
        });
      } finally {
        await mailer.close().catch(() => undefined);
      }
    },
  };
}

export function transportFor(config: Config): MailTransport | null {
  return config.smtpUrl ? smtpTransport(config) : null;
}

/** The outbox row for a message; put it in the same batch as the change it belongs to. */
export function enqueueMail(db: Db, config: Config, message: MailMessage, now: Date) {
  return db
    .insert(mailOutbox)
    .values({
      organizationId: message.organizationId,
      toAddress: message.to,
      subject: headerText(message.subject),
      body: message.body,
      kind: message.kind,
      attachments: message.attachments?.length ? message.attachments : null,
      status: config.smtpUrl ? "pending" : "stored",
      nextAttemptAt: config.smtpUrl ? now.toISOString() : null,
      createdAt: now.toISOString(),
    })
    .returning({ id: mailOutbox.id });
}

export function backoffSeconds(attempt: number): number {
  return Math.min(3600, 30 * 2 ** (attempt - 1));
}

/** Delivers due pending messages (all, or the given ids) at the job's clock `now`. Returns counts. */
export async function deliverPending(
  db: Db,
  transport: MailTransport | null,
  now: Date,
  ids?: number[],
): Promise<{ sent: number; failed: number }> {
  if (!transport) return { sent: 0, failed: 0 };
  const due = await db
    .select()
    .from(mailOutbox)
    .where(
      and(
        eq(mailOutbox.status, "pending"),
        ids ? inArray(mailOutbox.id, ids) : lte(mailOutbox.nextAttemptAt, now.toISOString()),
      ),
    )
    .limit(50)
    .all();
  let sent = 0;
  let failed = 0;
  const rendered = new Map<string, Promise<string>>();
  for (const row of due) {
    const attempts = row.attempts + 1;
    try {
      const stored = row.attachments ?? [];
      const attachments = stored.length ? await withContent(db, row.organizationId, stored, rendered) : undefined;
      await transport.send({ organizationId: row.organizationId, to: row.toAddress, subject: row.subject, body: row.body, kind: row.kind, attachments });
      sent++;
      await db
        .update(mailOutbox)
        .set({
          status: "sent",
          attempts,
          sentAt: now.toISOString(),
          body: "(delivered; body redacted)",
          attachments: stored.length ? stored.map((a) => ({ ...a, content: "" })) : null,
          lastError: null,
        })
        .where(eq(mailOutbox.id, row.id))
        .run();
    } catch (err) {
      failed++;
      const giveUp = attempts >= MAX_ATTEMPTS;
      await db
        .update(mailOutbox)
        .set({
          status: giveUp ? "failed" : "pending",
          attempts,
          lastError: (err instanceof Error ? err.message : String(err)).slice(0, 500),
          nextAttemptAt: giveUp ? null : new Date(now.getTime() + backoffSeconds(attempts) * 1000).toISOString(),
        })
        .where(eq(mailOutbox.id, row.id))
        .run();
    }
  }
  return { sent, failed };
}
