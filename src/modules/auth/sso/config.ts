/**
 * An organization's single sign-on configuration: one OpenID provider (read through
 * discovery when saved, so a typo is a 400 now and not a broken sign-in later), its
 * client secret sealed, the email domains it answers for, the roles of members it
 * creates, and enforcement with one break-glass administrator who keeps a password.
 *
 * An email domain only counts once a DNS TXT record proves the organization controls it
 * (`verifyDomain`, through the DoH resolvers the DNS watcher uses): otherwise anyone
 * could configure `example.com` and receive the sign-ins of its people. A verified
 * domain belongs to one organization.
 */
import { and, eq, inArray, isNotNull, ne } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { ssoConnections, ssoDomains } from "../../../db/schema/identity";
import { users } from "../../../db/schema/platform";
import type { Config } from "../../../env";
import { classifyFailure } from "../../../platform/collection";
import type { Principal } from "../../../platform/context";
import { isUniqueViolation } from "../../../platform/db-errors";
import { createDohClient } from "../../../platform/dns/doh";
import { ApiError, conflict, invalidField, notFound } from "../../../platform/errors";
import { hasPassword } from "../../../platform/passwords";
import { permissionsOfUser } from "../../../platform/permissions";
import { seal } from "../../../platform/sealed";
import { generateSecret } from "../../../platform/secrets";
import { assertGrantable, validateRoles, type RoleRequest } from "../../admin/contract";
import { discover, SsoError } from "./oidc";

export const CALLBACK_PATH = "/api/auth/sso/callback";
/** The TXT record proving a domain: `_trust-plane-verification.<domain>` holding `trust-plane-domain-verification=<token>`. */
export const TXT_LABEL = "_trust-plane-verification";
export const TXT_PREFIX = "trust-plane-domain-verification=";
const DNS_TIMEOUT_MS = 5_000;

export interface SsoInput {
  issuer: string;
  client_id: string;
  client_secret?: string;
  email_domains: string[];
  default_roles: RoleRequest[];
  enforce: boolean;
  break_glass_user_id?: number | null;
}

export const redirectUriOf = (config: Config) => `${config.publicBaseUrl}${CALLBACK_PATH}`;

type Connection = typeof ssoConnections.$inferSelect;
type Domain = typeof ssoDomains.$inferSelect;

function domainView(d: Domain) {
  return {
    domain: d.domain,
    verified: d.verifiedAt !== null,
    verified_at: d.verifiedAt,
    txt_record_name: `${TXT_LABEL}.${d.domain}`,
    txt_record_value: `${TXT_PREFIX}${d.verificationToken}`,
    last_checked_at: d.lastCheckedAt,
    last_check_error: d.lastCheckError,
  };
}

function connectionView(config: Config, c: Connection, domains: Domain[]) {
  return {
    issuer: c.issuer,
    client_id: c.clientId,
    client_secret_set: true as const,
    email_domains: domains.map(domainView),
    default_roles: c.defaultRoles.map((r) => ({ module_name: r.module, role_name: r.role })),
    enforce: c.enforce,
    break_glass_user_id: c.breakGlassUserId,
    redirect_uri: redirectUriOf(config),
    discovered_at: c.discoveredAt,
    updated_at: c.updatedAt,
  };
}

async function loadConnection(db: Db, organizationId: number) {
  const c = await db.select().from(ssoConnections).where(eq(ssoConnections.organizationId, organizationId)).get();
  if (!c) return null;
  const domains = await db.select().from(ssoDomains).where(eq(ssoDomains.organizationId, organizationId)).orderBy(ssoDomains.domain).all();
  return { connection: c, domains };
}

export async function getSso(db: Db, config: Config, organizationId: number) {
  const loaded = await loadConnection(db, organizationId);
  if (!loaded) throw notFound("Single sign-on configuration");
  return connectionView(config, loaded.connection, loaded.domains);
}

/** Lowercase, no trailing dot, a registrable-looking name: `corp.example`. */
function normalizeDomain(raw: string, index: number): string {
  const d = raw.trim().toLowerCase().replace(/\.$/, "");
  if (!/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/.test(d)) {
    throw invalidField(`email_domains.${index}`, `'${raw}' is not a domain name`);
  }
  return d;
}

/** The roles, checked as an invitation's are; errors name `default_roles.N`. */
function defaultRoles(requested: RoleRequest[]) {
  try {
    return validateRoles(requested);
  } catch (err) {
    if (err instanceof ApiError && err.details) throw new ApiError(err.code, err.message, err.details.map((d) => ({ ...d, path: d.path.replace(/^roles/, "default_roles") })));
    throw err;
  }
}

/** The break-glass administrator: an active member of the organization who administers users and has a password. */
async function breakGlassOf(db: Db, principal: Principal, input: SsoInput): Promise<number | null> {
  const id = input.break_glass_user_id ?? (input.enforce ? principal.userId : null);
  if (id === null) return null;
  const u = await db.select().from(users).where(and(eq(users.id, id), eq(users.organizationId, principal.organizationId))).get();
  if (!u || u.status !== "active") throw invalidField("break_glass_user_id", "No active member of this organization has this id");
  if (!permissionsOfUser(u.roles, u.isSignupUser).has("admin:manage_users")) throw invalidField("break_glass_user_id", "The break-glass account must be an administrator (admin:manage_users)");
  if (!hasPassword(u)) throw invalidField("break_glass_user_id", "The break-glass account must have a password (it signs in when the identity provider cannot)");
  return u.id;
}

/**
 * Saves the configuration (creating or replacing it). Checked before anything is
 * written: the roles, the domains, the break-glass account, and discovery at the issuer.
 * Domains already configured keep their verification; new ones start unverified;
 * domains left out are released.
 */
