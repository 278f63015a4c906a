/**
 * The egress policy (src/platform/egress/): internal destinations are refused in every
 * spelling, at save time (400 naming the field, nothing saved) and again at send time;
 * names resolving to internal addresses are refused through DoH; the operator's
 * allow-list opens exactly what it names; RDAP redirects obey the same policy.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/env";
import { fetchDomain } from "../../src/modules/rdap/client";
import { sendToChannel, testAlert } from "../../src/modules/alerting/channels/service";
import { AllowList, checkHost, checkUrl, egressPolicy, isUnicastScanTarget, type EgressPolicy } from "../../src/platform/egress";
import { parseLooseIpv4 } from "../../src/platform/egress/address";
import { createDb } from "../../src/db/client";
import { call, expectErrorShape, signup, unique } from "../helpers";
import { control, RDAP_BASE } from "../rdap/data";

const E = env as any;
const FIXTURE = E.FIXTURE_URL as string;
const noDns = (allow = ""): EgressPolicy => ({ allowList: AllowList.parse(allow), resolver: null });

/** Internal destinations in the spellings attackers use (issue 13). */
const INTERNAL_HOSTS = [
  "127.0.0.1", "127.1", "2130706433", "0x7f000001", "0x7F.0.0.1", "0177.0.0.1", "017700000001", "127.0.0.1.", "0.0.0.0", "0",
  "[::1]", "[::]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:0:127.0.0.1]", "[::127.0.0.1]", "[64:ff9b::127.0.0.1]", "[2002:7f00:1::1]", "[2002:a9fe:a9fe::]",
  "169.254.169.254", "[fd00:ec2::254]", "[fe80::1]", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "100.64.0.1", "100.127.255.254",
  "224.0.0.1", "255.255.255.255", "[ff02::1]", "240.0.0.1", "192.0.2.1", "[64:ff9b:1::a00:1]", "[2001::1]",
  "localhost", "LOCALHOST.", "api.localhost", "metadata.google.internal", "db.internal", "printer.local", "intranet",
];

describe("address spellings", () => {
  it("inet_aton forms all read as the same IPv4 address", () => {
    for (const text of ["127.0.0.1", "127.1", "127.0.1", "2130706433", "0x7f000001", "0177.0.0.1", "0x7f.1", "127.0.0.1."]) {
      expect(parseLooseIpv4(text), text).toEqual([127, 0, 0, 1]);
    }
    expect(parseLooseIpv4("256.0.0.1")).toBe("invalid");
    expect(parseLooseIpv4("4294967296")).toBe("invalid");
    expect(parseLooseIpv4("example.com")).toBeNull();
  });

  it("every internal spelling is refused with a reason; public destinations pass", async () => {
    for (const host of INTERNAL_HOSTS) {
      const v = await checkHost(noDns(), host, 443);
      expect(v.allowed, host).toBe(false);
      if (!v.allowed) expect(v.reason.length, host).toBeGreaterThan(10);
    }
    for (const host of ["93.184.215.14", "8.8.8.8", "[2606:4700:4700::1111]", "[::ffff:8.8.8.8]", "[64:ff9b::8.8.8.8]", "hooks.example.com", "xn--bcher-kva.example"]) {
      expect((await checkHost(noDns(), host, 443)).allowed, host).toBe(true);
    }
    // The verdict carries the canonical address to connect to, never the attacker's spelling.
    expect(await checkHost(noDns("127.0.0.1:25"), "0x7f000001", 25)).toEqual({ allowed: true, host: "127.0.0.1", port: 25 });
  });

  it("URL forms: WHATWG-normalised http hosts and opaque smtp hosts alike", async () => {
    for (const url of ["http://2130706433/", "http://0x7f000001:8080/", "https://127.0.0.%31/", "http://[::ffff:127.0.0.1]/", "http://user:pw@169.254.169.254/latest", "smtp://0x7f000001:25", "smtp://[::1]:25", "smtps://localhost"]) {
      expect((await checkUrl(noDns(), url, ["http:", "https:", "smtp:", "smtps:"])).allowed, url).toBe(false);
    }
    expect((await checkUrl(noDns(), "ftp://example.com/", ["http:", "https:"])).allowed).toBe(false);
  });

  it("scan targets must be unicast addresses (private ones are fine: agents scan inside networks)", () => {
    for (const ip of ["10.1.2.3", "192.168.0.10", "192.0.2.10", "2001:db8::10", "8.8.8.8", "::ffff:10.0.0.1"]) expect(isUnicastScanTarget(ip), ip).toBe(true);
    for (const ip of ["0.0.0.0", "255.255.255.255", "224.0.0.1", "239.1.1.1", "240.0.0.1", "::", "ff02::1", "::ffff:224.0.0.1", "example.com", "0x0"]) expect(isUnicastScanTarget(ip), ip).toBe(false);
  });
});

