/**
 * The detail pages of a CT match and of a typosquatting match: the certificate as the log
 * entry carries it, where it is deployed, the CAA verdict, the filters it matched and the
 * logs it was seen in.
 */
import { get, type Schemas } from "../../api";
import { useLocation } from "../../router";
import { useResource } from "../../ui/resource";
import { DataTable } from "../../ui/table";
import { Time } from "../../ui/time";
import { Badge, Chips, ErrorBox, KeyValues, PageHeader, Section } from "../../ui/widgets";
import { MatchDeployments } from "../inventory";

export function CertificateDetail({ cert }: { cert: Schemas["CtCertificate"] }) {
  return (
    <Section title="Certificate">
      <KeyValues
        items={[
          ["Subject", <span class="mono">{cert.subject}</span>],
          ["Issuer", cert.issuer],
          ["Names (SAN)", <Chips items={cert.dns_names} label="Subject alternative names" />],
          ["Valid from", <Time iso={cert.not_before} />],
          ["Valid until", <Time iso={cert.not_after} />],
          ["Serial", <span class="mono small">{cert.serial}</span>],
          ["SHA-256", <span class="mono small break">{cert.sha256}</span>],
          ["Key", `${cert.key_algorithm}${cert.key_size ? ` ${cert.key_size} bits` : ""}`],
          ["Signature", cert.signature_algorithm],
          ["Entry", cert.is_precert ? "precertificate" : "final certificate"],
          ["CA issuers (AIA)", <Chips items={cert.aia_issuing} />],
          ["OCSP", <Chips items={cert.ocsp_servers} />],
          ["SCTs", cert.scts.length ? `${cert.scts.length} embedded` : "none"],
        ]}
      />
    </Section>
  );
}

function Occurrences({ rows }: { rows: Schemas["CtOccurrence"][] }) {
  return (
    <Section title="Seen in CT logs">
      <DataTable
        caption="Log occurrences"
        rows={rows}
        rowKey={(o) => `${o.log_id}:${o.log_index}`}
        empty={<p>No occurrence recorded.</p>}
        columns={[
          { label: "Log", render: (o) => o.log_name },
          { label: "Index", render: (o) => o.log_index, class: "num" },
          { label: "Entry", render: (o) => (o.is_precert ? "precertificate" : "final") },
          { label: "Observed", render: (o) => <Time iso={o.observed_at} /> },
        ]}
      />
    </Section>
  );
}

export function CtMatchPage({ sha256 }: { sha256: string }) {
  const r = useResource(() => get("/api/ct-log/matches/{sha256}", { params: { path: { sha256 } } }), [sha256]);
  const m = r.data;
  const caa = m?.caa;
  const verdict = !caa ? null : caa.error ? "unknown" : !caa.has_records ? "no_records" : caa.authorized ? "authorized" : "violation";
  return (
    <div>
      <p class="crumbs">
        <a href="/ct?tab=matches">Certificate Transparency</a> ›
      </p>
      <PageHeader title={m ? m.certificate_domain : "Certificate match"} />
      <ErrorBox error={r.error} />
      {r.loading && !m && <div class="loading-bar" role="progressbar" aria-label="Loading the match" />}
      {m && (
        <>
          <Section title="Where it is deployed">
            <MatchDeployments sha256={m.sha256} />
          </Section>
          <Section title="CAA verdict">
            <p data-testid="caa-verdict">
              {verdict === "violation" && (
                <>
                  <Badge value="fail" label="CAA violation" /> The domain's CAA records do not authorize this certificate's issuer: a potential policy violation.
                </>
              )}
              {verdict === "authorized" && (
                <>
                  <Badge value="pass" label="authorized" /> The issuer is allowed by the domain's CAA records.
                </>
              )}
              {verdict === "no_records" && (
                <>
                  <Badge value="unknown" label="no CAA records" /> The domain publishes no CAA records: any CA may issue.
                </>
              )}
              {verdict === "unknown" && (
                <>
                  <Badge value="unknown" label="not checked" /> The CAA lookup failed: {m.caa.error}
                </>
              )}
            </p>
            <KeyValues
              items={[
                ["Records", <Chips items={m.caa.records} />],
                ["Names checked", <Chips items={m.caa.checked_names} />],
                ["Issuer as CAA names", <Chips items={m.caa.issuer_candidates} />],
                ["Evaluated", <Time iso={m.caa.evaluated_at} />],
              ]}
            />
          </Section>
          <Section title="Matched filters">
            <ul>
              {m.filters.map((f) => (
                <li>
                  <span class="mono">{f.pattern}</span> ({f.match_type}): {f.matched_names.join(", ")}
                </li>
              ))}
            </ul>
          </Section>
          <CertificateDetail cert={m.cert} />
          <Occurrences rows={m.occurrences} />
        </>
      )}
    </div>
  );
}

export function TyposquatMatchPage({ sha256 }: { sha256: string }) {
  const loc = useLocation();
  const filterId = loc.query.get("filter_id") ?? "";
  const candidate = loc.query.get("candidate_domain") ?? "";
  const r = useResource(
    () => get("/api/ct-log/typosquatting/matches/{sha256}", { params: { path: { sha256 }, query: { filter_id: Number(filterId), candidate_domain: candidate } } }),
    [sha256, filterId, candidate],
  );
  const m = r.data;
  return (
    <div>
      <p class="crumbs">
        <a href="/ct?tab=typosquatting">Certificate Transparency</a> ›
      </p>
      <PageHeader title={m ? `Lookalike: ${m.candidate_domain}` : "Lookalike domain"} />
      <ErrorBox error={r.error} />
      {m && (
        <>
          <Section title="Why it looks like your domain">
            <KeyValues
              items={[
                ["Protected filter", <span class="mono">{m.filter_pattern}</span>],
                ["Candidate domain", <span class="mono">{m.candidate_domain}</span>],
                ["Name on the certificate", <span class="mono">{m.certificate_name}</span>],
                ["Evidence", <Chips items={m.evidence.map((e) => e.replace(/_/g, " "))} label="Evidence" />],
                ["Edit distance", m.edit_distance ?? "—"],
                ["First detected", <Time iso={m.detected_at} />],
                ["Last seen", <Time iso={m.last_seen_at} />],
              ]}
            />
          </Section>
          <CertificateDetail cert={m.cert} />
          <Occurrences rows={m.occurrences} />
        </>
      )}
    </div>
  );
}
