/** The CT logs tab (GET /api/ct-log/logs): the log list in use, and per log whether it could be read, why not, and when it is tried again. */
import { get, type Schemas } from "../../api";
import { CollectionBadge, ERROR_CLASS_LABEL, type CollectionState } from "../../ui/collection";
import { useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { Badge, Notice, Section } from "../../ui/widgets";

/** One monitored log as the API reports it. */
type CtLogStatus = Schemas["CtLogs"]["logs"][number];

/** Failing logs first, then those not read yet, then the ones read. */
const STATE_ORDER: Record<CollectionState, number> = { failing: 0, pending: 1, ok: 2, paused: 3 };
const LOG_SORT: Record<string, (l: CtLogStatus) => string | number> = {
  description: (l) => l.description.toLowerCase(),
  collection: (l) => STATE_ORDER[l.collection.state],
  consecutive_failures: (l) => l.consecutive_failures,
  next_attempt_at: (l) => l.collection.next_attempt_at ?? "",
  verified_position: (l) => l.verified_position ?? -1,
  state: (l) => l.state,
};

/**
 * What the organization should know about the logs as a whole, said once above the
 * table: the log list in use (fetched, or the bundled copy and why) and how many logs
 * can be read, and what that means for its filters when none or only some can.
 */
function LogsSummary({ body }: { body: Schemas["CtLogs"] }) {
  const { log_list: list, summary } = body;
  const unread = summary.failing + summary.pending;
  return (
    <div data-testid="ct-logs-summary">
      {list.source === "bundled" ? (
        <Notice kind="warn">
          Using the copy of the CT log list shipped with the service (version {list.version}): the signed list could not be had
          {list.error ? (
            <>
              : <Badge value={list.error.class} tone="bad" label={ERROR_CLASS_LABEL[list.error.class]} /> {list.error.message}
            </>
          ) : null}
          . Last tried <Time iso={list.fetched_at} />, tried again every hour.
        </Notice>
      ) : (
        <p class="small muted">
          Signed log list version {list.version}, fetched <Time iso={list.fetched_at} /> from {list.url}
          {list.error && <> (the latest refresh failed: {list.error.message}; the list fetched before is used)</>}.
        </p>
      )}
      <p>
        <strong>
          {summary.ok} of {summary.monitored} logs read
        </strong>
        {summary.failing > 0 && <>, {summary.failing} failing</>}
        {summary.pending > 0 && <>, {summary.pending} not read yet</>}
        {summary.last_success_at ? (
          <>
            ; last verified read <Time iso={summary.last_success_at} />
          </>
        ) : (
          <>; none has been read yet</>
        )}
        .
      </p>
      {summary.relied_upon && unread > 0 && (
        <Notice kind="warn">
          {summary.ok === 0
            ? "No CT log can be read: new certificates for your filters cannot be seen until one is read again."
            : `${unread} of ${summary.monitored} logs cannot be read now: a certificate logged only in them is not seen until they are read again.`}
        </Notice>
      )}
    </div>
  );
}

/** The CT logs the service reads (GET /api/ct-log/logs): per log, whether it could be read, why not, and when it is tried again. */
export function LogsTab() {
  const [state, setState] = useTableState({ sortBy: "collection", pageSize: 20 });
  const r = useResource(() => get("/api/ct-log/logs"), []);
  const rows = r.data?.logs ?? [];
  const key = LOG_SORT[state.sortBy] ?? LOG_SORT.description;
  const sorted = [...rows].sort((a, b) => {
    const va = key(a);
    const vb = key(b);
    const c = typeof va === "number" && typeof vb === "number" ? va - vb : String(va).localeCompare(String(vb));
    return (state.sortOrder === "asc" ? c : -c) || a.description.localeCompare(b.description);
  });
  return (
    <Section title="CT logs read by the service">
      {r.data && <LogsSummary body={r.data} />}
      <DataTable
        caption="CT logs"
        state={state}
        onState={setState}
        total={rows.length}
        rows={r.data ? sorted.slice((state.page - 1) * state.pageSize, state.page * state.pageSize) : undefined}
        loading={r.loading}
        error={r.error}
        rowKey={(x) => x.log_id}
        empty={<p>No CT log is being read.</p>}
        columns={[
          {
            label: "Log",
            sort: "description",
            render: (x) => (
              <>
                <strong class="wrap">{x.description}</strong>
                <div class="small muted wrap">
                  {x.operator} · {x.protocol === "static-ct" ? "static-ct-api" : "RFC 6962"} · {x.url}
                </div>
              </>
            ),
          },
          { label: "Collection", sort: "collection", render: (x) => <CollectionBadge collection={x.collection} /> },
          { label: "Failures in a row", sort: "consecutive_failures", class: "num", render: (x) => x.consecutive_failures },
          {
            label: "Next attempt",
            sort: "next_attempt_at",
            render: (x) => (
              <span class="small">
                {x.next_retry_at ? "retry " : ""}
                <Time iso={x.collection.next_attempt_at} />
              </span>
            ),
          },
          {
            label: "Verified entries",
            sort: "verified_position",
            class: "num",
            render: (x) =>
              x.verified_position === null ? (
                <span class="muted">—</span>
              ) : (
                <>
                  {x.verified_position.toLocaleString()}
                  {x.lag_entries ? <div class="small muted">{x.lag_entries.toLocaleString()} behind</div> : null}
                </>
              ),
          },
          { label: "In the log list", sort: "state", render: (x) => <Badge value={x.state} tone={/usable|qualified|readonly/.test(x.state) ? "good" : "neutral"} /> },
        ]}
      />
    </Section>
  );
}