describe("the operator's allow-list opens exactly what it names", () => {
  it("host:port, host, CIDR, [IPv6 CIDR] and exact names", async () => {
    const p = noDns("127.0.0.1:8080,10.20.0.0/16,[fd00::/8]:443,siem.corp.internal");
    expect((await checkHost(p, "127.0.0.1", 8080)).allowed).toBe(true);
    expect((await checkHost(p, "2130706433", 8080)).allowed).toBe(true); // any spelling of it
    expect((await checkHost(p, "127.0.0.1", 8081)).allowed).toBe(false);
    expect((await checkHost(p, "10.20.3.4", 514)).allowed).toBe(true);
    expect((await checkHost(p, "10.21.0.1", 514)).allowed).toBe(false);
    expect((await checkHost(p, "[fd00::5]", 443)).allowed).toBe(true);
    expect((await checkHost(p, "[fd00::5]", 80)).allowed).toBe(false);
    expect((await checkHost(p, "siem.corp.internal", 6514)).allowed).toBe(true);
    expect((await checkHost(p, "other.corp.internal", 6514)).allowed).toBe(false);
    expect(AllowList.parse("nonsense:port,,[::1").invalid).toEqual(["nonsense:port", "[::1"]);
  });
});

describe("names resolving to internal addresses (DoH, best effort against rebinding)", () => {
  it("refuses a name whose A or AAAA answer is internal, allows public answers and unresolvable names", async () => {
    const ns = `egress-${unique()}`;
    const zone = await fetch(`${FIXTURE}/doh/__control/zone`, {
      method: "POST",
      body: JSON.stringify({
        ns,
        records: [
          { name: "rebind.example.net", type: "A", data: "127.0.0.1" },
          { name: "meta.example.net", type: "AAAA", data: "fd00:ec2::254" },
          { name: "mixed.example.net", type: "A", data: "93.184.215.14" },
          { name: "mixed.example.net", type: "A", data: "10.0.0.8" },
          { name: "alias.example.net", type: "CNAME", data: "rebind.example.net" },
          { name: "public.example.net", type: "A", data: "93.184.215.14" },
        ],
      }),
    });
    expect(zone.status).toBe(200);
    const policy = egressPolicy({ egressAllowlist: "", dohResolverUrls: [`${FIXTURE}/doh/${ns}/dns-query`] });
    for (const name of ["rebind.example.net", "meta.example.net", "mixed.example.net", "alias.example.net"]) {
      const v = await checkHost(policy, name, 443);
      expect(v.allowed, name).toBe(false);
      if (!v.allowed) expect(v.reason, name).toContain("resolves to");
    }
    expect((await checkHost(policy, "public.example.net", 443)).allowed).toBe(true);
    expect((await checkHost(policy, "nxdomain.example.net", 443)).allowed).toBe(true);
  });
});

