/** A DNS change of a domain's history as a before/after table. */
import type { Schemas } from "../../api";

/** The record part of a change: its name and type, the values before and after. */
export type ChangedRecord = Pick<Schemas["DnsChange"], "name" | "type" | "old_values" | "new_values">;

/** One change as a before/after table: each value removed in red, added in green. */
export function RecordDiff({ records }: { records: ChangedRecord[] }) {
  if (!records?.length) return <span class="muted">no record changed</span>;
  return (
    <table class="diff compact">
      <thead>
        <tr>
          <th scope="col">Record</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {records.map((r) => {
          const oldSet = new Set(r.old_values);
          const newSet = new Set(r.new_values);
          return (
            <tr>
              <th scope="row" class="mono small">
                {r.name} {r.type ?? ""}
              </th>
              <td class="mono small">
                {r.old_values.length === 0 ? <span class="muted">absent</span> : null}
                {r.old_values.map((v) => (
                  <div class={newSet.has(v) ? "" : "removed-val"}>
                    {newSet.has(v) ? "" : <span class="sr-only">removed: </span>}
                    {v}
                  </div>
                ))}
              </td>
              <td class="mono small">
                {r.new_values.length === 0 ? <span class="muted">absent</span> : null}
                {r.new_values.map((v) => (
                  <div class={oldSet.has(v) ? "" : "added-val"}>
                    {oldSet.has(v) ? "" : <span class="sr-only">added: </span>}
                    {v}
                  </div>
                ))}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
