import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * CSRF tokens bound to what a form acts on (an interaction's uid, an invitation page's
 * cookie nonce): an HMAC under the cookie keys, so no server-side state is needed and any
 * replica can check it. The first key signs; every key verifies, so a form rendered just
 * before a key rotation still posts.
 */
export function csrfToken(keys: Buffer[], purpose: string, binding: string): string {
  const key = keys[0];
  if (!key) throw new Error("no key to sign CSRF tokens with");
  return mac(key, purpose, binding);
}

export function checkCsrf(keys: Buffer[], purpose: string, binding: string, token: unknown): boolean {
  if (typeof token !== "string" || token.length === 0 || token.length > 128) return false;
  const given = Buffer.from(token);
  return keys.some((key) => {
    const expected = Buffer.from(mac(key, purpose, binding));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}

function mac(key: Buffer, purpose: string, binding: string): string {
  return createHmac("sha256", key).update(`csrf\0${purpose}\0${binding}`).digest("base64url");
}