describe("channels: refused when saved, and again when sent", () => {
  it("every internal webhook, Slack and SMTP destination is a 400 naming the field; nothing is saved", async () => {
    const org = await signup();
    for (const host of INTERNAL_HOSTS.slice(0, 40)) {
      for (const [kind, field, url] of [
        ["webhook", "url", `http://${host}/hook`],
        ["slack", "url", `https://${host}:8443/services/T0/B0/X`],
        ["email", "smtp_url", `smtp://${host}:25`],
      ] as const) {
        const body = kind === "email" ? { name: "m", kind, recipients: ["a@example.com"], smtp_url: url } : { name: "h", kind, url };
        const r = await call("POST", "/api/notification-channels", { token: org.session, body });
        if (r.status === 400 && r.body.error.details?.[0]?.path === field) continue;
        throw new Error(`${url}: expected 400 naming ${field}, got ${r.status} ${JSON.stringify(r.body)}`);
      }
    }
    const r = await call("POST", "/api/notification-channels", { token: org.session, body: { name: "h", kind: "webhook", url: "http://169.254.169.254/latest/meta-data" } });
    expectErrorShape(r, 400, "validation_error");
    expect(r.body.error.details).toEqual([{ path: "url", message: "destination refused: 169.254.169.254 is a link-local address (169.254.0.0/16, cloud metadata)" }]);
    expect((await call("GET", "/api/notification-channels", { token: org.session })).body.channels).toEqual([]);
    // An update to an internal destination is refused the same way.
    const ok = await call("POST", "/api/notification-channels", { token: org.session, body: { name: "h", kind: "webhook", url: "https://hooks.example.com/a" } });
    expect(ok.status).toBe(201);
    const put = await call("PUT", `/api/notification-channels/${ok.body.id}`, { token: org.session, body: { name: "h", kind: "webhook", url: "http://[::ffff:127.0.0.1]:8080/" } });
    expectErrorShape(put, 400, "validation_error");
  });

  it("a destination saved under an allow-list is refused at send time once the policy no longer allows it", async () => {
    const org = await signup();
    const box = unique();
    const created = await call("POST", "/api/notification-channels", { token: org.session, body: { name: "h", kind: "webhook", url: `${FIXTURE}/webhook/${box}` } });
    expect(created.status).toBe(201);
    const db = createDb(E.DB);
    const row = await db.query.notificationChannels.findFirst({ where: (c, { eq }) => eq(c.id, created.body.id) });
    const payload = testAlert(loadConfig(E), row!, new Date());
    // With the test allow-list: delivered.
    expect(await sendToChannel(db, loadConfig(E), row!, payload, new Date())).toMatchObject({ ok: true });
    // Without it (the operator removed the entry): refused before any connection.
    const strict = await sendToChannel(db, loadConfig({ ...E, EGRESS_ALLOWLIST: "" }), row!, payload, new Date());
    expect(strict).toMatchObject({ ok: false, retryable: false, failure: "blocked" });
    const inbox = (await (await fetch(`${FIXTURE}/webhook/__control/${box}`)).json<any>()).received;
    expect(inbox.length).toBe(1);
  });
});

