/** One monitored domain: its current registration, whether lookups succeed, the snapshot history and the comparison of two snapshots. */
import { useState } from "preact/hooks";
import { get } from "../../api";
import { navigate, useLocation } from "../../router";
import { CollectionDetail, type Collection } from "../../ui/collection";
import { limitOffset, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { Badge, Chips, ErrorBox, KeyValues, Notice, PageHeader, Section } from "../../ui/widgets";
import { DiffView } from "./diff";
import { ExpiryDays, rdapFacts } from "./facts";

const enc = encodeURIComponent;

/** Why there is no registration to show: never looked up yet, or looked up and failing (with the reason and since when). */
function NoSnapshot({ collection: c }: { collection: Collection | null }) {
  if (c?.state === "paused") return <p class="muted">No snapshot: the monitor is disabled, nothing is looked up.</p>;
  if (c?.error) {
    return (
      <Notice kind="warn">
        {c.state === "failing" ? "Lookup failing since " : "First lookup failed at "}
        <Time iso={c.failing_since} />: {c.error.message}.{" "}
        {c.next_attempt_at ? <>Next attempt <Time iso={c.next_attempt_at} />.</> : "Tried again at the next scheduled run."}
      </Notice>
    );
  }
  return <p class="muted">No snapshot yet: the domain is looked up at the next scheduled run.</p>;
}

export function RdapDomainPage({ domain }: { domain: string }) {
  const loc = useLocation();
  const from = loc.query.get("from");
  const to = loc.query.get("to");
  const [state, setState] = useTableState({ sortBy: "timestamp", sortOrder: "desc", pageSize: 20 });
  const path = { domain };
  const h = useResource(() => get("/api/rdap/domains/{domain}/history", { params: { path, query: limitOffset(state) } }), [domain, state]);
  const latest = useResource(() => get("/api/rdap/domains/{domain}/snapshot", { params: { path } }), [domain]);
  const monitor = useResource(() => get("/api/rdap/domains", { params: { query: { domain_name: domain, limit: 1 } } }), [domain]);
  const collection = monitor.data?.domains[0]?.collection ?? null;
  const [pickA, setPickA] = useState<string | null>(from);
  const [pickB, setPickB] = useState<string | null>(to);
  const facts = latest.data ? rdapFacts(latest.data) : null;
  return (
    <div>
      <p class="crumbs">
        <a href="/rdap">RDAP</a> ›
      </p>
      <PageHeader title={domain} />
      <Section title="Current registration">
        {latest.error && latest.error.status === 404 ? (
          <NoSnapshot collection={collection} />
        ) : (
          <ErrorBox error={latest.error} />
        )}
        {facts && collection && collection.state !== "ok" && collection.error && (
          <Notice kind="warn">
            Lookups failing since <Time iso={collection.failing_since} />: {collection.error.message}. What follows is the last snapshot, taken <Time iso={collection.last_success_at} />.
          </Notice>
        )}
        {facts && (
          <KeyValues
            items={[
              ["Expires", <>{facts.expiry ? <Time iso={facts.expiry} date /> : "unknown"} <ExpiryDays iso={facts.expiry} /></>],
              ["Registered", <Time iso={facts.registered} date />],
              ["Registrar", facts.registrar],
              ["Status", <Chips items={facts.status} label="Status" />],
              ["Nameservers", <Chips items={facts.nameservers} label="Nameservers" />],
            ]}
          />
        )}
      </Section>
      {collection && (
        <Section title="Lookups">
          <CollectionDetail collection={collection} what="RDAP lookups" />
        </Section>
      )}
      <Section title="Snapshot history">
        <p class="muted">Pick two snapshots and compare them side by side.</p>
        <DataTable
          caption="Snapshots"
          state={state}
          onState={setState}
          total={h.data?.total}
          rows={h.data?.snapshots}
          loading={h.loading}
          error={h.error}
          rowKey={(x) => x.id}
          empty={<p>No snapshot stored yet.</p>}
          columns={[
            { label: "Taken", render: (x) => <Time iso={x.timestamp} /> },
            { label: "Changed", render: (x) => (x.changed ? <Badge value="warn" tone="warn" label="changed" /> : <span class="muted">unchanged</span>) },
            { label: "Hash", render: (x) => <span class="mono small">{x.hash.slice(0, 16)}…</span> },
            {
              label: "Compare",
              render: (x) => (
                <span class="row-actions">
                  {/* Every row has a pair: the names say which snapshot each radio picks. */}
                  <label class="inline">
                    <input type="radio" name="snap-a" checked={pickA === x.id} onChange={() => setPickA(x.id)} /> before
                    <span class="sr-only">
                      : snapshot {x.id} of <Time iso={x.timestamp} />
                    </span>
                  </label>
                  <label class="inline">
                    <input type="radio" name="snap-b" checked={pickB === x.id} onChange={() => setPickB(x.id)} /> after
                    <span class="sr-only">
                      : snapshot {x.id} of <Time iso={x.timestamp} />
                    </span>
                  </label>
                </span>
              ),
            },
          ]}
        />
        <button type="button" class="primary" disabled={!pickA || !pickB || pickA === pickB} onClick={() => pickA && pickB && navigate(`/rdap/${enc(domain)}?from=${enc(pickA)}&to=${enc(pickB)}`)}>
          Compare the two snapshots
        </button>
      </Section>
      {from && to && <DiffView domain={domain} from={from} to={to} />}
    </div>
  );
}
