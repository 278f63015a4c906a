/**
 * Microsoft Teams through a Workflows webhook (the "Send webhook alerts to a channel"
 * flow): a message whose attachment is an Adaptive Card (card.ts). The retired Office
 * 365 connector format (MessageCard) is not used. The flow answers 202.
 */
import { z } from "@hono/zod-openapi";
import { assertUrlAllowed, egressPolicy } from "../../../../platform/egress";
import { HTTP_SCHEMES, sendHttp } from "../http";
import { defineProvider, secretSetting } from "../provider";
import { httpUrl } from "../settings";
import { alertCard } from "./card";

export const msteams = defineProvider({
  kind: "msteams",
  label: "Microsoft Teams (Workflows)",
  description: "Posts each alert as an Adaptive Card to a Teams channel through a Workflows webhook.",
  settings: z.object({
    url: secretSetting(httpUrl(), {
      title: "Workflow URL",
      description: "The HTTP trigger URL of the Teams workflow \"Send webhook alerts to a channel\".",
      shownAs: "url",
      placeholder: "https://prod-00.westeurope.logic.azure.com:443/workflows/...",
    }),
  }),
  async check(v, { config }) {
    await assertUrlAllowed(egressPolicy(config), "url", v.url, HTTP_SCHEMES);
  },
  send: (alert, v, ctx) => sendHttp(ctx, { url: v.url, body: JSON.stringify(alertCard(alert)), what: "Teams workflow" }),
});
