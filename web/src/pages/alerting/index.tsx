/**
 * Alerting per module: rules (with a CEL editor that lists the module's variables
 * from introspection and tests an expression against a sample event before saving),
 * templates, history of every match (sent with delivery status, or suppressed and
 * why); and, organization-wide, notification channels (with test-send) and rule lists.
 */
import { setQuery, useLocation } from "../../router";
import { MODULE_LABELS, MONITORING_MODULES, useSession, type ModuleName } from "../../session";
import { PageHeader, TabPanel, Tabs } from "../../ui/widgets";
import { ChannelsTab } from "./channels";
import { HistoryTab } from "./history";
import { ListsTab } from "./lists";
import { RulesTab } from "./rules";
import { TemplatesTab } from "./templates";

export function AlertingPage() {
  const s = useSession();
  const loc = useLocation();
  const sections = [
    ...MONITORING_MODULES.filter((m) => s.canAny(`${m}:view_alert_rules`, `${m}:view_alerts`, `${m}:view_alert_templates`)).map((m) => ({ id: m, label: MODULE_LABELS[m] })),
    ...(s.can("admin:manage_users") ? [{ id: "channels", label: "Channels" }] : []),
    ...(s.can("lists:view_lists") ? [{ id: "lists", label: "Rule lists" }] : []),
  ];
  const section = sections.find((x) => x.id === loc.query.get("section"))?.id ?? sections[0]?.id;
  return (
    <div>
      <PageHeader title="Alerting" />
      {!section ? (
        <p class="empty">Your roles include no alerting permission.</p>
      ) : (
        <>
          <Tabs label="Alerting sections" tabs={sections} active={section} onSelect={(id) => setQuery({ section: id, tab: null, rule: null, status: null, alert: null })} />
          <TabPanel id={section}>
            {section === "channels" ? <ChannelsTab /> : section === "lists" ? <ListsTab /> : <ModuleAlerting module={section as ModuleName} />}
          </TabPanel>
        </>
      )}
    </div>
  );
}

function ModuleAlerting({ module }: { module: ModuleName }) {
  const s = useSession();
  const loc = useLocation();
  const tabs = [
    ...(s.can(`${module}:view_alert_rules`) ? [{ id: "rules", label: "Rules" }] : []),
    ...(s.can(`${module}:view_alert_templates`) ? [{ id: "templates", label: "Templates" }] : []),
    ...(s.can(`${module}:view_alerts`) ? [{ id: "history", label: "History" }] : []),
  ];
  const tab = tabs.find((t) => t.id === loc.query.get("tab"))?.id ?? tabs[0]?.id;
  return (
    <div class="subtabs">
      <Tabs label={`${MODULE_LABELS[module]} alerting`} tabs={tabs.map((t) => ({ ...t, id: t.id }))} active={tab} onSelect={(id) => setQuery({ tab: id, rule: null, status: null, alert: null })} />
      <TabPanel id={tab}>
        {tab === "rules" && <RulesTab module={module} />}
        {tab === "templates" && <TemplatesTab module={module} />}
        {tab === "history" && <HistoryTab module={module} />}
      </TabPanel>
    </div>
  );
}
