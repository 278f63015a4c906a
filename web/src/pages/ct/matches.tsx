/** The CT matches tab: matches per day over the 30-day window, and the certificates matching the filters. */
import { get, type QueryOf, type Schemas } from "../../api";
import { BarChart } from "../../ui/charts";
import { pagePageSize, sortQuery, useResource, useTableState } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { Badge, ErrorBox, Section } from "../../ui/widgets";

const SORTS: readonly NonNullable<QueryOf<"/api/ct-log/matches">["sort_by"]>[] = ["certificate_domain", "log_count", "matched_at"];

const dayKey = (iso: string) => iso.slice(0, 10);

/** The organization (or common name) of a distinguished name: "Let's Encrypt" for "CN=R11,O=Let's Encrypt,C=US". */
export function shortDn(dn: string): string {
  const attr = (k: string) => new RegExp(`(?:^|,)\\s*${k}=((?:\\\\,|[^,])+)`).exec(dn)?.[1]?.trim();
  const o = attr("O");
  const cn = attr("CN");
  return o && cn ? `${o} (${cn})` : (o ?? cn ?? dn);
}

/** Matches per day over the 30-day window, counted from up to 1,000 newest matches. */
function MatchesPerDay() {
  const r = useResource(async () => {
    const all: Schemas["CtMatch"][] = [];
    let total = 0;
    for (let page = 1; page <= 10; page++) {
      const res = await get("/api/ct-log/matches", { params: { query: { page, page_size: 100, sort_by: "matched_at", sort_order: "desc" } } });
      all.push(...res.matches);
      total = res.total;
      if (res.matches.length < 100) break;
    }
    return { all, total };
  }, []);
  if (!r.data) return r.error ? <ErrorBox error={r.error} /> : <div class="loading-bar" role="progressbar" aria-label="Counting matches per day" />;
  const counts = new Map<string, number>();
  for (const m of r.data.all) counts.set(dayKey(m.matched_at), (counts.get(dayKey(m.matched_at)) ?? 0) + 1);
  const days: { label: string; value: number; title: string }[] = [];
  for (let i = 29; i >= 0; i--) {
    const d = new Date(Date.now() - i * 86_400_000);
    const k = d.toISOString().slice(0, 10);
    days.push({ label: i % 5 === 0 ? d.toLocaleDateString(undefined, { month: "short", day: "numeric" }) : "", value: counts.get(k) ?? 0, title: `${d.toLocaleDateString()} (UTC day ${k}): ${counts.get(k) ?? 0}` });
  }
  return (
    <>
      <BarChart title="Matches per day, last 30 days (UTC days)" valueLabel="Matches" data={days} height={140} />
      {r.data.total > r.data.all.length && <p class="small muted">Counted from the newest {r.data.all.length} of {r.data.total} matches.</p>}
    </>
  );
}

export function MatchesTab() {
  const [state, setState] = useTableState({ sortBy: "matched_at", sortOrder: "desc", pageSize: 20 });
  const r = useResource(() => get("/api/ct-log/matches", { params: { query: { ...pagePageSize(state), ...sortQuery(state, SORTS) } } }), [state]);
  return (
    <>
      <Section title="Matches per day">
        <MatchesPerDay />
      </Section>
      <Section title="Certificates matching your filters (past 30 days)">
        <DataTable
          caption="CT matches"
          state={state}
          onState={setState}
          total={r.data?.total}
          rows={r.data?.matches}
          loading={r.loading}
          error={r.error}
          rowKey={(m) => m.id}
          empty={<p>No certificate matched your filters in the past 30 days.</p>}
          columns={[
            {
              label: "Certificate domain",
              sort: "certificate_domain",
              render: (m) => (
                <a href={`/ct/matches/${m.sha256}`} class="mono wrap">
                  {m.certificate_domain}
                </a>
              ),
            },
            {
              label: "Other matched names",
              render: (m) => {
                const others = m.matched_names.filter((n) => n !== m.certificate_domain);
                return others.length ? <span class="small mono wrap">{others.slice(0, 2).join(", ")}{others.length > 2 ? ` and ${others.length - 2} more` : ""}</span> : <span class="muted">—</span>;
              },
            },
            { label: "Issuer", render: (m) => <span class="small" title={m.issuer}>{shortDn(m.issuer)}</span> },
            { label: "Expires", render: (m) => <Time iso={m.not_after} date /> },
            { label: "CAA", render: (m) => (m.caa_violation ? <Badge value="fail" label="violation" /> : <Badge value="pass" label="ok" />) },
            { label: "Entry", render: (m) => [m.has_precert && "precert", m.has_final && "final"].filter(Boolean).join(" + ") },
            { label: "Logs", sort: "log_count", render: (m) => m.log_count, class: "num" },
            { label: "Matched", sort: "matched_at", render: (m) => <Time iso={m.matched_at} /> },
          ]}
        />
      </Section>
    </>
  );
}
