import { errors, importJWK, jwtVerify, type CryptoKey } from "jose";
import { ok, refuse, type Checked } from "../refusal.js";

/** RFC 8292 §3: `Authorization: vapid t=<JWT>, k=<base64url uncompressed P-256 point>`. */
export interface VapidCredentials {
  token: string;
  /** The decoded `k`: 65 bytes, 0x04 ‖ x ‖ y. */
  publicKey: Buffer;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** auth-param = token BWS "=" BWS ( token / quoted-string ), RFC 7235 §2.1. */
const AUTH_PARAM = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*=[ \t]*(?:"((?:[^"\\]|\\.)*)"|([!#$%&'*+.^_`|~0-9A-Za-z-]+))$/;
/** RFC 8292 §2: the JWT's `exp` may be at most 24 hours ahead. */
export const MAX_EXP_AHEAD_S = 24 * 60 * 60;

/** Missing or unparsable credentials are 401; credentials that fail verification are 403. */
export function parseVapidAuthorization(header: string | string[] | undefined): Checked<VapidCredentials> {
  if (header === undefined) return refuse(401, "MissingAuthorization");
  if (typeof header !== "string") return refuse(401, "MalformedAuthorization");
  const scheme = /^vapid[ \t]+(.*)$/is.exec(header.trim());
  if (!scheme) return refuse(401, "UnsupportedAuthorizationScheme");
  const params = new Map<string, string>();
  for (const part of scheme[1]!.split(",")) {
    const m = AUTH_PARAM.exec(part.trim());
    if (!m) return refuse(401, "MalformedAuthorization");
    const name = m[1]!.toLowerCase();
    if (params.has(name)) return refuse(401, "MalformedAuthorization");
    params.set(name, m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3]!);
  }
  const token = params.get("t");
  const k = params.get("k");
  if (token === undefined || k === undefined) return refuse(401, "MalformedAuthorization");
  if (!COMPACT_JWS.test(token)) return refuse(401, "MalformedAuthorization");
  if (!BASE64URL.test(k)) return refuse(401, "MalformedAuthorization");
  const publicKey = Buffer.from(k, "base64url");
  if (publicKey.length !== 65 || publicKey[0] !== 0x04) return refuse(401, "MalformedAuthorization");
  return ok({ token, publicKey });
}

/** An application server key (65-byte uncompressed P-256 point) as a verification key; throws if off the curve. */
export async function importApplicationServerKey(point: Buffer): Promise<CryptoKey> {
  if (point.length !== 65 || point[0] !== 0x04) throw new Error("not an uncompressed P-256 point");
  const jwk = {
    kty: "EC",
    crv: "P-256",
    x: point.subarray(1, 33).toString("base64url"),
    y: point.subarray(33, 65).toString("base64url"),
  };
  return (await importJWK(jwk, "ES256")) as CryptoKey;
}

/**
 * Verifies the VAPID JWT: ES256 signature by the subscription's application server
 * key, `aud` exactly the endpoint's origin, `exp` present, in the future and at most
 * 24 h ahead, `sub` a mailto: or https: URI. Every failure is 403.
 */
export async function verifyVapidToken(
  token: string,
  key: CryptoKey,
  audience: string,
  nowS = Math.floor(Date.now() / 1000),
): Promise<Checked<null>> {
  let claims: Record<string, unknown>;
  try {
    const result = await jwtVerify(token, key, { algorithms: ["ES256"], currentDate: new Date(nowS * 1000) });
    claims = result.payload as Record<string, unknown>;
  } catch (err) {
    if (err instanceof errors.JWTExpired) return refuse(403, "ExpiredJWT");
    if (err instanceof errors.JWSSignatureVerificationFailed) return refuse(403, "InvalidSignature");
    return refuse(403, "InvalidJWT");
  }
  if (claims.aud !== audience) return refuse(403, "InvalidAudience");
  if (typeof claims.exp !== "number") return refuse(403, "MissingExpiration");
  if (claims.exp - nowS > MAX_EXP_AHEAD_S) return refuse(403, "ExpirationTooFar");
  if (!validSubject(claims.sub)) return refuse(403, "InvalidSubject");
  return ok(null);
}

function validSubject(sub: unknown): boolean {
  if (typeof sub !== "string") return false;
  if (/^mailto:[^@\s]+@[^@\s]+$/i.test(sub)) return true;
  try {
    const u = new URL(sub);
    return u.protocol === "https:" && u.hostname.length > 0;
  } catch {
    return false;
  }
}
