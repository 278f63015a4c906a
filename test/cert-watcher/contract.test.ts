// The agent/API contract (packages/scan-contract) against what really flows through it:
// captured scanner-node results, the OpenAPI document generated from it, and the CEL
// variables of the certificate scan event that share its field declarations.
import { ChainEntry, LeafCertificate, LeasedJob, LeaseResponse, PostResultRequest, ScanResult, storedForm } from "@trust-plane/scan-contract";
import { describe, expect, it } from "vitest";
import { CertScanEventSchema, certWatcherVariables } from "../../src/modules/cert-watcher/events";
import { analyseScan } from "../../src/modules/cert-watcher/scan-result";
import { call, signup } from "../helpers";
import { FIXTURES, type FixtureName } from "./helpers";

/**
 * The hand-written CEL variable spec of cert-watcher before the event was derived from
 * the contract (src/modules/alerting/cel/variables/cert-watcher.ts at 87b9189): the
 * derived spec must keep every one of these paths with the same type.
 */
const VARIABLES_BEFORE: [string, string][] = [
  ["monitor_cn", "string"], ["dns_name", "string"], ["ip_address", "string"], ["connection_method", "string"], ["protocol", "list<string>"],
  ["ciphers", "list<string>"], ["named_groups", "list<string>"], ["certificate", "object"], ["certificate.sha256", "string"],
  ["certificate.subject", "string"], ["certificate.issuer", "string"], ["certificate.serial", "string"], ["certificate.signature_algorithm", "string"],
  ["certificate.aia", "string"], ["certificate.ocsp", "string"], ["certificate.dns_names", "list<string>"], ["certificate.not_before", "string"],
  ["certificate.not_after", "string"], ["certificate.public_key_algorithm", "string"], ["validity_days", "int"], ["intermediates", "list<object>"],
  ["intermediates[].subject", "string"], ["intermediates[].issuer", "string"], ["intermediates[].not_before", "string"],
  ["intermediates[].not_after", "string"], ["intermediates[].signature_sha256", "string"], ["validation_path", "list<object>"],
  ["validation_path[].certificate_subject", "string"], ["validation_path[].certificate_issuer", "string"], ["has_error", "bool"], ["error", "string"],
];

/** The fields every module's events carry since collection events exist. */
const COMMON_VARIABLES = ["event_type", "collection", "collection.state", "collection.error_class", "collection.error_message", "collection.failing_since"];

describe("scan result contract", () => {
  it("every captured scanner-node result validates and passes through unchanged (the agent's type is the contract's output)", () => {
    for (const name of Object.keys(FIXTURES) as FixtureName[]) {
      const { frameworks: _f, weak_suites: _w, legacy_suites: _l, ...raw } = structuredClone(FIXTURES[name]) as Record<string, unknown>;
      const parsed = ScanResult.safeParse(raw);
      expect(parsed.success, `${name}: ${parsed.error?.message}`).toBe(true);
      // Captured before agents sent the leaf's key hash and DER and the intermediates' DER: absent, they are null or empty.
      const certificate = raw.certificate && { ...(raw.certificate as object), spki_sha256: null, der: null };
      expect(parsed.data, name).toEqual({ ...raw, certificate, intermediates_der: [] });
    }
  });

  it("is liberal where it may be, strict where it must: empty defaults, cut caps, refused types and enum values", () => {
    const empty = ScanResult.parse({ has_error: true });
    expect(empty).toMatchObject({ monitor_cn: "", port: null, starttls: null, protocol: [], certificate: null, validation: null, duration_ms: null });
    const cut = ScanResult.parse({ has_error: false, dns_names: [], certificate: { subject: "x".repeat(5000), dns_names: Array(1500).fill("a.example") } });
    expect(cut.certificate!.subject).toHaveLength(2048);
    expect(cut.certificate!.dns_names).toHaveLength(1000);
    expect(cut.certificate!.curve).toBeNull();
    expect(ScanResult.safeParse({ has_error: false, starttls: "telnet" }).success).toBe(false);
    expect(ScanResult.safeParse({ has_error: false, connection_method: "quic" }).success).toBe(false);
    expect(ScanResult.safeParse({ has_error: false, port: "443" }).success).toBe(false);
    expect(ScanResult.safeParse({}).success).toBe(false);
  });

  it("the stored form is what acceptance makes: every accepted result satisfies it, an unaccepted one does not", () => {
    const stored = storedForm(ScanResult);
    for (const name of Object.keys(FIXTURES) as FixtureName[]) {
      const accepted = ScanResult.parse(structuredClone(FIXTURES[name]));
      expect(stored.parse(accepted), name).toEqual(accepted);
    }
    const empty = ScanResult.parse({ has_error: true });
    expect(stored.parse(empty)).toEqual(empty);
    // What the agent may leave out, the stored form has: every field present, with its type.
    expect(storedForm(LeafCertificate).safeParse({}).success).toBe(false);
    expect(storedForm(LeafCertificate).safeParse({ ...ScanResult.parse({ has_error: false, certificate: {} }).certificate, key_bits: "2048" }).success).toBe(false);
    expect(storedForm(ChainEntry).safeParse({ subject: null, issuer: "", not_before: "", not_after: "", signature_sha256: "" }).success).toBe(false);
  });

  it("lease jobs and result posts: the API's answers are the agent's types", () => {
    const job = { job_id: 7, monitor_id: 1, target_id: 2, monitor_cn: "www.example.com", ip_address: "192.0.2.1", port: 443, sni: "www.example.com", starttls: null, root_ca: null, attempt: 1 };
    expect(LeaseResponse.parse({ jobs: [job], lease_seconds: 300 }).jobs[0]).toEqual(job);
    expect(LeasedJob.safeParse({ ...job, port: 0 }).success).toBe(false);
    expect(PostResultRequest.parse({ job_id: "7", result: { has_error: true } }).job_id).toBe(7);
  });
});

