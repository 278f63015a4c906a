/**
 * Times in the browser's local time zone, with the UTC value in `title` (hover) and
 * `datetime`. A hover title is out of reach of keyboard and touch users, so the
 * header's "UTC times" switch (useUtcTimes/setUtcTimes) shows every time of the
 * console in UTC instead, the local value then being the title. The choice is kept
 * in localStorage.
 */
import { useEffect, useState } from "preact/hooks";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });

export function utcText(d: Date): string {
  return d.toISOString().replace("T", " ").replace(/\.\d{3}Z$/, " UTC");
}

const SETTING = "trust-plane:times";
let utcMode = readSetting();
const listeners = new Set<(utc: boolean) => void>();

function readSetting(): boolean {
  try {
    return localStorage.getItem(SETTING) === "utc";
  } catch {
    // Storage refused (privacy settings): local times, not remembered.
    return false;
  }
}

export function setUtcTimes(utc: boolean) {
  utcMode = utc;
  try {
    localStorage.setItem(SETTING, utc ? "utc" : "local");
  } catch {
    /* not remembered; the switch still works for this page load */
  }
  for (const l of listeners) l(utc);
}

/** True while the console shows times in UTC; re-renders the caller when it switches. */
export function useUtcTimes(): boolean {
  const [utc, setUtc] = useState(utcMode);
  useEffect(() => {
    listeners.add(setUtc);
    setUtc(utcMode);
    return () => void listeners.delete(setUtc);
  }, []);
  return utc;
}

export function Time({ iso, date = false }: { iso: string | null | undefined; date?: boolean }) {
  const utc = useUtcTimes();
  if (!iso) return <span class="muted">never</span>;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return <span>{iso}</span>;
  const local = (date ? dateOnly : dateTime).format(d);
  const inUtc = date ? `${d.toISOString().slice(0, 10)} UTC` : utcText(d);
  return (
    <time dateTime={d.toISOString()} title={utc ? `Local time: ${local}` : inUtc}>
      {utc ? inUtc : local}
    </time>
  );
}

/** Whole days from now until `iso` (negative when past). */
export function daysUntil(iso: string | null | undefined, now = Date.now()): number | null {
  if (!iso) return null;
  const t = new Date(iso).getTime();
  return Number.isNaN(t) ? null : Math.floor((t - now) / 86_400_000);
}
