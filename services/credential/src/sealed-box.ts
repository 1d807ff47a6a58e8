import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** The sealed data was altered, sealed for another context or under another key. */
export class SealedBoxError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SealedBoxError";
  }
}

/**
 * AES-256-GCM under the master key. A sealed blob is nonce || ciphertext || tag, with a
 * fresh random nonce per seal. The associated data binds a blob to its context (the
 * app and platform it belongs to), so a blob copied to another row fails to open.
 * keyVersion is stored beside each blob so that a future rotation can tell old blobs
 * from new ones.
 */
export class SealedBox {
  constructor(
    private readonly key: Buffer,
    readonly keyVersion = 1,
  ) {
    if (key.length !== 32) throw new Error("the master key must be 32 bytes");
  }

  seal(plaintext: string, aad: string): Buffer {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return Buffer.concat([nonce, body, cipher.getAuthTag()]);
  }

  open(sealed: Buffer, aad: string, keyVersion = this.keyVersion): string {
    if (keyVersion !== this.keyVersion) throw new SealedBoxError(`no master key of version ${keyVersion}`);
    if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new SealedBoxError("sealed data is truncated");
    const nonce = sealed.subarray(0, NONCE_BYTES);
    const tag = sealed.subarray(sealed.length - TAG_BYTES);
    const body = sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(aad, "utf8"));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
    } catch (err) {
      throw new SealedBoxError("sealed data failed authentication", { cause: err });
    }
  }
}
