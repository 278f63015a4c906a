/**
 * What the audit could assess: a score says "nothing wrong" only about what was
 * looked at. Each scoring category is
 *
 *   assessed   every enabled asset of the category was collected within its module's
 *              expected window (freshness.ts) before the time the audit judges
 *   partial    some were, some were not
 *   blind      it has assets and none was collected within the window
 *   no_assets  nothing to assess (no enabled asset)
 *
 * with the reason in words ("0 of 12 domains resolved since 2026-11-22 23:25 UTC:
 * DNS lookup failed for 12 domains: ..."). CT is assessed on the monitored logs the
 * organization's filters rely on (read once for every organization), the other
 * modules on the organization's own assets; coverage is judged from configuration and
 * collection times, which the service always knows, so it is always assessed.
 *
 * The score keeps its formula (a category without findings scores 100), so the result
 * is `provisional` whenever a category with assets is partial or blind: the console,
 * the PDF and the mail then show "not assessed" and why instead of a plain score, and
 * the grade carries the categories it could not assess; with a blind category there is
 * no grade at all (isGraded). Pure: coverage facts in.
 */
import { COLLECTION_ERROR_CLASSES, type CollectionErrorClass } from "../../platform/collection";
import type { MonitoringModule } from "../../platform/permissions";
import type { AuditFacts, ModuleCoverage, UncollectedAsset } from "./facts/types";
import { formatUtc } from "./pdf/text";
import { CATEGORIES, type Category } from "./rules";

export const CATEGORY_STATUSES = ["assessed", "partial", "blind", "no_assets"] as const;
export type CategoryStatusValue = (typeof CATEGORY_STATUSES)[number];

export interface CategoryAssessment {
  status: CategoryStatusValue;
  /** What must be collected for the category to be assessed (its enabled assets, or the CT logs); 0 when there is nothing to assess. */
  expected: number;
  /** Of them, collected within the window. */
  collected: number;
  /** The status in words, with the reason when it is not assessed. */
  reason: string;
  /**
   * Blind only: when any of the category's assets (CT: the monitored logs) was last
   * collected, i.e. nothing was collected since then; null when none ever was. Null for
   * every other status, whose reason counts what was collected within the window. What
   * the overview's "new since your last visit" says when CT was not read.
   */
  last_collected_at: string | null;
}

export type CategoryStatus = Record<Category, CategoryAssessment>;

/** The monitoring module whose collections each category's score rests on (coverage rests on all). */
export const CATEGORY_MODULE: Record<Exclude<Category, "coverage">, MonitoringModule> = {
  dns: "dns-watcher",
  ct: "ct-log",
  certificates: "cert-watcher",
  rdap: "rdap",
};

/** How each module names its assets, what it collects them from, and what collecting is. */
export const MODULE_WORDS: Record<MonitoringModule, { asset: [string, string]; collected: [string, string]; verb: string }> = {
  "dns-watcher": { asset: ["domain", "domains"], collected: ["domain", "domains"], verb: "resolved" },
  "ct-log": { asset: ["filter", "filters"], collected: ["CT log", "CT logs"], verb: "read" },
  "cert-watcher": { asset: ["endpoint", "endpoints"], collected: ["endpoint", "endpoints"], verb: "scanned" },
  rdap: { asset: ["domain", "domains"], collected: ["domain", "domains"], verb: "looked up" },
};

/** Each collection error class in a few words ("DNS lookup failed"). */
export const ERROR_CLASS_WORDS: Record<CollectionErrorClass, string> = {
  dns_resolution: "DNS lookup failed",
  connect: "connection failed",
  timeout: "no answer in time",
  tls: "TLS failed",
  http_status: "HTTP error",
  rate_limited: "rate limited by the source",
  protocol: "unusable answer",
  blocked: "refused by the egress policy",
  internal: "internal fault",
};

export const count = (n: number, [one, many]: [string, string]) => `${n} ${n === 1 ? one : many}`;

/** At most this many causes are named in a reason; the rest are counted. */
const MAX_CAUSES = 3;

/**
 * Why the uncollected assets were not collected, grouped: by error class (the first
 * message as the example, the earliest known start of failing), then never collected,
 * then collected before but not attempted within the window.
 */
export function uncollectedCauses(module: MonitoringModule, uncollected: readonly UncollectedAsset[]): string[] {
  const words = MODULE_WORDS[module];
  const byClass = new Map<CollectionErrorClass, UncollectedAsset[]>();
  const never: UncollectedAsset[] = [];
  const idle: UncollectedAsset[] = [];
  for (const u of uncollected) {
    if (u.error) byClass.set(u.error.class, [...(byClass.get(u.error.class) ?? []), u]);
    else if (u.last_collected_at === null) never.push(u);
    else idle.push(u);
  }
  const causes: string[] = [];
  for (const cls of COLLECTION_ERROR_CLASSES) {
    const group = byClass.get(cls);
    if (!group) continue;
    const since = group.map((u) => u.failing_since).filter((s): s is string => s !== null).sort()[0];
    causes.push(`${ERROR_CLASS_WORDS[cls]} for ${count(group.length, words.collected)}${since ? ` since ${formatUtc(since)}` : ""} (${group[0].error!.message})`);
  }
  if (never.length) causes.push(`${count(never.length, words.collected)} not ${words.verb} yet`);
  if (idle.length) {
    const oldest = idle.map((u) => u.last_collected_at!).sort()[0];
    causes.push(`${count(idle.length, words.collected)} not ${words.verb} since ${formatUtc(oldest)} without a failed attempt (collection not running)`);
  }
  return causes.length > MAX_CAUSES ? [...causes.slice(0, MAX_CAUSES), `${causes.length - MAX_CAUSES} more cause(s)`] : causes;
}

