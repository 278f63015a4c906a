import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import {
  MAX_EXPRESSION_BYTES,
  compileRule,
  evaluate,
  prepareEvent,
  type CelError,
  type CompiledRule,
} from "../../src/modules/alerting/cel/engine";
import { compileListData } from "../../src/modules/alerting/cel/list-data";
import type { ModuleName } from "../../src/modules/alerting/cel/variables";
import { certScanEvent, certScanFailedEvent, ctLogEvent, ctLogRsaEvent, dnsChangeEvent, rdapChangeEvent } from "./events";

const LISTS = compileListData([
  { name: "vip_domains", list_type: "domain", values: ["cloudflare.com", "xn--bcher-kva.example", "www.example.org"] },
  { name: "dmz", list_type: "ip", values: ["192.0.2.0/24", "2001:db8:10::/48", "198.51.100.7/32"] },
  { name: "empty", list_type: "domain", values: [] },
]);
const KNOWN = ["vip_domains", "dmz", "empty", "office"];

function compiled(module: ModuleName, expression: string, known: string[] = KNOWN): CompiledRule {
  const c = compileRule(module, expression, known);
  if (!c.ok) throw new Error(`${expression}: ${c.message}`);
  return c;
}
function failure(module: ModuleName, expression: string, known: string[] = KNOWN): CelError {
  const c = compileRule(module, expression, known);
  if (c.ok) throw new Error(`${expression} compiled`);
  return c;
}
const run = (module: ModuleName, expression: string, event: unknown) => evaluate(compiled(module, expression), event as any, LISTS);

describe("CT-log rules", () => {
  it("flags a CAA violation for the organization's names", () => {
    const rule = 'cert.dns_names.exists(n, n == "cloudflare.com" || n.endsWith(".cloudflare.com")) && !caa.authorized && caa.has_records';
    expect(run("ct-log", rule, ctLogEvent())).toEqual({ matched: true });
    expect(run("ct-log", rule, ctLogRsaEvent())).toEqual({ matched: false });
  });

  it("matches SANs against a domain list, IDNs as A-labels, and records the list", () => {
    const rule = compiled("ct-log", 'cert.dns_names.exists(n, in_list(n, lists["vip_domains"]))');
    expect(rule.listNames).toEqual(["vip_domains"]);
    expect(evaluate(rule, ctLogEvent(), LISTS)).toEqual({ matched: true });
    expect(evaluate(rule, ctLogRsaEvent(), LISTS)).toEqual({ matched: true }); // xn--bcher-kva.example
    const other = ctLogEvent();
    other.cert.dns_names = ["example.org", "WWW.EXAMPLE.ORG."]; // case and trailing dot ignored
    expect(evaluate(rule, other, LISTS)).toEqual({ matched: true });
    other.cert.dns_names = ["sub.www.example.org", "example.org"]; // exact, no subdomains
    expect(evaluate(rule, other, LISTS)).toEqual({ matched: false });
  });

  it("negates in_list and counts matches with filter/size", () => {
    expect(run("ct-log", '!in_list(cert.subject, lists["vip_domains"])', ctLogEvent())).toEqual({ matched: true });
    expect(run("ct-log", 'cert.dns_names.filter(n, in_list(n, lists["vip_domains"])).size() == 1', ctLogRsaEvent())).toEqual({ matched: true });
  });

  it("an IP SAN looked up in a domain list simply does not match; in an ip list it does", () => {
    expect(run("ct-log", 'cert.dns_names.exists(n, in_list(n, lists["dmz"]))', ctLogRsaEvent())).toEqual({ matched: true });
    expect(run("ct-log", 'cert.dns_names.exists(n, in_list(n, lists["dmz"]))', ctLogEvent())).toEqual({ matched: false });
    expect(run("ct-log", 'in_list("192.0.2.10", lists["vip_domains"]) || cert.sha256.startsWith("950a")', ctLogEvent())).toEqual({ matched: true });
  });

  it("reads ints, bools, SCT objects and absent optional fields", () => {
    expect(run("ct-log", "cert.scts.size() >= 2 && cert.scts.all(s, s.version == 0 && s.timestamp > 1700000000000)", ctLogEvent())).toEqual({ matched: true });
    expect(run("ct-log", "has(cert.key_size) && cert.key_size < 3072", ctLogEvent())).toEqual({ matched: false });
    expect(run("ct-log", "has(cert.key_size) && cert.key_size < 3072", ctLogRsaEvent())).toEqual({ matched: true });
    // Without has(), an EC certificate has no key_size: an evaluation error, reported, not thrown.
    const r = run("ct-log", "cert.key_size < 3072", ctLogEvent());
    expect(r.matched).toBe(false);
    expect(r.error).toMatch(/key_size/);
    expect(run("ct-log", 'rate.count >= 3 && rate.window == "1h" && filter_id == 7', ctLogEvent())).toEqual({ matched: true });
    expect(run("ct-log", 'cert.issuer.matches("O=Google Trust Services") && timestamp(cert.not_after) - timestamp(cert.not_before) < duration("2200h")', ctLogEvent())).toEqual({ matched: true });
  });
});

