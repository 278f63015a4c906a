/** Two snapshots of a domain compared: the changes that matter in words, every changed field before and after, and both snapshots in full. */
import type { ComponentChildren } from "preact";
import { get, type Schemas } from "../../api";
import { useResource } from "../../ui/resource";
import { Time } from "../../ui/time";
import { ErrorBox, KeyValues, Notice, Section } from "../../ui/widgets";

type Summary = Schemas["RdapDiff"]["summary"];
type Party = NonNullable<NonNullable<Summary["registrar"]>["from"]> | NonNullable<NonNullable<Summary["registrant"]>["from"]>;

/** A changed JSON value as one line of text. */
function show(v: unknown): string {
  if (v === undefined) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** A registrar or registrant in words: what of its name, organization, handle and IANA id is known. */
const who = (x: Party | null) =>
  x ? [x.name, "organization" in x ? x.organization : null, x.handle, "iana_id" in x && x.iana_id && `IANA ${x.iana_id}`].filter(Boolean).join(", ") || "—" : "—";

/** The summary's members that are present, as key/value rows. */
function summaryItems(s: Summary): [string, ComponentChildren][] {
  const sets = (c: { added: string[]; removed: string[] }) => `added: ${c.added.join(", ") || "none"}; removed: ${c.removed.join(", ") || "none"}`;
  const items: [string, ComponentChildren][] = [];
  if (s.registrar) items.push(["Registrar", `${who(s.registrar.from)} → ${who(s.registrar.to)}`]);
  if (s.registrant) items.push(["Registrant", `${who(s.registrant.from)} → ${who(s.registrant.to)}`]);
  if (s.nameservers) items.push(["Nameservers", sets(s.nameservers)]);
  if (s.status) items.push(["Status", sets(s.status)]);
  if (s.expiration)
    items.push([
      "Expiry",
      <>
        <Time iso={s.expiration.from} date /> → <Time iso={s.expiration.to} date />
      </>,
    ]);
  return items;
}

export function DiffView({ domain, from, to }: { domain: string; from: string; to: string }) {
  const path = { domain };
  const r = useResource(() => get("/api/rdap/domains/{domain}/diff", { params: { path, query: { from, to } } }), [domain, from, to]);
  const a = useResource(() => get("/api/rdap/domains/{domain}/snapshot", { params: { path, query: { snapshot_id: from } } }), [domain, from]);
  const b = useResource(() => get("/api/rdap/domains/{domain}/snapshot", { params: { path, query: { snapshot_id: to } } }), [domain, to]);
  const d = r.data;
  if (r.error) return <ErrorBox error={r.error} />;
  if (!d) return <div class="loading-bar" role="progressbar" aria-label="Comparing snapshots" />;
  const rows = [
    ...d.modified.map((m) => ({ path: m.path, before: show(m.from), after: show(m.to), kind: "modified" })),
    ...d.removed.map((m) => ({ path: m.path, before: show(m.value), after: "", kind: "removed" })),
    ...d.added.map((m) => ({ path: m.path, before: "", after: show(m.value), kind: "added" })),
  ].sort((x, y) => x.path.localeCompare(y.path));
  const s = d.summary ?? {};
  return (
    <Section title="Difference between the two snapshots">
      {!d.changed && <Notice>The two snapshots are the same registration.</Notice>}
      {Object.keys(s).length > 0 && <KeyValues items={summaryItems(s)} />}
      {rows.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Changed fields side by side">
          <table class="diff">
            <caption class="sr-only">Changed fields, before and after</caption>
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">
                  Before (<Time iso={d.from.timestamp} />)
                </th>
                <th scope="col">
                  After (<Time iso={d.to.timestamp} />)
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((x) => (
                <tr class={x.kind}>
                  <th scope="row" class="mono small">
                    {x.path}
                    <span class="sr-only"> ({x.kind})</span>
                  </th>
                  <td class="mono small before">{x.before || <span class="muted">absent</span>}</td>
                  <td class="mono small after">{x.after || <span class="muted">absent</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <details class="snapshots-side">
        <summary>Show both snapshots in full, side by side</summary>
        <div class="side-by-side">
          <pre tabIndex={0} aria-label="Earlier snapshot">{a.data ? JSON.stringify(a.data, null, 2) : "…"}</pre>
          <pre tabIndex={0} aria-label="Later snapshot">{b.data ? JSON.stringify(b.data, null, 2) : "…"}</pre>
        </div>
      </details>
    </Section>
  );
}
