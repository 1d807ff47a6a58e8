import { createPublicKey, type KeyObject, createPrivateKey } from "node:crypto";
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

interface Cached {
  header: string;
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
  private readonly cache = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<string>>();

  constructor(
    private readonly now: () => number = () => Date.now(),
    private readonly maxEntries = 10_000,
  ) {}

  /** The `Authorization` header value for a message to endpoint. */
  async authorization(endpoint: string | URL, keys: VapidKeys): Promise<string> {
    const audience = (typeof endpoint === "string" ? new URL(endpoint) : endpoint).origin;
    const cacheKey = `${audience}|${keys.publicKey}|${keys.subject}`;
    const nowS = Math.floor(this.now() / 1000);
    const hit = this.cache.get(cacheKey);
    if (hit && hit.expiresAt - RENEW_BEFORE_S > nowS) return hit.header;
    // Concurrent sends to one origin share a single signature.
    const inflight = this.pending.get(cacheKey);
    if (inflight) return inflight;
    const signing = this.sign(audience, keys, nowS)
      .then((header) => {
        if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
        this.cache.set(cacheKey, { header, expiresAt: nowS + LIFETIME_S });
        return header;
      })
      .finally(() => this.pending.delete(cacheKey));
    this.pending.set(cacheKey, signing);
    return signing;
  }

  private async sign(audience: string, keys: VapidKeys, nowS: number): Promise<string> {
    const jwt = await new SignJWT({ aud: audience, exp: nowS + LIFETIME_S, sub: keys.subject })
      .setProtectedHeader({ typ: "JWT", alg: "ES256" })
      .sign(privateKeyObject(keys));
    return `vapid t=${jwt}, k=${keys.publicKey}`;
  }
}
