/**
 * The score's vocabulary shared by the overview and the reports page: the five categories
 * with their weights, what makes a grade provisional or withholds it, and the tones a
 * grade or a score is drawn in.
 */
import type { Schemas } from "../../api";

export type Overview = Schemas["SecurityOverview"]["data"];
export type CategoryStatus = Schemas["CategoryStatus"];
export type CategoryKey = keyof CategoryStatus;
export type Report = Schemas["Report"];
export type ReportMail = NonNullable<Report["mail"]>;

export const CATEGORY_LABELS: Record<string, string> = {
  dns: "DNS",
  ct: "CT log",
  certificates: "Certificates",
  rdap: "RDAP",
  coverage: "Coverage",
};
export const CATEGORIES: { key: CategoryKey; weight: number }[] = [
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

export const gradeTone = (g: string) => (g === "A" ? "good" : g === "B" ? "info" : g === "C" ? "warn" : "bad");
export const scoreTone = (v: number) => (v >= 90 ? "good" : v >= 70 ? "warn" : "bad");