describe("RDAP rules on real RFC 9083 responses", () => {
  async function rdapJson(path: string): Promise<any> {
    const res = await fetch(`${(env as any).FIXTURE_URL}/data/rdap/domain/${path}`);
    expect(res.status).toBe(200);
    return JSON.parse(new TextDecoder().decode(await res.arrayBuffer())); // served as octet-stream
  }

  it("detects a lost transfer lock and nameserver changes", async () => {
    const previous = await rdapJson("registry-thin/verisign-google.com-2021.json");
    const current = structuredClone(previous);
    current.status = current.status.filter((s: string) => s !== "client transfer prohibited");
    current.nameservers = current.nameservers.slice(1);
    const event = rdapChangeEvent(current, previous, "google.com", "com");
    const lostLock = 'rdap.previous.status.exists(s, s == "client transfer prohibited") && !rdap.current.status.exists(s, s == "client transfer prohibited")';
    expect(run("rdap", lostLock, event)).toEqual({ matched: true });
    expect(run("rdap", lostLock, rdapChangeEvent(previous, previous, "google.com", "com"))).toEqual({ matched: false });
    expect(run("rdap", "size(rdap.current.nameservers) < size(rdap.previous.nameservers)", event)).toEqual({ matched: true });
    expect(run("rdap", 'rdap.previous.nameservers.exists(n, n.ldhName == "NS1.GOOGLE.COM") && !rdap.current.nameservers.exists(n, n.ldhName == "NS1.GOOGLE.COM")', event)).toEqual({ matched: true });
    expect(run("rdap", 'rdap.current.events.exists(e, e.eventAction == "expiration" && e.eventDate < "2029-01-01")', event)).toEqual({ matched: true });
    expect(run("rdap", 'metadata.http_status == 200 && tld == "com" && in_list(rdap.current.ldhName, lists["vip_domains"]) == false', event)).toEqual({ matched: true });
  });

  it("a field absent at a privacy-restricted registry does not fire", async () => {
    const snap = await rdapJson("cctld/afnic.fr.json");
    const event = rdapChangeEvent(snap, snap, "afnic.fr", "fr");
    const r = run("rdap", 'rdap.current.registrant == "x"', event);
    expect(r.matched).toBe(false);
    expect(r.error).toMatch(/registrant/);
    expect(run("rdap", 'has(rdap.current.secureDns) && rdap.current.ldhName == "afnic.fr"', event)).toEqual({ matched: true });
  });
});

