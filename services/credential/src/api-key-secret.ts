import { createHash, randomBytes } from "node:crypto";

const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** The largest multiple of 62 that fits a byte: bytes at or above it are discarded so
 * that every character is equally likely (a plain `% 62` would favour the first 8). */
const UNBIASED_LIMIT = 248;

export const SECRET_PREFIX = "hk_live_";
const GENERATED_LENGTH = 40;
/** What a presented key must look like. The upper bound only stops absurd inputs. */
export const SECRET_PATTERN = /^hk_live_[A-Za-z0-9]{32,256}$/;
/** Characters of the secret kept in clear to recognise a key: "hk_live_" and 4 more. */
const DISPLAY_PREFIX_LENGTH = 12;

export function generateSecret(): string {
  let out = SECRET_PREFIX;
  while (out.length < SECRET_PREFIX.length + GENERATED_LENGTH) {
    for (const byte of randomBytes(GENERATED_LENGTH)) {
      if (byte >= UNBIASED_LIMIT) continue;
      out += BASE62[byte % 62];
      if (out.length === SECRET_PREFIX.length + GENERATED_LENGTH) break;
    }
  }
  return out;
}

export function isWellFormedSecret(secret: string): boolean {
  return SECRET_PATTERN.test(secret);
}

/**
 * Secrets are long random strings, so a fast unsalted hash is enough: there is nothing
 * to brute-force, and lookup by hash needs it to be deterministic.
 */
export function hashSecret(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

export function displayPrefix(secret: string): string {
  return secret.slice(0, DISPLAY_PREFIX_LENGTH);
}
