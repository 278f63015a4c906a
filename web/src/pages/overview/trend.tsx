/** The overview's score trend: the overall score of each stored weekly report. */
import { get, isMissingEndpoint } from "../../api";
import { LineChart } from "../../ui/charts";
import { useResource } from "../../ui/resource";
import { ErrorBox, NotAvailable } from "../../ui/widgets";
import { gradeText } from "./grade";

/** The stored reports the trend reads (main.tsx prefetches the same request). */
export const REPORTS_URL = "/api/reports" as const;
export const REPORTS_QUERY = { limit: 54 };

export function Trend() {
  const r = useResource(() => get(REPORTS_URL, { params: { query: REPORTS_QUERY } }), []);
  if (r.error && isMissingEndpoint(r.error)) return <NotAvailable what="The weekly report history" />;
  const reports = [...(r.data?.data ?? [])].sort((a, b) => a.period_end.localeCompare(b.period_end));
  return (
    <>
      <ErrorBox error={r.error} />
      {r.loading && !r.data && <div class="loading-bar" role="progressbar" aria-label="Loading the score trend" />}
      {r.data && reports.length === 0 && <p class="empty">
          No weekly report yet: the first one is generated at the end of the first week. <a href="/reports">Reports</a> previews this week's report so far.
        </p>}
      {reports.length > 0 && (
        <LineChart
          title="Overall score per weekly report"
          valueLabel="Score"
          data={reports.map((rep) => ({
            label: new Date(rep.period_end).toLocaleDateString(undefined, { month: "short", day: "numeric" }),
            value: rep.overall_score,
            title: `Week ending ${new Date(rep.period_end).toLocaleDateString()}: ${rep.overall_score}${rep.graded === false ? " provisional" : ""} (${gradeText(rep)})`,
          }))}
        />
      )}
    </>
  );
}
