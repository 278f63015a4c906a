/**
 * Sealing of secrets the service must use later (webhook signing secrets, Slack
 * webhook URLs, SMTP credentials): AES-256-GCM with a key from SECRETS_KEY
 * (base64 of 32 bytes). Stored as base64(iv || ciphertext). Never returned by the API.
 *
 * Without SECRETS_KEY a built-in development key is used (and said so in
 * docs/configuration.md): fine on a laptop, wrong in production.
 */
import { toHex } from "./secrets";

const DEV_KEY_B64 = "dHJ1c3QtcGxhbmUtZGV2ZWxvcG1lbnQta2V5LTMyYiE="; // "trust-plane-development-key-32b!"

const keys = new Map<string, Promise<CryptoKey>>();

function b64decode(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}
function b64encode(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function keyFor(secretsKey: string | undefined): Promise<CryptoKey> {
  const material = secretsKey || DEV_KEY_B64;
  let k = keys.get(material);
  if (!k) {
    const raw = b64decode(material);
    if (raw.length !== 32) throw new Error("SECRETS_KEY must be base64 of exactly 32 bytes");
    k = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    keys.set(material, k);
  }
  return k;
}

export async function seal(secretsKey: string | undefined, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await keyFor(secretsKey), new TextEncoder().encode(plaintext)));
  const out = new Uint8Array(iv.length + ct.length);
  out.set(iv);
  out.set(ct, iv.length);
  return b64encode(out);
}

export async function unseal(secretsKey: string | undefined, sealed: string): Promise<string> {
  const bytes = b64decode(sealed);
  const pt = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12) }, await keyFor(secretsKey), bytes.slice(12));
  return new TextDecoder().decode(pt);
}

export async function hmacSha256Hex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const sig = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message)));
  return toHex(sig);
}
