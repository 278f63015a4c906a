/**
 * Overview: the live security score and grade (provisional when a category could not
 * be assessed), the five category scores with what each rests on, the
 * findings with their evidence, the score over the stored weekly reports, and the
 * CT matches that are new since the last visit (the last 7 days on a first visit), said
 * with whether the CT logs could be read.
 */
import { useEffect, useState } from "preact/hooks";
import { get, isMissingEndpoint, type ResponseOf, type Schemas } from "../api";
import { useSession } from "../session";
import { LineChart } from "../ui/charts";
import { useResource, useTableState } from "../ui/resource";
import { DataTable, localPage } from "../ui/table";
import { Time } from "../ui/time";
import { Badge, ErrorBox, NotAvailable, PageHeader, Section } from "../ui/widgets";

type Overview = Schemas["SecurityOverview"]["data"];
export type Finding = Schemas["Finding"];
export type CategoryStatus = Schemas["CategoryStatus"];
export type CategoryKey = keyof CategoryStatus;
export type Report = Schemas["Report"];
export type ReportMail = NonNullable<Report["mail"]>;

export const OVERVIEW_URL = "/api/dashboard/security-overview" as const;
export const REPORTS_URL = "/api/reports" as const;
export const REPORTS_QUERY = { limit: 54 };

export const CATEGORY_LABELS: Record<string, string> = {
  dns: "DNS",
  ct: "CT log",
  certificates: "Certificates",
  rdap: "RDAP",
  coverage: "Coverage",
};
const CATEGORIES: { key: CategoryKey; weight: number }[] = [
  { key: "dns", weight: 30 },
  { key: "ct", weight: 20 },
  { key: "certificates", weight: 20 },
  { key: "rdap", weight: 15 },
  { key: "coverage", weight: 15 },
];

/** Categories with assets that could not (fully) be assessed: what makes a grade provisional. */
export function unassessed(status: CategoryStatus | null | undefined): string {
  if (!status) return "";
  return CATEGORIES.filter((c) => status[c.key].status === "blind" || status[c.key].status === "partial")
    .map((c) => `${CATEGORY_LABELS[c.key]} ${status[c.key].status === "blind" ? "not assessed" : "partly assessed"}`)
    .join(", ");
}

/** A provisional grade is never drawn in a grade's colour: an A nobody could check is not green. */
export const gradeClass = (grade: string, provisional: boolean | null | undefined) => (provisional ? "provisional" : gradeTone(grade));

/** The grade as shown: "not graded" when a category with assets could not be looked at at all. */
export const gradeLabel = (r: Pick<Overview, "grade"> & { graded: boolean | null }) => (r.graded === false ? "not graded" : r.grade);

/** "C", "A, provisional: RDAP partly assessed", "not graded: DNS not assessed": a report's grade in words. */
export function gradeText(r: Pick<Report, "grade" | "provisional" | "graded" | "category_status">): string {
  if (!r.provisional) return r.grade;
  return `${gradeLabel(r)}${r.graded === false ? "" : ", provisional"}: ${unassessed(r.category_status)}`;
}

const STATUS_BADGE: Record<Schemas["CategoryAssessment"]["status"], { tone: string; label: string }> = {
  assessed: { tone: "good", label: "assessed" },
  partial: { tone: "warn", label: "partly assessed" },
  blind: { tone: "bad", label: "not assessed" },
  no_assets: { tone: "neutral", label: "no assets" },
};

/**
 * The five category scores with what each rests on: a category not assessed (or with
 * nothing to assess) gets no bar, only "not assessed" and why; a partly assessed one a
 * neutral bar and the reason.
 */
