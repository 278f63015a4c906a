import { describe, expect, it } from "vitest";
import { renderTemplate, validateTemplate } from "../../src/modules/alerting/cel/template";
import { introspect } from "../../src/modules/alerting/cel/introspection";
import { compileRule } from "../../src/modules/alerting/cel/engine";
import { MODULE_NAMES } from "../../src/modules/alerting/cel/variables";
import { certScanEvent, ctLogEvent } from "./events";

describe("alert templates", () => {
  it("accepts known fields, including paths inside free-form RDAP data", () => {
    expect(validateTemplate("ct-log", "New cert for {{cert.subject}} by {{ cert.issuer }}: {{cert.dns_names}}")).toEqual([]);
    expect(validateTemplate("rdap", "{{domain}} changed: {{rdap.current.ldhName}} status {{rdap.current.status}}")).toEqual([]);
    expect(validateTemplate("dns-watcher", "{{spf.current.all}} was {{spf.previous.all}}")).toEqual([]);
  });

  it("rejects unknown fields with their offset, bad syntax and unclosed braces", () => {
    const errors = validateTemplate("ct-log", "Hi {{cert.subjct}} and {{ip_address}} {{cert..x}} {{unclosed");
    expect(errors.map((e) => [e.placeholder, e.offset])).toEqual([
      ["{{cert.subjct}}", 3],
      ["{{ip_address}}", 23],
      ["{{cert..x}}", 38],
      ["{{unclosed", 50],
    ]);
    expect(errors[0].message).toContain("cert.subjct");
    expect(validateTemplate("cert-watcher", "{{rdap.current.x}}")).toHaveLength(1);
  });

  it("renders values: lists joined with \", \", objects as JSON, missing as empty", () => {
    const e = ctLogEvent();
    expect(renderTemplate("{{cert.subject}} [{{cert.dns_names}}] key={{cert.key_size}} precert={{cert.is_precert}} idx={{cert.log_index}}", e)).toBe(
      "26d54cff.sni.cloudflaressl.com [26d54cff.sni.cloudflaressl.com, cloudflare.com] key= precert=false idx=401234567",
    );
    expect(renderTemplate("{{caa.error}}|{{nope.deeper}}|{{rate}}", e)).toBe('|||{"count":3,"window":"1h","precert_count":2,"final_count":1,"total_count":3}'.slice(1));
    expect(renderTemplate("{{validation_path}}", { validation_path: [{ certificate_subject: "a" }] })).toBe('{"certificate_subject":"a"}');
    expect(renderTemplate("{{ip_address}} expires in {{validity_days}} days", certScanEvent())).toBe("192.0.2.25 expires in 9 days");
  });
});

describe("introspection", () => {
  it("every module lists its variables and the functions, and every variable type-checks in CEL", () => {
    for (const module of MODULE_NAMES) {
      const r = introspect(module);
      expect(r.module).toBe(module);
      expect(r.functions.map((f) => f.name)).toEqual(expect.arrayContaining(["in_list", "exists", "all", "filter", "map", "size", "contains", "startsWith", "endsWith", "matches"]));
      for (const v of r.variables) {
        expect(v.description.length, v.path).toBeGreaterThan(0);
        if (v.path.includes("[]")) continue; // element fields: reachable inside a macro
        const c = compileRule(module, `size([${v.path}]) == 1`, []);
        expect(c.ok, `${module} ${v.path}`).toBe(true);
      }
    }
    const ct = introspect("ct-log").variables;
    expect(ct).toContainEqual({ path: "cert.dns_names", type: "list<string>", description: "All subject alternative names" });
    expect(ct).toContainEqual(expect.objectContaining({ path: "cert.scts[].version", type: "int" }));
    expect(introspect("dns-watcher").variables.map((v) => v.path)).toEqual(expect.arrayContaining(["changed_records[].new_values", "dnssec.validated", "spf.current.all", "dmarc.previous.rua", "resolved_at"]));
  });
});
