/**
 * Overview: the live security score and grade (provisional when a category could not
 * be assessed), the five category scores with what each rests on (category-scores.tsx),
 * the findings with their evidence (findings.tsx), the score over the stored weekly
 * reports (trend.tsx), and the CT matches that are new since the last visit (the last 7
 * days on a first visit), said with whether the CT logs could be read (whats-new.tsx).
 */
import { get, isMissingEndpoint } from "../../api";
import { useSession } from "../../session";
import { useResource } from "../../ui/resource";
import { Time } from "../../ui/time";
import { ErrorBox, NotAvailable, PageHeader, Section } from "../../ui/widgets";
import { CategoryScores } from "./category-scores";
import { Findings } from "./findings";
import { gradeClass, unassessed } from "./grade";
import { Trend } from "./trend";
import { WhatsNew } from "./whats-new";

export { REPORTS_QUERY, REPORTS_URL } from "./trend";

export const OVERVIEW_URL = "/api/dashboard/security-overview" as const;

export function OverviewPage() {
  const session = useSession();
  const r = useResource(() => get(OVERVIEW_URL), []);
  const o = r.data?.data;
  return (
    <div>
      <PageHeader title="Security overview">
        {o && (
          <span class="muted">
            Computed <Time iso={o.generated_at} />
          </span>
        )}
      </PageHeader>
      {r.error && isMissingEndpoint(r.error) ? (
        <NotAvailable what="The security overview" />
      ) : (
        <ErrorBox error={r.error} />
      )}
      {r.loading && !o && <div class="loading-bar" role="progressbar" aria-label="Computing the security overview" />}
      {o && (
        <div class="overview-grid">
          <section class="card score-card" aria-labelledby="score-h">
            <h2 id="score-h">Score</h2>
            <div class="score">
              {/* Not graded: the score is drawn small and muted, and no letter stands beside it. */}
              <span class={`score-value${o.graded ? "" : " ungraded"}`} data-testid="overall-score" aria-label={o.graded ? undefined : `Provisional score ${o.overall_score}`}>
                {o.overall_score}
              </span>
              <span class="score-max">/ 100{o.graded ? "" : " provisional"}</span>
              {o.graded ? (
                <span class={`grade ${gradeClass(o.grade, o.provisional)}`} data-testid="grade" aria-label={`Grade ${o.grade}${o.provisional ? ", provisional" : ""}`}>
                  {o.grade}
                </span>
              ) : (
                <span class="grade provisional ungraded" data-testid="grade" aria-label="Not graded">
                  Not graded
                </span>
              )}
            </div>
            {o.provisional && (
              <p class="provisional-note" data-testid="provisional">
                <strong>{o.graded ? "Provisional" : "Not graded"}:</strong> {unassessed(o.category_status)}.{" "}
                {o.graded
                  ? "The score counts what could not be looked at as clean."
                  : "No grade while a category could not be looked at at all: the provisional score counts it as clean."}
              </p>
            )}
            <p class="muted">Weighted: DNS 30 %, CT log 20 %, certificates 20 %, RDAP 15 %, coverage 15 %.</p>
          </section>
          <section class="card" aria-labelledby="cat-h">
            <h2 id="cat-h">Category scores</h2>
            <CategoryScores o={o} />
          </section>
        </div>
      )}
      {o && session.can("ct-log:view_monitoring") && <WhatsNew now={o.generated_at} ct={o.category_status.ct} />}
      {o && (
        <Section title="Findings">
          <Findings findings={o.findings ?? []} />
        </Section>
      )}
      <Section title="Score trend">
        <Trend />
      </Section>
    </div>
  );
}