function CategoryScores({ o }: { o: Overview }) {
  return (
    <ul class="category-list" aria-label="Category scores and what they rest on">
      {CATEGORIES.map(({ key, weight }) => {
        const score = o.category_scores[key];
        const status = o.category_status[key];
        const drawn = status.status === "assessed" || status.status === "partial" || (status.status === "no_assets" && score < 100);
        return (
          <li data-testid={`category-${key}`} data-status={status.status}>
            <span class="category-label">
              <strong>{CATEGORY_LABELS[key]}</strong> <span class="small muted">weight {weight} %</span>
            </span>
            {drawn ? (
              <span class="hbar-track" aria-hidden="true">
                <span class={`hbar ${status.status === "partial" ? "neutral" : scoreTone(score)}`} style={{ width: `${score}%` }} />
              </span>
            ) : (
              <span class={`category-unassessed ${status.status}`}>{status.status === "blind" ? "Not assessed" : "No assets"}</span>
            )}
            <span class="hbar-value">{drawn ? score : "n/a"}</span>
            <span class="category-status">
              {drawn && <Badge value={status.status} tone={STATUS_BADGE[status.status].tone} label={STATUS_BADGE[status.status].label} />}
            </span>
            {status.status !== "assessed" && <span class="category-reason small">{status.reason}</span>}
          </li>
        );
      })}
    </ul>
  );
}

const SEVERITY_RANK: Record<string, number> = { critical: 5, high: 4, medium: 3, low: 2, info: 1 };

export const gradeTone = (g: string) => (g === "A" ? "good" : g === "B" ? "info" : g === "C" ? "warn" : "bad");
const scoreTone = (v: number) => (v >= 90 ? "good" : v >= 70 ? "warn" : "bad");

/** Evidence of a finding, whatever its shape: text, a list, or an object of facts. */
export function Evidence({ value }: { value: unknown }) {
  if (value === undefined || value === null || value === "") return <span class="muted">—</span>;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return <span>{String(value)}</span>;
  if (!Array.isArray(value) && typeof value === "object" && "asset" in value && "detail" in value) {
    // One piece of evidence of the reports module: the asset, what was seen, when, before/after.
    const e = value as { asset: string; detail: string; observed_at?: string | null; old_value?: string | null; new_value?: string | null };
    return (
      <span>
        <span class="mono small wrap">{e.asset}</span>: {e.detail}
        {(e.old_value || e.new_value) && (
          <span class="small">
            {" "}
            ({e.old_value ?? "—"} → {e.new_value ?? "—"})
          </span>
        )}
        {e.observed_at && (
          <span class="small muted">
            {" "}
            <Time iso={e.observed_at} />
          </span>
        )}
      </span>
    );
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="muted">—</span>;
    return (
      <ul class="evidence">
        {value.slice(0, 20).map((v) => (
          <li>
            <Evidence value={v} />
          </li>
        ))}
        {value.length > 20 && <li class="muted">and {value.length - 20} more</li>}
      </ul>
    );
  }
  return (
    <span class="evidence-obj">
      {Object.entries(value as Record<string, unknown>).map(([k, v]) => (
        <span>
          <span class="muted">{k.replace(/_/g, " ")}:</span> {typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)}{" "}
        </span>
      ))}
    </span>
  );
}

/** Evidence fields of a finding: `evidence` itself plus any extra field the API adds. */
function evidenceOf(f: Finding): unknown {
  const { id: _i, title: _t, severity: _s, score_impact: _si, category: _c, evidence, ...rest } = f;
  if (evidence !== undefined) return evidence;
  return Object.keys(rest).length ? rest : undefined;
}

function FindingEvidence({ f }: { f: Finding }) {
  const total = typeof f.evidence_total === "number" ? f.evidence_total : undefined;
  const shown = Array.isArray(f.evidence) ? f.evidence.length : undefined;
  return (
    <>
      <Evidence value={evidenceOf(f)} />
      {total !== undefined && shown !== undefined && total > shown && <div class="small muted">{total - shown} more in the weekly report</div>}
    </>
  );
}

