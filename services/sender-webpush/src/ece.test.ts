import { createECDH, createHmac, randomBytes } from "node:crypto";
import ece from "http_ece";
import { describe, expect, it } from "vitest";
import { encrypt, hmacSha256, InvalidSubscriberKeyError, PayloadTooLargeError } from "./ece.js";
import { MAX_PLAINTEXT } from "./ece-record.js";

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

  it("encrypts correctly after a refused key (the thread's key agreement context is reused)", () => {
    expect(() => encrypt(Buffer.from("x"), { ...subscriber(), publicKey: Buffer.alloc(65, 4) })).toThrow(
      InvalidSubscriberKeyError,
    );
    const s = subscriber();
    const body = encrypt(Buffer.from("after"), s);
    const plain = ece.decrypt(body, { version: "aes128gcm", privateKey: s.ecdh, authSecret: s.authSecret });
    expect(plain.toString("utf8")).toBe("after");
  });
});

describe("hmacSha256", () => {
  it("equals node:crypto's HMAC for keys of 0 to 64 bytes, any number of data parts, beyond its scratch buffer too", () => {
    for (const keyLength of [0, 1, 16, 32, 63, 64]) {
      for (const parts of [[], [0], [5, 0, 200], [64, 64], [300, 5]]) {
        const key = randomBytes(keyLength);
        const data = parts.map((n) => randomBytes(n));
        const expected = createHmac("sha256", key).update(Buffer.concat(data)).digest();
        expect(hmacSha256(key, ...data).equals(expected), `key ${keyLength}, parts ${parts}`).toBe(true);
      }
    }
  });

  it("refuses a key longer than a block", () => {
    expect(() => hmacSha256(randomBytes(65), Buffer.of(1))).toThrow(RangeError);
  });
});
