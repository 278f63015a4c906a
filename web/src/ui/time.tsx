/** Times in the browser's local time zone, with the UTC value on hover (title) and in `datetime`. */

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });

export function utcText(d: Date): string {
  return d.toISOString().replace("T", " ").replace(/\.\d{3}Z$/, " UTC");
}

export function Time({ iso, date = false }: { iso: string | null | undefined; date?: boolean }) {
  if (!iso) return <span class="muted">never</span>;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return <span>{iso}</span>;
  return (
    <time dateTime={d.toISOString()} title={utcText(d)}>
      {(date ? dateOnly : dateTime).format(d)}
    </time>
  );
}

/** Whole days from now until `iso` (negative when past). */
export function daysUntil(iso: string | null | undefined, now = Date.now()): number | null {
  if (!iso) return null;
  const t = new Date(iso).getTime();
  return Number.isNaN(t) ? null : Math.floor((t - now) / 86_400_000);
}
