/**
 * Every create route, one line each: how to build a request body and how to count
 * what got stored. Read by the concurrency suite: 20 parallel creates end with exactly
 * the allowed number of successes, and children created while their parent is deleted
 * never answer 500.
 *
 * A route added by another module is one more row here: the concurrency suite fails
 * for a POST route of the OpenAPI document that answers 201 and is neither a row nor
 * in NOT_RACED with the reason.
 */
import { env } from "cloudflare:workers";
import { createDb } from "../../src/db/client";
import { ctProposals } from "../../src/db/schema";
import { call, invitationTokenFor, PASSWORD, signup, unique, type Org } from "../helpers";

/** What `setup` prepares: the request path (one for all, or the i-th request's own) and a value the bodies use. */
export interface Target {
  path: string | ((i: number) => string);
  context?: unknown;
}

export interface CreateRoute {
  /** The POST path as the OpenAPI document names it; `{param}` segments are filled by `setup`. */
  path: string;
  /** The body of the i-th request (distinct per i); `context` is what `setup` returned with the path. */
  body: (i: number, run: string, context?: any) => unknown;
  /** True when identical bodies collide (a UNIQUE constraint): 1 success, the rest 409. */
  unique: boolean;
  /** How many of 20 distinct creates may succeed on the free tier (quota, or 20). */
  allowed: number;
  /** Items one successful request stores (bulk routes). Default 1. */
  perRequest?: number;
  /** Fills the path parameters (creates the parent object); returns the concrete path or a Target. */
  setup?: (org: Org, run: string) => Promise<string | Target>;
  /** The path `setup` returns is a child collection whose parent (the path without its last segment) can be deleted meanwhile. */
  childCollection?: boolean;
  /** What is stored now (what `allowed` successes must have produced). */
  count: (org: Org, path: string, run: string) => Promise<number>;
  /** The success status, when not 201. */
  success?: number;
  /** The races that mean something for the route (default both). */
  races?: ("identical" | "distinct")[];
  /** Called without a credential (signup, invitation acceptance). */
  anonymous?: boolean;
  /** Identical requests all succeed and store one object (an idempotent action), instead of 1 success and 409s. */
  idempotent?: boolean;
  /** Answers a losing request may get besides 409 `conflict` and 403 `quota_exceeded`. */
  losers?: { status: number; code: string }[];
}

const get = async (org: Org, path: string) => {
  const r = await call("GET", path, { token: org.session });
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

async function newList(org: Org, run: string): Promise<string> {
  const r = await call("POST", "/api/lists", { token: org.session, body: { name: `parent-${run}`, list_type: "domain" } });
  if (r.status !== 201) throw new Error(`list: ${r.status} ${JSON.stringify(r.body)}`);
  return `/api/lists/${r.body.id}/entries`;
}

async function newCertMonitor(org: Org, run: string): Promise<string> {
  const r = await call("POST", "/api/cert-watcher/monitors", { token: org.session, body: { cn: `parent-${run}.example.com` } });
  if (r.status !== 201) throw new Error(`cert monitor: ${r.status} ${JSON.stringify(r.body)}`);
  return `/api/cert-watcher/monitors/${r.body.id}/targets`;
}

async function newDnsDomain(org: Org, run: string): Promise<string> {
  const r = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: `parent-${run}.example.com` } });
  if (r.status !== 201) throw new Error(`dns domain: ${r.status} ${JSON.stringify(r.body)}`);
  return `/api/dns-watcher/domains/${r.body.id}/records`;
}

const ALERT_MODULES = ["ct-log", "rdap", "cert-watcher", "dns-watcher"] as const;

