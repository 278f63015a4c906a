/**
 * Bearer secrets: API tokens (`tpm_`), login sessions (`tps_`), agent tokens
 * (`tpa_`), invitation tokens (`tpi_`) and the token of a sign-in waiting for its
 * second factor (`tpf_`, never a bearer: only POST /api/auth/login/mfa takes it).
 *
 * Format (docs/decisions.md#api-tokens): prefix + 32 random base62 characters (~190 bits) + a
 * 6-character base62 CRC-32 of the body. The fixed prefix lets secret scanners
 * recognise a leaked token; the checksum rejects a mistyped or truncated token
 * before any database read.
 *
 * Only SHA-256(token) is stored. A fast hash is right here (unlike passwords):
 * the input has ~190 bits of entropy, so there is nothing to brute-force.
 */
export const SECRET_KINDS = { api: "tpm_", session: "tps_", agent: "tpa_", invitation: "tpi_", mfa: "tpf_" } as const;
export type SecretKind = keyof typeof SECRET_KINDS;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export const SECRET_BODY_LENGTH = 32;
export const CHECKSUM_LENGTH = 6;
/** Characters of a token shown in listings (`token_prefix`): `tpm_` + 8. */
export const TOKEN_PREFIX_LENGTH = 12;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export function base62Fixed(value: number, width: number): string {
  let out = "";
  let v = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  // Rejection sampling keeps every character uniformly distributed.
  const out: string[] = [];
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out.push(BASE62[b % 62]);
    }
  }
  return out.join("");
}

export function checksumOf(body: string): string {
  return base62Fixed(crc32(body), CHECKSUM_LENGTH);
}

export function generateSecret(kind: SecretKind): string {
  const body = randomBase62(SECRET_BODY_LENGTH);
  return SECRET_KINDS[kind] + body + checksumOf(body);
}

const SHAPE = /^(tpm|tps|tpa|tpi|tpf)_([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;

/** Which kind of secret this is, or null when its shape or checksum is wrong. */
export function parseSecret(value: string): SecretKind | null {
  const m = SHAPE.exec(value);
  if (!m) return null;
  if (checksumOf(m[2]) !== m[3]) return null;
  const prefix = `${m[1]}_`;
  return (Object.keys(SECRET_KINDS) as SecretKind[]).find((k) => SECRET_KINDS[k] === prefix) ?? null;
}

/** Lowercase hex SHA-256 of the UTF-8 text (WebCrypto: workerd and Node alike). */
export async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

export function hashSecret(value: string): Promise<string> {
  return sha256Hex(value);
}

export function toHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Constant-time equality of two byte strings of possibly different lengths. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  const subtle = crypto.subtle as SubtleCrypto & { timingSafeEqual?: (a: ArrayBufferView, b: ArrayBufferView) => boolean };
  if (a.length !== b.length) {
    // Still spend the comparison so timing does not reveal the length mismatch early.
    if (subtle.timingSafeEqual) subtle.timingSafeEqual(a, a);
    return false;
  }
  if (subtle.timingSafeEqual) return subtle.timingSafeEqual(a, b);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}
