/**
 * The "Mail transport security" panel of a DNS domain: MTA-STS, TLS reporting, DANE, DKIM
 * and BIMI as the watcher last observed them (`email_security` of the domain detail), each
 * with what its state means and what to do, and the switches that configure the checks.
 * Every value comes from DNS records or a policy file written by whoever controls the
 * zone: shown as text (Preact escapes it), never as markup.
 */
import { patch, post, type ApiError, type Schemas } from "../../api";
import { CheckField, Form, TextField, useForm } from "../../ui/form";
import { Time } from "../../ui/time";
import { ActionButton, Badge, KeyValues, Section } from "../../ui/widgets";

/** The domain detail's `email_security`, as the API declares it. */
export type EmailSecurity = Schemas["DnsEmailSecurity"];
type MechanismStatus = EmailSecurity["mta_sts"]["status"];

const TONE: Record<MechanismStatus, string> = { ok: "good", missing: "warn", invalid: "bad", unknown: "neutral" };
type ServedStatus = EmailSecurity["dane"]["hosts"][number]["served"]["status"];
/** What an MX host serves against its TLSA records (a mismatch is critical: DANE-enforcing senders stop delivering). */
const SERVED_LABEL: Record<ServedStatus, string> = { matched: "matches TLSA", mismatch: "matches no TLSA record", not_scanned: "not scanned yet", not_checked: "not compared" };
const SERVED_TONE: Record<ServedStatus, string> = { matched: "good", mismatch: "bad", not_scanned: "neutral", not_checked: "neutral" };

/** What each status means for the mechanism, and what to do about it. */
const MEANING: Record<string, Partial<Record<MechanismStatus, string>>> = {
  mta_sts: {
    ok: "Sending servers that support MTA-STS only deliver over TLS with a valid certificate to the MX hosts the policy names.",
    missing: "Without MTA-STS an attacker on the path can strip STARTTLS and read or redirect mail. Publish a policy at https://mta-sts.<domain>/.well-known/mta-sts.txt and a _mta-sts TXT record with its id; start in mode testing.",
    invalid: "Senders cannot use the policy as published: see the findings, fix the policy or the record, and change the id so senders fetch it again.",
    unknown: "Not observed yet: the record was not resolved or the policy not fetched (see below for why).",
  },
  tls_rpt: {
    ok: "Sending servers report TLS failures (failed STARTTLS, MTA-STS or DANE mismatches) to these addresses daily.",
    missing: "Nobody hears about TLS delivery failures. Publish _smtp._tls TXT \"v=TLSRPTv1; rua=mailto:…\".",
    invalid: "Senders ignore the record: fix the rua addresses (mailto: or https:).",
    unknown: "Not observed yet.",
  },
  dane: {
    ok: "Senders that validate DNSSEC check each MX host's certificate against its TLSA records.",
    missing: "No MX host publishes TLSA records. DANE needs a DNSSEC-signed zone for each MX host; publish _25._tcp TLSA 3 1 1 (the server's key) or 2 1 1 (its issuer).",
    invalid: "A TLSA set senders cannot use: DANE-enforcing senders may stop delivering. Fix or remove the records named below.",
    unknown: "Not observed yet: the MX hosts' TLSA records are read the run after their MX set is known.",
  },
  dkim: {
    ok: "The declared selectors publish usable keys.",
    missing: "A declared selector has no key (or a revoked one): mail signed with it fails DKIM.",
    invalid: "A key is unreadable or too short (RSA under 1024 bits is rejected by verifiers): publish a 2048-bit RSA or an Ed25519 key.",
    unknown: "Not observed yet, or no selector is declared: selectors cannot be discovered from DNS; list those your mail providers sign with.",
  },
  bimi: {
    ok: "Mailbox providers can show the brand logo for mail that passes DMARC.",
    missing: "No BIMI record (optional): publish default._bimi to show a logo.",
    invalid: "The record is unusable: the logo must be an https SVG.",
    unknown: "Not observed yet.",
  },
};

