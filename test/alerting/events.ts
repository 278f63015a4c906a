/**
 * Realistic sample events, one or more per module, shaped as the modules emit them (JSON,
 * before prepareEvent). Certificate values are those of the real certificate in
 * ../shared/data/ct/certs/cloudflare-com-chain-2025.pem (leaf, issued by GTS WE1);
 * RDAP tests load the real RFC 9083 responses from the fixture hub instead.
 */
import { NO_CT_FIELDS, type CertScanEvent } from "../../src/modules/cert-watcher/events";
import { buildRdapEvent, type RdapEvent } from "../../src/modules/rdap/events";
import { NO_LIFECYCLE, NO_LOG, NO_LOOKALIKE, NO_TYPOSQUAT, type CtLogEvent } from "../../src/modules/ct-log/events";
import { NOT_A_COLLECTION_EVENT } from "../../src/platform/collection/event";
import { DnsWatcherEventSchema, type DnsWatcherEvent } from "../../src/modules/dns-watcher/events";

export function ctLogEvent(): CtLogEvent {
  return {
    event_type: "match",
    collection: NOT_A_COLLECTION_EVENT,
    kind: "match",
    log: NO_LOG,
    cert: {
      subject: "26d54cff.sni.cloudflaressl.com",
      issuer: "C=US, O=Google Trust Services, CN=WE1",
      dns_names: ["26d54cff.sni.cloudflaressl.com", "cloudflare.com"],
      sha256: "950a3399ff699fc3748dd03e59b80ae620690b64e4664f5c0c81b4b9dd1c3955",
      serial: "40e5a0d8d73d5e1013d6da11cc0ae157",
      not_before: "2025-09-10T18:11:56Z",
      not_after: "2025-12-09T19:11:41Z",
      signature_algorithm: "ecdsa-with-SHA256",
      key_algorithm: "EC",
      is_precert: false,
      log_name: "Google 'Argon2025h2' log",
      log_index: 401_234_567,
      aia_issuing: ["http://i.pki.goog/we1.crt"],
      ocsp_servers: [],
      scts: [
        {
          log_id: "EvFONL1TckyEBhnDjz96E/jntWKHiJxtMAWE6+WGJjo=",
          timestamp: 1_757_531_516_847,
          version: 0,
          hash_algorithm: "sha256",
          signature_algorithm: "ecdsa",
        },
        {
          log_id: "zxFW7tUufK/zh1vZaS6b6RpxZ0qwF+ysAdJbd87MOwg=",
          timestamp: 1_757_531_516_852,
          version: 0,
          hash_algorithm: "sha256",
          signature_algorithm: "ecdsa",
        },
      ],
      spki_sha256: "7bd4c1fa4b7a9a8f4a4d0d6c9e0b4c9a3f0b8a1c2d3e4f5a6b7c8d9e0f1a2b3c",
      issuer_spki_sha256: "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90",
      authorization: "caa_violation",
      authorization_reason: "The CAA records of cloudflare.com (digicert.com, letsencrypt.org) do not permit Google Trust Services",
      deployed: false,
      replaces: "",
      lifetime_days: 90,
      exceeds_max_validity: false,
    },
    caa: {
      has_records: true,
      authorized: false,
      records: ["digicert.com", "letsencrypt.org"],
      error: "",
      checked_names: ["cloudflare.com"],
      issuer_candidates: ["pki.goog"],
      evaluated_at: "2025-09-10T18:20:03Z",
    },
    rate: { count: 3, window: "1h", precert_count: 2, final_count: 1, total_count: 3 },
    typosquat: NO_TYPOSQUAT,
    lookalike: NO_LOOKALIKE,
    filter_id: 7,
    filter: { id: 7, pattern: "cloudflare.com" },
    lifecycle: NO_LIFECYCLE,
    matched_at: "2025-09-10T18:20:03Z",
  };
}

/** An RSA certificate for an IDN and an IP SAN, CAA-authorized. */
export function ctLogRsaEvent(): CtLogEvent {
  const e = ctLogEvent();
  e.cert.subject = "xn--bcher-kva.example";
  e.cert.dns_names = ["xn--bcher-kva.example", "www.xn--bcher-kva.example", "192.0.2.10"];
  e.cert.key_algorithm = "RSA";
  e.cert.key_size = 2048;
  e.cert.signature_algorithm = "sha256WithRSAEncryption";
  e.cert.issuer = "C=US, O=Let's Encrypt, CN=R11";
  e.caa = { ...e.caa, authorized: true, issuer_candidates: ["letsencrypt.org"] };
  return e;
}

