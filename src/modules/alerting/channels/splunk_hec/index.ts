/**
 * Splunk HTTP Event Collector: each alert (and each acknowledgement and resolution) as
 * one JSON event, `POST <url>/services/collector/event` with `Authorization: Splunk
 * <token>`, into the chosen index and sourcetype. HEC answers 200 {"code":0}; 503
 * (server busy) and 429 are retried. Values are JSON: nothing to escape.
 */
import { z } from "@hono/zod-openapi";
import { assertUrlAllowed, egressPolicy } from "../../../../platform/egress";
import { HTTP_SCHEMES, sendHttp } from "../http";
import { defineProvider, invalidSetting, secretSetting, setting, type AlertMessage } from "../provider";
import { httpUrl } from "../settings";

const COLLECTOR = "/services/collector/event";

/** The event endpoint of a HEC base URL (given with or without the path). */
export function collectorUrl(base: string): string {
  const u = new URL(base);
  const path = u.pathname.replace(/\/+$/, "");
  u.pathname = path.endsWith(COLLECTOR) ? path : path.endsWith("/services/collector") ? `${path}/event` : `${path}${COLLECTOR}`;
  return u.toString();
}

export function hecEvent(alert: AlertMessage, v: { index?: string; sourcetype: string }) {
  return {
    time: Date.parse(alert.action === "trigger" ? alert.fired_at : (alert.resolved_at ?? alert.fired_at)) / 1000,
    host: "trust-plane",
    source: `trust-plane:${alert.module}`,
    sourcetype: v.sourcetype,
    ...(v.index ? { index: v.index } : {}),
    event: { action: alert.action, alert },
  };
}

export const splunkHec = defineProvider({
  kind: "splunk_hec",
  label: "Splunk HTTP Event Collector",
  description: "Sends each alert and its acknowledgement and resolution as a JSON event to a Splunk HTTP Event Collector.",
  settings: z.object({
    url: setting(httpUrl(), { title: "Collector URL", description: "The HEC base URL (https://splunk.example.com:8088); /services/collector/event is added.", placeholder: "https://splunk.example.com:8088" }),
    token: secretSetting(z.string().min(8).max(200), { title: "HEC token", description: "The token of the HEC input.", shownAs: "last4", placeholder: "00000000-0000-0000-0000-000000000000" }),
    index: setting(z.string().regex(/^[a-z0-9_][a-z0-9_-]{0,79}$/, "a Splunk index name").optional(), { title: "Index", description: "The index events go to; the token's default index when empty." }),
    sourcetype: setting(z.string().min(1).max(100).regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces").default("trust-plane:alert"), { title: "Sourcetype", description: "The events' sourcetype." }),
  }),
  async check(v, { config }) {
    // Shown as saved: a credential has no place in it.
    const u = new URL(v.url);
    if (u.username || u.password || u.search) throw invalidSetting("url", "no user, password or query in the collector URL: the token goes in `token`");
    await assertUrlAllowed(egressPolicy(config), "url", v.url, HTTP_SCHEMES);
  },
  send: (alert, v, ctx) =>
    sendHttp(ctx, { url: collectorUrl(v.url), body: JSON.stringify(hecEvent(alert, v)), headers: { authorization: `Splunk ${v.token}` }, what: "Splunk HEC event" }),
});