describe("cert-watcher rules", () => {
  it("expiry and protocol checks", () => {
    const rule = 'validity_days < 14 || "TLSv1.0" in protocol';
    expect(run("cert-watcher", rule, certScanEvent())).toEqual({ matched: true });
    const fresh = { ...certScanEvent(), validity_days: 60 };
    expect(run("cert-watcher", rule, fresh)).toEqual({ matched: false });
    expect(run("cert-watcher", rule, { ...fresh, protocol: ["TLSv1.0", "TLSv1.2"] })).toEqual({ matched: true });
  });

  it("in_list on ip_address: IPv4, IPv6, CIDR, IPv4-mapped IPv6, garbage", () => {
    const rule = compiled("cert-watcher", 'in_list(ip_address, lists["dmz"])');
    const at = (ip: string) => evaluate(rule, { ...certScanEvent(), ip_address: ip }, LISTS).matched;
    expect(at("192.0.2.25")).toBe(true);
    expect(at("192.0.3.1")).toBe(false);
    expect(at("198.51.100.7")).toBe(true);
    expect(at("198.51.100.8")).toBe(false);
    expect(at("2001:db8:10:ffff::1")).toBe(true);
    expect(at("2001:DB8:0010::443")).toBe(true);
    expect(at("2001:db8:11::1")).toBe(false);
    expect(at("::ffff:192.0.2.200")).toBe(true);
    expect(at("not-an-ip")).toBe(false);
    expect(at("192.0.2.025")).toBe(false);
    expect(evaluate(rule, certScanFailedEvent(), LISTS)).toEqual({ matched: true });
  });

  it("self-signed detection, intermediates and failed scans", () => {
    expect(run("cert-watcher", "certificate.subject == certificate.issuer", certScanEvent())).toEqual({ matched: false });
    expect(run("cert-watcher", 'validation_path.exists(p, p.certificate_subject == p.certificate_issuer && p.certificate_subject.contains("ISRG Root X1"))', certScanEvent())).toEqual({ matched: true });
    expect(run("cert-watcher", 'intermediates.exists(i, i.not_after < "2026-01-01")', certScanEvent())).toEqual({ matched: false });
    expect(run("cert-watcher", 'has_error && error.contains("ECONNREFUSED")', certScanFailedEvent())).toEqual({ matched: true });
    // A failed scan has no certificate: rules on it report an error instead of firing.
    const r = run("cert-watcher", 'certificate.public_key_algorithm == "RSA"', certScanFailedEvent());
    expect(r).toEqual({ matched: false, error: expect.stringMatching(/certificate/) });
  });
});

describe("dns-watcher rules", () => {
  it("record, SPF and DMARC changes", () => {
    const e = dnsChangeEvent();
    expect(run("dns-watcher", 'changed_records.exists(r, r.type == "MX")', e)).toEqual({ matched: true });
    expect(run("dns-watcher", 'changed_records.exists(r, r.type == "MX" && r.new_values.exists(v, v.endsWith("attacker-mail.net.")))', e)).toEqual({ matched: true });
    expect(run("dns-watcher", 'spf.previous.all == "-all" && spf.current.all != "-all"', e)).toEqual({ matched: true });
    expect(run("dns-watcher", 'dmarc.current.p != dmarc.previous.p || dmarc.current.pct < 100', e)).toEqual({ matched: false });
    expect(run("dns-watcher", "!dnssec.validated && dnssec.error == \"\"", e)).toEqual({ matched: true });
    expect(run("dns-watcher", 'changed_records.exists(r, r.type == "NS" && r.new_values.exists(v, !in_list(v, lists["vip_domains"])))', e)).toEqual({ matched: false });
  });
});

