/**
 * Lookalike domains as assets (GET /api/ct-log/lookalikes): the list by state, confidence
 * and source with the exports; a lookalike's detail with its label set against the
 * protected label character by character (what differs is marked in words, not by colour
 * alone, with each character's code point and script), its DNS, web and RDAP facts, the
 * certificates naming it, its timeline, and the dismissal. Every value shown comes from
 * the API as text: lookalike data is written by attackers and is never markup here.
 */
import { useState } from "preact/hooks";
import { get, post, type ApiError, type QueryOf, type Schemas } from "../api";
import { queryChoice, setQuery, useLocation } from "../router";
import { useSession } from "../session";
import { CollectionBadge, CollectionDetail } from "../ui/collection";
import { Form, TextArea, useForm } from "../ui/form";
import { pagePageSize, sortQuery, useResource, useTableState } from "../ui/resource";
import { DataTable } from "../ui/table";
import { Time } from "../ui/time";
import { ActionButton, Badge, Chips, Dialog, ErrorBox, KeyValues, Notice, PageHeader, Section } from "../ui/widgets";

export type Lookalike = Schemas["Lookalike"];
export type LookalikeState = Lookalike["state"];
type LookalikeDetail = Schemas["LookalikeDetail"];
type CharacterStatus = LookalikeDetail["comparison"]["characters"][number]["status"];
type Discovery = Schemas["LookalikeDiscovery"];
type LookalikeQuery = QueryOf<"/api/ct-log/lookalikes">;
const LOOKALIKE_STATES: readonly NonNullable<LookalikeQuery["state"]>[] = ["open", "new", "registered", "resolving", "mail_capable", "serving", "gone", "dismissed"];
const SORTS: readonly NonNullable<LookalikeQuery["sort_by"]>[] = ["first_seen_at", "domain", "state", "confidence", "last_checked_at"];

/** The states in words, and how loud each is. */
const STATES: { value: LookalikeState; label: string; tone: string }[] = [
  { value: "new", label: "new (not checked yet)", tone: "neutral" },
  { value: "registered", label: "registered", tone: "info" },
  { value: "resolving", label: "resolving", tone: "warn" },
  { value: "mail_capable", label: "takes mail", tone: "bad" },
  { value: "serving", label: "serving a site", tone: "bad" },
  { value: "gone", label: "gone", tone: "good" },
  { value: "dismissed", label: "dismissed", tone: "neutral" },
];
const stateOf = (s: LookalikeState) => STATES.find((x) => x.value === s) ?? { value: s, label: s, tone: "neutral" };

export function StateBadge({ state }: { state: LookalikeState }) {
  const s = stateOf(state);
  return <Badge value={state} tone={s.tone} label={s.label} />;
}

const ConfidenceBadge = ({ confidence }: { confidence: "low" | "high" }) => (
  <Badge value={confidence} tone={confidence === "high" ? "bad" : "info"} label={confidence === "high" ? "high confidence" : "low confidence"} />
);

const SOURCE_LABEL: Record<Lookalike["source"], string> = { ct: "certificate (CT)", permutation: "registered permutation" };
const words = (ids: string[]) => ids.map((e) => e.replace(/_/g, " "));

/** The domain as people read it, with its A-label form when that differs. */
function DomainName({ l }: { l: Pick<Lookalike, "domain" | "domain_unicode"> }) {
  return (
    <>
      <span class="mono">{l.domain_unicode}</span>
      {l.domain_unicode !== l.domain && <span class="mono small muted"> ({l.domain})</span>}
    </>
  );
}