export function certScanEvent(): CertScanEvent {
  return {
    event_type: "scan_completed",
    collection: NOT_A_COLLECTION_EVENT,
    monitor_id: 1,
    monitor_cn: "mail.example.com",
    dns_name: "mail.example.com",
    ip_address: "192.0.2.25",
    port: 587,
    connection_method: "starttls",
    protocol: ["TLSv1.2", "TLSv1.3"],
    ciphers: ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
    named_groups: ["x25519", "secp256r1"],
    certificate: {
      sha256: "3f1b8c6e2a9d4f0b7c5e1a2d8f6b4c0e9a7d5f3b1c8e6a4d2f0b9c7e5a3d1f8b",
      subject: "CN=mail.example.com",
      issuer: "C=US, O=Let's Encrypt, CN=R11",
      serial: "04a1b2c3d4e5f60718293a4b5c6d7e8f9a0b",
      signature_algorithm: "sha256WithRSAEncryption",
      aia: "http://r11.i.lencr.org/",
      ocsp: "",
      dns_names: ["mail.example.com"],
      not_before: "2025-08-20T07:14:03Z",
      not_after: "2025-11-18T07:14:02Z",
      public_key_algorithm: "RSA",
      spki_sha256: "5c1e0f3d2b4a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
    },
    validity_days: 9,
    intermediates: [
      {
        subject: "C=US, O=Let's Encrypt, CN=R11",
        issuer: "C=US, O=Internet Security Research Group, CN=ISRG Root X1",
        not_before: "2024-03-13T00:00:00Z",
        not_after: "2027-03-12T23:59:59Z",
        signature_sha256: "591e9ce6c863d3a079e9fabe1478c7339a26b21269dde795211361024ae31a44",
      },
    ],
    validation_path: [
      { certificate_subject: "CN=mail.example.com", certificate_issuer: "C=US, O=Let's Encrypt, CN=R11" },
      { certificate_subject: "C=US, O=Let's Encrypt, CN=R11", certificate_issuer: "C=US, O=Internet Security Research Group, CN=ISRG Root X1" },
      { certificate_subject: "C=US, O=Internet Security Research Group, CN=ISRG Root X1", certificate_issuer: "C=US, O=Internet Security Research Group, CN=ISRG Root X1" },
    ],
    has_error: false,
    error: "",
    ct: NO_CT_FIELDS,
  };
}

/** A failed scan as the Worker emits it: no certificate, no validity, the error. */
export function certScanFailedEvent(): CertScanEvent {
  return {
    event_type: "scan_completed",
    collection: NOT_A_COLLECTION_EVENT,
    monitor_id: 2,
    monitor_cn: "legacy.example.com",
    dns_name: "",
    ip_address: "2001:db8:10::443",
    port: 443,
    connection_method: "direct_tls",
    protocol: [],
    ciphers: [],
    named_groups: [],
    certificate: null,
    validity_days: null,
    intermediates: [],
    validation_path: [],
    has_error: true,
    error: "connect ECONNREFUSED [2001:db8:10::443]:443",
    ct: NO_CT_FIELDS,
  };
}

/** A DNS watcher change event (the shape of src/modules/dns-watcher/events.ts): MX hijacked, SPF softened. */
export function dnsChangeEvent(): DnsWatcherEvent {
  const spf = (all: string) => ({
    record: `v=spf1 include:_spf.example.net ${all}`,
    all,
    mechanisms: ["include:_spf.example.net", all],
    includes: ["_spf.example.net"],
    lookup_count: 1,
    allows_all: false,
  });
  const dmarc = { record: "v=DMARC1; p=reject; rua=mailto:dmarc@example.com", p: "reject", sp: "", np: "", pct: 100, t: false, adkim: "r", aspf: "r", rua: ["mailto:dmarc@example.com"], ruf: [] };
  return DnsWatcherEventSchema.parse({
    event_type: "dns_changed",
    collection: NOT_A_COLLECTION_EVENT,
    domain: "example.com",
    changed_records: [
      {
        name: "example.com",
        type: "MX",
        old_values: ["10 mx1.example.com.", "20 mx2.example.com."],
        new_values: ["10 mx.attacker-mail.net."],
      },
      {
        name: "example.com",
        type: "TXT",
        old_values: ['"v=spf1 include:_spf.example.net -all"'],
        new_values: ['"v=spf1 include:_spf.example.net ~all"'],
      },
    ],
    dnssec: { validated: false, status: "insecure", previous_status: "insecure", error: "", ede_codes: [] },
    spf: { current: spf("~all"), previous: spf("-all"), allows_all: false, became_permissive: false },
    dmarc: { current: dmarc, previous: dmarc, regressions: [], verdict: "" },
    failing_record_sets: [],
    resolved_at: "2025-10-01T12:00:00Z",
  });
}

/** An RDAP change event around two real RDAP responses. */
export function rdapChangeEvent(current: unknown, previous: unknown, domain: string, tld: string): RdapEvent {
  return buildRdapEvent({
    domain,
    tld,
    current,
    previous,
    fetchedAt: "2025-10-01T06:00:00Z",
    rdapServer: `https://rdap.example-registry.test/domain/${domain}`,
    httpStatus: 200,
  });
}
