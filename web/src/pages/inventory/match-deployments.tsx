/** Where a certificate of a CT match is deployed (the CT match page's link to the inventory). */
import { ApiError, get } from "../../api";
import { useResource } from "../../ui/resource";
import { Time } from "../../ui/time";
import { ErrorBox } from "../../ui/widgets";
import { StateBadge } from "./states";

const enc = encodeURIComponent;

export function MatchDeployments({ sha256 }: { sha256: string }) {
  const r = useResource(
    () =>
      get("/api/inventory/certificates/{sha256}", { params: { path: { sha256 } } }).catch((e: unknown) => (e instanceof ApiError && e.status === 404 ? null : Promise.reject(e))),
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