/** What this browser remembers of the user's last visit to the overview. */
interface LastVisit {
  /**
   * The check-new watermark to ask from next: the service's visibility clock, which is
   * the clock's origin (1970) while nothing was ever published, so it is never shown.
   */
  as_of: string;
  /** When the visit was, on the service's clock; null for a visit remembered before this was kept. */
  visited_at: string | null;
}

/** A first visit has no last visit: the overview shows what is new in this many days. */
const FIRST_VISIT_DAYS = 7;
/** How far back check-new counts (the CT match window). */
const MATCH_WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;

function readLastVisit(key: string): LastVisit | null {
  try {
    const raw = localStorage.getItem(key);
    if (!raw) return null;
    // Before the visit time was kept, only the watermark was stored.
    if (!raw.startsWith("{")) return { as_of: raw, visited_at: null };
    const v = JSON.parse(raw) as Partial<LastVisit>;
    return typeof v.as_of === "string" ? { as_of: v.as_of, visited_at: typeof v.visited_at === "string" ? v.visited_at : null } : null;
  } catch {
    // Storage refused or unreadable: treated as a first visit.
    return null;
  }
}

function writeLastVisit(key: string, visit: LastVisit) {
  try {
    localStorage.setItem(key, JSON.stringify(visit));
  } catch {
    /* not remembered: the next visit is shown as a first one */
  }
}

/**
 * CT matches new since the user's last visit (in the last 7 days on a first visit),
 * unexpected issuance first. The counts are only what was read: when the monitored CT
 * logs were not (all) read, that is said first, since when and why, so "no new
 * matches" never reads as "nothing was issued". `now` is the overview's time on the
 * service's clock; `ct` its CT category status.
 */
function WhatsNew({ now, ct }: { now: string; ct: Schemas["CategoryAssessment"] }) {
  const session = useSession();
  const key = `trust-plane:last-visit:${session.me.organization.id}:${session.me.user.id}`;
  const [last] = useState(() => readLastVisit(key));
  const since = last?.as_of ?? new Date(Date.parse(now) - FIRST_VISIT_DAYS * DAY_MS).toISOString();
  const r = useResource(() => get("/api/ct-log/matches/check-new", { params: { query: { since } } }), [since]);
  useEffect(() => {
    // The next visit asks from the server's watermark, not this browser's clock: a clock
    // running ahead of the service's would skip the matches published in between.
    if (r.data) writeLastVisit(key, { as_of: r.data.as_of, visited_at: now });
  }, [r.data]);
  const period = !last ? (
    <>in the last {FIRST_VISIT_DAYS} days (your first visit here)</>
  ) : last.visited_at ? (
    <>
      since your last visit (<Time iso={last.visited_at} />)
      {Date.parse(now) - Date.parse(last.visited_at) > MATCH_WINDOW_DAYS * DAY_MS && <> (matches are kept {MATCH_WINDOW_DAYS} days: older ones are not counted)</>}
    </>
  ) : (
    <>since your last visit</>
  );
  const blind = ct.status === "blind";
  return (
    <Section title={last ? "New since your last visit" : `New in the last ${FIRST_VISIT_DAYS} days`}>
      <CtNotRead ct={ct} />
      <ErrorBox error={r.error} />
      {r.data && (
        <div data-testid="whats-new">
          {r.data.has_new ? (
            <>
              <strong>{r.data.count}</strong> new certificate {r.data.count === 1 ? "match" : "matches"} in CT logs {period}, the latest at{" "}
              <Time iso={r.data.latest_timestamp} />. <a href="/ct?tab=matches">Review the matches</a>.
              <IssuanceSplit n={r.data} />
            </>
          ) : ct.status === "no_assets" ? (
            <>No new certificate matches {period}: no CT filter is enabled, so no certificate is watched.</>
          ) : blind ? (
            <>No new certificate match found {period}, but only in what was read before the CT logs stopped being read: this is not an all clear.</>
          ) : (
            <>No new certificate matches {period}.</>
          )}
        </div>
      )}
    </Section>
  );
}

