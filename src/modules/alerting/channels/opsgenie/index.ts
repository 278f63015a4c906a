/**
 * Opsgenie, Alert API v2 (OPSGENIE_API_URL, US or EU instance): `trigger` creates an
 * alert with `alias` = the alert's key (Opsgenie de-duplicates on it: a repeat while it
 * is open raises its count), `acknowledge` and `resolve` (close) address it by that
 * alias. Requests are answered 202 and processed asynchronously; 429 and 5xx are
 * retried. Field limits as documented: message 130, alias 512, description 15000.
 */
import { z } from "@hono/zod-openapi";
import { sendHttp } from "../http";
import { defineProvider, secretSetting, setting, type AlertMessage, type SendContext } from "../provider";
import { bodyOf, cut, titleOf } from "../render";
import { region } from "../settings";

const PRIORITY: Record<string, string> = { critical: "P1", high: "P2", medium: "P3", low: "P4", info: "P5" };

const settings = z.object({
  api_key: secretSetting(z.string().regex(/^[A-Za-z0-9-]{20,64}$/, "an Opsgenie API integration key"), {
    title: "API key",
    description: "The key of an Opsgenie API integration (GenieKey).",
    shownAs: "last4",
    placeholder: "eb243592-faa2-4ba2-a551-1afdf565c889",
  }),
  region: setting(region(), { title: "Instance", description: "us (api.opsgenie.com) or eu (api.eu.opsgenie.com), as the Opsgenie account." }),
});

/** Path and body of one action. */
export function opsgenieRequest(alert: AlertMessage): { path: string; body: Record<string, unknown> } {
  const alias = cut(alert.alert_key, 512);
  if (alert.action === "trigger") {
    return {
      path: "/v2/alerts",
      body: {
        message: cut(titleOf(alert), 130),
        alias,
        description: cut(`${bodyOf(alert)}\n\n${alert.url}`, 15000),
        entity: cut(alert.subject, 512),
        source: "Trust-Plane",
        priority: PRIORITY[alert.rule.severity] ?? "P3",
        tags: ["trust-plane", alert.module],
        details: { rule: alert.rule.name, severity: alert.rule.severity, module: alert.module, event: cut(alert.summary, 8000), url: alert.url },
      },
    };
  }
  const verb = alert.action === "acknowledge" ? "acknowledge" : "close";
  const note = alert.action === "acknowledge" ? `Acknowledged in Trust-Plane${alert.acknowledged_by ? ` by ${alert.acknowledged_by}` : ""}` : (alert.resolution ?? "Resolved in Trust-Plane");
  return {
    path: `/v2/alerts/${encodeURIComponent(alias)}/${verb}?identifierType=alias`,
    body: { user: cut(alert.action === "acknowledge" ? (alert.acknowledged_by ?? "Trust-Plane") : "Trust-Plane", 100), source: "Trust-Plane", note: cut(note, 25000) },
  };
}

const post = (alert: AlertMessage, v: z.output<typeof settings>, ctx: SendContext) => {
  const r = opsgenieRequest(alert);
  return sendHttp(ctx, {
    url: `${ctx.config.alerting.opsgenieApiUrl[v.region]}${r.path}`,
    body: JSON.stringify(r.body),
    headers: { authorization: `GenieKey ${v.api_key}` },
    what: `Opsgenie ${alert.action === "resolve" ? "close" : alert.action}`,
  });
};

export const opsgenie = defineProvider({
  kind: "opsgenie",
  label: "Opsgenie",
  description: "Creates an Opsgenie alert per Trust-Plane alert (Alert API), acknowledges and closes it by its alias.",
  settings,
  send: post,
  // A test creates an alert and closes it at once.
  async testSend(alert, v, ctx) {
    const opened = await post(alert, v, ctx);
    return opened.ok ? post({ ...alert, action: "resolve", resolution: "Trust-Plane test notification" }, v, ctx) : opened;
  },
});
