/**
 * Teams Workflows against its local receiver (a message with an Adaptive Card, 202; 429
 * with Retry-After): a real scan event with a hostile certificate subject becomes a card
 * whose markdown-reading fields (facts) carry it escaped and whose title and body are
 * TextRuns (no markdown); no {{DATE()}} function survives; the URL is never returned.
 */
import { describe, expect, it } from "vitest";
import { call, signup, unique } from "../../../../../test/helpers";
import { createChannel, createRule, deliverNow, E_ENV, emitScan, expectRetryAfterHonoured, HOSTILE_SUBJECT, hostileScanEvent, HUB, received } from "../../../../../test/alerting/providers";
import { emitEvent } from "../../emit";
import { ctLogEvent } from "../../../../../test/alerting/events";

async function setup() {
  const org = await signup();
  const box = `teams${unique()}`;
  const url = `${HUB}/providers/msteams/${box}/workflows/abc123/triggers/manual/paths/invoke?api-version=2016-06-01&sig=S1gn4ture`;
  const ch = await createChannel(org, { kind: "msteams", url });
  const tpl = await call("POST", "/api/cert-watcher/alert-templates", { token: org.session, body: { name: "t", subject: "{{certificate.subject}}", body: "Subject: {{certificate.subject}}" } });
  await createRule(org, "cert-watcher", { name: "expiring", expression: "validity_days < 14", channel_ids: [ch.id], template_id: tpl.body.id });
  return { org, box, ch };
}

describe("msteams", () => {
  it("an Adaptive Card: monitored text in TextRuns and escaped facts; the workflow URL is never returned", async () => {
    const { org, box, ch } = await setup();
    const shown = JSON.stringify((await call("GET", `/api/notification-channels/${ch.id}`, { token: org.session })).body);
    expect(shown).not.toContain("S1gn4ture");
    expect(shown).not.toContain("abc123");

    await emitScan(org, hostileScanEvent({ subject: HOSTILE_SUBJECT }));
    await deliverNow(org);
    const [req] = (await received(box)).received;
    expect(req.status).toBe(202);
    const card = req.json.attachments[0].content;
    expect(req.json.type).toBe("message");
    expect(card).toMatchObject({ type: "AdaptiveCard", version: "1.4" });
    const [title, facts, body] = card.body;
    // Title and body: TextRuns, which render no markdown; only {{ is broken (no DATE()).
    expect(title.type).toBe("RichTextBlock");
    expect(title.inlines[0].text).toBe(HOSTILE_SUBJECT.replace("{{", "{\u200b{"));
    expect(body.inlines[0].text).toBe(`Subject: ${HOSTILE_SUBJECT.replace("{{", "{\u200b{")}`);
    expect(facts.type).toBe("FactSet");
    expect(facts.facts.find((f: any) => f.title === "Rule").value).toBe("expiring");
    expect(card.actions).toEqual([{ type: "Action.OpenUrl", title: "Open in Trust-Plane", url: expect.stringContaining("/alerting?section=cert-watcher&tab=history&alert=") }]);
  });

  it("facts (rendered as markdown by Teams) carry monitored names escaped: a CT certificate's hostile names", async () => {
    const { org, box, ch } = await setup();
    await createRule(org, "ct-log", { name: "any", expression: "true", channel_ids: [ch.id] });
    const e = ctLogEvent();
    e.cert.dns_names = ["[sign in](https://evil.example/login)", "**urgent**", "{{DATE(2017-02-14T06:08:00Z)}}"];
    await emitEvent(E_ENV, "ct-log", org.organizationId, e);
    await deliverNow(org);
    const card = (await received(box)).received[0].json.attachments[0].content;
    const event = card.body[1].facts.find((f: any) => f.title === "Event").value as string;
    // No unescaped markdown character: no link, no emphasis, no date function can form.
    expect(event).not.toMatch(/(^|[^\\])[[\]()*_{}]/);
    expect(event.replace(/\\(.)/g, "$1")).toBe("Certificate for [sign in](https://evil.example/login), **urgent**, {{DATE(2017-02-14T06:08:00Z)}} in Google 'Argon2025h2' log");
  });

  it("429 with Retry-After from the workflow: retried no earlier than asked", async () => {
    const { org, box } = await setup();
    await emitScan(org, hostileScanEvent({ subject: "CN=shop.example.test" }));
    await expectRetryAfterHonoured(org, "cert-watcher", box, 45);
  });
});
