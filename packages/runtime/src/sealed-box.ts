import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Versions are stored in smallint columns. */
export const MAX_KEY_VERSION = 32_767;

/** The sealed data was altered, sealed for another context or under another key. */
export class SealedBoxError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SealedBoxError";
  }
}

/** A master key and the version stored beside every blob sealed with it. */
export interface MasterKey {
  version: number;
  key: Buffer;
}

/**
 * AES-256-GCM under the master key. A sealed blob is nonce || ciphertext || tag, with a
 * fresh random nonce per seal. The associated data binds a blob to its context (the
 * app and platform it belongs to), so a blob copied to another row fails to open.
 *
 * Every blob is stored with the version of the key that sealed it. New blobs are sealed
 * with the active key; blobs of another configured version (a retired key, or the next
 * one while it is staged) open with that version's key, which is what lets the master key
 * rotate without downtime: the re-encryption job (reencryption-job.ts) moves old blobs
 * to the active key. A version says which key to use; no other key is tried, so a blob
 * never silently opens under a key it does not name.
 */
export class SealedBox {
  private readonly keys = new Map<number, Buffer>();

  constructor(
    key: Buffer,
    readonly keyVersion = 1,
    previous: readonly MasterKey[] = [],
  ) {
    for (const { version, key: k } of [{ version: keyVersion, key }, ...previous]) {
      if (!Number.isInteger(version) || version < 1 || version > MAX_KEY_VERSION) {
        throw new Error(`master key versions must be integers from 1 to ${MAX_KEY_VERSION}`);
      }
      if (k.length !== 32) throw new Error("the master key must be 32 bytes");
      if (this.keys.has(version)) throw new Error(`master key version ${version} is given twice`);
      this.keys.set(version, k);
    }
  }

  /** Every version this box opens, the active one first. */
  get versions(): number[] {
    return [...this.keys.keys()];
  }

  /** Seals with the active key; store the blob with `keyVersion`. */
  seal(plaintext: string, aad: string): Buffer {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.keys.get(this.keyVersion)!, nonce, {
      authTagLength: TAG_BYTES,
    });
    cipher.setAAD(Buffer.from(aad, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return Buffer.concat([nonce, body, cipher.getAuthTag()]);
  }

  /** Opens a blob sealed under the key of `keyVersion` (the active one by default). */
  open(sealed: Buffer, aad: string, keyVersion = this.keyVersion): string {
    const key = this.keys.get(keyVersion);
    if (!key) throw new SealedBoxError(`no master key of version ${keyVersion}`);
    if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new SealedBoxError("sealed data is truncated");
    const nonce = sealed.subarray(0, NONCE_BYTES);
    const tag = sealed.subarray(sealed.length - TAG_BYTES);
    const body = sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(aad, "utf8"));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
    } catch (err) {
      throw new SealedBoxError(`sealed data failed authentication under master key version ${keyVersion}`, {
        cause: err,
      });
    }
  }

  /** The same plaintext sealed again under the active key (same context). */
  reseal(sealed: Buffer, aad: string, keyVersion: number): Buffer {
    return this.seal(this.open(sealed, aad, keyVersion), aad);
  }
}
