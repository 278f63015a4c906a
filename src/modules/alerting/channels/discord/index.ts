/**
 * Discord through a channel webhook (POST /api/webhooks/{id}/{token}): one embed per
 * alert (embed.ts). Discord answers 204; when rate limited, 429 with `retry_after`
 * (seconds) in its JSON body, which the retry honours.
 */
import { z } from "@hono/zod-openapi";
import { assertUrlAllowed, egressPolicy } from "../../../../platform/egress";
import { HTTP_SCHEMES, sendHttp } from "../http";
import { defineProvider, secretSetting } from "../provider";
import { httpUrl } from "../settings";
import { alertEmbed } from "./embed";

export const discord = defineProvider({
  kind: "discord",
  label: "Discord",
  description: "Posts each alert as an embed to a Discord channel through its webhook.",
  settings: z.object({
    url: secretSetting(httpUrl(), { title: "Webhook URL", description: "The channel webhook's URL (https://discord.com/api/webhooks/<id>/<token>).", shownAs: "url", placeholder: "https://discord.com/api/webhooks/123/abc" }),
  }),
  async check(v, { config }) {
    await assertUrlAllowed(egressPolicy(config), "url", v.url, HTTP_SCHEMES);
  },
  send: (alert, v, ctx) =>
    sendHttp(ctx, {
      url: v.url,
      body: JSON.stringify(alertEmbed(alert)),
      what: "Discord webhook",
      retryAfterFromBody: (b) => {
        const s = (b as { retry_after?: unknown } | undefined)?.retry_after;
        return typeof s === "number" ? s : undefined;
      },
    }),
});
