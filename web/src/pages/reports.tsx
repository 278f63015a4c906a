/**
 * Reports: the weekly security audit reports and their PDFs (a provisional grade says
 * which categories it could not assess), a preview of the week so far, where each
 * report's mail is (a failed copy says why), and, for administrators, the addresses
 * mailed the report beside the members.
 */
import { isMissingEndpoint } from "../api";
import { get, put } from "../api";
import { useSession } from "../session";
import { Form, TextArea, useForm } from "../ui/form";
import { useResource, useTableState } from "../ui/resource";
import { DataTable, localPage } from "../ui/table";
import { Time } from "../ui/time";
import { Badge, ErrorBox, NotAvailable, PageHeader, Section } from "../ui/widgets";
import { gradeClass, gradeLabel, unassessed, type ReportMail } from "./overview/grade";

/** The PDF of the current week to date, rendered on request and not stored. */
export const PREVIEW_URL = "/api/reports/preview/download";

export function ReportsPage() {
  const session = useSession();
  const r = useResource(() => get("/api/reports", { params: { query: { limit: 54 } } }), []);
  const [state, setState] = useTableState({ sortBy: "period_end", sortOrder: "desc", pageSize: 10 });
  const reports = r.data?.data;
  return (
    <div>
      <PageHeader title="Weekly reports">
        <a class="action" href={PREVIEW_URL} download data-testid="preview-report">
          Preview this week's report
        </a>
      </PageHeader>
      <Section title="Security audit reports">
        <p class="muted">
          One report per week: the score, the grade, every finding with evidence and control references. Up to a year is kept. The preview is the week so far
          (Monday 00:00 UTC until now), audited the same way, marked "Preview" on every page and not stored.
        </p>
        {r.error && isMissingEndpoint(r.error) ? (
          <NotAvailable what="Reports" />
        ) : (
          <DataTable
            caption="Weekly reports"
            state={state}
            onState={setState}
            total={reports?.length}
            rows={reports ? localPage(reports, state) : undefined}
            loading={r.loading}
            error={r.error}
            rowKey={(x) => x.id}
            empty={<p>No report yet: the first weekly report is generated at the end of the first full week.</p>}
            columns={[
              { label: "Week", sort: "period_end", render: (x) => <><Time iso={x.period_start} date /> – <Time iso={x.period_end} date /></> },
              { label: "Score", sort: "overall_score", render: (x) => (x.graded === false ? <span class="muted">{x.overall_score} provisional</span> : x.overall_score), class: "num" },
              {
                label: "Grade",
                sort: "grade",
                render: (x) => (
                  <>
                    <Badge value={null} tone={gradeClass(x.grade, x.provisional) === "provisional" ? "neutral" : gradeClass(x.grade, x.provisional)} label={gradeLabel(x)} />
                    {x.provisional && <span class="small"> {x.graded === false ? "" : "provisional: "}{unassessed(x.category_status)}</span>}
                  </>
                ),
              },
              { label: "Generated", sort: "generated_at", render: (x) => <Time iso={x.generated_at} /> },
              { label: "Mail", render: (x) => (x.mail ? <MailStatus mail={x.mail} /> : "—") },
              {
                label: "PDF",
                render: (x) => (
                  <a href={`/api/reports/${x.id}/download`} download={x.pdf_filename} aria-label={`Download PDF of the week ending ${new Date(x.period_end).toLocaleDateString()}`}>
                    Download PDF
                  </a>
                ),
              },
            ]}
          />
        )}
      </Section>
      {session.can("admin:manage_users") && <RecipientsSection />}
    </div>
  );
}

/** The report's mail in a few words; the failed and waiting copies with their cause. */
function MailStatus({ mail }: { mail: ReportMail }) {
  if (mail.recipients === 0) return <span class="muted">no recipient</span>;
  const waiting = mail.deliveries.filter((d) => d.status === "pending" || d.status === "failed");
  return (
    <div data-testid="report-mail">
      <span>
        {mail.sent} of {mail.recipients} sent
      </span>
      {waiting.length > 0 && (
        <ul class="small">
          {waiting.map((d) => (
            <li>
              <Badge value={null} tone={d.status === "failed" ? "bad" : "warn"} label={d.status === "failed" ? "failed" : "retrying"} /> {d.to}: {d.error ?? "not sent yet"}
              {d.status === "pending" && d.next_attempt_at && (
                <>
                  {" "}
                  (attempt {d.attempts + 1} at <Time iso={d.next_attempt_at} />)
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

const RECIPIENTS_URL = "/api/reports/recipients" as const;

/** The addresses an administrator adds to the weekly report's mail (members choose for themselves). */
function RecipientsSection() {
  const r = useResource(() => get(RECIPIENTS_URL), []);
  return (
    <Section title="Report recipients">
      <p class="muted">
        Each weekly report is mailed with its PDF attached to every member who has the weekly report switched on in their profile, and to the addresses
        below (a team mailbox, an auditor). An address on both gets one mail.
      </p>
      {r.error && !r.data ? (
        <ErrorBox error={r.error} />
      ) : r.data ? (
        // Drawn once the saved list is known: a form filled from an answer that arrives after the user started typing would replace what they typed.
        <RecipientsForm saved={r.data.emails} />
      ) : (
        <div class="loading-bar" role="progressbar" aria-label="Loading the report recipients" />
      )}
    </Section>
  );
}

function RecipientsForm({ saved }: { saved: string[] }) {
  const form = useForm({ emails: saved.join("\n") });
  return (
    <Form
      form={form}
      label="Report recipients"
      submitLabel="Save recipients"
      onSubmit={async () => {
        await form.submit(async (v) => {
          const { emails } = await put(RECIPIENTS_URL, { body: { emails: v.emails.split(/[\s,;]+/).filter(Boolean) } });
          // The service's form of the list (lower-cased, without duplicates).
          form.setAll({ emails: emails.join("\n") });
        });
      }}
    >
      <TextArea form={form} name="emails" label="Addresses" hint="One plain address per line (soc@example.com), at most 50." rows={4} mono />
    </Form>
  );
}