export function LookalikesPage() {
  const loc = useLocation();
  const s = useSession();
  const stateChoice = loc.query.get("state") ?? "open";
  const state = stateChoice === "all" ? undefined : queryChoice(loc.query, "state", LOOKALIKE_STATES) ?? "open";
  const confidence = queryChoice(loc.query, "confidence", ["low", "high"] as const);
  const source = queryChoice(loc.query, "source", ["ct", "permutation"] as const);
  const [table, setTable] = useTableState({ sortBy: "first_seen_at", sortOrder: "desc", pageSize: 20 });
  const r = useResource(
    () => get("/api/ct-log/lookalikes", { params: { query: { ...pagePageSize(table), ...sortQuery(table, SORTS), state, confidence, source } } }),
    [table, state, confidence, source],
  );
  const [found, setFound] = useState<Discovery>();
  const [err, setErr] = useState<ApiError>();
  const choose = (key: string) => (e: Event) => (setQuery({ [key]: (e.target as HTMLSelectElement).value }, { replace: true }), setTable({ page: 1 }));
  return (
    <div>
      <PageHeader title="Lookalike domains">
        {s.can("ct-log:update_monitoring") && (
          <ActionButton busyLabel="Looking…" onError={setErr} onClick={async () => (setFound(await post("/api/ct-log/lookalikes/discover", { body: {} })), r.reload())}>
            Look for registered permutations now
          </ActionButton>
        )}
      </PageHeader>
      <p class="muted">
        Domains imitating your protected domains: named in a certificate of a CT log, or found registered among the permutations of a protected domain. Each is checked every few hours (DNS, its
        web port, RDAP); a change of state can alert.
      </p>
      <ErrorBox error={err} />
      {found && (
        <Notice kind={found.error ? "warn" : "success"}>
          <span data-testid="discovery-result">
            Asked DNS about {found.queries} of {found.permutations} permutations: {found.registered} registered
            {found.new_lookalikes.length ? `, new: ${found.new_lookalikes.join(", ")}` : ", none new"}. {found.budget.remaining_today} of {found.budget.per_day} queries left today.
            {found.error && ` ${found.failed} could not be answered: ${found.error.message}`}
          </span>
        </Notice>
      )}
      <Section
        title="Lookalikes"
        actions={
          <span class="row-actions" aria-label="Export the open lookalikes">
            Export open:{" "}
            {(["csv", "json", "txt", "rpz"] as const).map((f) => (
              <a href={`/api/ct-log/lookalikes/export?format=${f}`} download aria-label={`Export the open lookalikes as ${f === "txt" ? "a blocklist" : f === "rpz" ? "an RPZ zone" : f.toUpperCase()}`}>
                {f === "txt" ? "blocklist" : f.toUpperCase()}
              </a>
            ))}
          </span>
        }
      >
        <div class="filters-row">
          <label class="inline">
            State{" "}
            <select value={state ?? "all"} onChange={choose("state")}>
              <option value="open">Open (not gone, not dismissed)</option>
              <option value="all">All</option>
              {STATES.map((x) => (
                <option value={x.value}>{x.label}</option>
              ))}
            </select>
          </label>
          <label class="inline">
            Confidence{" "}
            <select value={confidence} onChange={choose("confidence")}>
              <option value="">All</option>
              <option value="high">High</option>
              <option value="low">Low (candidates)</option>
            </select>
          </label>
          <label class="inline">
            Found by{" "}
            <select value={source} onChange={choose("source")}>
              <option value="">All</option>
              <option value="ct">Certificate (CT)</option>
              <option value="permutation">Registered permutation</option>
            </select>
          </label>
        </div>
        <DataTable
          caption="Lookalike domains"
          state={table}
          onState={setTable}
          total={r.data?.total}
          rows={r.data?.lookalikes}
          loading={r.loading}
          error={r.error}
          rowKey={(l) => l.id}
          empty={<p>No lookalike in this view. Lookalikes are looked for only for CT filters with lookalike detection on.</p>}
          columns={[
            {
              label: "Lookalike",
              sort: "domain",
              render: (l) => (
                <>
                  <a href={`/lookalikes/${l.id}`}>
                    <DomainName l={l} />
                  </a>
                  <span class="small muted block">found by {SOURCE_LABEL[l.source]}</span>
                  <span class="small muted block lookalike-imitates-inline">
                    imitates <span class="mono">{l.protected_domain}</span>
                  </span>
                </>
              ),
            },
            // Below 1440 px the column gives way to the line under the lookalike (styles.css), so the table fits without scrolling.
            { label: "Imitates", class: "lookalike-imitates-column", render: (l) => <span class="mono">{l.protected_domain}</span> },
            { label: "State", sort: "state", render: (l) => <StateBadge state={l.state} /> },
            { label: "Confidence", sort: "confidence", render: (l) => <ConfidenceBadge confidence={l.confidence} /> },
            { label: "Evidence", render: (l) => <span class="nowrap-chips"><Chips items={words(l.evidence)} label="Evidence" /></span> },
            { label: "First seen", sort: "first_seen_at", render: (l) => <Time iso={l.first_seen_at} /> },
            { label: "Checks", sort: "last_checked_at", render: (l) => <CollectionBadge collection={l.collection} /> },
          ]}
        />
      </Section>
    </div>
  );
}

