/**
 * Every create route, one line each: how to build a request body and how to count
 * what got stored. Read by the concurrency suite (20 parallel creates end with exactly
 * the allowed number of 201s) and by the generated security suite (real objects for
 * the path parameters of the routes below a collection).
 *
 * A route added by another module is one more row here. `awaiting` marks a row whose
 * module is converted to the atomic tenant layer on another branch: the row is skipped
 * until that branch is merged (then delete the field).
 */
import { call, signup, unique, type Org } from "../helpers";

export interface CreateRoute {
  /** The POST path; `{param}` segments are filled by `setup`. */
  path: string;
  /** The body of the i-th request (distinct per i). */
  body: (i: number, run: string) => unknown;
  /** True when identical bodies collide (a UNIQUE constraint): 1 success, the rest 409. */
  unique: boolean;
  /** How many of 20 distinct creates may succeed on the free tier (quota, or 20). */
  allowed: number;
  /** Items one successful request stores (bulk routes). Default 1. */
  perRequest?: number;
  /** Fills the path parameters (creates the parent object); returns the concrete path. */
  setup?: (org: Org, run: string) => Promise<string>;
  /** What is stored now (what `allowed` successes must have produced). */
  count: (org: Org, path: string) => Promise<number>;
  /** Owned by another branch that makes it atomic: skipped here until merged. */
  awaiting?: string;
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
    path: "/api/lists/{list_id}/entries", unique: true, allowed: 10, setup: newList,
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
    path: "/api/dns-watcher/domains/{domain_id}/records", unique: true, allowed: 20, setup: newDnsDomain,
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
    path: "/api/cert-watcher/monitors/{monitor_id}/targets", unique: true, allowed: 20, setup: newCertMonitor,
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
];

/** A fresh organization and a run id for one row. */
export async function freshOrg(): Promise<{ org: Org; run: string }> {
  return { org: await signup("Concurrency"), run: unique() };
}
