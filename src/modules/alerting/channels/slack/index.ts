/**
 * Slack (or a Slack-compatible incoming webhook): `{"text": "*title*\nbody"}`, the
 * monitored values escaped for mrkdwn, link previews off (a hostile URL in an event
 * is not unfurled).
 */
import { z } from "@hono/zod-openapi";
import { assertUrlAllowed, egressPolicy } from "../../../../platform/egress";
import { HTTP_SCHEMES, sendHttp } from "../http";
import { maskSecret } from "../mask";
import { defineProvider, secretSetting } from "../provider";
import { bodyOf, titleOf } from "../render";
import { httpUrl } from "../settings";
import { escapeSlack } from "./escape";

export const slack = defineProvider({
  kind: "slack",
  label: "Slack incoming webhook",
  description: "Posts each alert to a Slack channel through an incoming webhook.",
  settings: z.object({
    url: secretSetting(httpUrl(), { title: "Webhook URL", description: "The incoming webhook's URL (https://hooks.slack.com/services/...).", shownAs: "origin", placeholder: "https://hooks.slack.com/services/T000/B000/XXXX" }),
  }),
  async check(v, { config }) {
    await assertUrlAllowed(egressPolicy(config), "url", v.url, HTTP_SCHEMES);
  },
  // Shown as `url_hint`, the name it has always had.
  shown: (v) => ({ url_hint: maskSecret("origin", v.url) }),
  async send(alert, v, ctx) {
    // The link is the service's own URL; everything else is monitored data, escaped.
    const text = `*${escapeSlack(`[${alert.rule.severity.toUpperCase()}] ${titleOf(alert)}`)}*\n${escapeSlack(bodyOf(alert))}\n<${escapeSlack(alert.url)}|Open in Trust-Plane>`;
    return sendHttp(ctx, { url: v.url, body: JSON.stringify({ text, unfurl_links: false, unfurl_media: false }), what: "Slack message" });
  },
});