const STATUS_WORDS: Record<CharacterStatus, string> = { same: "same", confusable: "looks alike", changed: "changed", added: "added", swapped: "swapped" };

/** The lookalike label against the protected label: every character that differs says how, in words. */
function Comparison({ c }: { c: LookalikeDetail["comparison"] }) {
  return (
    <div data-testid="comparison">
      <p>
        <span class="mono">{c.lookalike_label}</span> against <span class="mono">{c.protected_label}</span>, character by character:
      </p>
      <ol class="lookalike-chars" aria-label="Characters of the lookalike label">
        {c.characters.map((ch) => (
          <li class={`ch ${ch.status}`}>
            <span class="glyph mono">{ch.char}</span>
            <span class="ch-note">
              {STATUS_WORDS[ch.status]}
              {ch.status !== "same" && ch.stands_for && ch.status !== "added" ? ` for ${ch.stands_for}` : ""}
            </span>
            <span class="ch-note">{ch.code_point}</span>
            <span class="ch-note">{ch.script}</span>
          </li>
        ))}
      </ol>
      <KeyValues
        items={[
          ["Left out", c.missing.length ? <Chips items={c.missing} label="Characters left out" /> : "nothing"],
          ["Scripts", <Chips items={c.scripts} label="Scripts" />],
        ]}
      />
    </div>
  );
}

function DismissDialog({ l, open, onClose, onDone }: { l: Lookalike; open: boolean; onClose: () => void; onDone: () => void }) {
  const form = useForm({ reason: "" });
  return (
    <Dialog title={`Dismiss ${l.domain_unicode}`} open={open} onClose={onClose}>
      <p>A dismissed lookalike is no longer checked and never alerts again, neither by its state nor by new certificates naming it.</p>
      <Form
        form={form}
        label="Dismiss the lookalike"
        submitLabel="Dismiss"
        busyLabel="Dismissing…"
        onCancel={onClose}
        onSubmit={async () => {
          if (await form.submit((v) => post("/api/ct-log/lookalikes/{lookalike_id}/dismiss", { params: { path: { lookalike_id: l.id } }, body: { reason: v.reason } }))) onDone();
        }}
      >
        <TextArea label="Reason" name="reason" form={form} required hint="e.g. our own defensive registration, a partner's domain" />
      </Form>
    </Dialog>
  );
}

const list = (xs: string[] | undefined) => (xs && xs.length ? <Chips items={xs} /> : <span class="muted">none</span>);