export const CREATE_ROUTES: CreateRoute[] = [
  {
    path: "/api/lists", unique: true, allowed: 2,
    body: (i, run) => ({ name: `l-${run}-${i}`, list_type: "domain" }),
    count: async (org) => (await get(org, "/api/lists")).lists.length,
  },
  {
    path: "/api/lists/{list_id}/entries", unique: true, allowed: 10, setup: newList, childCollection: true,
    body: (i, run) => ({ entries: [`e${i}-${run}.example.com`] }),
    count: async (org, path) => (await get(org, path.replace(/\/entries$/, ""))).entries.length,
  },
  {
    // Bulk additions: the entries quota holds for whole batches (3 batches of 3 fit in 10).
    path: "/api/lists/{list_id}/entries", unique: true, allowed: 3, perRequest: 3, setup: newList,
    body: (i, run) => ({ entries: [0, 1, 2].map((k) => `b${i}-${k}-${run}.example.com`) }),
    count: async (org, path) => (await get(org, path.replace(/\/entries$/, ""))).entries.length,
  },
  {
    path: "/api/rdap/domains", unique: true, allowed: 10,
    body: (i, run) => ({ domain_name: `d${i}-${run}.example.com` }),
    count: async (org) => (await get(org, "/api/rdap/domains?limit=100")).total,
  },
  {
    path: "/api/dns-watcher/domains", unique: true, allowed: 10,
    body: (i, run) => ({ domain_name: `w${i}-${run}.example.com` }),
    count: async (org) => (await get(org, "/api/dns-watcher/domains?limit=100")).total,
  },
  {
    // Record sets of one domain: unique per (name, type); seven default sets exist already.
    path: "/api/dns-watcher/domains/{domain_id}/records", unique: true, allowed: 20, setup: newDnsDomain, childCollection: true,
    body: (i, run) => ({ name: `r${i}.parent-${run}.example.com`, type: "TXT" }),
    count: async (org, path) => (await get(org, path)).records.length - 7,
  },
  {
    path: "/api/ct-log/filters", unique: true, allowed: 10,
    body: (i, run) => ({ pattern: `f${i}-${run}.example.com`, match_type: "exact" }),
    count: async (org) => (await get(org, "/api/ct-log/filters?page_size=100")).total,
  },
  {
    path: "/api/cert-watcher/monitors", unique: true, allowed: 10,
    body: (i, run) => ({ cn: `m${i}-${run}.example.com` }),
    count: async (org) => (await get(org, "/api/cert-watcher/monitors?limit=100")).total,
  },
  {
    path: "/api/cert-watcher/monitors/{monitor_id}/targets", unique: true, allowed: 20, setup: newCertMonitor, childCollection: true,
    body: (i) => ({ ip_address: `192.0.2.${i + 1}` }),
    count: async (org, path) => (await get(org, path)).targets.length,
  },
  ...ALERT_MODULES.flatMap((m): CreateRoute[] => [
    {
      path: `/api/${m}/alert-rules`, unique: false, allowed: 20,
      body: (i) => ({ name: `rule ${i}`, expression: "true" }),
      count: async (org) => (await get(org, `/api/${m}/alert-rules`)).rules.length,
    },
    {
      path: `/api/${m}/alert-templates`, unique: false, allowed: 20,
      body: (i) => ({ name: `template ${i}`, subject: "s", body: "b" }),
      count: async (org) => (await get(org, `/api/${m}/alert-templates`)).templates.length,
    },
  ]),
  {
    path: "/api/notification-channels", unique: false, allowed: 20,
    body: (i) => ({ name: `channel ${i}`, kind: "email", recipients: [`ops${i}@example.com`] }),
    count: async (org) => (await get(org, "/api/notification-channels")).channels.length,
  },
  {
    path: "/api/api-tokens", unique: false, allowed: 20,
    body: (i) => ({ name: `token ${i}`, validity_days: 1, scopes: ["lists:view_lists"] }),
    count: async (org) => (await get(org, "/api/api-tokens")).tokens.length,
  },
  {
    path: "/api/admin/invitations", unique: true, allowed: 20,
    body: (i, run) => ({ email: `invitee-${i}-${run}@example.com` }),
    count: async (org) => (await get(org, "/api/admin/invitations")).invitations.length,
  },
  {
    // Agents have no quota and no unique name: every registration is its own agent.
    path: "/api/cert-watcher/agents", unique: false, allowed: 20,
    body: (i) => ({ name: `agent ${i}` }),
    count: async (org) => (await get(org, "/api/cert-watcher/agents")).agents.length,
  },
  {
    // One invitation accepted 20 times at once: one account, the rest refused.
    path: "/api/auth/invitations/accept", unique: true, allowed: 1, anonymous: true, races: ["identical"],
    losers: [{ status: 400, code: "invitation_invalid" }],
    setup: async (org, run) => {
      const email = `accept-${run}@example.com`;
      const inv = await call("POST", "/api/admin/invitations", { token: org.session, body: { email } });
      if (inv.status !== 201) throw new Error(`invite: ${inv.status} ${JSON.stringify(inv.body)}`);
      return { path: "/api/auth/invitations/accept", context: await invitationTokenFor(org.session, email) };
    },
    body: (_i, _run, token: string) => ({ token, password: PASSWORD }),
    count: async (org, _path, run) => (await get(org, "/api/admin/users")).users.filter((u: any) => u.email === `accept-${run}@example.com`).length,
  },
  {
    // The same email signed up 20 times at once: one account (and one organization).
    path: "/api/auth/signup", unique: true, allowed: 1, anonymous: true, races: ["identical"],
    body: (_i, run) => ({ organization_name: `Race ${run}`, email: `race-${run}@example.com`, password: PASSWORD }),
    count: async (_org, _path, run) => {
      const users = await DB.prepare("SELECT count(*) AS n FROM users WHERE email = ?").bind(`race-${run}@example.com`).first<{ n: number }>();
      const orgs = await DB.prepare("SELECT count(*) AS n FROM organizations WHERE name = ?").bind(`Race ${run}`).first<{ n: number }>();
      // A losing signup must leave no organization behind either.
      return users!.n === orgs!.n ? users!.n : -1;
    },
  },
  {
    // Accepting CT proposals creates certificate monitors: the tier's quota holds under
    // parallel accepts, and one proposal accepted 20 times makes one monitor. (The
    // concurrency suite's session holds every permission, whatever this route requires.)
    path: "/api/ct-log/proposals/{proposal_id}/accept", unique: true, allowed: 10, success: 200, idempotent: true,
    setup: async (org, run) => {
      const filter = await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: `p-${run}.example`, match_type: "wide", feed_certs_enabled: true } });
      if (filter.status !== 201) throw new Error(`filter: ${filter.status} ${JSON.stringify(filter.body)}`);
      const ids = await proposals(org, filter.body.id, Array.from({ length: 20 }, (_, i) => `h${i}.p-${run}.example`));
      return { path: (i) => `/api/ct-log/proposals/${ids[i]}/accept` };
    },
    body: () => undefined,
    count: async (org) => (await get(org, "/api/cert-watcher/monitors?limit=100")).total,
  },
  {
    // Mail-server offers: a port-25 certificate monitor per MX host (the cert_monitors quota).
    path: "/api/dns-watcher/domains/{domain_id}/mail-server-monitors", unique: true, allowed: 10,
    setup: async (org, run) => {
      const r = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: `mail-${run}.example.com`, email_checks: true } });
      if (r.status !== 201) throw new Error(`dns domain: ${r.status} ${JSON.stringify(r.body)}`);
      await mxResolved(r.body.id, Array.from({ length: 20 }, (_, i) => `${(i + 1) * 10} mx${i}.mail-${run}.example.com.`));
      return `/api/dns-watcher/domains/${r.body.id}/mail-server-monitors`;
    },
    body: (i, run) => ({ host: `mx${i}.mail-${run}.example.com` }),
    count: async (org) => (await get(org, "/api/cert-watcher/monitors?limit=100")).total,
  },
];

