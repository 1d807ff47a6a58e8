import { createECDH, randomBytes, type ECDH } from "node:crypto";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { decryptPushMessage } from "./decrypt.js";

interface EceEncrypt {
  encrypt(
    plaintext: Buffer,
    params: { version: "aes128gcm"; dh: Buffer; privateKey: ECDH; authSecret: Buffer; rs?: number },
  ): Buffer;
}
const ece = createRequire(import.meta.url)("http_ece") as EceEncrypt;

/** The user agent's keys, and an application server encrypting to them as RFC 8291 says. */
function setup() {
  const receiver = createECDH("prime256v1");
  receiver.generateKeys();
  const authSecret = randomBytes(16);
  const encrypt = (text: string, rs?: number) => {
    const sender = createECDH("prime256v1");
    sender.generateKeys();
    return ece.encrypt(Buffer.from(text), {
      version: "aes128gcm",
      dh: receiver.getPublicKey(),
      privateKey: sender,
      authSecret,
      rs,
    });
  };
  return { receiver, authSecret, encrypt };
}

const reason = (r: ReturnType<typeof decryptPushMessage>) => (r.ok ? r.value.toString() : r.refusal.reason);

describe("decryptPushMessage", () => {
  it("decrypts a single-record aes128gcm message", () => {
    const { receiver, authSecret, encrypt } = setup();
    expect(reason(decryptPushMessage(encrypt("hello ✓"), receiver, authSecret))).toBe("hello ✓");
  });

  it("refuses several records, which RFC 8291 forbids", () => {
    const { receiver, authSecret, encrypt } = setup();
    expect(reason(decryptPushMessage(encrypt("x".repeat(100), 50), receiver, authSecret))).toBe("MultipleRecords");
  });

  it("refuses a bad header, a wrong auth secret and tampering", () => {
    const { receiver, authSecret, encrypt } = setup();
    const body = encrypt("hello");
    expect(reason(decryptPushMessage(body.subarray(0, 90), receiver, authSecret))).toBe("TruncatedContent");
    const shortKeyId = Buffer.from(body);
    shortKeyId[20] = 33;
    expect(reason(decryptPushMessage(shortKeyId, receiver, authSecret))).toBe("InvalidKeyId");
    const tinyRs = Buffer.from(body);
    tinyRs.writeUInt32BE(17, 16);
    expect(reason(decryptPushMessage(tinyRs, receiver, authSecret))).toBe("InvalidRecordSize");
    expect(reason(decryptPushMessage(body, receiver, randomBytes(16)))).toBe("DecryptionFailed");
    const offCurve = Buffer.from(body);
    offCurve.fill(1, 22, 86);
    expect(reason(decryptPushMessage(offCurve, receiver, authSecret))).toBe("DecryptionFailed");
  });
});
