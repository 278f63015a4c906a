/**
 * Certificate Transparency: filters (create, edit, toggle, delete, typosquatting
 * eligibility), matches with a per-day chart and their detail (certificate, CAA
 * verdict, log occurrences), typosquatting matches with evidence, feed proposals, and
 * the CT logs the service reads. One file per tab; the detail pages in match-detail.tsx.
 */
import { setQuery, useLocation } from "../../router";
import { PageHeader, TabPanel, Tabs } from "../../ui/widgets";
import { FiltersTab } from "./filters";
import { LogsTab } from "./logs";
import { MatchesTab } from "./matches";
import { ProposalsTab } from "./proposals";
import { TyposquatTab } from "./typosquatting";

export { CtMatchPage, TyposquatMatchPage } from "./match-detail";

const TABS = [
  { id: "filters", label: "Filters" },
  { id: "matches", label: "Matches" },
  { id: "typosquatting", label: "Typosquatting" },
  { id: "proposals", label: "Feed proposals" },
  { id: "logs", label: "Logs" },
];

export function CtPage() {
  const loc = useLocation();
  const tab = TABS.some((t) => t.id === loc.query.get("tab")) ? loc.query.get("tab")! : "filters";
  return (
    <div>
      <PageHeader title="Certificate Transparency" />
      <Tabs label="Certificate Transparency sections" tabs={TABS} active={tab} onSelect={(id) => setQuery({ tab: id })} />
      <TabPanel id={tab}>
        {tab === "filters" && <FiltersTab />}
        {tab === "matches" && <MatchesTab />}
        {tab === "typosquatting" && <TyposquatTab />}
        {tab === "proposals" && <ProposalsTab />}
        {tab === "logs" && <LogsTab />}
      </TabPanel>
    </div>
  );
}
