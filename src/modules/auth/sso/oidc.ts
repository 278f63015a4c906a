/**
 * The OpenID Connect relying party, on `oauth4webapi`.
 *
 * Why this library: it is the maintained, certified (OpenID Foundation) client that is
 * built only on Web APIs (fetch, WebCrypto) with no dependencies, so it runs in workerd
 * as it is; `openid-client` v6 is the same code plus `jose` and a Node-flavoured API.
 * Every request it makes goes through the egress policy (`customFetch`), and its clock
 * is the request's (`clockSkew`), so tests move it like any other.
 *
 * What is checked, in order: discovery (the document's `issuer` must equal the
 * configured one); the authorization response (`state`, the provider's `error`); the
 * token response with the code and the PKCE verifier; the ID token's claims (issuer,
 * audience, expiry, issued-at, `nonce`, `azp`); and the ID token's signature against the
 * provider's JWKS. oauth4webapi does not check the signature of an ID token that came
 * from the token endpoint by itself (OpenID Connect Core §3.1.3.7 lets a client rely on
 * TLS there); this code always does (`validateApplicationLevelSignature`), so a token
 * endpoint answering with a forged token is refused too.
 */
import * as oauth from "oauth4webapi";
import type { Config } from "../../../env";
import { classifyFailure } from "../../../platform/collection";
import { checkUrl, egressPolicy, parseHost } from "../../../platform/egress";

export const OIDC_TIMEOUT_MS = 10_000;
export const SSO_SCOPES = "openid email profile";

/** A failure to show to an administrator or at the sign-in page, in words. */
export class SsoError extends Error {
  constructor(
    message: string,
    /** The configuration field it concerns, when it is one. */
    readonly field?: string,
  ) {
    super(message);
    this.name = "SsoError";
  }
}

/** fetch through the egress policy, with a timeout: every request to a provider goes here. */
function egressFetch(config: Config): typeof fetch {
  const policy = egressPolicy(config);
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const verdict = await checkUrl(policy, url, ["https:", "http:"]);
    if (!verdict.allowed) throw new SsoError(`${new URL(url).host} refused by the egress policy: ${verdict.reason}`);
    return fetch(input, { ...init, signal: AbortSignal.timeout(OIDC_TIMEOUT_MS) });
  }) as typeof fetch;
}

/**
 * http issuers are accepted only for destinations the operator's egress allow-list
 * names (an identity provider on the internal network, the tests' local provider);
 * everywhere else an issuer must be https.
 */
export function issuerUrlProblem(config: Config, issuer: string): string | null {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return "not an absolute URL";
  }
  if (url.search || url.hash) return "an issuer has no query or fragment";
  if (url.protocol === "https:") return null;
  if (url.protocol !== "http:") return "the scheme must be https";
  const port = url.port ? Number(url.port) : 80;
  if (egressPolicy(config).allowList.allows(parseHost(url.hostname), port)) return null;
  return "the scheme must be https (http only for a destination on the egress allow-list)";
}

const options = (config: Config, issuer: string) => ({
  [oauth.customFetch]: egressFetch(config),
  [oauth.allowInsecureRequests]: issuer.startsWith("http:"),
});

/** Reads the provider's discovery document; a failure says what went wrong, for the `issuer` field. */
export async function discover(config: Config, issuer: string): Promise<oauth.AuthorizationServer> {
  const problem = issuerUrlProblem(config, issuer);
  if (problem) throw new SsoError(problem, "issuer");
  const issuerUrl = new URL(issuer);
  let as: oauth.AuthorizationServer;
  try {
    const response = await oauth.discoveryRequest(issuerUrl, { ...options(config, issuer), algorithm: "oidc" });
    as = await oauth.processDiscoveryResponse(issuerUrl, response);
  } catch (err) {
    throw new SsoError(`Discovery at ${issuer.replace(/\/$/, "")}/.well-known/openid-configuration failed: ${describe(err, issuer)}`, "issuer");
  }
  for (const key of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
    if (typeof as[key] !== "string") throw new SsoError(`The provider's discovery document has no ${key}`, "issuer");
  }
  if (as.code_challenge_methods_supported && !as.code_challenge_methods_supported.includes("S256")) {
    throw new SsoError("The provider does not support PKCE with S256 (code_challenge_methods_supported)", "issuer");
  }
  return as;
}

