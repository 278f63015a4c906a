/** The feed proposals tab: names seen in matching certificates, proposed for DNS or certificate monitoring; accepted or dismissed here. */
import { useState } from "preact/hooks";
import { get, post, type ApiError, type Schemas } from "../../api";
import { useSession } from "../../session";
import { pagePageSize, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { ActionButton, Badge, ErrorBox, Section } from "../../ui/widgets";

type Proposal = Schemas["CtProposal"];
type ProposalStatus = Proposal["status"];
type ProposalKind = Proposal["kind"];

export function ProposalsTab() {
  const s = useSession();
  const [status, setStatus] = useState<ProposalStatus>("proposed");
  const [kind, setKind] = useState<ProposalKind | "">("");
  const [state, setState] = useTableState({ sortBy: "created_at", pageSize: 20 });
  const r = useResource(() => get("/api/ct-log/proposals", { params: { query: { ...pagePageSize(state), status, kind: kind || undefined } } }), [state, status, kind]);
  const [err, setErr] = useState<ApiError>();
  const canDecide = s.can("ct-log:update_monitoring");
  return (
    <Section title="Feed proposals">
      <p class="muted">Names seen in matching certificates, proposed for DNS or certificate monitoring by filters with a feed turned on.</p>
      <div class="filters-row">
        <label class="inline">
          Status
          <select value={status} onChange={(e) => (setStatus((e.target as HTMLSelectElement).value as ProposalStatus), setState({ page: 1 }))}>
            <option value="proposed">Proposed</option>
            <option value="accepted">Accepted</option>
            <option value="dismissed">Dismissed</option>
          </select>
        </label>
        <label class="inline">
          Kind
          <select value={kind} onChange={(e) => (setKind((e.target as HTMLSelectElement).value as ProposalKind | ""), setState({ page: 1 }))}>
            <option value="">All</option>
            <option value="dns">DNS</option>
            <option value="certs">Certificates</option>
          </select>
        </label>
      </div>
      <ErrorBox error={err} />
      <DataTable
        caption="Feed proposals"
        state={state}
        onState={setState}
        total={r.data?.total}
        rows={r.data?.proposals}
        loading={r.loading}
        error={r.error}
        rowKey={(p) => p.id}
        empty={<p>No {status} proposals.</p>}
        columns={[
          { label: "Hostname", render: (p) => <span class="mono">{p.hostname}</span> },
          { label: "For", render: (p) => (p.kind === "dns" ? "DNS monitoring" : "Certificate monitoring") },
          { label: "Seen in", render: (p) => <a href={`/ct/matches/${p.source_sha256}`}>certificate {p.source_sha256.slice(0, 12)}…</a> },
          { label: "Status", render: (p) => <Badge value={p.status} /> },
          { label: "Proposed", render: (p) => <Time iso={p.created_at} /> },
          ...(canDecide && status === "proposed"
            ? [
                {
                  label: "Decision",
                  render: (p: Proposal) => (
                    <span class="row-actions">
                      <ActionButton label={`Accept ${p.hostname}`} onError={setErr} onClick={async () => (await post("/api/ct-log/proposals/{proposal_id}/accept", { params: { path: { proposal_id: p.id } } }), r.reload())}>
                        Accept
                      </ActionButton>
                      <ActionButton label={`Dismiss ${p.hostname}`} onError={setErr} onClick={async () => (await post("/api/ct-log/proposals/{proposal_id}/dismiss", { params: { path: { proposal_id: p.id } } }), r.reload())}>
                        Dismiss
                      </ActionButton>
                    </span>
                  ),
                },
              ]
            : []),
        ]}
      />
    </Section>
  );
}