describe("webhook URLs are sealed and shown redacted", () => {
  it("only scheme, host and port are shown: userinfo, path (Discord/Teams/Slack-style tokens) and query are masked; the stored row holds none", async () => {
    const org = await signup();
    const cases: [string, string][] = [
      ["https://alice:s3cr3t-pw@hooks.example.com/in/abc?token=t0k3n-value&sig=5ig", "https://hooks.example.com/***"],
      ["https://discord.example.com/api/webhooks/123456789/pAtH-T0k3n-value", "https://discord.example.com/***"],
      ["https://hooks.example.com:8443/", "https://hooks.example.com:8443/"],
      ["https://hooks.example.com/#fr4gment", "https://hooks.example.com/***"],
    ];
    for (const [url, shown] of cases) {
      const r = await call("POST", "/api/notification-channels", { token: org.session, body: { name: "h", kind: "webhook", url } });
      expect(r.status).toBe(201);
      expect((await call("GET", `/api/notification-channels/${r.body.id}`, { token: org.session })).body.settings).toEqual({ url: shown });
      const stored = JSON.stringify(await (E.DB as D1Database).prepare("SELECT * FROM notification_channels WHERE id = ?").bind(r.body.id).first());
      for (const secret of ["s3cr3t-pw", "t0k3n-value", "alice", "123456789", "fr4gment"]) expect(stored).not.toContain(secret);
    }
    const list = JSON.stringify((await call("GET", "/api/notification-channels", { token: org.session })).body);
    for (const secret of ["s3cr3t-pw", "t0k3n-value", "5ig", "alice", "webhooks", "123456789", "fr4gment"]) expect(list).not.toContain(secret);
  });

  it("an edit that sends the shown URL back (or none) keeps the sealed URL; deliveries still reach it", async () => {
    const org = await signup();
    const box = unique();
    const url = `${FIXTURE}/webhook/${box}`;
    const r = await call("POST", "/api/notification-channels", { token: org.session, body: { name: "h", kind: "webhook", url } });
    const shown = (await call("GET", `/api/notification-channels/${r.body.id}`, { token: org.session })).body.settings.url;
    expect(shown).toBe(`${new URL(FIXTURE).origin}/***`);
    expect((await call("PUT", `/api/notification-channels/${r.body.id}`, { token: org.session, body: { name: "renamed", kind: "webhook", url: shown } })).status).toBe(200);
    expect((await call("PUT", `/api/notification-channels/${r.body.id}`, { token: org.session, body: { name: "renamed again", kind: "webhook" } })).status).toBe(200);
    const db = createDb(E.DB);
    const row = await db.query.notificationChannels.findFirst({ where: (c, { eq }) => eq(c.id, r.body.id) });
    const payload = testAlert(loadConfig(E), row!, new Date());
    expect(await sendToChannel(db, loadConfig(E), row!, payload, new Date())).toMatchObject({ ok: true });
    expect((await (await fetch(`${FIXTURE}/webhook/__control/${box}`)).json<any>()).received.length).toBe(1);
    // A row saved before paths were masked is masked when read.
    await (E.DB as D1Database).prepare("UPDATE notification_channels SET settings = ? WHERE id = ?").bind(JSON.stringify({ url: `${FIXTURE}/webhook/${box}?token=***` }), r.body.id).run();
    expect((await call("GET", `/api/notification-channels/${r.body.id}`, { token: org.session })).body.settings.url).toBe(shown);
  });
});

describe("email recipients are plain addresses", () => {
  it("control characters, line breaks, bidi controls and display names are 400 naming the recipient; nothing is saved", async () => {
    const org = await signup();
    const bad = ["ops@example.com\u0000", "ops@example.com\r\nRCPT TO:<x@evil.example>", "o\u202eps@example.com", "ops\u200f@example.com", "Ops <ops@example.com>", "ops@localhost", "ops@@example.com"];
    for (const address of bad) {
      const r = await call("POST", "/api/notification-channels", { token: org.session, body: { name: "mail", kind: "email", recipients: ["good@example.com", address] } });
      expectErrorShape(r, 400, "validation_error");
      expect(r.body.error.details.map((d: any) => d.path), JSON.stringify(address)).toContain("recipients.1");
    }
    expect((await call("GET", "/api/notification-channels", { token: org.session })).body.channels).toEqual([]);
    const ok = await call("POST", "/api/notification-channels", { token: org.session, body: { name: "mail", kind: "email", recipients: ["ops+alerts@example.com", " soc@sub.example.org "] } });
    expect(ok.status).toBe(201);
    expect((await call("GET", `/api/notification-channels/${ok.body.id}`, { token: org.session })).body.settings.recipients).toEqual(["ops+alerts@example.com", "soc@sub.example.org"]);
  });
});

describe("RDAP redirects obey the policy", () => {
  it("a registry answer redirecting to the metadata address is not followed", async () => {
    const domain = `redirect-${unique()}.client.test`;
    await control(`domain/${domain}`, { redirectTo: "http://169.254.169.254/latest/meta-data/" });
    const policy = noDns();
    const r = await fetchDomain(RDAP_BASE, domain, {
      timeoutMs: 5_000,
      checkRedirect: async (u) => {
        const v = await checkUrl(policy, u, ["http:", "https:"]);
        return v.allowed ? null : v.reason;
      },
    });
    expect(r).toMatchObject({ outcome: "invalid_response", reason: "redirect_refused", redirects: 0 });
  });
});
