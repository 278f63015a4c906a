/**
 * Alert rules, templates, the test endpoint, introspection and per-module permissions
 * through the HTTP API (docs/decisions.md#alerting, #rule-lists).
 * Every refused save is checked to have saved nothing by reading the module back.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addMember, call, createToken, expectError, signup, type CallResult } from "../helpers";
import { certScanEvent, certScanFailedEvent, ctLogEvent, ctLogRsaEvent, dnsChangeEvent, rdapChangeEvent } from "./events";

const MODULES = ["ct-log", "rdap", "cert-watcher", "dns-watcher"] as const;

async function rdapJson(path: string): Promise<any> {
  const res = await fetch(`${(env as any).FIXTURE_URL}/data/rdap/domain/${path}`);
  expect(res.status).toBe(200);
  return JSON.parse(new TextDecoder().decode(await res.arrayBuffer()));
}

async function rules(token: string, module: string) {
  const r = await call("GET", `/api/${module}/alert-rules`, { token });
  expect(r.status).toBe(200);
  return r.body.rules as any[];
}

const testRule = (token: string, module: string, expression: string, event: unknown) =>
  call("POST", `/api/${module}/alert-rules/test`, { token, body: { expression, event } });

/** The error text of a 400, message and details together. */
const errorText = (r: CallResult) => `${r.body?.error?.message}\n${(r.body?.error?.details ?? []).map((d: any) => `${d.path}: ${d.message}`).join("\n")}`;

