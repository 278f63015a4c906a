/**
 * The client's address, for rate limits, login throttling and the audit log.
 *
 * A Worker sees no socket. On Cloudflare the edge sets `CF-Connecting-IP` itself
 * (replacing whatever the client sent), so the header is the client's address exactly
 * where something trustworthy sets it: `TRUST_CF_CONNECTING_IP=true` says so. It is
 * true in wrangler.toml (deployments) and under `npm start`, which puts a local edge
 * (scripts/local-edge.mjs) in front of `wrangler dev` that overwrites the header with
 * the socket's address, as Cloudflare's edge does; `wrangler dev` alone would forward a
 * client-sent header unchanged. Behind another reverse proxy, the proxy must overwrite
 * the header from its socket in the same way. With the variable false the header is
 * ignored and the address is unknown (null): anonymous callers then share one
 * rate-limit bucket and one login-throttle address, which errs on the side of throttling.
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
