/**
 * Webhook: the alert as JSON, POSTed and signed:
 * `X-TrustPlane-Signature: t=<unix>,v1=<hex>` where v1 = HMAC-SHA256(secret, "<t>.<raw body>")
 * (timestamped against replay). Values stay JSON strings: nothing to escape.
 */
import { z } from "@hono/zod-openapi";
import { assertUrlAllowed, egressPolicy } from "../../../../platform/egress";
import { hmacSha256Hex } from "../../../../platform/sealed";
import { generateSecret } from "../../../../platform/secrets";
import { HTTP_SCHEMES, sendHttp } from "../http";
import { defineProvider, secretSetting } from "../provider";
import { httpUrl } from "../settings";

export const webhook = defineProvider({
  kind: "webhook",
  label: "Webhook (signed JSON POST)",
  description: "POSTs each alert as JSON, signed with HMAC-SHA256 in X-TrustPlane-Signature.",
  settings: z.object({
    url: secretSetting(httpUrl(), { title: "URL", description: "Where the alerts are POSTed; must pass the egress policy (no internal addresses).", shownAs: "url", placeholder: "https://soc.example.com/hooks/trust-plane" }),
    secret: secretSetting(z.string().min(16, "at least 16 characters").max(200), {
      title: "Signing secret",
      description: "The HMAC key of X-TrustPlane-Signature, at least 16 characters; generated when left out and returned once.",
      shownAs: "hidden",
    }).optional(),
  }),
  generated: { field: "secret", generate: () => `whsec_${generateSecret("api").slice(4)}` },
  async check(v, { config }) {
    await assertUrlAllowed(egressPolicy(config), "url", v.url, HTTP_SCHEMES);
  },
  async send(alert, v, ctx) {
    const body = JSON.stringify(alert);
    const t = Math.floor(ctx.now.getTime() / 1000);
    const v1 = await hmacSha256Hex(v.secret ?? "", `${t}.${body}`);
    return sendHttp(ctx, {
      url: v.url,
      body,
      what: "webhook delivery",
      headers: {
        "x-trustplane-signature": `t=${t},v1=${v1}`,
        "x-trustplane-event-id": alert.event_id,
        "x-trustplane-alert-id": String(alert.id),
        "x-trustplane-action": alert.action,
      },
    });
  },
});
