/**
 * The certificate inventory: every name with its state (issued in CT, deployed on the
 * monitored targets, expiring), filterable by state and name; one name's targets and
 * the timeline of its certificates as a picture (issued → deployed → expiring).
 * The API: GET /api/inventory/hostnames[/{hostname}] (docs/modules/inventory.md).
 */
import { useState } from "preact/hooks";
import { get } from "../api/legacy";
import { setQuery, useLocation } from "../router";
import { pagePageSize, sortQuery, useResource, useTableState } from "../ui/resource";
import { DataTable } from "../ui/table";
import { Time } from "../ui/time";
import { Badge, ErrorBox, KeyValues, PageHeader, Section } from "../ui/widgets";

export type HostnameState = "current" | "deploying" | "stale_deployment" | "not_in_ct" | "unmonitored" | "expiring_without_successor" | "expired" | "not_scanned";

interface Authorization {
  verdict: "authorized" | "unexpected_issuer" | "unknown_key" | "caa_violation";
  reason: string;
}

interface IssuedCertificate {
  sha256: string;
  served_sha256: string | null;
  issuer: string;
  not_before: string;
  not_after: string;
  spki_sha256: string;
  lifetime_days: number;
  exceeds_max_validity: boolean;
  maximum_validity_days: number;
  renewal_due_at: string;
  renewal_overdue_at: string;
}

interface HostnameRow {
  hostname: string;
  state: HostnameState;
  state_reason: string;
  state_since: string | null;
  latest_issued: IssuedCertificate | null;
  renewal: { status: string; due_at: string | null; overdue_at: string | null };
  renewal_interval_days: number | null;
  target_count: number;
  readiness: { status: "ready" | "not_ready" | "unknown"; matters_from: string | null };
}

interface HostnameList {
  hostnames: HostnameRow[];
  total: number;
  state_counts: Record<string, number>;
}

interface TimelineEntry extends IssuedCertificate {
  first_seen_ct_at: string | null;
  first_deployed_at: string | null;
  last_deployed_at: string | null;
  deployments: { address: string; target_id: number; first_seen_at: string; last_seen_at: string }[];
  authorization: Authorization | null;
}

interface DeployedTarget {
  target_id: number;
  monitor_id: number;
  address: string;
  standing: string;
  note: string;
  ct_status: string | null;
  ct_reason: string;
  trust: string | null;
  scanned_at: string | null;
  certificate: { sha256: string; served_sha256: string | null; issuer: string; not_before: string; not_after: string; in_ct: boolean } | null;
}

interface HostnameDetail extends Omit<HostnameRow, "readiness"> {
  readiness: { status: string; next_maximum_days: number | null; next_maximum_from: string | null; matters_from: string | null; reason: string };
  deployed: DeployedTarget[];
  timeline: TimelineEntry[];
  watched_since: string | null;
  proposal: { id: number; status: string; cert_monitor_id: number | null } | null;
}

/** The states in the order a person acts on them, with their words. */
export const HOSTNAME_STATES: { id: HostnameState; label: string; tone: string }[] = [
  { id: "expired", label: "Expired", tone: "bad" },
  { id: "stale_deployment", label: "Renewal not deployed", tone: "bad" },
  { id: "not_in_ct", label: "Not in CT", tone: "bad" },
  { id: "expiring_without_successor", label: "Expiring, no successor", tone: "warn" },
  { id: "deploying", label: "Deploying", tone: "info" },
  { id: "unmonitored", label: "Unmonitored", tone: "neutral" },
  { id: "not_scanned", label: "Not scanned yet", tone: "neutral" },
  { id: "current", label: "Current", tone: "good" },
];
const stateInfo = (s: string) => HOSTNAME_STATES.find((x) => x.id === s) ?? { id: s, label: s, tone: "neutral" };

export function StateBadge({ state }: { state: string }) {
  const i = stateInfo(state);
  return <Badge value={state} tone={i.tone} label={i.label} />;
}

const VERDICT_TONES: Record<string, string> = { authorized: "good", unknown_key: "warn", unexpected_issuer: "bad", caa_violation: "bad" };
export function VerdictBadge({ authorization }: { authorization: Authorization | null }) {
  if (!authorization) return <span class="muted">not judged</span>;
  return (
    <span title={authorization.reason}>
      <Badge value={authorization.verdict} tone={VERDICT_TONES[authorization.verdict]} label={authorization.verdict === "authorized" ? "routine" : authorization.verdict.replace(/_/g, " ")} />
    </span>
  );
}

/** The issuer's organization (or common name) out of a distinguished name. */
const issuerName = (dn: string) => /(?:^|,\s*)O=([^,]+)/.exec(dn)?.[1] ?? /(?:^|,\s*)CN=([^,]+)/.exec(dn)?.[1] ?? dn;
const enc = encodeURIComponent;