/** The domain's MX record set as a run would have stored it (the offers follow the MX hosts as last resolved). */
async function mxResolved(domainId: number, values: string[]): Promise<void> {
  await DB.prepare("UPDATE dns_record_sets SET values_json = ? WHERE domain_id = ? AND type = 'MX'").bind(JSON.stringify(values), domainId).run();
}

/**
 * POST routes answering 201 that the concurrency suite does not race, with the reason.
 * Empty today: every create route is a row of CREATE_ROUTES.
 */
export const NOT_RACED: Record<string, string> = {
  "POST /api/auth/mfa/totp": "one pending enrollment per user, each start replaces it: test/auth/mfa.test.ts races parallel starts and checks exactly one secret completes",
  "POST /api/auth/mfa/passkeys": "needs an authenticator's signed answer to a challenge of its own: web/e2e/passkeys.e2e.ts registers through Chromium's virtual authenticator",
};

const DB = (env as any).DB as D1Database;

/** Proposals are written by CT ingestion, not through the API: inserted here as ingestion would (test/ct-log/proposals.test.ts does the same). */
async function proposals(org: Org, filterId: number, hostnames: string[]): Promise<number[]> {
  const db = createDb(DB);
  // One row per statement: D1 binds at most 100 variables per statement.
  const inserts = hostnames.map((hostname) =>
    db
      .insert(ctProposals)
      .values({ organizationId: org.organizationId, kind: "certs", hostname, filterId, sourceSha256: "ab".repeat(32), createdAt: new Date().toISOString() })
      .returning({ id: ctProposals.id }),
  );
  const rows = await db.batch(inserts as [(typeof inserts)[0], ...typeof inserts]);
  return rows.map((r) => r[0].id);
}

/** A fresh organization and a run id for one row. */
export async function freshOrg(): Promise<{ org: Org; run: string }> {
  return { org: await signup("Concurrency"), run: unique() };
}