/** Said before the counts when the CT logs the filters rely on were not (all) read within their window. */
function CtNotRead({ ct }: { ct: Schemas["CategoryAssessment"] }) {
  if (ct.status !== "blind" && ct.status !== "partial") return null;
  return (
    <p class="provisional-note" data-testid="whats-new-ct-not-read" data-status={ct.status}>
      <strong>
        {ct.status === "partial" ? (
          "Not every CT log was read"
        ) : ct.last_collected_at ? (
          <>
            CT logs not read since <Time iso={ct.last_collected_at} />
          </>
        ) : (
          "No CT log has been read yet"
        )}
        :
      </strong>{" "}
      {ct.reason}. New certificates for your filters {ct.status === "partial" ? "in the logs not read" : "logged since then"} cannot be seen until the logs are read
      again.
    </p>
  );
}

/** GET /api/ct-log/matches/check-new: the new matches, told apart by their authorization verdict. */
type NewMatches = ResponseOf<"get", "/api/ct-log/matches/check-new">;

const UNEXPECTED_WORDS: Record<keyof NewMatches["unexpected_by_verdict"], string> = {
  caa_violation: "against the CAA records",
  unexpected_issuer: "from an issuer not authorized",
  unknown_key: "with a key never seen deployed",
};

/** Unexpected issuance first (what to look at), routine renewals apart, and what is not judged yet said as such. */
function IssuanceSplit({ n }: { n: NewMatches }) {
  const plural = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  const why = (Object.keys(UNEXPECTED_WORDS) as (keyof typeof UNEXPECTED_WORDS)[]).filter((v) => n.unexpected_by_verdict[v] > 0).map((v) => `${n.unexpected_by_verdict[v]} ${UNEXPECTED_WORDS[v]}`);
  return (
    <ul class="issuance-split" data-testid="whats-new-split">
      <li data-testid="whats-new-unexpected">
        {n.unexpected ? (
          <>
            <Badge value="unexpected" tone="bad" label={plural(n.unexpected, "unexpected issuance", "unexpected issuances")} /> {why.join(", ")}
          </>
        ) : (
          <span>No unexpected issuance</span>
        )}
      </li>
      <li data-testid="whats-new-routine">
        <Badge value="routine" tone="good" label={plural(n.routine, "routine renewal", "routine renewals")} /> <span class="muted small">a known key from an authorized issuer</span>
      </li>
      {n.not_judged > 0 && (
        <li data-testid="whats-new-not-judged" class="muted">
          {plural(n.not_judged, "match", "matches")} not judged yet (the verdict follows within seconds)
        </li>
      )}
    </ul>
  );
}

function Findings({ findings }: { findings: Finding[] }) {
  const [state, setState] = useTableState({ sortBy: "severity", sortOrder: "desc", pageSize: 10 });
  const rows = localPage(findings, state, (f, k) => (k === "severity" ? (SEVERITY_RANK[f.severity.toLowerCase()] ?? 0) : f[k as keyof Finding]));
  return (
    <DataTable
      caption="Findings"
      columns={[
        { label: "Severity", sort: "severity", render: (f) => <Badge value={f.severity.toLowerCase()} /> },
        { label: "Finding", sort: "title", render: (f) => <strong>{f.title}</strong> },
        { label: "Category", sort: "category", render: (f) => CATEGORY_LABELS[f.category] ?? f.category },
        { label: "Impact", sort: "score_impact", render: (f) => <span class="num">−{f.score_impact}</span>, class: "num" },
        { label: "Evidence", render: (f) => <FindingEvidence f={f} /> },
      ]}
      rows={rows}
      rowKey={(f) => f.id}
      empty={<p>No findings: every audit rule passes for the current data.</p>}
      state={state}
      onState={setState}
      total={findings.length}
      pageSizes={[10, 20, 50]}
    />
  );
}

function Trend() {
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
