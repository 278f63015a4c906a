/**
 * PagerDuty, Events API v2 (POST {PAGERDUTY_EVENTS_URL}, the enqueue endpoint of the
 * service's region): an alert is one PagerDuty alert under `dedup_key` = the alert's
 * key, stable per rule, asset and subject. `trigger` opens it (or adds to it while it is
 * open), `acknowledge` and `resolve` follow with the same key. The answer is 202; 400
 * is a malformed event (final); 429 and 5xx are retried. Values are JSON strings:
 * PagerDuty shows them as text.
 */
import { z } from "@hono/zod-openapi";
import { sendHttp } from "../http";
import { defineProvider, secretSetting, setting, type AlertMessage, type SendContext } from "../provider";
import { cut, titleOf } from "../render";
import { region } from "../settings";

/** Trust-Plane severity -> PagerDuty's four. */
const SEVERITY: Record<string, "critical" | "error" | "warning" | "info"> = { critical: "critical", high: "error", medium: "warning", low: "info", info: "info" };

const settings = z.object({
  routing_key: secretSetting(z.string().regex(/^[A-Za-z0-9]{32}$/, "the 32-character integration key of an Events API v2 integration"), {
    title: "Integration key",
    description: "The routing key of the PagerDuty service's Events API v2 integration (32 characters).",
    shownAs: "last4",
    placeholder: "R0UT1NGKEY0000000000000000000000",
  }),
  region: setting(region(), { title: "Service region", description: "us (events.pagerduty.com) or eu (events.eu.pagerduty.com), as the PagerDuty account." }),
});

/** The Events API v2 body of one action. */
export function pagerDutyEvent(alert: AlertMessage, routingKey: string) {
  const head = { routing_key: routingKey, event_action: alert.action, dedup_key: alert.alert_key };
  if (alert.action !== "trigger") return head;
  return {
    ...head,
    payload: {
      summary: cut(titleOf(alert), 1024),
      source: cut(alert.subject || alert.module, 255),
      severity: SEVERITY[alert.rule.severity] ?? "warning",
      timestamp: alert.fired_at,
      component: alert.module,
      group: alert.rule.name,
      class: alert.summary ? cut(alert.summary, 255) : undefined,
      custom_details: { rule: alert.rule.name, severity: alert.rule.severity, module: alert.module, occurrences: alert.occurrences, message: alert.message.body, event: alert.event },
    },
    client: "Trust-Plane",
    client_url: alert.url,
    links: [{ href: alert.url, text: "Alert in Trust-Plane" }],
  };
}

const post = (alert: AlertMessage, v: z.output<typeof settings>, ctx: SendContext) =>
  sendHttp(ctx, { url: ctx.config.alerting.pagerdutyEventsUrl[v.region], body: JSON.stringify(pagerDutyEvent(alert, v.routing_key)), what: `PagerDuty ${alert.action} event` });

export const pagerduty = defineProvider({
  kind: "pagerduty",
  label: "PagerDuty",
  description: "Opens a PagerDuty alert per Trust-Plane alert (Events API v2), acknowledges and resolves it with the same dedup_key.",
  settings,
  send: post,
  // A test opens an alert and resolves it at once: nobody is left paged.
  async testSend(alert, v, ctx) {
    const opened = await post(alert, v, ctx);
    return opened.ok ? post({ ...alert, action: "resolve" }, v, ctx) : opened;
  },
});
