/**
 * Email against the SMTP sink: a CT event whose certificate subject carries CR/LF and
 * header lines reaches the mail's Subject through a rule's template; the receiving
 * server sees one Subject header (no injected Bcc:/X-), control characters folded, the
 * rest RFC 2047-encoded when not ASCII, and an HTML part with every value escaped.
 */
import { describe, expect, it } from "vitest";
import { call, signup, unique } from "../../../../../test/helpers";
import { ctLogEvent } from "../../../../../test/alerting/events";
import { createChannel, createRule, deliverNow, E_ENV, HUB } from "../../../../../test/alerting/providers";
import { encodeHeaderText } from "../../../../platform/mail-header";
import { emitEvent } from "../../emit";

async function sink(to: string): Promise<{ data: string }[]> {
  return (await (await fetch(`${HUB}/smtp/__control/messages?to=${encodeURIComponent(to)}`)).json<any>()).messages;
}

/** The header block of a raw message, unfolded, one header per entry. */
const headersOf = (data: string) => data.split("\r\n\r\n")[0].replace(/\r\n[ \t]+/g, " ").split("\r\n");

describe("email", () => {
  it("a hostile certificate subject cannot add headers; the HTML part is escaped", async () => {
    const org = await signup();
    const to = `soc-${unique()}@example.com`;
    const ch = await createChannel(org, { kind: "email", recipients: [to], smtp_url: `smtp://127.0.0.1:${E_ENV.SMTP_SINK_PORT}` });
    const tpl = await call("POST", "/api/ct-log/alert-templates", { token: org.session, body: { name: "t", subject: "New certificate: {{cert.subject}}", body: "{{cert.subject}}" } });
    await createRule(org, "ct-log", { name: "any", expression: "true", channel_ids: [ch.id], template_id: tpl.body.id });
    const e = ctLogEvent();
    e.cert.subject = "evil.example\r\nBcc: victim@example.org\r\nX-Injected: yes\u0000 <script>alert(1)</script> Zürich";
    await emitEvent(E_ENV, "ct-log", org.organizationId, e);
    await deliverNow(org);
    const [m] = await sink(to);
    const headers = headersOf(m.data);
    expect(headers.filter((h) => /^bcc:/i.test(h))).toEqual([]);
    expect(headers.filter((h) => /^x-injected:/i.test(h))).toEqual([]);
    const subject = headers.filter((h) => /^subject:/i.test(h));
    expect(subject.length).toBe(1);
    // Non-ASCII (Zürich): encoded-words only, no control character left in the line.
    expect(subject[0]).toMatch(/^Subject: (=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?= ?)+$/);
    const decoded = subject[0]
      .slice("Subject: ".length)
      .split(" ")
      .map((w) => new TextDecoder().decode(Uint8Array.from(atob(w.slice(10, -2)), (c) => c.charCodeAt(0))))
      .join("");
    expect(decoded).toBe("[Trust-Plane] New certificate: evil.example Bcc: victim@example.org X-Injected: yes <script>alert(1)</script> Zürich");
    // The HTML part (between its Content-Type and the next boundary) shows the markup as text.
    const html = m.data.split(/Content-Type: text\/html[^\r]*\r\n/)[1].split("\r\n--")[0].replace(/=\r\n/g, "");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain("<script>");
  });

  it("header values: control characters folded, ASCII kept as is, long values bounded", () => {
    expect(encodeHeaderText("a\r\nBcc: x\u0085y\u2028z")).toBe("a Bcc: x y z");
    expect(encodeHeaderText("[Trust-Plane] plain subject")).toBe("[Trust-Plane] plain subject");
    const long = encodeHeaderText("é".repeat(2000));
    expect(long.length).toBeLessThanOrEqual(900);
    expect(long).toMatch(/^(=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?= ?)+$/);
  });
});
