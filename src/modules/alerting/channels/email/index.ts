/**
 * Email: SMTP via cloudflare:sockets to a list of recipients, text and an HTML part
 * (every value HTML-escaped). The channel may carry its own SMTP server (sealed, checked
 * like any destination, connected to by the address the policy judged), else the
 * service's SMTP_URL, else the outbox (the development mailbox). Header values never
 * carry a control character: the mailer encodes the subject (RFC 2047) and folds
 * control characters away (src/platform/mail-header.ts).
 */
import { z } from "@hono/zod-openapi";
import { classifyFailure } from "../../../../platform/collection";
import { assertUrlAllowed, checkUrl, egressPolicy } from "../../../../platform/egress";
import { enqueueMail, parseSmtpUrl, smtpTransport } from "../../../../platform/mailer";
import { defineProvider, invalidSetting, secretSetting, setting, type SendResult } from "../provider";
import { bodyOf, titleOf } from "../render";
import { alertHtml } from "./html";

const SMTP_SCHEMES = ["smtp:", "smtps:"] as const;

/**
 * An email recipient: a plain address and nothing else (it becomes SMTP's RCPT TO and
 * a To: header, so a control character, a line break or a bidi control must never
 * reach it). zod's address syntax is strict ASCII.
 */
export const recipient = z.string().trim().max(254).email();

/** A plain email address, nothing around it (what the request schema accepts). */
export const isRecipient = (r: string) => recipient.safeParse(r).success && r === r.trim();

export const email = defineProvider({
  kind: "email",
  label: "Email",
  description: "Mails each alert (text and HTML) to a list of recipients.",
  settings: z.object({
    recipients: setting(z.array(recipient).min(1, "at least one recipient").max(50), {
      title: "Recipients",
      description: "Plain email addresses (name@example.com), at most 50.",
      placeholder: "soc@example.com",
    }),
    smtp_url: secretSetting(z.string().max(2000), {
      title: "SMTP server",
      description: "This channel's own SMTP server, smtp://user:pass@host:587 or smtps://...; without it the service's SMTP_URL is used.",
      shownAs: "hidden",
      placeholder: "smtp://user:pass@mail.example.com:587",
    }).optional(),
  }),
  async check(v, { config }) {
    if (v.smtp_url === undefined) return;
    try {
      parseSmtpUrl(v.smtp_url);
    } catch {
      throw invalidSetting("smtp_url", "must be smtp://user:pass@host:port or smtps://...");
    }
    await assertUrlAllowed(egressPolicy(config), "smtp_url", v.smtp_url, SMTP_SCHEMES);
  },
  // Which server mails, not the server's URL (it carries credentials).
  shown: (v) => ({ recipients: v.recipients, smtp: v.smtp_url ? "channel" : "service" }),
  async send(alert, v, ctx): Promise<SendResult> {
    // Checked again before RCPT TO: a row saved before addresses were validated strictly
    // must not put a line break or a control character into the SMTP dialogue.
    if (!v.recipients.every(isRecipient)) return { ok: false, retryable: false, failure: "misconfigured", errorClass: "internal", error: "a recipient is not a plain email address" };
    const message = { organizationId: ctx.organizationId, subject: `[Trust-Plane] ${titleOf(alert)}`, body: `${bodyOf(alert)}\n\n${alert.url}`, html: alertHtml(alert), kind: "alert" };
    let target: { host: string; port?: number } = { host: "the service's SMTP server" };
    try {
      if (v.smtp_url) {
        const verdict = await checkUrl(egressPolicy(ctx.config), v.smtp_url, SMTP_SCHEMES);
        if (!verdict.allowed) return { ok: false, retryable: false, failure: "blocked", errorClass: "blocked", error: `email delivery: destination refused by the egress policy: ${verdict.reason}` };
        target = { host: verdict.host, port: verdict.port };
        const transport = smtpTransport(ctx.config, { ...parseSmtpUrl(v.smtp_url), host: verdict.host.replace(/^\[|\]$/g, ""), port: verdict.port });
        for (const to of v.recipients) await transport.send({ ...message, to });
        return { ok: true, retryable: false };
      }
      if (!ctx.config.smtpUrl) {
        // No SMTP anywhere: the outbox is the mailbox (development).
        for (const to of v.recipients) await enqueueMail(ctx.db, ctx.config, { ...message, to }, ctx.now).run();
        return { ok: true, retryable: false };
      }
      const transport = smtpTransport(ctx.config);
      for (const to of v.recipients) await transport.send({ ...message, to });
      return { ok: true, retryable: false };
    } catch (err) {
      const f = classifyFailure(err, { ...target, what: "email delivery" });
      return { ok: false, retryable: true, failure: f.class === "timeout" ? "timeout" : "unreachable", errorClass: f.class, error: f.message };
    }
  },
});
