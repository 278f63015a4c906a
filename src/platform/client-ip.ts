/**
 * The client's address, for rate limits, login throttling and the audit log.
 *
 * A Worker sees no socket. On Cloudflare the edge sets `CF-Connecting-IP` itself
 * (replacing whatever the client sent), so there, and only there, the header is the
 * client's address: `TRUST_CF_CONNECTING_IP=true` (the wrangler.toml default, for
 * deployments) says so. Locally `wrangler dev` forwards a client-sent
 * CF-Connecting-IP unchanged and fills it in from the socket only when it is absent,
 * so the header cannot be told apart from a forged one: `npm start` therefore runs
 * with the variable false, and the address is unknown (null). Anonymous callers then
 * share one rate-limit bucket and one login-throttle address, which errs on the side
 * of throttling. A self-hosted proxy in front must overwrite the header from its
 * socket before the variable may be set to true.
 */
import type { Config } from "../env";
import { parseHost } from "./egress/address";

export function clientAddress(headers: Headers, config: Pick<Config, "trustCfConnectingIp">): string | null {
  if (!config.trustCfConnectingIp) return null;
  const value = headers.get("cf-connecting-ip")?.trim();
  if (!value) return null;
  const host = parseHost(value);
  // Only a literal address counts; the canonical form keeps one bucket per address.
  if (host.kind === "ipv4" || host.kind === "ipv6") return host.address;
  return null;
}
