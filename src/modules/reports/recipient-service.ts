/**
 * Who is mailed the weekly report (docs/modules/reports.md): the active members whose
 * weekly-report flag is on, and the addresses an administrator added (this file's
 * endpoints); an address on both lists is mailed once.
 */
import { asc, eq } from "drizzle-orm";
import { users } from "../../db/schema/platform";
import { reportRecipients } from "../../db/schema/reports";
import type { Tenant } from "../../platform/tenant";

/** Why an address receives the weekly report (the mail's last lines say so, and how to stop it). */
export type RecipientWhy = "member" | "added";

/** Addresses an administrator may add (beside the members whose flag is on). */
export const MAX_REPORT_RECIPIENTS = 50;

/** The addresses an administrator added, lower-case, in the order added. */
export async function listReportRecipients(t: Tenant) {
  const rows = await t.db.select({ email: reportRecipients.email }).from(reportRecipients).where(t.where(reportRecipients)).orderBy(asc(reportRecipients.id)).all();
  return { emails: rows.map((r) => r.email) };
}

/** Replaces the added addresses at once (one D1 batch: nothing half-saved); duplicates count once. */
export async function setReportRecipients(t: Tenant, emails: string[], now: Date) {
  const unique = [...new Set(emails.map((e) => e.toLowerCase()))];
  await t.db.batch([
    t.delete(reportRecipients),
    ...(unique.length ? [t.insert(reportRecipients, unique.map((email) => ({ email, createdAt: now.toISOString() })))] : []),
  ] as [ReturnType<Tenant["delete"]>, ...ReturnType<Tenant["insert"]>[]]);
  return listReportRecipients(t);
}

/**
 * Who is mailed a report: active members whose weekly-report flag is on, then the
 * addresses an administrator added; an address on both lists is mailed once, as a member.
 */
export async function reportRecipientsOf(t: Tenant): Promise<{ email: string; why: RecipientWhy }[]> {
  const [members, added] = await Promise.all([
    t.db
      .select({ email: users.email })
      .from(users)
      .where(t.where(users, eq(users.status, "active"), eq(users.weeklyAuditReportEnabled, true)))
      .orderBy(users.id)
      .all(),
    listReportRecipients(t),
  ]);
  const seen = new Set(members.map((m) => m.email.toLowerCase()));
  return [
    ...members.map((m) => ({ email: m.email, why: "member" as const })),
    ...added.emails.filter((e) => !seen.has(e)).map((email) => ({ email, why: "added" as const })),
  ];
}
