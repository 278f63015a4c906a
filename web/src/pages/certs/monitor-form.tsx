/** The form of a certificate monitor: created with its first IP targets, edited without them (targets are managed on the monitor page). */
import { post, put, type Schemas } from "../../api";
import { CheckField, Form, SelectField, TextArea, TextField, useForm } from "../../ui/form";

type StartTls = NonNullable<Schemas["CreateCertMonitor"]["starttls"]>;
const STARTTLS: readonly StartTls[] = ["auto", "none", "smtp", "imap", "pop3", "ftp", "ldap", "xmpp", "postgres"];

/** The form's fields, as typed (the port and the addresses as text). */
export interface MonitorValues {
  cn: string;
  port: string;
  target_dns: string;
  starttls: StartTls;
  notes: string;
  root_ca: string;
  enabled: boolean;
  ip_addresses: string;
}

function monitorBody(v: MonitorValues): Schemas["ReplaceCertMonitor"] {
  return {
    cn: v.cn,
    port: v.port === "" ? undefined : Number(v.port),
    target_dns: v.target_dns || null,
    starttls: v.starttls,
    notes: v.notes,
    root_ca: v.root_ca || null,
    enabled: v.enabled,
  };
}

export function MonitorForm({ id, initial, onDone, onCancel }: { id?: number; initial: MonitorValues; onDone: (m: string, id: number) => void; onCancel: () => void }) {
  const form = useForm<MonitorValues>(initial);
  return (
    <Form
      form={form}
      label={id ? "Edit monitor" : "New monitor"}
      submitLabel={id ? "Save monitor" : "Create monitor"}
      onCancel={onCancel}
      onSubmit={async () => {
        let m = "";
        let newId = id ?? 0;
        const ok = await form.submit(async (v) => {
          if (id) m = (await put("/api/cert-watcher/monitors/{monitor_id}", { params: { path: { monitor_id: id } }, body: monitorBody(v) })).message;
          else {
            const r = await post("/api/cert-watcher/monitors", { body: { ...monitorBody(v), ip_addresses: v.ip_addresses.split(/[\s,]+/).filter(Boolean) } });
            m = `${r.message} ${r.quota_remaining} monitors left on your plan.`;
            newId = r.id;
          }
        });
        if (ok) onDone(m, newId);
      }}
    >
      <TextField form={form} name="cn" label="Hostname on the certificate (CN, sent as SNI)" required />
      <TextField form={form} name="port" label="Port" inputMode="numeric" />
      <TextField form={form} name="target_dns" label="SNI override (optional)" />
      <SelectField form={form} name="starttls" label="STARTTLS" options={STARTTLS.map((s) => ({ value: s, label: s === "auto" ? "auto (by port)" : s }))} />
      {!id && <TextArea form={form} name="ip_addresses" label="IP addresses to scan" hint="One per line or separated by commas." rows={3} mono />}
      <TextField form={form} name="notes" label="Notes" />
      <TextArea form={form} name="root_ca" label="Private root CA (PEM, optional)" rows={3} mono />
      <CheckField form={form} name="enabled" label="Enabled" />
    </Form>
  );
}

export const NEW_MONITOR: MonitorValues = { cn: "", port: "443", target_dns: "", starttls: "auto", notes: "", root_ca: "", enabled: true, ip_addresses: "" };
