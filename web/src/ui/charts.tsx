/**
 * Hand-written SVG charts (no chart library: the first page stays small). Each
 * chart has a text summary for screen readers and its numbers as a table under
 * a disclosure.
 */
import type { ComponentChildren } from "preact";

export interface Datum {
  label: string;
  value: number;
  /** CSS class of the bar (tone). */
  tone?: string;
  title?: string;
}

function DataTableOf({ data, valueLabel }: { data: Datum[]; valueLabel: string }) {
  return (
    <details class="chart-data">
      <summary>Show the numbers</summary>
      <table>
        <thead>
          <tr>
            <th scope="col">Label</th>
            <th scope="col">{valueLabel}</th>
          </tr>
        </thead>
        <tbody>
          {data.map((d) => (
            <tr>
              <td>{d.label}</td>
              <td>{d.value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

/** Vertical bars (category scores, matches per day). */
export function BarChart({ data, max, title, valueLabel, height = 180 }: { data: Datum[]; max?: number; title: string; valueLabel: string; height?: number }) {
  const top = max ?? Math.max(1, ...data.map((d) => d.value));
  const barW = 100 / Math.max(1, data.length);
  const summary = `${title}: ${data.map((d) => `${d.label} ${d.value}`).join(", ")}`;
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 100 ${height / 2}`} preserveAspectRatio="none" role="img" aria-label={summary} class="bars" style={{ height: `${height}px` }}>
        {[0.25, 0.5, 0.75, 1].map((f) => (
          <line x1="0" x2="100" y1={(height / 2) * (1 - f)} y2={(height / 2) * (1 - f)} class="grid" />
        ))}
        {data.map((d, i) => {
          const h = (Math.max(0, d.value) / top) * (height / 2 - 1);
          return (
            <rect x={i * barW + barW * 0.15} width={barW * 0.7} y={height / 2 - h} height={h} class={`bar ${d.tone ?? ""}`}>
              <title>{d.title ?? `${d.label}: ${d.value}`}</title>
            </rect>
          );
        })}
      </svg>
      <div class="bar-labels" aria-hidden="true" style={{ gridTemplateColumns: `repeat(${data.length}, 1fr)` }}>
        {data.map((d) => (
          <span>
            <b>{d.value || ""}</b>
            <br />
            {d.label}
          </span>
        ))}
      </div>
      <DataTableOf data={data} valueLabel={valueLabel} />
    </figure>
  );
}

/** A line over time (score trend). Points are in order, oldest first. */
export function LineChart({ data, min = 0, max = 100, title, valueLabel }: { data: Datum[]; min?: number; max?: number; title: string; valueLabel: string }) {
  const W = 600;
  const H = 160;
  const pad = 24;
  // The y-axis labels (up to "100") sit left of the plot: the first point must not cover them.
  const left = 44;
  const x = (i: number) => (data.length <= 1 ? (left + W - pad) / 2 : left + (i * (W - left - pad)) / (data.length - 1));
  const y = (v: number) => H - pad - ((v - min) / Math.max(1, max - min)) * (H - 2 * pad);
  const path = data.map((d, i) => `${i === 0 ? "M" : "L"}${x(i).toFixed(1)},${y(d.value).toFixed(1)}`).join(" ");
  const summary = `${title}: ${data.map((d) => `${d.label} ${d.value}`).join(", ")}`;
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary} class="line">
        {[min, (min + max) / 2, max].map((v) => (
          <g>
            <line x1={left} x2={W - pad} y1={y(v)} y2={y(v)} class="grid" />
            <text x={2} y={y(v) + 4} class="axis">
              {v}
            </text>
          </g>
        ))}
        <path d={path} class="trend" />
        {data.map((d, i) => (
          <circle cx={x(i)} cy={y(d.value)} r="4" class="point">
            <title>{d.title ?? `${d.label}: ${d.value}`}</title>
          </circle>
        ))}
        {data.length > 0 && (
          <>
            <text x={x(0)} y={H - 4} class="axis" text-anchor="start">
              {data[0].label}
            </text>
            {data.length > 1 && (
              <text x={x(data.length - 1)} y={H - 4} class="axis" text-anchor="end">
                {data[data.length - 1].label}
              </text>
            )}
          </>
        )}
      </svg>
      <DataTableOf data={data} valueLabel={valueLabel} />
    </figure>
  );
}

/** Horizontal bars on a common axis (days left per certificate). */
export function Timeline({ data, title, valueLabel, unit, children }: { data: Datum[]; title: string; valueLabel: string; unit: string; children?: ComponentChildren }) {
  const max = Math.max(1, ...data.map((d) => Math.abs(d.value)));
  return (
    <figure class="chart timeline">
      <figcaption>{title}</figcaption>
      {children}
      <ul class="hbars" aria-label={title}>
        {data.map((d) => (
          <li>
            <span class="hbar-label">{d.label}</span>
            <span class="hbar-track" aria-hidden="true">
              <span class={`hbar ${d.tone ?? ""}`} style={{ width: `${Math.max(2, (Math.max(0, d.value) / max) * 100)}%` }} />
            </span>
            <span class="hbar-value">
              {d.value} {unit}
            </span>
          </li>
        ))}
      </ul>
      <DataTableOf data={data} valueLabel={valueLabel} />
    </figure>
  );
}
