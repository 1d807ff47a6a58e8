import { createECDH, randomBytes } from "node:crypto";
import ece from "http_ece";
import { describe, expect, it } from "vitest";
import { encrypt, InvalidSubscriberKeyError, MAX_PLAINTEXT, PayloadTooLargeError } from "./ece.js";

// http_ece is the reference implementation the receiving side uses (docs/providers.md §Web Push libraries).
function subscriber() {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  return { ecdh, publicKey: ecdh.getPublicKey(), authSecret: randomBytes(16) };
}

describe("RFC 8291 encryption", () => {
  it("decrypts with the reference implementation", () => {
    const s = subscriber();
    const text = JSON.stringify({ title: "Hallo", body: "Grüße 👋", data: { a: 1 } });
    const body = encrypt(Buffer.from(text), s);
    const plain = ece.decrypt(body, { version: "aes128gcm", privateKey: s.ecdh, authSecret: s.authSecret });
    expect(plain.toString("utf8")).toBe(text);
  });

  it("uses a fresh salt and key pair per message", () => {
    const s = subscriber();
    const a = encrypt(Buffer.from("same"), s);
    const b = encrypt(Buffer.from("same"), s);
    expect(a.subarray(0, 16).equals(b.subarray(0, 16))).toBe(false);
    expect(a.subarray(21, 86).equals(b.subarray(21, 86))).toBe(false);
  });

  it("fits the largest plaintext in 4096 bytes and refuses one byte more", () => {
    const s = subscriber();
    const max = encrypt(Buffer.alloc(MAX_PLAINTEXT, 0x61), s);
    expect(max.length).toBe(4096);
    expect(ece.decrypt(max, { version: "aes128gcm", privateKey: s.ecdh, authSecret: s.authSecret }).length).toBe(
      MAX_PLAINTEXT,
    );
    expect(() => encrypt(Buffer.alloc(MAX_PLAINTEXT + 1), s)).toThrow(PayloadTooLargeError);
  });

  it("refuses a subscription key that is not a P-256 point", () => {
    const s = { ...subscriber(), publicKey: Buffer.alloc(65, 4) };
    expect(() => encrypt(Buffer.from("x"), s)).toThrow(InvalidSubscriberKeyError);
  });
});
