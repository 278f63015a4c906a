/**
 * Reports: the weekly security audit reports and their PDFs (a provisional grade says
 * which categories it could not assess), and a preview of the week so far.
 */
import { get, isMissingEndpoint } from "../api";
import { useResource, useTableState } from "../ui/resource";
import { DataTable, localPage } from "../ui/table";
import { Time } from "../ui/time";
import { Badge, NotAvailable, PageHeader, Section } from "../ui/widgets";
import { gradeClass, gradeLabel, unassessed, type Report } from "./overview";

/** The PDF of the current week to date, rendered on request and not stored. */
export const PREVIEW_URL = "/api/reports/preview/download";

export function ReportsPage() {
  const r = useResource(() => get<{ success: boolean; data: Report[] }>("/api/reports", { limit: 54 }), []);
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
            rows={reports ? localPage(reports, state, (x, k) => (x as any)[k]) : undefined}
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
    </div>
  );
}