function Mechanism({ name, status, children, findings }: { name: string; status: MechanismStatus; children?: preact.ComponentChildren; findings?: string[] }) {
  return (
    <div class="email-mechanism" data-mechanism={name}>
      <Badge value={status} tone={TONE[status]} /> <span class="small">{MEANING[name]?.[status]}</span>
      {children && <div class="small">{children}</div>}
      {findings && findings.length > 0 && (
        <ul class="small findings">
          {findings.map((f) => (
            <li>{f}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Configure({ domainId, selectors, enabled, onSaved }: { domainId: number; selectors: string[]; enabled: boolean; onSaved: () => void }) {
  const form = useForm({ dkim_selectors: selectors.join(", "), email_checks: enabled });
  return (
    <Form
      form={form}
      class="form inline-form"
      label="Configure the email checks"
      submitLabel="Save"
      onSubmit={async () => {
        const ok = await form.submit((v) =>
          patch("/api/dns-watcher/domains/{domain_id}", {
            params: { path: { domain_id: domainId } },
            body: { email_checks: v.email_checks, dkim_selectors: v.dkim_selectors.split(/[\s,]+/).filter(Boolean) },
          }),
        );
        if (ok) onSaved();
      }}
    >
      <CheckField form={form} name="email_checks" label="Watch mail transport security" />
      <TextField form={form} name="dkim_selectors" label="DKIM selectors" hint="comma-separated, e.g. google, s1" />
    </Form>
  );
}

export function EmailSecurityPanel(props: { domainId: number; domain: string; email: EmailSecurity; selectors: string[]; canUpdate: boolean; onChanged: () => void; onError: (e: ApiError) => void }) {
  const { email: e, domain } = props;
  const configure = props.canUpdate ? <Configure domainId={props.domainId} selectors={props.selectors} enabled={e.enabled} onSaved={props.onChanged} /> : null;
  if (!e.enabled) {
    return (
      <Section title="Mail transport security">
        <p>
          The email checks are off for {domain}: MTA-STS, TLS reporting, DANE, DKIM keys and BIMI are not looked up. Turn them on to have each watched and every regression
          recorded.
        </p>
        {props.canUpdate && (
          <ActionButton label={`Turn on email checks for ${domain}`} onError={props.onError} onClick={async () => (await patch("/api/dns-watcher/domains/{domain_id}", { params: { path: { domain_id: props.domainId } }, body: { email_checks: true } }), props.onChanged())}>
            Turn on email checks
          </ActionButton>
        )}
      </Section>
    );
  }
  const p = e.mta_sts.policy;
  return (
    <Section title="Mail transport security">
      <KeyValues
        items={[
          [
            "MTA-STS",
            <Mechanism name="mta_sts" status={e.mta_sts.status} findings={e.mta_sts.findings}>
              {e.mta_sts.record && <code class="break">{e.mta_sts.record}</code>}
              {p.mode && (
                <div>
                  policy mode <strong>{p.mode}</strong>, max_age {p.max_age ?? "?"} s, mx {p.mx.join(", ") || "none"}; fetched <Time iso={p.fetched_at} />, next read <Time iso={p.next_fetch_at} />
                </div>
              )}
              {p.collection.failures > 0 && (
                <div class="collection-error">
                  {/* One failure is not yet "failing" (platform/collection): say when it was, not "since never". */}
                  {p.collection.failing_since ? (
                    <>
                      policy fetch failing since <Time iso={p.collection.failing_since} />
                    </>
                  ) : (
                    <>
                      policy fetch failed <Time iso={p.collection.last_attempt_at} />
                    </>
                  )}
                  : {p.collection.error}
                </div>
              )}
            </Mechanism>,
          ],
          [
            "TLS reporting",
            <Mechanism name="tls_rpt" status={e.tls_rpt.status} findings={e.tls_rpt.errors}>
              {e.tls_rpt.rua.length > 0 && <>reports to {e.tls_rpt.rua.join(", ")}</>}
            </Mechanism>,
          ],
          [
            "DANE",
            <Mechanism name="dane" status={e.dane.status} findings={e.dane.findings}>
              {e.dane.hosts.map((h) => (
                <div class="dane-host">
                  <span class="mono">{h.host}</span> <Badge value={h.status} tone={TONE[h.status]} /> {h.records.length > 0 && <span class="muted">{h.usable} of {h.records.length} TLSA usable{h.validated ? ", DNSSEC-validated" : ", not validated"}</span>}
                  <div class="small">
                    served on port 25: <Badge value={SERVED_LABEL[h.served.status]} tone={SERVED_TONE[h.served.status]} />
                    {h.served.checked_at && (
                      <>
                        {" "}
                        scanned <Time iso={h.served.checked_at} />
                      </>
                    )}{" "}
                    <span class="muted">{h.served.text}</span>
                  </div>
                  {h.served.monitor_id === null && props.canUpdate && (
                    <ActionButton
                      label={`Monitor ${h.host} on port 25`}
                      onError={props.onError}
                      onClick={async () => (await post("/api/dns-watcher/domains/{domain_id}/mail-server-monitors", { params: { path: { domain_id: props.domainId } }, body: { host: h.host } }), props.onChanged())}
                    >
                      Monitor {h.host} on port 25 (STARTTLS)
                    </ActionButton>
                  )}
                </div>
              ))}
            </Mechanism>,
          ],
          [
            "DKIM",
            <Mechanism name="dkim" status={e.dkim.status} findings={e.dkim.findings}>
              {e.dkim.selectors.map((k) => (
                <div>
                  <span class="mono">{k.selector}</span> <Badge value={k.status} tone={TONE[k.status]} />{" "}
                  {k.bits > 0 && (
                    <span class="muted">
                      {k.key_type} {k.bits} bits{k.strength ? ` (${k.strength})` : ""}
                      {k.testing ? ", testing" : ""}
                    </span>
                  )}
                  {k.revoked && <span class="muted"> revoked</span>}
                </div>
              ))}
            </Mechanism>,
          ],
          [
            "BIMI",
            <Mechanism name="bimi" status={e.bimi.status} findings={[...e.bimi.errors, ...e.bimi.findings]}>
              {e.bimi.location && <>logo {e.bimi.location}{e.bimi.authority ? `, evidence ${e.bimi.authority}` : ""}</>}
            </Mechanism>,
          ],
        ]}
      />
      {configure}
    </Section>
  );
}
