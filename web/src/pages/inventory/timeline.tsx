/** A name's certificates over time, drawn: validity, first seen in CT, seen served, renewal thresholds. */
import type { Schemas } from "../../api";
import { issuerName } from "./states";

type TimelineEntry = Schemas["InventoryTimelineEntry"];

/**
 * The timeline as a picture: one lane per certificate, its validity as a bar on a
 * shared time axis, the span it was seen served drawn over it, a mark where CT first
 * showed it, the renewal thresholds (two thirds, last sixth), and "now".
 */
export function Timeline({ entries, now }: { entries: TimelineEntry[]; now: number }) {
  if (!entries.length) return <p class="muted">No certificate of this name is known yet.</p>;
  const times = entries.flatMap((e) => [Date.parse(e.not_before), Date.parse(e.not_after)]).concat(now);
  const start = Math.min(...times);
  const end = Math.max(...times);
  const W = 760;
  const LABEL = 0;
  const lane = 34;
  const H = entries.length * lane + 28;
  const x = (iso: string | number) => LABEL + ((typeof iso === "number" ? iso : Date.parse(iso)) - start) / Math.max(1, end - start) * (W - LABEL - 8) + 4;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return (
    // Focusable: on a phone the picture scrolls sideways, and keyboard users must reach it.
    <figure class="timeline" tabIndex={0} aria-label="Timeline of the certificates">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="timeline-title" width="100%">
        <title id="timeline-title">
          Certificates of this name over time: validity, first seen in CT, deployed, renewal thresholds
        </title>
        {entries.map((e, i) => {
          const y = i * lane + 8;
          const deployedFrom = e.first_deployed_at;
          const deployedTo = e.last_deployed_at;
          return (
            <g data-testid="timeline-lane" data-sha256={e.sha256}>
              <rect x={x(e.not_before)} y={y + 6} width={Math.max(2, x(e.not_after) - x(e.not_before))} height={10} class="tl-validity" rx={2}>
                <title>
                  {`${issuerName(e.issuer)}: valid ${day(Date.parse(e.not_before))} to ${day(Date.parse(e.not_after))} (${e.lifetime_days} days)`}
                </title>
              </rect>
              {deployedFrom && deployedTo && (
                <rect x={x(deployedFrom)} y={y + 4} width={Math.max(3, x(deployedTo) - x(deployedFrom))} height={14} class="tl-deployed" rx={2}>
                  <title>{`Served from ${deployedFrom} to ${deployedTo}`}</title>
                </rect>
              )}
              <line x1={x(e.renewal_due_at)} x2={x(e.renewal_due_at)} y1={y + 2} y2={y + 20} class="tl-due">
                <title>{`Renewal due ${e.renewal_due_at} (two thirds of its lifetime)`}</title>
              </line>
              <line x1={x(e.renewal_overdue_at)} x2={x(e.renewal_overdue_at)} y1={y + 2} y2={y + 20} class="tl-overdue">
                <title>{`Renewal overdue ${e.renewal_overdue_at} (its last sixth)`}</title>
              </line>
              {e.first_seen_ct_at && (
                <circle cx={x(e.first_seen_ct_at)} cy={y + 11} r={5} class="tl-issued">
                  <title>{`First seen in CT ${e.first_seen_ct_at}`}</title>
                </circle>
              )}
              <text x={x(e.not_before)} y={y + 30} class="tl-label">
                {`${e.sha256.slice(0, 10)}… ${issuerName(e.issuer)}`}
              </text>
            </g>
          );
        })}
        <line x1={x(now)} x2={x(now)} y1={0} y2={H - 16} class="tl-now" />
        <text x={x(now)} y={H - 4} class="tl-axis" text-anchor="middle">
          now
        </text>
        <text x={4} y={H - 4} class="tl-axis">
          {day(start)}
        </text>
        <text x={W - 4} y={H - 4} class="tl-axis" text-anchor="end">
          {day(end)}
        </text>
      </svg>
      <figcaption class="tl-legend">
        <span class="tl-key validity" /> valid <span class="tl-key deployed" /> seen served <span class="tl-key issued" /> first seen in CT <span class="tl-key due" /> renewal due (2/3){" "}
        <span class="tl-key overdue" /> overdue (last 1/6)
      </figcaption>
    </figure>
  );
}
