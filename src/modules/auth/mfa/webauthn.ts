/**
 * Passkeys (WebAuthn) through @simplewebauthn/server: the relying party is this
 * deployment, its id the host of PUBLIC_BASE_URL and its origin that URL's origin, so a
 * passkey registered here signs only for this service's pages. The library checks the
 * attestation (format `none` asked for: we do not restrict authenticator makes), the
 * challenge, origin, RP id hash, user presence, signature and counter.
 */
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { isoBase64URL } from "@simplewebauthn/server/helpers";
import type { Config } from "../../../env";

export const RP_NAME = "Trust-Plane";
/** How long the browser may take to create or use a passkey. */
export const WEBAUTHN_TIMEOUT_MS = 120_000;

export interface RelyingParty {
  id: string;
  origin: string;
}

export function relyingParty(config: Pick<Config, "publicBaseUrl">): RelyingParty {
  const url = new URL(config.publicBaseUrl);
  return { id: url.hostname, origin: url.origin };
}

export interface StoredPasskey {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
}

export function registrationOptions(rp: RelyingParty, user: { id: number; email: string }, existing: StoredPasskey[]) {
  return generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.email,
    // The user handle: stable per account, no personal data in it.
    userID: new Uint8Array(new TextEncoder().encode(`trust-plane-user-${user.id}`)),
    attestationType: "none",
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
    timeout: WEBAUTHN_TIMEOUT_MS,
  });
}

/** The challenge a response answers (from its client data), to find the request it belongs to; null when unreadable. */
export function challengeOf(response: { response?: { clientDataJSON?: unknown } }): string | null {
  try {
    const json = JSON.parse(isoBase64URL.toUTF8String(String(response.response?.clientDataJSON ?? "")));
    return typeof json.challenge === "string" ? json.challenge : null;
  } catch {
    return null;
  }
}

export async function verifyRegistration(rp: RelyingParty, expectedChallenge: string, response: RegistrationResponseJSON) {
  const result = await verifyRegistrationResponse({ response, expectedChallenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: false });
  if (!result.verified) return null;
  const info = result.registrationInfo;
  return {
    credentialId: info.credential.id,
    publicKey: isoBase64URL.fromBuffer(info.credential.publicKey),
    counter: info.credential.counter,
    transports: (response.response.transports ?? []) as string[],
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
  };
}

export function authenticationOptions(rp: RelyingParty, allowed: StoredPasskey[]) {
  return generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials: allowed.map((p) => ({ id: p.credentialId, transports: p.transports })),
    userVerification: "preferred",
    timeout: WEBAUTHN_TIMEOUT_MS,
  });
}

/** The new signature counter when the assertion is valid for `passkey`, else null. */
export async function verifyAssertion(rp: RelyingParty, expectedChallenge: string, passkey: StoredPasskey, response: AuthenticationResponseJSON): Promise<number | null> {
  const result = await verifyAuthenticationResponse({
    response,
    expectedChallenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    credential: { id: passkey.credentialId, publicKey: isoBase64URL.toBuffer(passkey.publicKey), counter: passkey.counter, transports: passkey.transports as never },
    requireUserVerification: false,
  });
  return result.verified ? result.authenticationInfo.newCounter : null;
}
