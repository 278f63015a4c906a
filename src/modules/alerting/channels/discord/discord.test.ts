/**
 * Discord against its local receiver (Execute Webhook: embeds within Discord's limits,
 * 204; 429 with `retry_after` in the JSON body): a real scan event with a hostile
 * certificate subject arrives with every markdown and mention character escaped and
 * `allowed_mentions.parse` empty (nobody is pinged); `retry_after` is honoured.
 */
import { describe, expect, it } from "vitest";
import { call, signup, unique } from "../../../../../test/helpers";
import { createChannel, createRule, deliverNow, emitScan, expectRetryAfterHonoured, HOSTILE_SUBJECT, hostileScanEvent, HUB, received } from "../../../../../test/alerting/providers";

async function setup() {
  const org = await signup();
  const box = `discord${unique()}`;
  const ch = await createChannel(org, { kind: "discord", url: `${HUB}/providers/discord/${box}/api/webhooks/1234567890/T0k3n-discord` });
  const tpl = await call("POST", "/api/cert-watcher/alert-templates", { token: org.session, body: { name: "t", subject: "{{certificate.subject}}", body: "{{certificate.subject}}" } });
  await createRule(org, "cert-watcher", { name: "expiring", expression: "validity_days < 14", severity: "critical", channel_ids: [ch.id], template_id: tpl.body.id });
  return { org, box, ch };
}

/** What Discord shows of an escaped text: each backslash-escaped character as itself. */
const rendered = (s: string) => s.replace(/\\(.)/g, "$1");

describe("discord", () => {
  it("an embed with markdown and mentions escaped, no mention allowed; the webhook token never returned", async () => {
    const { org, box, ch } = await setup();
    expect(JSON.stringify((await call("GET", `/api/notification-channels/${ch.id}`, { token: org.session })).body)).not.toContain("T0k3n");
    await emitScan(org, hostileScanEvent({ subject: HOSTILE_SUBJECT }));
    await deliverNow(org);
    const [req] = (await received(box)).received;
    expect(req.status).toBe(204);
    expect(req.json.allowed_mentions).toEqual({ parse: [] });
    const embed = req.json.embeds[0];
    for (const text of [embed.title, embed.description]) {
      // Every character Discord would read as markup is escaped ...
      expect(text).not.toMatch(/(^|[^\\])[[\]()*_~`|>#@<:]/);
      // ... and shows as the subject, character for character.
      expect(rendered(text)).toBe(HOSTILE_SUBJECT);
    }
    expect(embed).toMatchObject({ color: 0xb91c1c, url: expect.stringContaining("/alerting?section=cert-watcher") });
    expect(embed.fields.map((f: any) => rendered(f.name))).toEqual(["Rule", "Severity", "Module", "Event", "State", "First matched"]);
  });

  it("429 with retry_after (JSON body): retried no earlier than asked", async () => {
    const { org, box } = await setup();
    await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test" }));
    const d = await expectRetryAfterHonoured(org, "cert-watcher", box, 37.5);
    expect(d.attempt_log[0]).toMatchObject({ status: 429, error_class: "rate_limited", retry_after_seconds: 37.5 });
  });
});