function moduleAssessment(module: MonitoringModule, c: ModuleCoverage | undefined, asOf: string): CategoryAssessment {
  const words = MODULE_WORDS[module];
  if (!c || c.enabled_assets === 0) {
    const configured = c?.configured_assets ?? 0;
    const reason = configured
      ? `All ${count(configured, words.asset)} paused: nothing to assess`
      : `No ${words.asset[0]} configured: nothing to assess`;
    return { status: "no_assets", expected: 0, collected: 0, reason, last_collected_at: null };
  }
  if (c.expected === 0) {
    return {
      status: "blind",
      expected: 0,
      collected: 0,
      reason: "No CT log is monitored (the log list in use has none): new certificates for your filters cannot be seen",
      last_collected_at: null,
    };
  }
  const since = formatUtc(new Date(Date.parse(asOf) - c.expected_window_seconds * 1000).toISOString());
  const collected = `${c.collected} of ${count(c.expected, words.collected)} ${words.verb} since ${since}`;
  if (c.collected === c.expected) return { status: "assessed", expected: c.expected, collected: c.collected, reason: collected, last_collected_at: null };
  const status = c.collected === 0 ? "blind" : "partial";
  // Blind: every asset is among the uncollected, so their newest collection is the category's.
  const last = status === "blind" ? (c.uncollected.map((u) => u.last_collected_at).filter((t): t is string => t !== null).sort().at(-1) ?? null) : null;
  return { status, expected: c.expected, collected: c.collected, reason: `${collected}: ${uncollectedCauses(module, c.uncollected).join("; ")}`, last_collected_at: last };
}

export function assessCategories(facts: Pick<AuditFacts, "as_of" | "coverage">): CategoryStatus {
  const of = (m: MonitoringModule) => facts.coverage.find((c) => c.module === m);
  const status = Object.fromEntries(
    (Object.entries(CATEGORY_MODULE) as [Exclude<Category, "coverage">, MonitoringModule][]).map(([category, module]) => [category, moduleAssessment(module, of(module), facts.as_of)]),
  ) as Omit<CategoryStatus, "coverage">;
  const modules = facts.coverage.length;
  return {
    ...status,
    coverage: {
      status: "assessed",
      expected: modules,
      collected: modules,
      reason: "Judged from each monitoring module's configuration and collection times, which the service always knows",
      last_collected_at: null,
    },
  };
}

/** Categories with assets that were not (fully) assessed, in catalogue order. */
export function unassessedCategories(status: CategoryStatus): Category[] {
  return CATEGORIES.map((c) => c.id).filter((id) => status[id].status === "partial" || status[id].status === "blind");
}

export function isProvisional(status: CategoryStatus): boolean {
  return unassessedCategories(status).length > 0;
}

/**
 * Whether the result gets a letter grade. A category with assets of which nothing was
 * collected within its window (blind) was not looked at at all: its score of 100 is the
 * formula's starting point, not an observation, and the grade it would lift (an
 * organization whose DNS, CT and RDAP were never collected scores 97) would read as
 * "all clear". So such a result is not graded: the console, the PDF and the mail show
 * "Not graded" and why, and the score only as provisional. A partly assessed category
 * leaves the grade standing, marked provisional. `grade` in the API stays the formula's
 * letter for the score (the contract), with `graded` beside it.
 */
export function isGraded(status: CategoryStatus): boolean {
  return !CATEGORIES.some((c) => status[c.id].status === "blind");
}

/**
 * The grade in words, one phrase for the mail, the PDF and its metadata: "C",
 * "A, provisional: RDAP partly assessed", "not graded: DNS not assessed, RDAP not
 * assessed". `status` null: a report generated before category status was recorded.
 */
export function gradeWords(grade: string, status: CategoryStatus | null): string {
  if (!status || !isProvisional(status)) return grade;
  return isGraded(status) ? `${grade}, provisional: ${provisionalNote(status)}` : `not graded: ${provisionalNote(status)}`;
}

/** The score and grade in one line (mail subject and body, PDF metadata): "72/100 (C)", "not graded (…); provisional score 97/100". */
export function scoreHeadline(score: number, grade: string, status: CategoryStatus | null): string {
  if (status && !isGraded(status)) return `not graded (${provisionalNote(status)}); provisional score ${score}/100`;
  return `${score}/100 (${gradeWords(grade, status)})`;
}

/** "DNS not assessed, RDAP partly assessed": what makes a grade provisional ("" when it is not). */
export function provisionalNote(status: CategoryStatus): string {
  return unassessedCategories(status)
    .map((id) => `${CATEGORIES.find((c) => c.id === id)!.label} ${status[id].status === "blind" ? "not assessed" : "partly assessed"}`)
    .join(", ");
}