export function InventoryPage() {
  const loc = useLocation();
  const state = (loc.query.get("state") ?? "") as HostnameState | "";
  const q = loc.query.get("q") ?? "";
  const [search, setSearch] = useState(q);
  const [table, setTable] = useTableState({ sortBy: "hostname", pageSize: 20 });
  const r = useResource(
    () => get<HostnameList>("/api/inventory/hostnames", { ...pagePageSize(table), ...sortQuery(table), state: state || undefined, q: q || undefined }),
    [table, state, q],
  );
  const counts = r.data?.state_counts ?? {};
  return (
    <div>
      <PageHeader title="Certificate inventory" />
      <p class="muted">
        Every name of your CT matches and certificate monitors: the certificate last issued for it, what each monitored endpoint serves, and whether they agree.
      </p>
      <form
        class="filters"
        role="search"
        aria-label="Filter the inventory"
        onSubmit={(e) => {
          e.preventDefault();
          setTable({ page: 1 });
          setQuery({ q: search.trim() || null });
        }}
      >
        <label>
          State{" "}
          <select
            value={state}
            onChange={(e) => {
              setTable({ page: 1 });
              setQuery({ state: (e.target as HTMLSelectElement).value || null });
            }}
          >
            <option value="">All states</option>
            {HOSTNAME_STATES.map((s) => (
              <option value={s.id}>
                {s.label}
                {counts[s.id] !== undefined ? ` (${counts[s.id]})` : ""}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name contains <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ul class="state-counts" aria-label="Names per state">
        {HOSTNAME_STATES.filter((s) => counts[s.id]).map((s) => (
          <li>
            <a href={`/inventory?state=${s.id}`} aria-current={state === s.id ? "true" : undefined}>
              <StateBadge state={s.id} /> {counts[s.id]}
            </a>
          </li>
        ))}
      </ul>
      <DataTable
        caption="Hostnames"
        state={table}
        onState={setTable}
        total={r.data?.total}
        rows={r.data?.hostnames}
        loading={r.loading}
        error={r.error}
        rowKey={(h) => h.hostname}
        empty={<p>{state || q ? "No name matches these filters." : "No name yet: add a CT filter or a certificate monitor, and the names they find appear here."}</p>}
        columns={[
          { label: "Hostname", sort: "hostname", render: (h) => <a href={`/inventory/${enc(h.hostname)}`} class="mono">{h.hostname}</a> },
          {
            label: "State",
            sort: "state",
            render: (h) => (
              <span class="state-cell">
                <StateBadge state={h.state} /> <span class="muted small">{h.state_reason}</span>
              </span>
            ),
          },
          {
            label: "Latest issued",
            sort: "not_after",
            render: (h) =>
              h.latest_issued ? (
                <span>
                  {issuerName(h.latest_issued.issuer)}, {h.latest_issued.lifetime_days} days, expires <Time iso={h.latest_issued.not_after} date />
                </span>
              ) : (
                <span class="muted">never seen in CT</span>
              ),
          },
          {
            label: "Renewal",
            sort: "renewal_due_at",
            render: (h) =>
              h.renewal.status === "none" ? (
                <span class="muted">—</span>
              ) : (
                <span>
                  <Badge value={h.renewal.status} tone={{ ok: "good", renewed: "good", due: "warn", overdue: "bad", expired: "bad" }[h.renewal.status]} />
                  {h.renewal.due_at && h.renewal.status === "ok" && (
                    <span class="muted small">
                      {" "}
                      due <Time iso={h.renewal.due_at} date />
                    </span>
                  )}
                </span>
              ),
          },
          {
            label: "Next maximum",
            render: (h) =>
              h.readiness.status === "not_ready" ? (
                <span>
                  <Badge value="not_ready" tone="warn" label="not ready" />
                  {h.readiness.matters_from && (
                    <span class="muted small">
                      {" "}
                      from <Time iso={h.readiness.matters_from} date />
                    </span>
                  )}
                </span>
              ) : (
                <span class="muted">{h.readiness.status}</span>
              ),
          },
          { label: "Targets", render: (h) => h.target_count },
        ]}
      />
    </div>
  );
}

/**
 * The timeline as a picture: one lane per certificate, its validity as a bar on a
 * shared time axis, the span it was seen served drawn over it, a mark where CT first
 * showed it, the renewal thresholds (two thirds, last sixth), and "now".
 */
export function Timeline({ entries, now }: { entries: TimelineEntry[]; now: number }) {
  if (!entries.length) return <p class="muted">No certificate of this name is known yet.</p>;
  const times = entries.flatMap((e) => [Date.parse(e.not_before), Date.parse(e.not_after)]).concat(now);
  const start = Math.min(...times);
  const end = Math.max(...times);
  const W = 760;
  const LABEL = 0;
  const lane = 34;
  const H = entries.length * lane + 28;
  const x = (iso: string | number) => LABEL + ((typeof iso === "number" ? iso : Date.parse(iso)) - start) / Math.max(1, end - start) * (W - LABEL - 8) + 4;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return (
    // Focusable: on a phone the picture scrolls sideways, and keyboard users must reach it.
    <figure class="timeline" tabIndex={0} aria-label="Timeline of the certificates">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="timeline-title" width="100%">
        <title id="timeline-title">
          Certificates of this name over time: validity, first seen in CT, deployed, renewal thresholds
        </title>
        {entries.map((e, i) => {
          const y = i * lane + 8;
          const deployedFrom = e.first_deployed_at;
          const deployedTo = e.last_deployed_at;
          return (
            <g data-testid="timeline-lane" data-sha256={e.sha256}>
              <rect x={x(e.not_before)} y={y + 6} width={Math.max(2, x(e.not_after) - x(e.not_before))} height={10} class="tl-validity" rx={2}>
                <title>
                  {`${issuerName(e.issuer)}: valid ${day(Date.parse(e.not_before))} to ${day(Date.parse(e.not_after))} (${e.lifetime_days} days)`}
                </title>
              </rect>
              {deployedFrom && deployedTo && (
                <rect x={x(deployedFrom)} y={y + 4} width={Math.max(3, x(deployedTo) - x(deployedFrom))} height={14} class="tl-deployed" rx={2}>
                  <title>{`Served from ${deployedFrom} to ${deployedTo}`}</title>
                </rect>
              )}
              <line x1={x(e.renewal_due_at)} x2={x(e.renewal_due_at)} y1={y + 2} y2={y + 20} class="tl-due">
                <title>{`Renewal due ${e.renewal_due_at} (two thirds of its lifetime)`}</title>
              </line>
              <line x1={x(e.renewal_overdue_at)} x2={x(e.renewal_overdue_at)} y1={y + 2} y2={y + 20} class="tl-overdue">
                <title>{`Renewal overdue ${e.renewal_overdue_at} (its last sixth)`}</title>
              </line>
              {e.first_seen_ct_at && (
                <circle cx={x(e.first_seen_ct_at)} cy={y + 11} r={5} class="tl-issued">
                  <title>{`First seen in CT ${e.first_seen_ct_at}`}</title>
                </circle>
              )}
              <text x={x(e.not_before)} y={y + 30} class="tl-label">
                {`${e.sha256.slice(0, 10)}… ${issuerName(e.issuer)}`}
              </text>
            </g>
          );
        })}
        <line x1={x(now)} x2={x(now)} y1={0} y2={H - 16} class="tl-now" />
        <text x={x(now)} y={H - 4} class="tl-axis" text-anchor="middle">
          now
        </text>
        <text x={4} y={H - 4} class="tl-axis">
          {day(start)}
        </text>
        <text x={W - 4} y={H - 4} class="tl-axis" text-anchor="end">
          {day(end)}
        </text>
      </svg>
      <figcaption class="tl-legend">
        <span class="tl-key validity" /> valid <span class="tl-key deployed" /> seen served <span class="tl-key issued" /> first seen in CT <span class="tl-key due" /> renewal due (2/3){" "}
        <span class="tl-key overdue" /> overdue (last 1/6)
      </figcaption>
    </figure>
  );
}

export function InventoryHostnamePage({ hostname }: { hostname: string }) {
  const r = useResource(() => get<HostnameDetail>(`/api/inventory/hostnames/${enc(hostname)}`), [hostname]);
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
                { label: "Standing", render: (t) => <span><Badge value={t.standing} tone={{ current: "good", behind: "bad", not_in_ct: "bad", expired: "bad" }[t.standing]} /> <span class="muted small">{t.note}</span></span> },
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

/** Where a certificate of a CT match is deployed (the CT match page's link to the inventory). */
export function MatchDeployments({ sha256 }: { sha256: string }) {
  const r = useResource(
    () =>
      get<{ deployed: { target_id: number; monitor_id: number; hostname: string; address: string; first_seen_at: string; last_seen_at: string; current: boolean }[]; hostnames: { hostname: string; state: string | null }[] }>(
        `/api/inventory/certificates/${sha256}`,
      ).catch((e) => (e?.status === 404 ? null : Promise.reject(e))),
    [sha256],
  );
  if (r.error) return <ErrorBox error={r.error} />;
  if (r.data === undefined) return <p class="muted">Loading where it is deployed…</p>;
  if (r.data === null) return <p class="muted">Not in the certificate inventory yet.</p>;
  const d = r.data;
  return (
    <div data-testid="match-deployments">
      {d.deployed.length ? (
        <ul>
          {d.deployed.map((x) => (
            <li>
              <a href={`/inventory/${enc(x.hostname)}`}>{x.hostname}</a> on <span class="mono">{x.address}</span>: {x.current ? "served now" : "served before"} (seen <Time iso={x.first_seen_at} /> → <Time iso={x.last_seen_at} />)
            </li>
          ))}
        </ul>
      ) : (
        <p>Not seen served on any monitored target.</p>
      )}
      <p>
        Names:{" "}
        {d.hostnames.map((n, i) => (
          <>
            {i > 0 && ", "}
            <a href={`/inventory/${enc(n.hostname)}`}>{n.hostname}</a> {n.state && <StateBadge state={n.state} />}
          </>
        ))}
      </p>
    </div>
  );
}
