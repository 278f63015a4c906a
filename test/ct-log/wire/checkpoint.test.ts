import { describe, expect, it } from "vitest";
import { CtWireError, fromBase64, toBase64 } from "../../../src/modules/ct-log/wire/bytes";
import {
  formatCheckpoint,
  parseCheckpoint,
  parseSignedNote,
  rfc6962NoteKeyId,
  verifyCheckpoint,
} from "../../../src/modules/ct-log/wire/checkpoint";
import {
  importLogPublicKey,
  serializeDigitallySigned,
  treeHeadSignatureInput,
} from "../../../src/modules/ct-log/wire/digitally-signed";
import { dataJson, dataText, hex } from "./fixture";

/** DER-encodes a raw r||s ECDSA signature as a CT log would send it. */
function rawToDer(raw: Uint8Array): Uint8Array {
  const int = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    let v = b.subarray(i);
    if (v[0] & 0x80) v = new Uint8Array([0, ...v]);
    return [0x02, v.length, ...v];
  };
  const body = [...int(raw.subarray(0, 32)), ...int(raw.subarray(32))];
  return new Uint8Array([0x30, body.length, ...body]);
}

describe("sycamore2024h2 checkpoint (real Let's Encrypt log)", () => {
  it("parses origin, size, root, timestamp, key id and signature", async () => {
    const note = await dataText("static-ct/checkpoints/sycamore2024h2.checkpoint");
    const want = await dataJson("static-ct/checkpoints/sycamore2024h2.expected.json");
    const logId = fromBase64(want.log_id_b64);
    const cp = await parseCheckpoint(note, logId);
    expect(cp.origin).toBe(want.origin);
    expect(cp.treeSize).toBe(want.tree_size);
    expect(toBase64(cp.rootHash)).toBe(want.root_hash_b64);
    expect(cp.timestamp).toBe(want.sth_timestamp_ms);
    expect(hex(cp.keyId)).toBe("3dd9086a");
    expect(hex(await rfc6962NoteKeyId(cp.origin, logId))).toBe(want.key_id_hex);
    expect(cp.treeHeadSignature.hashAlgorithm).toBe(want.digitally_signed.hash_alg);
    expect(cp.treeHeadSignature.signatureAlgorithm).toBe(want.digitally_signed.sig_alg);
    expect(hex(cp.treeHeadSignature.signature)).toBe(want.digitally_signed.sig_der_hex);
    // Another log's id does not select this signature.
    await expect(parseCheckpoint(note, new Uint8Array(32))).rejects.toThrow(/key id/);
  });

  it("malformed notes are CtWireError", async () => {
    const note = await dataText("static-ct/checkpoints/sycamore2024h2.checkpoint");
    expect(() => parseSignedNote(note.replace("\n\n", "\n"))).toThrow(CtWireError);
    expect(() => parseSignedNote(note.replace("\u2014", "-"))).toThrow(CtWireError);
    await expect(parseCheckpoint(note.replace("820495916", "82049x916"))).rejects.toThrow(CtWireError);
    await expect(parseCheckpoint(note.replace("wDpr6", "wDp"))).rejects.toThrow(CtWireError);
    await expect(parseCheckpoint(note.slice(0, -20) + "\n")).rejects.toThrow(CtWireError);
  });
});

describe("checkpoint signatures", () => {
  it("a checkpoint signed with a P-256 key verifies; a changed root or another key does not", async () => {
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const spki = new Uint8Array((await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer);
    const key = await importLogPublicKey(spki);
    const body = { origin: "log.example/2026", treeSize: 5, rootHash: new Uint8Array(32).fill(7), extensions: [] };
    const timestamp = 1_750_000_000_000;
    const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, pair.privateKey, treeHeadSignatureInput({ ...body, timestamp })));
    const ds = { hashAlgorithm: 4, signatureAlgorithm: 3, signature: rawToDer(raw) };
    const note = await formatCheckpoint(body, key.logId, timestamp, ds);
    const cp = await parseCheckpoint(note, key.logId);
    expect(await verifyCheckpoint(cp, key)).toBe(true);

    const forged = await parseCheckpoint(note.replace(toBase64(body.rootHash), toBase64(new Uint8Array(32).fill(8))), key.logId);
    expect(await verifyCheckpoint(forged, key)).toBe(false);

    const other = await importLogPublicKey(
      new Uint8Array(
        (await crypto.subtle.exportKey(
          "spki",
          ((await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair).publicKey,
        )) as ArrayBuffer,
      ),
    );
    expect(await verifyCheckpoint(cp, other)).toBe(false); // key id differs
    expect(serializeDigitallySigned(ds)[0]).toBe(4);
  });
});
