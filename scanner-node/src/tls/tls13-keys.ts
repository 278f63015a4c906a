// Just enough of the TLS 1.3 key schedule (RFC 8446 §7) to read the server's encrypted
// handshake flight: the Certificate of a TLS 1.3-only server is never sent in cleartext.
// We never send a Finished; the handshake is abandoned after the Certificate.
import { createCipheriv, createDecipheriv, createECDH, createHash, createHmac, createPublicKey, diffieHellman, generateKeyPairSync, type KeyObject } from "node:crypto";
import { TlsParseError } from "./wire";

export const GROUP_X25519 = 29;
export const GROUP_SECP256R1 = 23;

export interface EphemeralKeys {
  shares: { group: number; key: Buffer }[];
  sharedSecret(group: number, peerKey: Buffer): Buffer;
}

const X25519_SPKI_PREFIX = Buffer.from("302a300506032b656e032100", "hex");

export function ephemeralKeys(): EphemeralKeys {
  const x = generateKeyPairSync("x25519");
  const xPub = (x.publicKey.export({ format: "der", type: "spki" }) as Buffer).subarray(-32);
  const p256 = createECDH("prime256v1");
  p256.generateKeys();
  return {
    shares: [{ group: GROUP_X25519, key: xPub }, { group: GROUP_SECP256R1, key: p256.getPublicKey() }],
    sharedSecret(group, peerKey) {
      try {
        if (group === GROUP_X25519) {
          const pub: KeyObject = createPublicKey({ key: Buffer.concat([X25519_SPKI_PREFIX, peerKey]), format: "der", type: "spki" });
          return diffieHellman({ privateKey: x.privateKey, publicKey: pub });
        }
        if (group === GROUP_SECP256R1) return p256.computeSecret(peerKey);
      } catch (e) {
        throw new TlsParseError(`bad key_share from server: ${(e as Error).message}`);
      }
      throw new TlsParseError(`server chose key_share group ${group} we did not offer`);
    },
  };
}

interface SuiteParams { hash: "sha256" | "sha384"; keyLen: number; aead: "aes-128-gcm" | "aes-256-gcm" | "chacha20-poly1305" }
export const TLS13_DECRYPTABLE: Record<number, SuiteParams> = {
  0x1301: { hash: "sha256", keyLen: 16, aead: "aes-128-gcm" },
  0x1302: { hash: "sha384", keyLen: 32, aead: "aes-256-gcm" },
  0x1303: { hash: "sha256", keyLen: 32, aead: "chacha20-poly1305" },
};

function hkdfExtract(hash: string, salt: Buffer, ikm: Buffer): Buffer {
  return createHmac(hash, salt).update(ikm).digest();
}
function hkdfExpandLabel(hash: string, secret: Buffer, label: string, context: Buffer, length: number): Buffer {
  const full = Buffer.from("tls13 " + label, "ascii");
  const info = Buffer.concat([Buffer.from([length >> 8, length & 0xff, full.length]), full, Buffer.from([context.length]), context]);
  const out: Buffer[] = [];
  let prev = Buffer.alloc(0);
  for (let i = 1; Buffer.concat(out).length < length; i++) {
    prev = createHmac(hash, secret).update(Buffer.concat([prev, info, Buffer.from([i])])).digest();
    out.push(prev);
  }
  return Buffer.concat(out).subarray(0, length);
}

/** Decrypts the server's handshake records given ClientHello||ServerHello (handshake messages, no record headers). */
export class ServerHandshakeDecrypter {
  private seq = 0n;
  private readonly key: Buffer;
  private readonly iv: Buffer;
  constructor(private readonly suite: SuiteParams, sharedSecret: Buffer, transcript: Buffer) {
    const h = suite.hash;
    const hashLen = h === "sha256" ? 32 : 48;
    const zeros = Buffer.alloc(hashLen);
    const early = hkdfExtract(h, Buffer.alloc(1, 0), zeros);
    const emptyHash = createHash(h).digest();
    const derived = hkdfExpandLabel(h, early, "derived", emptyHash, hashLen);
    const handshakeSecret = hkdfExtract(h, derived, sharedSecret);
    const sHs = hkdfExpandLabel(h, handshakeSecret, "s hs traffic", createHash(h).update(transcript).digest(), hashLen);
    this.key = hkdfExpandLabel(h, sHs, "key", Buffer.alloc(0), suite.keyLen);
    this.iv = hkdfExpandLabel(h, sHs, "iv", Buffer.alloc(0), 12);
  }
  /** Returns the inner content type and plaintext of one application_data record. */
  decrypt(header: Buffer, payload: Buffer): { type: number; plaintext: Buffer } {
    if (payload.length < 17) throw new TlsParseError("encrypted record too short");
    const nonce = Buffer.from(this.iv);
    const seq = this.seq++;
    for (let i = 0; i < 8; i++) nonce[11 - i] ^= Number((seq >> BigInt(8 * i)) & 0xffn);
    const tag = payload.subarray(payload.length - 16);
    const d = createDecipheriv(this.suite.aead, this.key, nonce, { authTagLength: 16 } as never) as ReturnType<typeof createDecipheriv> & { setAuthTag(t: Buffer): void; setAAD(a: Buffer, o?: object): void };
    d.setAAD(header, { plaintextLength: payload.length - 16 });
    d.setAuthTag(tag);
    let inner: Buffer;
    try {
      inner = Buffer.concat([d.update(payload.subarray(0, payload.length - 16)), d.final()]);
    } catch {
      throw new TlsParseError("cannot decrypt server handshake record (bad tag)");
    }
    let end = inner.length;
    while (end > 0 && inner[end - 1] === 0) end--;
    if (end === 0) throw new TlsParseError("encrypted record without content type");
    return { type: inner[end - 1], plaintext: inner.subarray(0, end - 1) };
  }
}
// createCipheriv is re-exported for tests that build encrypted records.
export { createCipheriv };
