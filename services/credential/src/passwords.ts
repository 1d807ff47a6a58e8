import { randomBytes } from "node:crypto";
import { hash, verify, type Algorithm } from "@node-rs/argon2";

/**
 * Password hashing: argon2id with the library's defaults (19 MiB, 2 passes, 1 lane: the
 * OWASP minimum). No function here puts a password into an error or a log line.
 */

// The const enum cannot be read under isolatedModules; its value is fixed by the library.
const ARGON2ID = 2 as Algorithm.Argon2id;

export const hashPassword = (password: string): Promise<string> => hash(password, { algorithm: ARGON2ID });

/** False for a wrong password and for a hash that cannot be read. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** Made at load, so that not even the first unknown email answers faster than a wrong password. */
const dummy = hashPassword(randomBytes(32).toString("base64url"));

/**
 * Verifies against the hash of a random password, which never matches: an unknown email
 * costs the same time as a wrong password, so timing does not tell which emails exist.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  await verifyPassword(await dummy, password);
  return false;
}
