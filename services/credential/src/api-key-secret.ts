import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** The largest multiple of 62 that fits a byte: bytes at or above it are discarded so
 * that every character is equally likely (a plain `% 62` would favour the first 8). */
const UNBIASED_LIMIT = 248;

/** What a key may do: a server key has its scope's full rights, a client key is publishable. */
export type ApiKeyKindName = "server" | "client";

/** The secret's prefix says its kind, so that a key pasted into an app is recognisably safe (or not). */
export const SECRET_PREFIXES: Record<ApiKeyKindName, string> = { server: "hk_live_", client: "hk_pub_" };
export const SECRET_PREFIX = SECRET_PREFIXES.server;
const GENERATED_LENGTH = 40;
/** What a presented key of either kind must look like. The upper bound only stops absurd inputs. */
const ANY_KIND_PATTERN = /^hk_(?:live|pub)_[A-Za-z0-9]{32,256}$/;
/** A server key (the only kind the bootstrap key may be). */
export const SECRET_PATTERN = /^hk_live_[A-Za-z0-9]{32,256}$/;
/** Characters of the secret kept in clear after its kind prefix, to recognise a key. */
const DISPLAY_RANDOM_CHARS = 4;

export function generateSecret(kind: ApiKeyKindName = "server"): string {
  const prefix = SECRET_PREFIXES[kind];
  let out = prefix;
  while (out.length < prefix.length + GENERATED_LENGTH) {
    for (const byte of randomBytes(GENERATED_LENGTH)) {
      if (byte >= UNBIASED_LIMIT) continue;
      out += BASE62[byte % 62];
      if (out.length === prefix.length + GENERATED_LENGTH) break;
    }
  }
  return out;
}

export function isWellFormedSecret(secret: string): boolean {
  return ANY_KIND_PATTERN.test(secret);
}

/**
 * Secrets are long random strings, so a fast unsalted hash is enough: there is nothing
 * to brute-force, and lookup by hash needs it to be deterministic.
 */
export function hashSecret(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/**
 * Whether a presented secret is the one a stored hash was made from. Keys are found by
 * their hash (an index lookup on a digest the caller cannot steer byte by byte), and the
 * row found is confirmed here with a constant-time comparison of the two equal-length
 * digests, so no comparison of secret-derived bytes ever stops at the first difference.
 */
export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const digest = hashSecret(secret);
  return storedHash.length === digest.length && timingSafeEqual(digest, storedHash);
}

/** "hk_live_" or "hk_pub_" and the next 4 characters. */
export function displayPrefix(secret: string): string {
  const prefixLength = secret.indexOf("_", 3) + 1;
  return secret.slice(0, prefixLength + DISPLAY_RANDOM_CHARS);
}
