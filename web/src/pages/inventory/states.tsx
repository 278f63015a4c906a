/** The inventory's words: a name's state and a certificate's issuance verdict as badges, an issuer as people name it. */
import type { Schemas } from "../../api";
import { Badge } from "../../ui/widgets";

export type HostnameState = Schemas["InventoryHostname"]["state"];
type Authorization = Schemas["CtAuthorization"];

/** Each state's words and tone, in the order a person acts on them (every state of the API: a new one fails the type check here). */
const STATE_WORDS = {
  expired: { label: "Expired", tone: "bad" },
  stale_deployment: { label: "Renewal not deployed", tone: "bad" },
  not_in_ct: { label: "Not in CT", tone: "bad" },
  expiring_without_successor: { label: "Expiring, no successor", tone: "warn" },
  deploying: { label: "Deploying", tone: "info" },
  unmonitored: { label: "Unmonitored", tone: "neutral" },
  not_scanned: { label: "Not scanned yet", tone: "neutral" },
  current: { label: "Current", tone: "good" },
} satisfies Record<HostnameState, { label: string; tone: string }>;

export const HOSTNAME_STATES = (Object.keys(STATE_WORDS) as HostnameState[]).map((id) => ({ id, ...STATE_WORDS[id] }));

export function StateBadge({ state }: { state: HostnameState }) {
  const i = STATE_WORDS[state] ?? { label: state, tone: "neutral" };
  return <Badge value={state} tone={i.tone} label={i.label} />;
}

const VERDICT_TONES: Record<Authorization["verdict"], string> = { authorized: "good", unknown_key: "warn", unexpected_issuer: "bad", caa_violation: "bad" };
export function VerdictBadge({ authorization }: { authorization: Authorization | null }) {
  if (!authorization) return <span class="muted">not judged</span>;
  return (
    <span title={authorization.reason}>
      <Badge value={authorization.verdict} tone={VERDICT_TONES[authorization.verdict]} label={authorization.verdict === "authorized" ? "routine" : authorization.verdict.replace(/_/g, " ")} />
    </span>
  );
}

/** The issuer's organization (or common name) out of a distinguished name. */
export const issuerName = (dn: string) => /(?:^|,\s*)O=([^,]+)/.exec(dn)?.[1] ?? /(?:^|,\s*)CN=([^,]+)/.exec(dn)?.[1] ?? dn;
