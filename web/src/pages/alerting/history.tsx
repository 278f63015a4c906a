/**
 * A module's alert history: every match of a rule, sent (with each channel's delivery)
 * or suppressed (a duplicate or throttled, with the alert it repeats and until when),
 * so nothing a rule matched disappears without a trace.
 */
import { useState } from "preact/hooks";
import { get, post, type ApiError } from "../../api";
import { queryChoice, queryId, setQuery, useLocation } from "../../router";
import { useSession, type ModuleName } from "../../session";
import { limitOffset, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { ActionButton, Badge, ErrorBox, Section } from "../../ui/widgets";
import type { Alert } from "./types";

const STATUS_FILTERS = [
  { value: "", label: "All matches" },
  { value: "fired", label: "Sent" },
  { value: "suppressed", label: "Suppressed" },
];
const STATUSES = ["fired", "suppressed"] as const;

export function HistoryTab({ module }: { module: ModuleName }) {
  const loc = useLocation();
  const status = queryChoice(loc.query, "status", STATUSES);
  const rule = queryId(loc.query, "rule");
  // A link to one alert (channels link to it: /alerting?section=<module>&tab=history&alert=<id>).
  const alertId = queryId(loc.query, "alert");
  const [state, setState] = useTableState({ sortBy: "fired_at", sortOrder: "desc", pageSize: 20 });
  const query = { ...limitOffset(state), status, rule_id: rule, alert_id: alertId };
  const r = useResource(() => get(`/api/${module}/alert-history`, { params: { query } }), [module, state, status, rule, alertId]);
  return (
    <Section title="Alert history">
      <div class="filters-row">
        <label class="inline">
          Show{" "}
          <select value={status ?? ""} onChange={(e) => (setQuery({ status: (e.target as HTMLSelectElement).value }), setState({ page: 1 }))}>
            {STATUS_FILTERS.map((f) => (
              <option value={f.value}>{f.label}</option>
            ))}
          </select>
        </label>
        {alertId && (
          <span>
            Alert #{alertId}{" "}
            <button type="button" class="link" onClick={() => setQuery({ alert: null })}>
              show every alert
            </button>
          </span>
        )}
        {rule && (
          <span>
            Rule #{rule}{" "}
            <button type="button" class="link" onClick={() => (setQuery({ rule: null }), setState({ page: 1 }))}>
              show every rule
            </button>
          </span>
        )}
      </div>
      <DataTable
        caption="Alerts"
        state={state}
        onState={setState}
        total={r.data?.total}
        rows={r.data?.alerts}
        loading={r.loading}
        error={r.error}
        rowKey={(a) => a.id}
        empty={<p>{status === "suppressed" ? "No suppressed match." : "No alert rule has matched an event of this module yet."}</p>}
        columns={[
          { label: "#", render: (a) => <span class="mono small">{a.id}</span> },
          { label: "Matched", render: (a) => <Time iso={a.fired_at} /> },
          { label: "Rule", render: (a) => <strong>{a.rule_name}</strong> },
          { label: "Severity", render: (a) => <Badge value={a.severity} /> },
          { label: "Event", render: (a) => <span class="small">{a.event_summary}</span> },
          { label: "State", render: (a) => (a.status === "fired" ? <AlertStateCell module={module} alert={a} onChange={r.reload} /> : <span class="muted">—</span>) },
          { label: "Outcome", render: (a) => (a.status === "suppressed" ? <Suppressed alert={a} /> : <Deliveries alert={a} />) },
        ]}
      />
    </Section>
  );
}

function Deliveries({ alert: a }: { alert: Alert }) {
  if (a.deliveries.length === 0) return <span class="muted">sent to no channel (the rule has none)</span>;
  return (
    <ul class="plain">
      {a.deliveries.map((d) => (
        <li>
          <Badge value={d.status} /> {d.action !== "trigger" ? `${d.action}: ` : ""}
          {d.channel_name ?? `#${d.channel_id}`}{" "}
          <span class="small muted">
            {d.attempts} attempt{d.attempts === 1 ? "" : "s"}
            {d.response_status ? `, HTTP ${d.response_status}` : ""}
            {d.last_error ? `: ${d.last_error}` : ""}
            {d.status === "retrying" && d.next_attempt_at ? (
              <>
                , next <Time iso={d.next_attempt_at} />
              </>
            ) : null}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** Open, acknowledged (by whom) or resolved (by whom, why), with the buttons that move it on. */
function AlertStateCell({ module, alert: a, onChange }: { module: ModuleName; alert: Alert; onChange: () => void }) {
  const s = useSession();
  const [err, setErr] = useState<ApiError>();
  const can = s.can(`${module}:update_alert_rules`);
  const act = (to: "acknowledge" | "resolve") => async () => {
    await post(`/api/${module}/alert-history/{alert_id}/${to}`, { params: { path: { alert_id: a.id } } });
    onChange();
  };
  return (
    <div>
      <Badge value={a.state} tone={a.state === "open" ? "bad" : a.state === "acknowledged" ? "warn" : "good"} />
      {a.occurrences > 1 && <span class="small muted"> {a.occurrences} matches</span>}
      {a.state === "acknowledged" && a.acknowledged_by && <div class="small muted">by {a.acknowledged_by}</div>}
      {a.state === "resolved" && (
        <div class="small muted">
          {a.resolved_by === "automatic" ? "automatically" : `by ${a.resolved_by}`}, <Time iso={a.resolved_at} />
          {a.resolution && a.resolved_by === "automatic" ? `: ${a.resolution}` : ""}
        </div>
      )}
      <ErrorBox error={err} />
      {can && a.state !== "resolved" && (
        <span class="row-actions">
          {a.state === "open" && (
            <ActionButton label={`Acknowledge alert ${a.id}`} busyLabel="Acknowledging…" onError={setErr} onClick={act("acknowledge")}>
              Acknowledge
            </ActionButton>
          )}
          <ActionButton label={`Resolve alert ${a.id}`} busyLabel="Resolving…" onError={setErr} onClick={act("resolve")}>
            Resolve
          </ActionButton>
        </span>
      )}
    </div>
  );
}

/** The asset key in words: `monitor:3|192.0.2.11` is "monitor 3 at 192.0.2.11". */
function assetLabel(asset: string): string {
  const [kind, rest] = [asset.slice(0, asset.indexOf(":")), asset.slice(asset.indexOf(":") + 1)];
  if (kind === "monitor") return `monitor ${rest.replace("|", " at ")}`;
  if (kind === "filter") return `CT filter ${rest}`;
  if (kind === "log") return `CT log ${rest}`;
  if (kind === "domain") return rest;
  return asset;
}

/** Why a match was not sent, in words, with the alert it repeats. */
function Suppressed({ alert: a }: { alert: Alert }) {
  const repeats = a.repeats_alert_id === null ? "an earlier alert" : `alert #${a.repeats_alert_id}`;
  return (
    <div>
      <Badge value="suppressed" tone="warn" /> <span class="small">{a.suppressed_reason === "duplicate" ? "duplicate" : "throttled"}</span>
      <div class="small muted">
        {a.suppressed_reason === "duplicate"
          ? `Not sent: the rule already alerted on this same event for ${assetLabel(a.asset)} (${repeats}); repeats are sent once per 24 h`
          : `Not sent: the rule's throttle holds further alerts for ${a.subject} after ${repeats}`}
        {a.suppressed_until && (
          <>
            , until <Time iso={a.suppressed_until} />
          </>
        )}
        .
      </div>
    </div>
  );
}
