/**
 * RDAP: monitored domains with days until expiry, the changes across all domains,
 * and per domain the snapshot history and a side-by-side diff of any two snapshots.
 * One file per part: the Domains and Changes tabs, a domain's page, the comparison.
 */
import { setQuery, useLocation } from "../../router";
import { PageHeader, TabPanel, Tabs } from "../../ui/widgets";
import { ChangesTab } from "./changes";
import { DomainsTab } from "./domains";

export { RdapDomainPage } from "./domain";

const TABS = [
  { id: "domains", label: "Domains" },
  { id: "changes", label: "Changes" },
];

export function RdapPage() {
  const loc = useLocation();
  const tab = loc.query.get("tab") === "changes" ? "changes" : "domains";
  return (
    <div>
      <PageHeader title="RDAP registrations" />
      <Tabs label="RDAP sections" tabs={TABS} active={tab} onSelect={(id) => setQuery({ tab: id })} />
      <TabPanel id={tab}>{tab === "domains" ? <DomainsTab /> : <ChangesTab />}</TabPanel>
    </div>
  );
}
