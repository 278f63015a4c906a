/** A monitor's indicators as badges, shared by the monitors list, the recent scans and the monitor page. */
import type { Schemas } from "../../api";
import { Badge } from "../../ui/widgets";

export function IndicatorBadges({ i }: { i: Schemas["CertMonitorIndicators"] }) {
  return (
    <span class="badges">
      <Badge value={i.validity_status} label={`validity: ${i.validity_status.replace(/_/g, " ")}`} />
      <Badge value={i.protocol_status} label={`protocols: ${i.protocol_status}`} />
      <CipherBadge status={i.cipher_status} label={`ciphers: ${i.cipher_status}`} />
      <Badge value={i.validation_status} label={`chain: ${i.validation_status.replace(/_/g, " ")}`} />
      {i.error_count > 0 && <Badge value="failed" label={`${i.error_count} failed`} />}
    </span>
  );
}

/** Cipher status: "legacy" suites are not recommended (warn); "weak" ones are broken (bad). */
export function CipherBadge({ status, label }: { status: string; label?: string }) {
  return <Badge value={status} tone={status === "legacy" ? "warn" : undefined} label={label} />;
}