describe("compile-time checks", () => {
  it("refuses computed list lookups with the position (a 400 when saved)", () => {
    const e1 = failure("ct-log", 'cert.dns_names.exists(n, in_list(n, lists[n]))');
    expect(e1.code).toBe("computed_list_lookup");
    expect(e1.position).toEqual({ line: 1, column: 43, offset: 42 });
    const e2 = failure("ct-log", 'in_list(cert.subject,\n  lists["vip" + "_domains"])');
    expect(e2.code).toBe("computed_list_lookup");
    expect(e2.position).toMatchObject({ line: 2, column: 9 });
    expect(failure("ct-log", 'in_list(cert.subject, "vip_domains")').code).toBe("computed_list_lookup");
  });

  it("refuses unknown list names and any other use of lists", () => {
    const e = failure("ct-log", 'in_list(cert.subject, lists["nope"])');
    expect(e).toMatchObject({ code: "unknown_list", message: expect.stringContaining("nope"), position: { line: 1, column: 29 } });
    expect(failure("ct-log", 'size(lists["vip_domains"]) > 0').message).toMatch(/in_list/);
  });

  it("type-checks against the module schema", () => {
    expect(failure("ct-log", 'cert.subjct == "x"')).toMatchObject({ code: "type_error", position: { line: 1, column: 6 } });
    expect(failure("ct-log", 'cert.key_size == "2048"').code).toBe("type_error");
    expect(failure("ct-log", 'ip_address == "1.2.3.4"').code).toBe("type_error"); // a cert-watcher field
    expect(failure("cert-watcher", "in_list(validity_days, lists[\"dmz\"])").message).toMatch(/string/);
    expect(failure("ct-log", "cert.subject").code).toBe("not_boolean");
    expect(failure("ct-log", "cert.dns_names.exists(n, n.endsWith(").code).toBe("syntax_error");
    expect(failure("ct-log", "").code).toBe("syntax_error");
  });

  it("limits expressions to 4096 bytes (UTF-8)", () => {
    const base = 'cert.subject == "';
    const fits = `${base}${"a".repeat(MAX_EXPRESSION_BYTES - base.length - 1)}"`;
    expect(compileRule("ct-log", fits, KNOWN).ok).toBe(true);
    expect(failure("ct-log", `${base}${"ä".repeat(2100)}"`).code).toBe("expression_too_long");
  });

  it("a dyn result that is not bool is a runtime error", () => {
    const r = run("rdap", "rdap.current.ldhName", rdapChangeEvent({ ldhName: "x.com" }, {}, "x.com", "com"));
    expect(r).toEqual({ matched: false, error: expect.stringMatching(/bool/) });
  });

  it("compiles once: the same rule version returns the same program", () => {
    const a = compiled("ct-log", "cert.is_precert");
    expect(compiled("ct-log", "cert.is_precert")).toBe(a);
  });
});

describe("runtime robustness", () => {
  it("a list missing at runtime does not match; the rest of the rule evaluates", () => {
    const rule = compiled("ct-log", 'in_list(cert.subject, lists["office"]) || cert.is_precert == false');
    expect(evaluate(rule, ctLogEvent(), LISTS)).toEqual({ matched: true });
    expect(evaluate(compiled("ct-log", 'in_list(cert.subject, lists["office"])'), ctLogEvent(), LISTS)).toEqual({ matched: false });
    expect(evaluate(compiled("ct-log", 'in_list(cert.subject, lists["empty"])'), ctLogEvent(), LISTS)).toEqual({ matched: false });
  });

  it("garbage events produce errors, not exceptions", () => {
    const rule = compiled("ct-log", 'cert.dns_names.exists(n, in_list(n, lists["vip_domains"]))');
    for (const bad of [{}, { cert: "x" }, { cert: { dns_names: "not a list" } }, { cert: { dns_names: [1, 2] } }, null, 42]) {
      const r = evaluate(rule, bad as any, LISTS);
      expect(r.matched).toBe(false);
      expect(typeof r.error).toBe("string");
    }
  });

  it("a prepared event is reused across rules", () => {
    const p = prepareEvent("ct-log", ctLogEvent());
    expect(evaluate(compiled("ct-log", "cert.is_precert"), p, LISTS)).toEqual({ matched: false });
    expect(evaluate(compiled("ct-log", 'cert.dns_names.exists(n, in_list(n, lists["vip_domains"]))'), p, LISTS)).toEqual({ matched: true });
  });
});