export function LookalikePage({ id }: { id: string }) {
  const s = useSession();
  const r = useResource(() => get("/api/ct-log/lookalikes/{lookalike_id}", { params: { path: { lookalike_id: Number(id) } } }), [id]);
  const [dismissing, setDismissing] = useState(false);
  const l = r.data;
  return (
    <div>
      <p class="crumbs">
        <a href="/lookalikes">Lookalike domains</a> ›
      </p>
      <PageHeader title={l ? `Lookalike: ${l.domain_unicode}` : "Lookalike domain"}>
        {l && l.state !== "dismissed" && s.can("ct-log:update_monitoring") && (
          <button type="button" onClick={() => setDismissing(true)}>
            Dismiss…
          </button>
        )}
      </PageHeader>
      <ErrorBox error={r.error} />
      {l && (
        <>
          {l.dismissed && (
            <Notice kind="info">
              Dismissed <Time iso={l.dismissed.at} />: {l.dismissed.reason}
            </Notice>
          )}
          <Section title={`How it imitates ${l.protected_domain}`}>
            <KeyValues
              items={[
                ["Lookalike", <DomainName l={l} />],
                ["State", <StateBadge state={l.state} />],
                ["Confidence", <ConfidenceBadge confidence={l.confidence} />],
                ["Evidence", <Chips items={words(l.evidence)} label="Evidence" />],
                ["Edit distance", l.edit_distance ?? "—"],
                ["Found by", SOURCE_LABEL[l.source]],
                ["First seen", <Time iso={l.first_seen_at} />],
                ["Latest certificate", l.certificate_seen_at ? <Time iso={l.certificate_seen_at} /> : "none seen"],
              ]}
            />
            <Comparison c={l.comparison} />
          </Section>
          <Section title="DNS, web and registration">
            {l.dns ? (
              <KeyValues
                items={[
                  ["Registered", l.dns.registered ? "yes (delegated)" : "no (NXDOMAIN)"],
                  ["Name servers", list(l.dns.ns)],
                  ["Addresses", list([...l.dns.a, ...l.dns.aaaa])],
                  ["Mail (MX)", list(l.dns.mx)],
                  ["Web (HTTPS port)", l.serving_detail ?? "—"],
                  ["Registrar", l.registrar ?? (l.rdap_error ? <span class="muted">{l.rdap_error}</span> : "—")],
                  ["Registered on", l.registered_at ? <Time iso={l.registered_at} /> : "—"],
                ]}
              />
            ) : (
              <p class="muted">Not checked yet.</p>
            )}
            <h3>Checks</h3>
            <CollectionDetail collection={l.collection} what="The DNS and web checks" />
          </Section>
          <Section title="Certificates naming it (past 30 days)">
            <DataTable
              caption="Certificates naming the lookalike"
              rows={l.certificates}
              rowKey={(c) => c.sha256}
              empty={<p>No certificate named it in the past 30 days.</p>}
              columns={[
                { label: "Name", render: (c) => <span class="mono">{c.certificate_name}</span> },
                { label: "Issuer", render: (c) => <span class="small">{c.issuer}</span> },
                { label: "Valid", render: (c) => (<><Time iso={c.not_before} date /> – <Time iso={c.not_after} date /></>) },
                { label: "Logs", render: (c) => c.log_count, class: "num" },
                { label: "Seen", render: (c) => <Time iso={c.detected_at} /> },
              ]}
            />
          </Section>
          <Section title="Timeline">
            <ol class="timeline" data-testid="timeline">
              {l.timeline.map((e) => (
                <li>
                  <Time iso={e.at} /> <strong>{e.kind.replace(/_/g, " ")}</strong>
                  {e.from_state && e.to_state && (
                    <>
                      {" "}
                      <StateBadge state={e.from_state} /> → <StateBadge state={e.to_state} />
                    </>
                  )}
                  {e.detail && <span class="timeline-detail">{e.detail}</span>}
                </li>
              ))}
            </ol>
          </Section>
          <DismissDialog l={l} open={dismissing} onClose={() => setDismissing(false)} onDone={() => (setDismissing(false), r.reload())} />
        </>
      )}
    </div>
  );
}