describe("rule save errors: 400, nothing saved", () => {
  it("invalid CEL names line and column", async () => {
    const { session } = await signup();
    const r = await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "bad", expression: 'caa.has_records &&\n  !caa.authorized &&& rate.count > 1' } });
    expectError(r, 400, "validation_error");
    expect(r.body.error.message).toMatch(/line 2, column \d+/);
    // An unknown field is a type error with its position too.
    const r2 = await call("POST", "/api/cert-watcher/alert-rules", { token: session, body: { name: "bad", expression: "validity_days < 10 && certificate.no_such_field == 1" } });
    expectError(r2, 400, "validation_error");
    expect(r2.body.error.message).toMatch(/line 1, column \d+/);
    expect(errorText(r2)).toContain("no_such_field");
    // Type mismatch and a non-bool result.
    expectError(await call("POST", "/api/cert-watcher/alert-rules", { token: session, body: { name: "bad", expression: 'validity_days == "ten"' } }), 400, "validation_error");
    expectError(await call("POST", "/api/cert-watcher/alert-rules", { token: session, body: { name: "bad", expression: "validity_days + 1" } }), 400, "validation_error");
    expect(await rules(session, "ct-log")).toEqual([]);
    expect(await rules(session, "cert-watcher")).toEqual([]);
  });

  it("an expression over 4 KiB is 400; exactly 4 KiB is accepted", async () => {
    const { session } = await signup();
    const clause = 'cert.subject == "x" || ';
    const fill = (bytes: number) => {
      let e = "";
      while (e.length + clause.length + "true".length <= bytes) e += clause;
      return e + "true" + " ".repeat(bytes - e.length - 4);
    };
    const big = fill(4097);
    expect(new TextEncoder().encode(big).length).toBe(4097);
    const r = await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "big", expression: big } });
    expectError(r, 400, "validation_error");
    expect(errorText(r)).toMatch(/4096/);
    expect(await rules(session, "ct-log")).toEqual([]);
    const max = fill(4096);
    expect(new TextEncoder().encode(max).length).toBe(4096);
    expect((await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "max", expression: max } })).status).toBe(201);
  });

  it("a computed list lookup lists[x] is 400; an unknown list name is 400", async () => {
    const { session } = await signup();
    await call("POST", "/api/lists", { token: session, body: { name: "vip", list_type: "domain", entries: ["cloudflare.com"] } });
    const computed = await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "c", expression: "cert.dns_names.exists(n, in_list(n, lists[cert.subject]))" } });
    expectError(computed, 400, "validation_error");
    expect(errorText(computed)).toMatch(/computed_list_lookup|literal/);
    expect(computed.body.error.message).toMatch(/line 1, column \d+/);
    const concat = await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "c", expression: 'in_list(cert.subject, lists["v" + "ip"])' } });
    expectError(concat, 400, "validation_error");
    const unknown = await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "u", expression: 'in_list(cert.subject, lists["no_such_list"])' } });
    expectError(unknown, 400, "validation_error");
    expect(errorText(unknown)).toContain("no_such_list");
    // `lists` outside in_list is not a variable.
    expectError(await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "l", expression: 'size(lists["vip"]) > 0' } }), 400, "validation_error");
    expect(await rules(session, "ct-log")).toEqual([]);
    expect((await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "ok", expression: 'cert.dns_names.exists(n, in_list(n, lists["vip"]))' } })).status).toBe(201);
  });

  it("a template referencing an unknown field is 400 naming the field", async () => {
    const { session } = await signup();
    const r = await call("POST", "/api/ct-log/alert-templates", { token: session, body: { name: "t", subject: "New cert {{cert.subjct}}", body: "Names: {{cert.dns_names}}" } });
    expectError(r, 400, "validation_error");
    expect(errorText(r)).toContain("cert.subjct");
    // A field of another module is unknown here.
    const r2 = await call("POST", "/api/rdap/alert-templates", { token: session, body: { name: "t", subject: "{{domain}}", body: "{{validity_days}} days" } });
    expectError(r2, 400, "validation_error");
    expect(errorText(r2)).toContain("validity_days");
    expectError(await call("POST", "/api/rdap/alert-templates", { token: session, body: { name: "t", subject: "{{domain", body: "x" } }), 400, "validation_error");
    for (const m of ["ct-log", "rdap"]) expect((await call("GET", `/api/${m}/alert-templates`, { token: session })).body.templates).toEqual([]);
    // Free-form RDAP JSON accepts any path below rdap.current.
    expect((await call("POST", "/api/rdap/alert-templates", { token: session, body: { name: "t", subject: "{{domain}} changed", body: "{{rdap.current.ldhName}} {{metadata.http_status}}" } })).status).toBe(201);
  });

  it("a channel URL that is not http(s) is 400; nothing saved", async () => {
    const { session } = await signup();
    for (const [kind, url] of [
      ["webhook", "ftp://hooks.example.com/x"],
      ["webhook", "javascript:alert(1)"],
      ["webhook", "not a url"],
      ["slack", "file:///etc/passwd"],
      ["webhook", undefined],
    ] as const) {
      const r = await call("POST", "/api/notification-channels", { token: session, body: { name: "c", kind, url } });
      expectError(r, 400, "validation_error");
      expect(r.body.error.details?.[0]?.path).toBe("url");
    }
    expectError(await call("POST", "/api/notification-channels", { token: session, body: { name: "m", kind: "email", recipients: ["not-an-address"] } }), 400, "validation_error");
    expectError(await call("POST", "/api/notification-channels", { token: session, body: { name: "m", kind: "email", recipients: ["a@example.com"], smtp_url: "http://mail.example.com" } }), 400, "validation_error");
    expectError(await call("POST", "/api/notification-channels", { token: session, body: { name: "m", kind: "email", recipients: [] } }), 400, "validation_error");
    expect((await call("GET", "/api/notification-channels", { token: session })).body.channels).toEqual([]);
  });

  it("an unknown template_id or channel_id is 400 (also another module's template and another org's channel)", async () => {
    const { session } = await signup();
    const other = await signup();
    const foreignChannel = await call("POST", "/api/notification-channels", { token: other.session, body: { name: "x", kind: "webhook", url: "https://hooks.example.com/x" } });
    const rdapTemplate = await call("POST", "/api/rdap/alert-templates", { token: session, body: { name: "t", subject: "{{domain}}", body: "{{tld}}" } });
    expect(rdapTemplate.status).toBe(201);
    const cases: [Record<string, unknown>, string][] = [
      [{ template_id: 987654 }, "template_id"],
      [{ template_id: rdapTemplate.body.id }, "template_id"],
      [{ channel_ids: [987654] }, "channel_ids"],
      [{ channel_ids: [foreignChannel.body.id] }, "channel_ids"],
    ];
    for (const [extra, path] of cases) {
      const r = await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "r", expression: "rate.count > 5", ...extra } });
      expectError(r, 400, "validation_error");
      expect(r.body.error.details.map((d: any) => d.path)).toContain(path);
    }
    expect(await rules(session, "ct-log")).toEqual([]);
    // Nor were list references recorded: a list a refused rule named is still deletable.
    const list = await call("POST", "/api/lists", { token: session, body: { name: "refs", list_type: "domain" } });
    expectError(
      await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "r", expression: 'in_list(cert.subject, lists["refs"])', channel_ids: [987654] } }),
      400,
      "validation_error",
    );
    expect((await call("DELETE", `/api/lists/${list.body.id}`, { token: session })).status).toBe(200);
  });

  it("a PUT with an invalid expression keeps the rule as it was", async () => {
    const { session } = await signup();
    const created = await call("POST", "/api/rdap/alert-rules", { token: session, body: { name: "lock", expression: 'tld == "com"', severity: "high", throttle_seconds: 60 } });
    expect(created.status).toBe(201);
    expectError(await call("PUT", `/api/rdap/alert-rules/${created.body.id}`, { token: session, body: { name: "lock2", expression: "tld ==" } }), 400, "validation_error");
    const got = await call("GET", `/api/rdap/alert-rules/${created.body.id}`, { token: session });
    expect(got.body).toMatchObject({ name: "lock", expression: 'tld == "com"', severity: "high", throttle_seconds: 60, enabled: true, template_id: null, channel_ids: [] });
  });
});

