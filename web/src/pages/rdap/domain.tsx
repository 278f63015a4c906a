/** One monitored domain: its current registration, whether lookups succeed, the snapshot history and the comparison of two snapshots. */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { get, type Schemas } from "../../api";
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

type History = Schemas["RdapHistory"];

/**
 * Why the compare button is disabled, in words beside it (null: it is not). A snapshot is
 * stored only when the registration's content changes, so one snapshot means "not changed
 * since", and none means it was never read: said with the lookup state.
 */
function compareBlocked(history: History | undefined, failed: boolean, c: Collection | null, pickA: string | null, pickB: string | null): ComponentChildren | null {
  if (!history) return failed ? "The snapshot history could not be loaded (see the error above)." : "Loading the snapshot history.";
  if (history.total === 0) {
    if (c?.state === "paused") return "No snapshot to compare: the monitor is disabled, the registration is not looked up.";
    if (c?.error) {
      return (
        <>
          No snapshot to compare: the registration was never read; lookups failing since <Time iso={c.failing_since} /> ({c.error.message}).
        </>
      );
    }
    return "No snapshot yet: the registration was never read; it is looked up at the next scheduled run.";
  }
  if (history.total === 1) {
    return (
      <>
        Needs two snapshots; the only one was taken <Time iso={history.snapshots[0]?.timestamp} />
        {c?.last_success_at ? (
          <>
            , and the registration has not changed since (last read <Time iso={c.last_success_at} />)
          </>
        ) : null}
        . A new snapshot is stored when the registration changes.
      </>
    );
  }
  if (!pickA || !pickB) return "Pick a before and an after snapshot in the table.";
  if (pickA === pickB) return "Pick two different snapshots: before and after are the same one.";
  return null;
}

/** The compare button, with why it is disabled beside it (read with it by a screen reader). */
function CompareAction(p: { history: History | undefined; failed: boolean; collection: Collection | null; pickA: string | null; pickB: string | null; onCompare: (from: string, to: string) => void }) {
  const blocked = compareBlocked(p.history, p.failed, p.collection, p.pickA, p.pickB);
  return (
    <div class="compare-action">
      <button type="button" class="primary" disabled={blocked !== null} aria-describedby={blocked ? "compare-why" : undefined} onClick={() => p.pickA && p.pickB && p.onCompare(p.pickA, p.pickB)}>
        Compare the two snapshots
      </button>
      {blocked && (
        <span id="compare-why" class="small muted" data-testid="compare-why">
          {blocked}
        </span>
      )}
    </div>
  );
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
        <CompareAction history={h.data} failed={!!h.error} collection={collection} pickA={pickA} pickB={pickB} onCompare={(a, b) => navigate(`/rdap/${enc(domain)}?from=${enc(a)}&to=${enc(b)}`)} />
      </Section>
      {from && to && <DiffView domain={domain} from={from} to={to} />}
    </div>
  );
}
