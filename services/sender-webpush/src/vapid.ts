import { createPublicKey, type KeyObject, createPrivateKey } from "node:crypto";
import { BoundedCache } from "@herald/runtime";
import { SignJWT } from "jose";

/**
 * VAPID (RFC 8292) authorization: one JWT per (push-service origin, application server
 * key), reused until shortly before it expires, instead of a signature per message.
 */
export interface VapidKeys {
  /** base64url uncompressed P-256 point (65 bytes). */
  publicKey: string;
  /** base64url 32-byte private scalar. */
  privateKey: string;
  /** mailto: or https: contact. */
  subject: string;
}

const LIFETIME_S = 12 * 3600;
const RENEW_BEFORE_S = 3600;

interface Signed {
  header: string;
  /** The JWT's exp, in seconds. */
  expiresAt: number;
}

export function privateKeyObject(keys: VapidKeys): KeyObject {
  const point = Buffer.from(keys.publicKey, "base64url");
  return createPrivateKey({
    key: {
      kty: "EC",
      crv: "P-256",
      x: point.subarray(1, 33).toString("base64url"),
      y: point.subarray(33, 65).toString("base64url"),
      d: keys.privateKey,
    },
    format: "jwk",
  });
}

export function publicKeyObject(publicKey: string): KeyObject {
  const point = Buffer.from(publicKey, "base64url");
  return createPublicKey({
    key: {
      kty: "EC",
      crv: "P-256",
      x: point.subarray(1, 33).toString("base64url"),
      y: point.subarray(33, 65).toString("base64url"),
    },
    format: "jwk",
  });
}

export class VapidSigner {
  private readonly signed: BoundedCache<Signed>;

  constructor(
    private readonly now: () => number = () => Date.now(),
    maxEntries = 10_000,
  ) {
    // Reused until RENEW_BEFORE_S before the JWT expires.
    this.signed = new BoundedCache<Signed>({
      maxEntries,
      ttlMs: (s) => (s.expiresAt - RENEW_BEFORE_S) * 1000 - now(),
      now,
    });
  }

  /** The `Authorization` header value for a message to endpoint. */
  async authorization(endpoint: string | URL, keys: VapidKeys): Promise<string> {
    const audience = (typeof endpoint === "string" ? new URL(endpoint) : endpoint).origin;
    const cacheKey = `${audience}|${keys.publicKey}|${keys.subject}`;
    // Concurrent sends to one origin share a single signature.
    return (await this.signed.get(cacheKey, () => this.sign(audience, keys))).header;
  }

  private async sign(audience: string, keys: VapidKeys): Promise<Signed> {
    const expiresAt = Math.floor(this.now() / 1000) + LIFETIME_S;
    const jwt = await new SignJWT({ aud: audience, exp: expiresAt, sub: keys.subject })
      .setProtectedHeader({ typ: "JWT", alg: "ES256" })
      .sign(privateKeyObject(keys));
    return { header: `vapid t=${jwt}, k=${keys.publicKey}`, expiresAt };
  }
}