describe("rule CRUD", () => {
  it("create, read, replace, enable/disable, delete; other module and other org are 404", async () => {
    const { session } = await signup();
    const other = await signup();
    const ch = await call("POST", "/api/notification-channels", { token: session, body: { name: "h", kind: "webhook", url: "https://hooks.example.com/a" } });
    const created = await call("POST", "/api/cert-watcher/alert-rules", {
      token: session,
      body: { name: "expiring", expression: "validity_days < 14", severity: "critical", channel_ids: [ch.body.id, ch.body.id], throttle_seconds: 3600 },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const got = await call("GET", `/api/cert-watcher/alert-rules/${id}`, { token: session });
    expect(got.body).toMatchObject({ id, name: "expiring", expression: "validity_days < 14", enabled: true, severity: "critical", channel_ids: [ch.body.id], throttle_seconds: 3600 });
    expect(Object.keys(got.body).sort()).toEqual(["alerts_last_24h", "channel_ids", "created_at", "enabled", "expression", "id", "name", "severity", "template_id", "throttle_seconds", "updated_at"]);
    expect((await call("PATCH", `/api/cert-watcher/alert-rules/${id}`, { token: session, body: { enabled: false } })).status).toBe(200);
    expect((await call("GET", `/api/cert-watcher/alert-rules/${id}`, { token: session })).body.enabled).toBe(false);
    expect((await call("PUT", `/api/cert-watcher/alert-rules/${id}`, { token: session, body: { name: "exp", expression: "validity_days < 7" } })).status).toBe(200);
    expect((await call("GET", `/api/cert-watcher/alert-rules/${id}`, { token: session })).body).toMatchObject({ name: "exp", expression: "validity_days < 7", severity: "medium", throttle_seconds: 0 });
    expectError(await call("GET", `/api/rdap/alert-rules/${id}`, { token: session }), 404, "not_found");
    expectError(await call("GET", `/api/cert-watcher/alert-rules/${id}`, { token: other.session }), 404, "not_found");
    expectError(await call("PUT", `/api/cert-watcher/alert-rules/${id}`, { token: other.session, body: { name: "x", expression: "true" } }), 404, "not_found");
    expectError(await call("DELETE", `/api/cert-watcher/alert-rules/${id}`, { token: other.session }), 404, "not_found");
    expect((await call("DELETE", `/api/cert-watcher/alert-rules/${id}`, { token: session })).status).toBe(200);
    expectError(await call("GET", `/api/cert-watcher/alert-rules/${id}`, { token: session }), 404, "not_found");
    expectError(await call("POST", "/api/cert-watcher/alert-rules", { token: session, body: { name: "x", expression: "true", severity: "urgent" } }), 400, "validation_error");
  });
});

describe("POST /api/<module>/alert-rules/test over realistic events", () => {
  it("ct-log: CAA violation, SAN patterns, SCTs, rate, in_list on domains", async () => {
    const { session } = await signup();
    await call("POST", "/api/lists", { token: session, body: { name: "vip_domains", list_type: "domain", entries: ["Cloudflare.com.", "www.xn--bcher-kva.example"] } });
    const ev = ctLogEvent();
    const cases: [string, unknown, boolean][] = [
      ["caa.has_records && !caa.authorized", ev, true],
      ["caa.has_records && !caa.authorized", ctLogRsaEvent(), false],
      ['cert.dns_names.exists(n, n.endsWith(".cloudflaressl.com")) && cert.issuer.contains("Google Trust Services")', ev, true],
      ['cert.dns_names.exists(n, in_list(n, lists["vip_domains"]))', ev, true],
      ['cert.dns_names.exists(n, in_list(n, lists["vip_domains"]))', ctLogRsaEvent(), true],
      ['in_list(cert.subject, lists["vip_domains"])', ev, false],
      ['!in_list(cert.subject, lists["vip_domains"]) && cert.scts.size() == 2 && cert.scts.all(s, s.version == 0)', ev, true],
      ['rate.count >= 3 && rate.window == "1h" && !cert.is_precert', ev, true],
      ['cert.key_algorithm == "RSA" && has(cert.key_size) && cert.key_size < 3072', ctLogRsaEvent(), true],
    ];
    for (const [expression, event, matched] of cases) {
      const r = await testRule(session, "ct-log", expression, event);
      expect(r.status, expression).toBe(200);
      expect(r.body, expression).toMatchObject({ matched, error: null, outcome: matched ? "would_fire" : "no_match" });
    }
    expect(await rules(session, "ct-log")).toEqual([]);
  });

  it("rdap: real RFC 9083 responses (lost transfer lock, registrar change)", async () => {
    const { session } = await signup();
    const previous = await rdapJson("registry-thin/verisign-google.com-2021.json");
    const current = structuredClone(previous);
    current.status = current.status.filter((s: string) => s !== "client transfer prohibited");
    const ev = rdapChangeEvent(current, previous, "google.com", "com");
    const lostLock = 'rdap.previous.status.exists(s, s == "client transfer prohibited") && !rdap.current.status.exists(s, s == "client transfer prohibited")';
    expect((await testRule(session, "rdap", lostLock, ev)).body).toMatchObject({ matched: true, error: null });
    expect((await testRule(session, "rdap", lostLock, rdapChangeEvent(previous, previous, "google.com", "com"))).body).toMatchObject({ matched: false, error: null });
    expect((await testRule(session, "rdap", 'metadata.http_status == 200 && tld == "com" && rdap.current.ldhName.lowerAscii() == domain', ev)).body).toMatchObject({ matched: true, error: null });
    // Absent at a privacy-restricted registry: no match, reported as an evaluation error, not a failure.
    const afnic = await rdapJson("cctld/afnic.fr.json");
    const r = await testRule(session, "rdap", 'rdap.current.registrant == "x"', rdapChangeEvent(afnic, afnic, "afnic.fr", "fr"));
    expect(r.status).toBe(200);
    expect(r.body.matched).toBe(false);
    expect(r.body.error).toContain("registrant");
  });

  it("cert-watcher: expiry, protocols, failed scans, self-signed, in_list on IPs", async () => {
    const { session } = await signup();
    await call("POST", "/api/lists", { token: session, body: { name: "dmz", list_type: "ip", entries: ["192.0.2.0/24", "2001:db8:10::/48"] } });
    const ok = certScanEvent();
    const failed = certScanFailedEvent();
    const cases: [string, unknown, boolean][] = [
      ['validity_days < 14 || "TLSv1.0" in protocol', ok, true],
      ['validity_days < 14 || "TLSv1.0" in protocol', { ...ok, validity_days: 60 }, false],
      ["has_error && error.contains(\"ECONNREFUSED\")", failed, true],
      ['in_list(ip_address, lists["dmz"])', ok, true],
      ['in_list(ip_address, lists["dmz"])', failed, true],
      ['in_list(ip_address, lists["dmz"])', { ...ok, ip_address: "198.51.100.1" }, false],
      ['in_list(ip_address, lists["dmz"]) || validity_days < 0', { ...ok, ip_address: "not-an-ip", validity_days: -1 }, true],
      ["certificate.subject == certificate.issuer", ok, false],
      ["intermediates.exists(i, i.issuer.contains(\"ISRG Root X1\")) && size(validation_path) == 3", ok, true],
    ];
    for (const [expression, event, matched] of cases) {
      const r = await testRule(session, "cert-watcher", expression, event);
      expect(r.body, expression).toMatchObject({ matched, error: null, outcome: matched ? "would_fire" : "no_match" });
    }
  });

  it("dns-watcher: MX hijack and SPF softening", async () => {
    const { session } = await signup();
    await call("POST", "/api/lists", { token: session, body: { name: "ours", list_type: "domain", entries: ["example.com"] } });
    const ev = dnsChangeEvent();
    const cases: [string, boolean][] = [
      ['changed_records.exists(r, r.type == "MX" && r.new_values.exists(v, v.contains("attacker")))', true],
      ['in_list(domain, lists["ours"]) && changed_records.exists(r, r.type == "TXT")', true],
      ['changed_records.exists(r, r.type == "CAA")', false],
      ["dnssec.validated", false],
    ];
    for (const [expression, matched] of cases) expect((await testRule(session, "dns-watcher", expression, ev)).body, expression).toMatchObject({ matched, error: null });
  });

  it("an invalid expression is {matched:false, error} with the position, not a 4xx", async () => {
    const { session } = await signup();
    const r = await testRule(session, "ct-log", "cert.subject ==\n== 1", ctLogEvent());
    expect(r.status).toBe(200);
    expect(r.body.matched).toBe(false);
    expect(r.body.error).toMatch(/line 2, column \d+/);
    const u = await testRule(session, "ct-log", 'in_list(cert.subject, lists["missing"])', ctLogEvent());
    expect(u.body.matched).toBe(false);
    expect(u.body.error).toContain("missing");
  });
});

describe("introspection", () => {
  it.each(MODULES)("%s: variables with path/type/description and functions incl. in_list", async (m) => {
    const { session } = await signup();
    const r = await call("GET", `/api/${m}/introspection`, { token: session });
    expect(r.status).toBe(200);
    expect(r.body.module).toBe(m);
    expect(r.body.variables.length).toBeGreaterThan(0);
    for (const v of r.body.variables) {
      expect(Object.keys(v).sort()).toEqual(["description", "path", "type"]);
      expect(v.path && v.type && v.description).toBeTruthy();
    }
    const byPath = Object.fromEntries(r.body.variables.map((v: any) => [v.path, v.type]));
    const expected: Record<string, Record<string, string>> = {
      "ct-log": { "cert.subject": "string", "cert.dns_names": "list<string>", "cert.key_size": "int", "cert.is_precert": "bool", "cert.scts": "list<object>", "caa.authorized": "bool", "rate.count": "int", filter_id: "int", matched_at: "string" },
      rdap: { domain: "string", tld: "string", "rdap.current": "map<string, dyn>", "rdap.previous": "map<string, dyn>", "metadata.http_status": "int" },
      "cert-watcher": { monitor_cn: "string", ip_address: "string", protocol: "list<string>", "certificate.sha256": "string", validity_days: "int", intermediates: "list<object>", has_error: "bool" },
      "dns-watcher": { domain: "string", changed_records: "list<object>", "changed_records[].new_values": "list<string>" },
    };
    expect(byPath).toMatchObject(expected[m]);
    const fns = r.body.functions.map((f: any) => f.name);
    for (const f of ["in_list", "exists", "filter", "size", "contains", "startsWith", "endsWith"]) expect(fns).toContain(f);
    expect(r.body.functions.find((f: any) => f.name === "in_list").signature).toContain("lists[");
  });
});

describe("per-module permissions", () => {
  it("a token with only rdap:create_alert_rules: 403 on every ct-log rule endpoint, 201 on rdap", async () => {
    const { session } = await signup();
    const t = (await createToken(session, ["rdap:create_alert_rules"])).token;
    expectError(await call("POST", "/api/ct-log/alert-rules", { token: t, body: { name: "x", expression: "rate.count > 1" } }), 403, "forbidden");
    expectError(await call("GET", "/api/ct-log/alert-rules", { token: t }), 403, "forbidden");
    expectError(await call("POST", "/api/ct-log/alert-rules/test", { token: t, body: { expression: "true", event: {} } }), 403, "forbidden");
    expectError(await call("GET", "/api/ct-log/introspection", { token: t }), 403, "forbidden");
    expectError(await call("GET", "/api/ct-log/alert-history", { token: t }), 403, "forbidden");
    expect((await call("POST", "/api/rdap/alert-rules", { token: t, body: { name: "x", expression: 'tld == "com"' } })).status).toBe(201);
    // Creating is not viewing.
    expectError(await call("GET", "/api/rdap/alert-rules", { token: t }), 403, "forbidden");
    expect(await rules(session, "ct-log")).toEqual([]);
    expect((await rules(session, "rdap")).length).toBe(1);
  });

  it("a ct-log Viewer reads ct-log rules, history, templates; cannot write; nothing of rdap; no channels", async () => {
    const admin = await signup();
    const viewer = await addMember(admin.session, [{ module_name: "ct-log", role_name: "Viewer" }]);
    const v = viewer.session;
    expect((await call("GET", "/api/ct-log/alert-rules", { token: v })).status).toBe(200);
    expect((await call("GET", "/api/ct-log/alert-history", { token: v })).status).toBe(200);
    expect((await call("GET", "/api/ct-log/alert-templates", { token: v })).status).toBe(200);
    expect((await call("GET", "/api/ct-log/introspection", { token: v })).status).toBe(200);
    expect((await testRule(v, "ct-log", "rate.count > 1", ctLogEvent())).body).toMatchObject({ matched: true, error: null });
    expectError(await call("POST", "/api/ct-log/alert-rules", { token: v, body: { name: "x", expression: "true" } }), 403, "forbidden");
    expectError(await call("POST", "/api/ct-log/alert-templates", { token: v, body: { name: "x", subject: "s", body: "b" } }), 403, "forbidden");
    expectError(await call("GET", "/api/rdap/alert-rules", { token: v }), 403, "forbidden");
    expectError(await call("GET", "/api/notification-channels", { token: v }), 403, "forbidden");
    expectError(await call("POST", "/api/notification-channels", { token: v, body: { name: "c", kind: "webhook", url: "https://x.example/" } }), 403, "forbidden");
  });

  it("an rdap Editor writes rdap rules but not ct-log ones", async () => {
    const admin = await signup();
    const editor = await addMember(admin.session, [{ module_name: "rdap", role_name: "Editor" }]);
    expect((await call("POST", "/api/rdap/alert-rules", { token: editor.session, body: { name: "x", expression: 'tld == "fr"' } })).status).toBe(201);
    expectError(await call("POST", "/api/ct-log/alert-rules", { token: editor.session, body: { name: "x", expression: "true" } }), 403, "forbidden");
  });
});
