/**
 * The overview's "new since your last visit": the CT matches new since the user's last
 * visit (the last 7 days on a first visit), unexpected issuance first, said with whether
 * the CT logs could be read. The last visit is remembered by this browser.
 */
import { useEffect, useState } from "preact/hooks";
import { get, type ResponseOf, type Schemas } from "../../api";
import { useSession } from "../../session";
import { useResource } from "../../ui/resource";
import { Time } from "../../ui/time";
import { Badge, ErrorBox, Section } from "../../ui/widgets";

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
export function WhatsNew({ now, ct }: { now: string; ct: Schemas["CategoryAssessment"] }) {
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
