/** The SPF and DMARC state of a domain in words: what was read, and when nothing was, why. */
import type { Schemas } from "../../api";
import { Time } from "../../ui/time";
import { Badge } from "../../ui/widgets";

type RecordSet = Schemas["DnsRecordSet"];

/**
 * What is known of a policy that was not read: never "no record published" unless a
 * lookup said so. `source` is the record set it is read from (apex TXT, _dmarc TXT).
 */
function UnknownPolicy({ watched, source, what }: { watched: boolean; source: RecordSet | undefined; what: string }) {
  if (!watched || !source) return <span class="muted">unknown: {what} is not watched</span>;
  const c = source.collection;
  if (c.error) {
    return (
      <span>
        <Badge value="unknown" tone="neutral" /> <span class="small">{c.state === "failing" ? <>lookups of {what} failing since <Time iso={c.failing_since} /></> : <>the lookup of {what} failed</>}: {c.error.message}</span>
      </span>
    );
  }
  return (
    <span>
      <Badge value="unknown" tone="neutral" /> <span class="small muted">{what} not resolved yet</span>
    </span>
  );
}

/** A policy shown while the lookups of its record set fail: as last observed, and since when they fail. */
function AsLastObserved({ source }: { source: RecordSet | undefined }) {
  const c = source?.collection;
  if (!c || c.state === "ok" || !c.error) return null;
  return (
    <div class="small collection-error">
      as last observed <Time iso={c.last_success_at} />; lookups failing since <Time iso={c.failing_since} />: {c.error.message}
    </div>
  );
}

/**
 * A policy whose status is not unknown: the API fills every field once it was read (they
 * are null only while unknown), so they are read as present. Never used before the
 * unknown case returned: a null would otherwise be drawn as "0 DNS lookups" or a policy.
 */
type Read<T> = { [K in keyof T]: NonNullable<T[K]> };
const asRead = <T,>(policy: T) => policy as Read<T>;

export function SpfState({ spf: policy, source, domain }: { spf: Schemas["SpfPolicy"]; source: RecordSet | undefined; domain: string }) {
  if (policy.status === "unknown") return <UnknownPolicy watched={policy.watched} source={source} what={`${domain} TXT`} />;
  const spf = asRead(policy);
  if (spf.status === "none") {
    return (
      <span>
        <span class="muted">no SPF record published</span>
        <AsLastObserved source={source} />
      </span>
    );
  }
  return (
    <span>
      <code class="break">{spf.record}</code>{" "}
      <Badge value={spf.allows_all ? "fail" : spf.status === "ok" ? "pass" : "warn"} tone={spf.allows_all ? "bad" : spf.status === "ok" ? "good" : "warn"} label={spf.allows_all ? `allows all senders${spf.allows_all_via ? ` (via ${spf.allows_all_via})` : ""}` : spf.status} />{" "}
      <span class="small muted">
        all: {spf.all || "none"}, {spf.lookup_count} DNS lookups
      </span>
      {spf.errors.length > 0 && <div class="small">{spf.errors.join("; ")}</div>}
      <AsLastObserved source={source} />
    </span>
  );
}

export function DmarcState({ dmarc: policy, source, domain }: { dmarc: Schemas["DmarcPolicy"]; source: RecordSet | undefined; domain: string }) {
  if (policy.status === "unknown") return <UnknownPolicy watched={policy.watched} source={source} what={`_dmarc.${domain} TXT`} />;
  const dmarc = asRead(policy);
  if (dmarc.status === "none") {
    return (
      <span>
        <span class="muted">no DMARC record published</span>
        <AsLastObserved source={source} />
      </span>
    );
  }
  const tone = !dmarc.valid ? "bad" : dmarc.p === "reject" ? "good" : dmarc.p === "quarantine" ? "info" : "warn";
  return (
    <span>
      <code class="break">{dmarc.record}</code> <Badge value={null} tone={tone} label={dmarc.valid ? `policy ${dmarc.p}${dmarc.pct < 100 ? ` on ${dmarc.pct} %` : ""}` : "invalid"} />
      {dmarc.rua.length > 0 && <span class="small muted"> reports to {dmarc.rua.join(", ")}</span>}
      {dmarc.errors.length > 0 && <div class="small">{dmarc.errors.join("; ")}</div>}
      <AsLastObserved source={source} />
    </span>
  );
}
