/** The `email_security` object of the DNS domain detail (email/view.ts EmailSecurityView), declared for validation and the OpenAPI document. */
import { z } from "@hono/zod-openapi";
import { MECHANISM_STATUSES, SERVED_STATUSES } from "./view";

const status = z.enum(MECHANISM_STATUSES).openapi({
  description: "ok; missing: looked up, not published; invalid: published but senders or receivers would not use it as meant (see findings); unknown: not observed yet (the record set never resolved, the policy never fetched) or the email checks are off",
});
const findings = z.array(z.string()).openapi({ description: "What each finding means and what to do, in words" });
const StoredCollection = z
  .object({
    last_attempt_at: z.string().nullable(),
    last_success_at: z.string().nullable(),
    failures: z.number().int().openapi({ description: "Consecutive failed attempts (0: the last attempt succeeded)" }),
    failing_since: z.string().nullable(),
    error_class: z.string().nullable().openapi({ description: "collection error class of the last failure (dns_resolution, connect, timeout, http_status, rate_limited, blocked...)" }),
    error: z.string().nullable().openapi({ description: "The last failure in words" }),
  })
  .openapi("EmailCheckCollection", { description: "Whether the fetch or lookup could be made: a failure keeps the last observed value and is never a change" });

const TlsaRecord = z.object({ usage: z.number().int(), selector: z.number().int(), matching_type: z.number().int(), data: z.string(), problem: z.string().openapi({ description: "Why SMTP senders ignore the record; empty when usable" }) });

export const EmailSecuritySchema = z
  .object({
    enabled: z.boolean().openapi({ description: "The email checks run for this domain (email_checks)" }),
    mta_sts: z.object({
      status,
      record: z.string(),
      id: z.string(),
      record_errors: z.array(z.string()),
      policy: z.object({
        status,
        url: z.string(),
        mode: z.string(),
        max_age: z.number().int().nullable(),
        mx: z.array(z.string()),
        errors: z.array(z.string()),
        warnings: z.array(z.string()),
        fetched_at: z.string().nullable().openapi({ description: "When the policy server last answered (a policy or an unusable answer)" }),
        next_fetch_at: z.string().nullable().openapi({ description: "When it is read again although the id did not change (daily; sooner after a failed fetch)" }),
        fetched_for_id: z.string(),
        fingerprint: z.string(),
        collection: StoredCollection,
      }),
      mx_hosts: z.array(z.string()),
      uncovered_mx: z.array(z.string()),
      findings,
    }),
    tls_rpt: z.object({ status, record: z.string(), rua: z.array(z.string()), errors: z.array(z.string()) }),
    dane: z.object({
      status,
      hosts: z.array(
        z.object({
          host: z.string(),
          status,
          validated: z.boolean().openapi({ description: "The TLSA answer was DNSSEC-validated (only then do senders use it)" }),
          records: z.array(TlsaRecord),
          usable: z.number().int(),
          problem: z.string(),
          collection: StoredCollection,
          served: z
            .object({
              status: z.enum(SERVED_STATUSES).openapi({
                description:
                  "matched: every scanned address serves a chain a usable TLSA record matches; mismatch: some address serves a chain no record matches (critical: senders that enforce DANE stop delivering); not_scanned: no port-25 certificate monitor scanned the host yet; not_checked: scanned, but not compared (no usable DNSSEC-validated TLSA set, or an address whose latest scan failed or kept no chain: text says which and why)",
              }),
              monitor_id: z.number().int().nullable().openapi({ description: "The host's certificate monitor on port 25 with STARTTLS; null: none (offered in mail_server_offers)" }),
              checked_at: z.string().nullable().openapi({ description: "The newest scan compared; null when none" }),
              targets: z.array(
                z.object({
                  ip_address: z.string(),
                  scanned_at: z.string().nullable(),
                  matched: z.boolean().nullable().openapi({ description: "null: not compared (see problem)" }),
                  record: z.string().openapi({ description: "The TLSA record that matched (presentation), empty if none" }),
                  problem: z.string(),
                }),
              ),
              text: z.string().openapi({ description: "The result in words" }),
            })
            .openapi({ description: "Whether what the host serves on port 25 (its certificate monitor's latest scans) matches its TLSA records (RFC 7672: DANE-EE against the server's certificate, DANE-TA against any certificate of the chain)" }),
        }),
      ),
      findings,
    }),
    dkim: z.object({
      status,
      selectors: z.array(
        z.object({
          selector: z.string(),
          status,
          record: z.string(),
          key_type: z.string(),
          bits: z.number().int(),
          strength: z.enum(["strong", "legacy", "weak", ""]),
          revoked: z.boolean(),
          testing: z.boolean(),
          fingerprint: z.string(),
          errors: z.array(z.string()),
        }),
      ),
      findings,
    }),
    bimi: z.object({
      status,
      record: z.string(),
      location: z.string(),
      authority: z.string(),
      declined: z.boolean(),
      errors: z.array(z.string()),
      dmarc_enforced: z.boolean(),
      findings,
    }),
    mail_server_offers: z
      .array(z.object({ host: z.string().openapi({ description: "MX host without a certificate monitor on port 25 with STARTTLS" }) }))
      .openapi({
        description:
          "MX hosts no certificate monitor scans on port 25 with STARTTLS: accept one with POST /api/dns-watcher/domains/{domain_id}/mail-server-monitors (the scanner agent then checks its protocols, ciphers and chain, and its chain is matched against the host's TLSA records)",
      }),
  })
  .openapi("DnsEmailSecurity", {
    description:
      "Mail transport security of the domain: MTA-STS (record, policy, MX coverage), TLS reporting, DANE for each MX host, the declared DKIM selectors' keys and BIMI, each with a status and findings",
  });
