/**
 * Real objects of one organization for every kind of path parameter, so the security
 * suite can address another organization's existing ids. Keyed by parameter name
 * (and the path, where one name means different things in different modules). A new
 * kind of id is one entry here; a route whose ids cannot be made through the API is
 * listed in NOT_CREATABLE with the reason.
 */
import { env } from "cloudflare:workers";
import { emitEvent } from "../../src/modules/alerting/emit";
import { addMember, call, createToken, login, unique, type Org } from "../helpers";
import { certScanEvent, ctLogEvent, dnsChangeEvent, rdapChangeEvent } from "../alerting/events";

type Maker = (org: Org, path: string, ids: Record<string, string>) => Promise<string>;

async function created(org: Org, path: string, body: unknown): Promise<any> {
  const r = await call("POST", path, { token: org.session, body });
  if (r.status !== 201) throw new Error(`setup POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const moduleOf = (path: string) => path.split("/")[2];

export const PARAM_OBJECTS: Record<string, Maker> = {
  list_id: async (org) => String((await created(org, "/api/lists", { name: `sec-${unique()}`.toLowerCase(), list_type: "domain", entries: ["a.example.com"] })).id),
  entry_id: async (org, _path, ids) => {
    const r = await call("GET", `/api/lists/${ids.list_id}`, { token: org.session });
    return String(r.body.entries[0].id);
  },
  rule_id: async (org, path) => String((await created(org, `/api/${moduleOf(path)}/alert-rules`, { name: "sec", expression: "true" })).id),
  template_id: async (org, path) => String((await created(org, `/api/${moduleOf(path)}/alert-templates`, { name: "sec", subject: "s", body: "b" })).id),
  channel_id: async (org) => String((await created(org, "/api/notification-channels", { name: "sec", kind: "email", recipients: ["sec@example.com"] })).id),
  token_id: async (org) => String((await createToken(org.session, ["lists:view_lists"])).id),
  user_id: async (org) => String((await addMember(org.session, [])).userId),
  invitation_id: async (org) => String((await created(org, "/api/admin/invitations", { email: `sec-${unique()}@example.com` })).id),
  filter_id: async (org) => String((await created(org, "/api/ct-log/filters", { pattern: `sec-${unique()}.example.com`, match_type: "exact" })).id),
  monitor_id: async (org, path) =>
    moduleOf(path) === "rdap"
      ? String((await created(org, "/api/rdap/domains", { domain_name: `sec-${unique()}.example.com` })).id)
      : String((await created(org, "/api/cert-watcher/monitors", { cn: `sec-${unique()}.example.com`, ip_addresses: ["192.0.2.7"] })).id),
  target_id: async (org, _path, ids) => {
    const r = await call("GET", `/api/cert-watcher/monitors/${ids.monitor_id}`, { token: org.session });
    return String(r.body.targets[0].id);
  },
  domain_id: async (org) => String((await created(org, "/api/dns-watcher/domains", { domain_name: `sec-${unique()}.example.com` })).id),
  record_id: async (org, _path, ids) => {
    const r = await call("GET", `/api/dns-watcher/domains/${ids.domain_id}/records`, { token: org.session });
    return String(r.body.records[0].id);
  },
  agent_id: async (org) => String((await created(org, "/api/cert-watcher/agents", { name: "sec" })).id),
  /** An alert: a rule matching everything, and a real event of the module through the alert pipeline. */
  alert_id: async (org, path) => {
    const m = moduleOf(path) as "ct-log" | "dns-watcher" | "rdap" | "cert-watcher";
    await created(org, `/api/${m}/alert-rules`, { name: `sec-${unique()}`, expression: "true" });
    const e = env as any;
    const r =
      m === "ct-log"
        ? await emitEvent(e, m, org.organizationId, { ...ctLogEvent(), matched_at: new Date().toISOString() })
        : m === "dns-watcher"
          ? await emitEvent(e, m, org.organizationId, { ...dnsChangeEvent(), resolved_at: new Date().toISOString() })
          : m === "rdap"
            ? await emitEvent(e, m, org.organizationId, rdapChangeEvent({ ldhName: `sec-${unique()}.com` }, { ldhName: "x.com" }, `sec-${unique()}.com`, "com"))
            : await emitEvent(e, m, org.organizationId, { ...certScanEvent(), validity_days: Math.floor(Math.random() * 1e6) });
    return String(r.fired[0].history_id);
  },
  session_id: async (org) => {
    // A second session of the owner (not the one the suite calls with).
    const second = await login(org.email);
    if (second.status !== 200) throw new Error(`setup login: ${second.status} ${JSON.stringify(second.body)}`);
    const r = await call("GET", "/api/auth/sessions", { token: second.body.token });
    return String(r.body.sessions.find((s: { current: boolean }) => s.current).id);
  },
  /** A name of the certificate inventory: a certificate monitor's name is one from its creation. */
  hostname: async (org) => {
    const name = `sec-${unique()}.example.com`.toLowerCase();
    await created(org, "/api/cert-watcher/monitors", { cn: name, ip_addresses: ["192.0.2.7"] });
    return name;
  },
  domain: async (org) => {
    const name = `sec-${unique()}.example.com`;
    await created(org, "/api/rdap/domains", { domain_name: name });
    return name;
  },
};

/** Parameters whose objects the API cannot create, with the reason (the 404 check does not apply). */
export const NOT_CREATABLE: Record<string, string> = {
  sha256: "certificate matches are CT-log observations written by ingestion, not created through the API",
  report_id: "reports are generated by the weekly job, not created through the API; test/reports/api.test.ts checks another organization's report is 404",
  proposal_id: "monitoring proposals are derived from CT matches by ingestion, not created through the API",
  lookalike_id:
    "lookalikes are found by CT ingestion and the registered-permutation discovery, not created through the API; test/ct-log/lookalikes-lifecycle.test.ts checks another organization's lookalike is 404 on every lookalike route",
  passkey_id:
    "a passkey needs an authenticator's signed answer; web/e2e/passkeys.e2e.ts registers real ones through Chromium's virtual authenticator and checks another user's passkey is 404",
};

/** Routes that behave differently from the generic rules by specification, with the reason. */
export const EXCEPTIONS: Record<string, { notFound?: string; noCredential?: string }> = {
  "POST /api/api-tokens/{token_id}/renew": { notFound: "renewing with any credential other than the token itself is 403, whatever the id" },
};

/** Valid bodies where the schema alone does not make one (a refinement across fields). */
export const BODY_OVERRIDES: Record<string, unknown> = {
  "PATCH /api/rdap/domains/{monitor_id}": { enabled: false },
  "PATCH /api/dns-watcher/domains/{domain_id}": { enabled: false },
};

/** Routes open to every caller by design (no 401/403 to check), with the reason. */
export const PUBLIC_ROUTES: Record<string, string> = {
  "GET /api/health": "liveness probe",
  "POST /api/auth/signup": "creates an account",
  "POST /api/auth/login": "creates a session",
  "POST /api/auth/invitations/accept": "authenticated by the invitation token in the body",
  "POST /api/auth/login/mfa": "authenticated by the second step's token and proof in the body",
  "GET /api/auth/sso/start": "starts a sign-in at the email's identity provider",
  "GET /api/auth/sso/callback": "authenticated by the provider's answer and this browser's sign-in cookie",
};
