/**
 * Certificate deployments: monitors with their indicators, recent scans with a
 * days-left timeline, scanner agents (token shown once, revoke), and per monitor
 * its targets and scan history with the chain, protocols, suites, groups and the
 * five framework verdicts with reasons (monitor-page.tsx). One file per tab.
 */
import { setQuery, useLocation } from "../../router";
import { PageHeader, TabPanel, Tabs } from "../../ui/widgets";
import { AgentsTab } from "./agents";
import { MonitorsTab } from "./monitors";
import { ScansTab } from "./scans";

export { CertMonitorPage } from "./monitor-page";

const TABS = [
  { id: "monitors", label: "Monitors" },
  { id: "scans", label: "Recent scans" },
  { id: "agents", label: "Scanner agents" },
];

export function CertsPage() {
  const loc = useLocation();
  const tab = TABS.some((t) => t.id === loc.query.get("tab")) ? loc.query.get("tab")! : "monitors";
  return (
    <div>
      <PageHeader title="Certificate deployments" />
      <Tabs label="Certificate sections" tabs={TABS} active={tab} onSelect={(id) => setQuery({ tab: id })} />
      <TabPanel id={tab}>
        {tab === "monitors" && <MonitorsTab />}
        {tab === "scans" && <ScansTab />}
        {tab === "agents" && <AgentsTab />}
      </TabPanel>
    </div>
  );
}
