/** One scan in detail: the five framework verdicts with reasons, the certificate, the chain, protocols, suites (weak and legacy ones marked) and groups. */
import type { Schemas } from "../../api";
import { Time } from "../../ui/time";
import { Badge, Chips, KeyValues, Notice } from "../../ui/widgets";

/** A suite's concern in words (weak_suites / legacy_suites `weaknesses`). */
function weaknessWords(w: string): string {
  return ({ CBC: "CBC mode", no_forward_secrecy: "no forward secrecy", MD5: "MD5 MAC", outside_profile: "not in the profile", anon: "anonymous" } as Record<string, string>)[w] ?? w;
}

export function ScanDetail({ scan }: { scan: Schemas["CertScan"] }) {
  // Each suite's grade, from the one judgement (docs/tls-judgement.md): weak (broken), legacy (outside Mozilla's intermediate profile), or neither.
  const grade = new Map<string, { grade: "weak" | "legacy"; why: string }>([
    ...scan.legacy_suites.map((w) => [w.name, { grade: "legacy" as const, why: w.weaknesses.map(weaknessWords).join(", ") }] as const),
    ...scan.weak_suites.map((w) => [w.name, { grade: "weak" as const, why: w.weaknesses.map(weaknessWords).join(", ") }] as const),
  ]);
  const cert: Partial<Schemas["ScannedCertificate"]> = scan.certificate ?? {};
  // The validation path when the agent built one, else the chain as served.
  const chain = scan.validation_path.length ? scan.validation_path.map((c) => ({ subject: c.certificate_subject, issuer: c.certificate_issuer })) : scan.intermediates;
  return (
    <div class="scan-detail">
      {scan.has_error && <Notice kind="warn">The scan failed: {scan.error}</Notice>}
      <h3>Framework verdicts</h3>
      <ul class="verdicts">
        {scan.frameworks.map((f) => (
          <li>
            <Badge value={f.status} /> <strong>{f.name}</strong> <span class="muted small">{f.version}</span>
            {f.reasons.length > 0 && (
              <details>
                <summary>
                  {f.reasons.length} {f.reasons.length === 1 ? "reason" : "reasons"}
                </summary>
                <ul>
                  {f.reasons.map((r) => (
                    <li class="small">
                      {r.message} <span class="muted">({r.category}: {r.item})</span>
                    </li>
                  ))}
                </ul>
              </details>
            )}
          </li>
        ))}
      </ul>
      <h3>Certificate</h3>
      <KeyValues
        items={[
          ["Subject", cert.subject],
          ["Issuer", cert.issuer],
          ["Names", <Chips items={cert.dns_names} />],
          ["Valid until", <>{cert.not_after ? <Time iso={cert.not_after} /> : "—"} ({scan.validity_days ?? "?"} days)</>],
          ["Key", [cert.public_key_algorithm, cert.key_bits && `${cert.key_bits} bits`, cert.curve].filter(Boolean).join(" ")],
          ["SHA-256", <span class="mono small break">{cert.sha256}</span>],
        ]}
      />
      <h3>Chain ({scan.chain_length ?? "?"} certificates served)</h3>
      <ol class="chain">
        {chain.map((c) => (
          <li class="small">
            <span class="mono">{c.subject}</span> <span class="muted">issued by</span> <span class="mono">{c.issuer}</span>
          </li>
        ))}
      </ol>
      <h3>Protocols</h3>
      <Chips items={scan.protocol} label="Accepted protocols" />
      <h3>Cipher suites {scan.cipher_preference && <span class="muted small">(order: {scan.cipher_preference}'s preference)</span>}</h3>
      <ul class="chips" aria-label="Cipher suites">
        {scan.ciphers.map((c) => {
          const g = grade.get(c);
          return (
            <li class={g?.grade ?? ""} title={g && `${g.grade}: ${g.why}`}>
              {c}
              {g && <span class="sr-only"> ({g.grade}: {g.why})</span>}
              {g && <span aria-hidden="true"> {g.grade === "weak" ? "⚠" : "·"}</span>}
            </li>
          );
        })}
      </ul>
      {grade.size > 0 && (
        <p class="muted small">
          Marked suites are outside Mozilla's intermediate profile: <span class="chip-key weak">weak</span> ones are broken (RC4, DES, 3DES, NULL, EXPORT, anonymous),{" "}
          <span class="chip-key legacy">legacy</span> ones are not recommended; hover or focus a suite for why.
        </p>
      )}
      <h3>Named groups</h3>
      <Chips items={scan.named_groups} label="Named groups" />
    </div>
  );
}
