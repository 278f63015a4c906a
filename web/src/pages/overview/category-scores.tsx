/** The overview's category scores, each with what it rests on. */
import type { Schemas } from "../../api";
import { Badge } from "../../ui/widgets";
import { CATEGORIES, CATEGORY_LABELS, scoreTone, type Overview } from "./grade";

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
export function CategoryScores({ o }: { o: Overview }) {
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
