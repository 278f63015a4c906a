// Lookalike data is written by attackers: the domain's Unicode form, what a check saw change
// (MX and NS host names come from the attacker's zone), the RDAP registrar. A
// lookalike_state_changed event carrying markup reaches Slack and Discord escaped (their
// local receivers, the default message: the event's summary), and the exports keep it
// inert (CSV formulas neutralized, no line of it in a blocklist or an RPZ zone).
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { signup, unique } from "../helpers";
import { createChannel, createRule, deliverNow, HUB, received } from "../alerting/providers";
import { emitEvent } from "../../src/modules/alerting/emit";
import { buildLookalikeEvent, NO_LOOKALIKE } from "../../src/modules/ct-log/events";
import { csvCell, renderExport, type ExportRow } from "../../src/modules/ct-log/lookalikes/export";

const E = env as any;
const HOSTILE = '<!channel> <https://evil.example/login|sign in again> @everyone [click](https://evil.example/x) **urgent** <b>bold</b> & "q"';

function hostileEvent() {
  return buildLookalikeEvent({
    eventType: "lookalike_state_changed",
    lookalike: {
      ...NO_LOOKALIKE,
      id: 7,
      domain: "xn--ibm-evil.com",
      domain_unicode: `ibm${HOSTILE}.com`,
      protected_domain: "ibm.com",
      source: "permutation",
      state: "mail_capable",
      previous_state: "resolving",
      confidence: "high",
      evidence: ["affix"],
      registered: true,
      has_mx: true,
      registrar: HOSTILE,
      change: `MX 10 ${HOSTILE} added`,
    },
    filterId: 1,
    at: new Date().toISOString(),
  });
}

describe("hostile lookalike data", () => {
  it("reaches Slack and Discord escaped: no mention, no link but the service's own", async () => {
    const org = await signup();
    const slackBox = `slk${unique()}`;
    const discordBox = `dsc${unique()}`;
    const slack = await createChannel(org, { kind: "slack", url: `${HUB}/providers/slack/${slackBox}/services/T000/B000/XXXX` });
    const discord = await createChannel(org, { kind: "discord", url: `${HUB}/providers/discord/${discordBox}/api/webhooks/1234567890/T0k3n-discord` });
    await createRule(org, "ct-log", { name: "takes mail", expression: 'lookalike.state == "mail_capable"', severity: "critical", channel_ids: [slack.id, discord.id] });
    const r = await emitEvent(E, "ct-log", org.organizationId, hostileEvent());
    expect(r.fired).toHaveLength(1);
    await deliverNow(org);

    const [s] = (await received(slackBox)).received;
    expect(s.status).toBe(200);
    const text: string = s.json.text;
    expect(text).toContain(HOSTILE.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"));
    expect(text).not.toContain("<!channel>");
    expect(text.match(/<[^>]*>/g)).toEqual([expect.stringMatching(/^<http:\/\/[^|]+\|Open in Trust-Plane>$/)]);

    const [d] = (await received(discordBox)).received;
    expect(d.status).toBe(204);
    expect(d.json.allowed_mentions).toEqual({ parse: [] });
    const embed = d.json.embeds[0];
    for (const t of [embed.title, embed.description].filter(Boolean)) {
      expect(t).not.toMatch(/(^|[^\\])[[\]()*_~`|>#@<:]/);
    }
    expect(String(embed.title ?? "").replace(/\\(.)/g, "$1") + String(embed.description ?? "").replace(/\\(.)/g, "$1")).toContain("<!channel>");
  });

  it("CSV cells that start like a formula are neutralized; TXT and RPZ carry only host names", () => {
    for (const v of ["=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1"]) expect(csvCell(v).startsWith(`"'`), v).toBe(true);
    expect(csvCell('a "b"')).toBe('"a ""b"""');
    expect(csvCell(["=x", "y"])).toBe(`"'=x y"`);
    const row = (domain: string, registrar: string): ExportRow => ({
      domain, domain_unicode: domain, protected_domain: "ibm.com", state: "resolving", confidence: "high", source: "ct", evidence: ["affix"],
      first_seen_at: "2026-11-29T00:00:00.000Z", registered_at: null, registrar, mx: [`10 ${registrar}`], addresses: [],
    });
    const rows = [row("ibm-login.com", '=HYPERLINK("http://evil","x")'), row("evil.com\n$INCLUDE /etc/passwd", "-2+3"), row("@evil.com", "@x")];
    const csv = renderExport("csv", rows, { organizationId: 1, now: new Date("2026-11-29T00:00:00Z") }).body;
    for (const line of csv.split("\r\n").slice(1).filter(Boolean)) {
      // Every cell is quoted; none opens with a formula character once unquoted.
      for (const cell of line.match(/"(?:[^"]|"")*"/g)!) expect(cell.slice(1), line).not.toMatch(/^[=+\-@\t\r]/);
    }
    for (const format of ["txt", "rpz"] as const) {
      const body = renderExport(format, rows, { organizationId: 1, now: new Date("2026-11-29T00:00:00Z") }).body;
      expect(body).toContain("ibm-login.com");
      expect(body).not.toContain("INCLUDE");
      expect(body).not.toContain("@evil");
      expect(body).toContain("2 name(s) left out");
    }
  });
});
