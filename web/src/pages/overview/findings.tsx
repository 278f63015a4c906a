/**
 * The overview's findings: a table sorted by severity, each with its evidence (whatever its
 * shape: text, a list, an object of facts) and how many more the weekly report lists.
 */
import type { Schemas } from "../../api";
import { useTableState } from "../../ui/resource";
import { DataTable, localPage } from "../../ui/table";
import { Time } from "../../ui/time";
import { Badge } from "../../ui/widgets";
import { CATEGORY_LABELS } from "./grade";

export type Finding = Schemas["Finding"];

const SEVERITY_RANK: Record<string, number> = { critical: 5, high: 4, medium: 3, low: 2, info: 1 };

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

export function Findings({ findings }: { findings: Finding[] }) {
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
