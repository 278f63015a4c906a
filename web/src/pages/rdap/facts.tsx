/**
 * What a person looks for first in an RDAP snapshot. The snapshot is the registry's RFC
 * 9083 answer as it came (`RdapDomainObject`: the API promises a JSON object and nothing
 * about its members, since registries differ), so every member is checked before use
 * and a missing or malformed one reads as unknown.
 */
import type { Schemas } from "../../api";
import { daysUntil } from "../../ui/time";
import { Badge } from "../../ui/widgets";

export type RdapSnapshot = Schemas["RdapDomainObject"];

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const member = (v: unknown, key: string): unknown => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined);
const text = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The date of the first event with this `eventAction` (RFC 9083 §4.5). */
const eventDate = (snapshot: RdapSnapshot, action: string) => text(member(list(snapshot.events).find((e) => member(e, "eventAction") === action), "eventDate"));

/** An entity's vCard `fn` (jCard: `["vcard", [[name, params, type, value], …]]`). */
function vcardName(entity: unknown): string | null {
  const fn = list(list(member(entity, "vcardArray"))[1]).find((p) => list(p)[0] === "fn");
  return fn ? String(list(fn)[3]) : null;
}

export function rdapFacts(snapshot: RdapSnapshot) {
  const registrar = list(snapshot.entities).find((e) => list(member(e, "roles")).includes("registrar"));
  return {
    expiry: eventDate(snapshot, "expiration"),
    registered: eventDate(snapshot, "registration"),
    registrar: registrar ? (vcardName(registrar) ?? text(member(registrar, "handle"))) : null,
    status: list(snapshot.status).map(String),
    nameservers: list(snapshot.nameservers).map((n) => String(member(n, "ldhName") ?? "").toLowerCase()),
  };
}

export function ExpiryDays({ iso }: { iso: string | null }) {
  const d = daysUntil(iso);
  if (d === null) return <span class="muted">unknown</span>;
  const tone = d < 0 ? "bad" : d <= 30 ? "warn" : "good";
  return (
    <span title={iso ?? ""}>
      <Badge value={null} tone={tone} label={d < 0 ? `expired ${-d} d ago` : `${d} days`} />
    </span>
  );
}
