/** One name of the inventory: its state and why, its certificates as a timeline, what each monitored target serves. */
import { get, type Schemas } from "../../api";
import { useResource } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { Badge, ErrorBox, KeyValues, PageHeader, Section } from "../../ui/widgets";
import { issuerName, StateBadge, VerdictBadge } from "./states";
import { Timeline } from "./timeline";

const STANDING_TONES: Record<Schemas["InventoryDeployedTarget"]["standing"], string | undefined> = { current: "good", behind: "bad", not_in_ct: "bad", expired: "bad", not_scanned: undefined, disabled: undefined };

export function InventoryHostnamePage({ hostname }: { hostname: string }) {
  const r = useResource(() => get("/api/inventory/hostnames/{hostname}", { params: { path: { hostname } } }), [hostname]);
  const h = r.data;
  return (
    <div>
      <PageHeader title={hostname}>
        <a href="/inventory">All names</a>
      </PageHeader>
      <ErrorBox error={r.error} />
      {h && (
        <>
          <p data-testid="hostname-state">
            <StateBadge state={h.state} /> {h.state_reason}
          </p>
          <KeyValues
            items={[
              ["Since", h.state_since ? <Time iso={h.state_since} /> : "not evaluated yet"],
              [
                "Latest issued",
                h.latest_issued ? (
                  <span>
                    <a class="mono" href={`/ct/matches/${h.latest_issued.sha256}`}>
                      {h.latest_issued.sha256.slice(0, 16)}…
                    </a>{" "}
                    {issuerName(h.latest_issued.issuer)}, {h.latest_issued.lifetime_days} days
                    {h.latest_issued.exceeds_max_validity && <Badge value="exceeds" tone="bad" label={`longer than the ${h.latest_issued.maximum_validity_days}-day maximum`} />}
                  </span>
                ) : (
                  "never seen in CT"
                ),
              ],
              ["Renewal", h.renewal.status === "none" ? "—" : <span>{h.renewal.status}{h.renewal.due_at && <> · due <Time iso={h.renewal.due_at} date /> · overdue <Time iso={h.renewal.overdue_at} date /></>}</span>],
              ["Renewal cadence", h.renewal_interval_days === null ? "not observed yet (one certificate)" : `every ${h.renewal_interval_days} days`],
              ["Next maximum", h.readiness.reason],
              ["CT searched since", h.watched_since ? <Time iso={h.watched_since} date /> : "no CT filter covers this name"],
            ]}
          />
          {/* Only for a name no target watches: once monitored, the proposal (accepted or not) is history. */}
          {h.state === "unmonitored" && h.proposal && h.proposal.status === "proposed" && (
            <p>
              No monitored endpoint serves this name: <a href="/ct?tab=proposals">a certificate monitor is proposed</a>.
            </p>
          )}
          <Section title="Timeline">
            <Timeline entries={h.timeline} now={Date.now()} />
          </Section>
          <Section title="What each target serves">
            <DataTable
              caption="Targets"
              rows={h.deployed}
              rowKey={(t) => t.target_id}
              empty={<p>No monitored target serves this name.</p>}
              columns={[
                { label: "Target", render: (t) => <a class="mono" href={`/certificates/${t.monitor_id}`}>{t.address}</a> },
                { label: "Standing", render: (t) => <span><Badge value={t.standing} tone={STANDING_TONES[t.standing]} /> <span class="muted small">{t.note}</span></span> },
                {
                  label: "Certificate",
                  render: (t) =>
                    t.certificate ? (
                      <span>
                        <span class="mono">{(t.certificate.served_sha256 ?? t.certificate.sha256).slice(0, 16)}…</span> {issuerName(t.certificate.issuer)}, expires <Time iso={t.certificate.not_after} date />
                      </span>
                    ) : (
                      <span class="muted">none obtained</span>
                    ),
                },
                { label: "CT", render: (t) => (t.ct_status ? <span title={t.ct_reason}>{t.ct_status.replace(/_/g, " ")}</span> : <span class="muted">—</span>) },
                { label: "Scanned", render: (t) => (t.scanned_at ? <Time iso={t.scanned_at} /> : <span class="muted">not yet</span>) },
              ]}
            />
          </Section>
          <Section title="Certificates">
            <DataTable
              caption="Certificates of this name"
              rows={h.timeline}
              rowKey={(e) => e.sha256}
              empty={<p>None known.</p>}
              columns={[
                { label: "Certificate", render: (e) => (e.first_seen_ct_at ? <a class="mono" href={`/ct/matches/${e.sha256}`}>{e.sha256.slice(0, 16)}…</a> : <span class="mono">{e.sha256.slice(0, 16)}…</span>) },
                { label: "Issuer", render: (e) => issuerName(e.issuer) },
                { label: "Valid", render: (e) => <span><Time iso={e.not_before} date /> → <Time iso={e.not_after} date /> ({e.lifetime_days} d)</span> },
                { label: "In CT", render: (e) => (e.first_seen_ct_at ? <Time iso={e.first_seen_ct_at} /> : <span class="muted">never seen</span>) },
                { label: "Served", render: (e) => (e.first_deployed_at ? <span><Time iso={e.first_deployed_at} /> → <Time iso={e.last_deployed_at} /></span> : <span class="muted">never</span>) },
                { label: "Issuance", render: (e) => <VerdictBadge authorization={e.authorization} /> },
              ]}
            />
          </Section>
        </>
      )}
    </div>
  );
}
