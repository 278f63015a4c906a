/** A module's alert rules: condition, severity, channels, throttle and what each did in the last 24 h. */
import { del, get, patch } from "../../api";
import { setQuery } from "../../router";
import { MODULE_LABELS, useSession, type ModuleName } from "../../session";
import { useResource } from "../../ui/resource";
import { Time } from "../../ui/time";
import { Badge, EnabledSwitch } from "../../ui/widgets";
import { ItemsTab } from "./items-tab";
import { RuleEditor } from "./rule-editor";
import type { Channel, Rule } from "./types";

export function RulesTab({ module }: { module: ModuleName }) {
  const s = useSession();
  const canUpdate = s.can(`${module}:update_alert_rules`);
  // A rule stores channel ids; their names come from the channel list, which only
  // administrators (admin:manage_users) may read. Others see how many channels a rule notifies.
  const canSeeChannels = s.can("admin:manage_users");
  const channels = useResource(() => (canSeeChannels ? get("/api/notification-channels") : Promise.resolve({ channels: [] as Channel[] })), [canSeeChannels]);
  const channelName = new Map((channels.data?.channels ?? []).map((c) => [c.id, c.name]));
  return (
    <ItemsTab<Rule>
      title="Rules"
      caption={`${MODULE_LABELS[module]} alert rules`}
      noun="rule"
      load={() => get(`/api/${module}/alert-rules`).then((r) => r.rules)}
      deps={[module]}
      can={{ create: s.can(`${module}:create_alert_rules`), update: canUpdate, delete: s.can(`${module}:delete_alert_rules`) }}
      remove={(x) => del(`/api/${module}/alert-rules/{rule_id}`, { params: { path: { rule_id: x.id } } })}
      empty={<p>No alert rule for this module. A rule is a CEL condition over the module's events; when it is true, the chosen channels are notified.</p>}
      editorIn="page"
      editor={(rule, done) => <RuleEditor module={module} rule={rule} onClose={done} />}
      columns={({ reload, setError }) => [
        { label: "Name", sort: "name", render: (x) => <strong>{x.name}</strong> },
        { label: "Severity", sort: "severity", render: (x) => <Badge value={x.severity} /> },
        {
          label: "Enabled",
          sort: "enabled",
          render: (x) => (
            <EnabledSwitch
              name={x.name}
              enabled={x.enabled}
              canUpdate={canUpdate}
              save={(enabled) => patch(`/api/${module}/alert-rules/{rule_id}`, { params: { path: { rule_id: x.id } }, body: { enabled } })}
              onError={setError}
              onDone={reload}
            />
          ),
        },
        { label: "Condition", render: (x) => <code class="expr">{x.expression}</code> },
        {
          label: "Channels",
          render: (x) =>
            x.channel_ids.length === 0 ? (
              <span class="muted">none</span>
            ) : canSeeChannels ? (
              <ul class="plain" aria-label={`Channels of ${x.name}`}>
                {x.channel_ids.map((c) => (
                  <li>{channelName.get(c) ?? (channels.loading ? "…" : <span class="muted">deleted channel {c}</span>)}</li>
                ))}
              </ul>
            ) : (
              `${x.channel_ids.length} ${x.channel_ids.length === 1 ? "channel" : "channels"}`
            ),
        },
        { label: "Throttle", sort: "throttle_seconds", render: (x) => `${Math.round(x.throttle_seconds / 60)} min`, class: "num" },
        { label: "Last 24 h", render: (x) => <RuleActivity module={module} rule={x} /> },
        { label: "Updated", sort: "updated_at", render: (x) => <Time iso={x.updated_at} /> },
      ]}
    />
  );
}

/** Sent and suppressed matches of the last 24 h; the suppressed count opens the history filtered to them. */
function RuleActivity({ module, rule }: { module: ModuleName; rule: Rule }) {
  const { fired, suppressed } = rule.alerts_last_24h;
  const s = useSession();
  const canSeeHistory = s.can(`${module}:view_alerts`);
  return (
    <span class="small" aria-label={`${rule.name}: ${fired} sent and ${suppressed} suppressed in the last 24 hours`}>
      {fired} sent
      {suppressed > 0 && (
        <>
          {" · "}
          {canSeeHistory ? (
            <button type="button" class="link" onClick={() => setQuery({ tab: "history", rule: String(rule.id), status: "suppressed" })}>
              {suppressed} suppressed
            </button>
          ) : (
            `${suppressed} suppressed`
          )}
        </>
      )}
    </span>
  );
}
