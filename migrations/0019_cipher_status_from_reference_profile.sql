-- One judgement of a TLS configuration (docs/tls-judgement.md): cipher_status "strong" now
-- means every offered suite is in Mozilla's intermediate profile. Scans stored before said
-- "strong" whenever no broken suite was offered; those whose own mozilla-intermediate verdict
-- names a suite are "legacy", as a new scan of the same configuration says.
UPDATE cert_scans SET cipher_status = 'legacy'
WHERE cipher_status = 'strong'
  AND EXISTS (
    SELECT 1 FROM json_each(cert_scans.frameworks) f, json_each(f.value, '$.reasons') r
    WHERE json_extract(f.value, '$.id') = 'mozilla-intermediate' AND json_extract(r.value, '$.category') = 'cipher_suite'
  );