export async function putSso(db: Db, config: Config, principal: Principal, input: SsoInput, now: Date) {
  const orgId = principal.organizationId;
  const roles = defaultRoles(input.default_roles);
  assertGrantable(roles, principal.permissions);
  const domains = [...new Set(input.email_domains.map(normalizeDomain))];
  const existing = await loadConnection(db, orgId);
  if (!existing && !input.client_secret) throw invalidField("client_secret", "Required when single sign-on is configured for the first time");
  const breakGlassUserId = await breakGlassOf(db, principal, input);
  const claimedElsewhere = await db
    .select({ domain: ssoDomains.domain })
    .from(ssoDomains)
    .where(and(inArray(ssoDomains.domain, domains.length ? domains : [""]), isNotNull(ssoDomains.verifiedAt), ne(ssoDomains.organizationId, orgId)))
    .all();
  if (claimedElsewhere.length) {
    throw conflict("A domain is claimed by another organization", claimedElsewhere.map((d) => ({ path: `email_domains.${domains.indexOf(d.domain)}`, message: `${d.domain} is verified by another organization` })));
  }
  let metadata;
  try {
    metadata = await discover(config, input.issuer);
  } catch (err) {
    if (err instanceof SsoError) throw invalidField(err.field ?? "issuer", err.message, "The identity provider could not be used");
    throw err;
  }
  const nowIso = now.toISOString();
  const values = {
    organizationId: orgId,
    issuer: input.issuer,
    clientId: input.client_id,
    clientSecretSealed: input.client_secret ? await seal(config.secretsKey, input.client_secret) : existing!.connection.clientSecretSealed,
    defaultRoles: roles,
    enforce: input.enforce,
    breakGlassUserId,
    metadata: metadata as Record<string, unknown>,
    discoveredAt: nowIso,
    updatedAt: nowIso,
  };
  const kept = new Set(existing?.domains.map((d) => d.domain) ?? []);
  const added = domains.filter((d) => !kept.has(d));
  await db.batch([
    existing
      ? db.update(ssoConnections).set(values).where(eq(ssoConnections.organizationId, orgId))
      : db.insert(ssoConnections).values({ ...values, createdAt: nowIso }),
    db.delete(ssoDomains).where(and(eq(ssoDomains.organizationId, orgId), domains.length ? notIn(domains) : undefined)),
    ...added.map((domain) =>
      db.insert(ssoDomains).values({ organizationId: orgId, domain, verificationToken: generateSecret("invitation").slice(4, 36), createdAt: nowIso }),
    ),
  ]);
  return getSso(db, config, orgId);
}

const notIn = (domains: string[]) => and(...domains.map((d) => ne(ssoDomains.domain, d)));

export async function deleteSso(db: Db, organizationId: number) {
  const deleted = await db.delete(ssoConnections).where(eq(ssoConnections.organizationId, organizationId)).returning({ id: ssoConnections.id }).all();
  if (!deleted.length) throw notFound("Single sign-on configuration");
  await db.delete(ssoDomains).where(eq(ssoDomains.organizationId, organizationId)).run();
  return { message: "Single sign-on removed; members sign in with their passwords again (members created by SSO have none: an administrator can reset access by inviting them again)" };
}

/** Why the TXT record does not prove the domain (in words), or null when it does. */
async function txtProofProblem(config: Config, domain: string, token: string): Promise<string | null> {
  const name = `${TXT_LABEL}.${domain}`;
  if (!config.dohResolverUrls.length) return "no DNS resolver is configured (DOH_RESOLVER_URLS)";
  let answer;
  try {
    answer = await createDohClient({ resolverUrls: config.dohResolverUrls, timeoutMs: DNS_TIMEOUT_MS }).query(name, "TXT");
  } catch (err) {
    return classifyFailure(err, { what: `DNS lookup of ${name} TXT` }).message;
  }
  if (answer.rcode === "NXDOMAIN") return `${name} does not exist (NXDOMAIN): add the TXT record, then check again`;
  if (answer.rcode !== "NOERROR") return `the DNS lookup of ${name} TXT answered ${answer.rcode}`;
  const values = answer.answers
    .filter((a) => a.type === "TXT")
    .map((a) => (a.data as Uint8Array[]).map((b) => new TextDecoder().decode(b)).join(""));
  if (!values.length) return `${name} has no TXT record: add one holding ${TXT_PREFIX}${token}`;
  if (!values.includes(`${TXT_PREFIX}${token}`)) return `the TXT records at ${name} do not hold ${TXT_PREFIX}${token} (found: ${values.map((v) => JSON.stringify(v.slice(0, 80))).join(", ")})`;
  return null;
}

/** Checks a domain's TXT record now; verifies it, or records (and answers 400 with) why not. */
export async function verifyDomain(db: Db, config: Config, organizationId: number, rawDomain: string, now: Date) {
  const domain = rawDomain.trim().toLowerCase().replace(/\.$/, "");
  const row = await db.select().from(ssoDomains).where(and(eq(ssoDomains.organizationId, organizationId), eq(ssoDomains.domain, domain))).get();
  if (!row) throw notFound("Email domain of the single sign-on configuration");
  const problem = await txtProofProblem(config, domain, row.verificationToken);
  const nowIso = now.toISOString();
  if (problem) {
    await db.update(ssoDomains).set({ lastCheckedAt: nowIso, lastCheckError: problem }).where(eq(ssoDomains.id, row.id)).run();
    throw invalidField("domain", problem, "The domain is not verified");
  }
  try {
    await db.update(ssoDomains).set({ lastCheckedAt: nowIso, lastCheckError: null, verifiedAt: row.verifiedAt ?? nowIso }).where(eq(ssoDomains.id, row.id)).run();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`${domain} is verified by another organization`);
    throw err;
  }
  return getSso(db, config, organizationId);
}
