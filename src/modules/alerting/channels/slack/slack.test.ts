/**
 * Slack against its local receiver (incoming webhook: 200 "ok"; 429 with Retry-After): a
 * real scan event with a hostile certificate subject arrives with `&`, `<`, `>` escaped,
 * so `<!channel>` and `<https://evil.example|sign in again>` are text, not a mention and
 * a link; Retry-After is honoured.
 */
import { describe, expect, it } from "vitest";
import { call, signup, unique } from "../../../../../test/helpers";
import { createChannel, createRule, deliverNow, emitScan, expectRetryAfterHonoured, HOSTILE_SUBJECT, hostileScanEvent, HUB, received } from "../../../../../test/alerting/providers";

async function setup() {
  const org = await signup();
  const box = `slack${unique()}`;
  const ch = await createChannel(org, { kind: "slack", url: `${HUB}/providers/slack/${box}/services/T000/B000/XXXX` });
  const tpl = await call("POST", "/api/cert-watcher/alert-templates", { token: org.session, body: { name: "t", subject: "{{certificate.subject}}", body: "{{certificate.subject}}" } });
  await createRule(org, "cert-watcher", { name: "expiring", expression: "validity_days < 14", severity: "critical", channel_ids: [ch.id], template_id: tpl.body.id });
  return { org, box };
}

describe("slack", () => {
  it("mentions and links from monitored data arrive escaped; the only link is the service's own", async () => {
    const { org, box } = await setup();
    await emitScan(org, hostileScanEvent({ subject: HOSTILE_SUBJECT }));
    await deliverNow(org);
    const [req] = (await received(box)).received;
    expect(req.status).toBe(200);
    const text: string = req.json.text;
    const escaped = HOSTILE_SUBJECT.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    expect(text).toContain(`*[CRITICAL] ${escaped}*\n${escaped}`);
    // Slack's own syntax is only what the service wrote: one link, to the alert.
    expect(text.match(/<[^>]*>/g)).toEqual([expect.stringMatching(/^<http:\/\/[^|]+\/alerting\?section=cert-watcher&amp;tab=history&amp;alert=\d+\|Open in Trust-Plane>$/)]);
    expect(text).not.toContain("<!channel>");
  });

  it("429 with Retry-After: retried no earlier than asked", async () => {
    const { org, box } = await setup();
    await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test" }));
    await expectRetryAfterHonoured(org, "cert-watcher", box, 20);
  });
});