describe("certificate scan event", () => {
  it("the CEL variables derived from the one declaration keep every variable (path and type) of the former hand-written spec", () => {
    const after = new Map(certWatcherVariables.map((v) => [v.path, v.type]));
    for (const [path, type] of VARIABLES_BEFORE) expect(after.get(path), path).toBe(type);
    // Plus the fields every module's events have (event_type, collection.*), which monitor and port the scan belongs to (the alert's asset),
    // the served key's hash and the CT standing of the not_in_ct event (the certificate inventory).
    const ADDED: [string, string][] = [["monitor_id", "int"], ["port", "int"], ["certificate.spki_sha256", "string"], ["ct", "object"], ["ct.status", "string"], ["ct.reason", "string"], ["ct.hostname", "string"]];
    for (const [path, type] of ADDED) expect(after.get(path), path).toBe(type);
    expect(certWatcherVariables.length).toBe(VARIABLES_BEFORE.length + COMMON_VARIABLES.length + ADDED.length);
    for (const path of COMMON_VARIABLES) expect(after.has(path), path).toBe(true);
    for (const v of certWatcherVariables) expect(v.description, v.path).not.toBe("");
  });

  it("the introspection endpoint serves them", async () => {
    const org = await signup("Introspect");
    const r = await call("GET", "/api/cert-watcher/introspection", { token: org.session });
    expect(r.status).toBe(200);
    const served = new Map((r.body.variables as { path: string; type: string }[]).map((v) => [v.path, v.type]));
    for (const [path, type] of VARIABLES_BEFORE) expect(served.get(path), path).toBe(type);
  });

  it("the event built from a real scan validates against its own schema", () => {
    const now = new Date("2026-12-01T00:00:00Z");
    for (const name of Object.keys(FIXTURES) as FixtureName[]) {
      const a = analyseScan(ScanResult.parse(FIXTURES[name]), { monitorId: 1, monitorCn: "www.example.test", port: 443, sni: "www.example.test", ipAddress: "127.0.0.1", starttls: null, now });
      const checked = CertScanEventSchema.safeParse(a.event);
      expect(checked.success, `${name}: ${checked.error?.message}`).toBe(true);
      expect(Object.keys(a.event).sort()).toEqual([...VARIABLES_BEFORE.filter(([p]) => !p.includes(".")).map(([p]) => p), "event_type", "collection", "monitor_id", "port", "ct"].sort());
      expect(a.event).toMatchObject({ event_type: "scan_completed", monitor_id: 1, port: 443 });
    }
  });
});

it("the OpenAPI document carries the contract: the result schema with its field descriptions, the lease job", async () => {
  const doc = (await call("GET", "/api/openapi.json")).body;
  const schemas = doc.components.schemas;
  expect(Object.keys(schemas.ScanResultInput.properties)).toEqual(Object.keys(ScanResult.shape));
  expect(schemas.ScanResultInput.required).toEqual(["has_error"]);
  expect(schemas.ScanResultInput.properties.validity_days.description).toMatch(/Days until expiry/);
  expect(Object.keys(schemas.LeasedScanJob.properties)).toEqual(Object.keys(LeasedJob.shape));
  expect(schemas.PostScanResult.properties.result.$ref).toBe("#/components/schemas/ScanResultInput");
  // The scan history returns accepted results: their stored form, every field required and typed (not "any object").
  expect(Object.keys(schemas.ScannedCertificate.properties)).toEqual(Object.keys(LeafCertificate.shape));
  expect(schemas.ScannedCertificate.required).toEqual(Object.keys(LeafCertificate.shape));
  expect(schemas.ScannedCertificate.properties.key_bits.type).toEqual(["integer", "null"]);
  expect(schemas.CertScan.properties.intermediates.items.$ref).toBe("#/components/schemas/ScannedChainEntry");
});

it("control characters of observed strings are made visible (\\xHH), never passed on as line breaks", () => {
  const r = ScanResult.parse({ has_error: true, error: "refused\r\nX-Injected: 1", certificate: { subject: "CN=evil\r\nBcc: victim@example.org\u0000", dns_names: ["a\nb"] } });
  expect(r.certificate!.subject).toBe("CN=evil\\x0D\\x0ABcc: victim@example.org\\x00");
  expect(r.certificate!.dns_names).toEqual(["a\\x0Ab"]);
  expect(r.error).toBe("refused\\x0D\\x0AX-Injected: 1");
});