/** The words of a failure: oauth4webapi's own message for protocol faults, classified for transport faults. */
function describe(err: unknown, url: string): string {
  if (err instanceof SsoError) return err.message;
  if (err instanceof oauth.ResponseBodyError) return `the provider answered ${err.error}${err.error_description ? `: ${err.error_description}` : ""}`;
  if (err instanceof oauth.AuthorizationResponseError) return `the provider answered ${err.error}${err.error_description ? `: ${err.error_description}` : ""}`;
  // The library says a non-2xx answer "is not a conform ... response": name the status instead.
  if (err instanceof oauth.OperationProcessingError && err.cause instanceof Response && !err.cause.ok) return `the provider answered HTTP ${err.cause.status}`;
  if (err instanceof oauth.OperationProcessingError || err instanceof oauth.UnsupportedOperationError) return err.message;
  if (err instanceof TypeError && /"response"|must be|expected/.test(err.message)) return err.message;
  return classifyFailure(err, { url }).message;
}

export interface ProviderClient {
  as: oauth.AuthorizationServer;
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

/** The authorization request's URL, with PKCE (S256), state, nonce and a login hint. */
export async function authorizationUrl(p: ProviderClient, state: string, nonce: string, codeVerifier: string, loginHint: string): Promise<string> {
  const url = new URL(p.as.authorization_endpoint!);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", p.clientId);
  url.searchParams.set("redirect_uri", p.redirectUri);
  url.searchParams.set("scope", SSO_SCOPES);
  url.searchParams.set("state", state);
  url.searchParams.set("nonce", nonce);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  if (loginHint) url.searchParams.set("login_hint", loginHint);
  return url.href;
}

export type IdentityClaims = oauth.IDToken;

/**
 * The callback: checks the authorization response, redeems the code, and returns the
 * ID token's claims once every check above passed (plus the userinfo endpoint's `email`
 * and `email_verified` when the ID token carries none, as some providers do).
 */
export async function redeemCallback(
  config: Config,
  p: ProviderClient,
  callback: URL,
  expected: { state: string; nonce: string; codeVerifier: string },
  now: Date,
): Promise<IdentityClaims> {
  const client: oauth.Client = { client_id: p.clientId, [oauth.clockSkew]: Math.round((now.getTime() - Date.now()) / 1000) };
  const auth = (p.as.token_endpoint_auth_methods_supported ?? ["client_secret_basic"]).includes("client_secret_basic")
    ? oauth.ClientSecretBasic(p.clientSecret)
    : oauth.ClientSecretPost(p.clientSecret);
  const opts = options(config, p.issuer);
  try {
    const params = oauth.validateAuthResponse(p.as, client, callback, expected.state);
    const response = await oauth.authorizationCodeGrantRequest(p.as, client, auth, params, p.redirectUri, expected.codeVerifier, opts);
    const result = await oauth.processAuthorizationCodeResponse(p.as, client, response, { expectedNonce: expected.nonce, requireIdToken: true });
    await oauth.validateApplicationLevelSignature(p.as, response, opts);
    const claims = oauth.getValidatedIdTokenClaims(result) as IdentityClaims;
    if (claims.email === undefined && p.as.userinfo_endpoint) {
      const info = await oauth.processUserInfoResponse(p.as, client, claims.sub, await oauth.userInfoRequest(p.as, client, result.access_token, opts));
      return { ...claims, email: info.email, email_verified: info.email_verified };
    }
    return claims;
  } catch (err) {
    throw new SsoError(explainCallbackFailure(err, p.issuer));
  }
}

function explainCallbackFailure(err: unknown, issuer: string): string {
  if (err instanceof oauth.OperationProcessingError) {
    const m = err.message;
    if (/nonce/i.test(m)) return "The identity provider's answer is not for this sign-in (its nonce differs)";
    if (/state/i.test(m)) return "The identity provider's answer is not for this sign-in (its state differs)";
    if (err.code === oauth.JWT_TIMESTAMP_CHECK) return "The identity provider's ID token has expired (or is not valid yet): check the clocks, then sign in again";
    if (/signature/i.test(m)) return "The ID token's signature does not verify with the identity provider's keys: it was not issued by this provider";
  }
  return `Sign-in with the identity provider failed: ${describe(err, issuer)}`;
}

export const newState = oauth.generateRandomState;
export const newNonce = oauth.generateRandomNonce;
export const newCodeVerifier = oauth.generateRandomCodeVerifier;
