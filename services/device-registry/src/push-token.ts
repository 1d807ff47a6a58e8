import { createHash, createPublicKey } from "node:crypto";

export const DEVICE_PLATFORMS = ["ios", "android", "web"] as const;
export type DevicePlatform = (typeof DEVICE_PLATFORMS)[number];

export type TokenCheck =
  | { ok: true; token: string /** Web only: the endpoint to pass through the SSRF guard. */; endpoint?: string }
  | { ok: false; reason: string };

const IOS_TOKEN = /^[0-9a-fA-F]{64}$/;
const ANDROID_TOKEN = /^[A-Za-z0-9_:-]{1,4096}$/;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;
const MAX_WEB_TOKEN = 8192;
const MAX_ENDPOINT = 2048;

/**
 * Validates a push token of a platform and returns its canonical form, the one stored and
 * hashed for the (app_id, token) key: iOS lowercased, web re-serialised with only the
 * fields a sender needs, in a fixed order. Reasons never repeat the token.
 */
export function canonicalPushToken(platform: DevicePlatform, raw: string): TokenCheck {
  switch (platform) {
    case "ios":
      return IOS_TOKEN.test(raw)
        ? { ok: true, token: raw.toLowerCase() }
        : { ok: false, reason: "an ios token must be 64 hexadecimal characters" };
    case "android":
      return ANDROID_TOKEN.test(raw)
        ? { ok: true, token: raw }
        : { ok: false, reason: "an android token must be 1-4096 characters of A-Z a-z 0-9 _ : -" };
    case "web":
      return canonicalWebSubscription(raw);
  }
}

function canonicalWebSubscription(raw: string): TokenCheck {
  const fail = (reason: string): TokenCheck => ({ ok: false, reason });
  if (raw.length > MAX_WEB_TOKEN) return fail(`a web token must be at most ${MAX_WEB_TOKEN} characters`);
  let sub: unknown;
  try {
    sub = JSON.parse(raw);
  } catch {
    return fail("a web token must be the JSON text of PushSubscription.toJSON()");
  }
  if (!isObject(sub) || typeof sub.endpoint !== "string" || !isObject(sub.keys)) {
    return fail("a web token must have an endpoint and keys");
  }
  const { p256dh, auth } = sub.keys;
  if (sub.endpoint.length > MAX_ENDPOINT) return fail(`endpoint must be at most ${MAX_ENDPOINT} characters`);
  let endpoint: URL;
  try {
    endpoint = new URL(sub.endpoint);
  } catch {
    return fail("endpoint must be a URL");
  }
  if (endpoint.protocol !== "https:" && endpoint.protocol !== "http:") return fail("endpoint must be an https URL");
  const publicKey = decodeBase64Url(p256dh);
  if (!publicKey || !isP256Point(publicKey)) {
    return fail("keys.p256dh must be a base64url uncompressed P-256 public key (65 bytes)");
  }
  const secret = decodeBase64Url(auth);
  if (secret?.length !== 16) return fail("keys.auth must be 16 bytes, base64url-encoded");
  const token = JSON.stringify({
    endpoint: endpoint.href,
    keys: { p256dh: publicKey.toString("base64url"), auth: secret.toString("base64url") },
  });
  return { ok: true, token, endpoint: endpoint.href };
}

/** The unique key of a token within an app: tokens can be too long for a btree index. */
export function tokenHash(canonicalToken: string): Buffer {
  return createHash("sha256").update(canonicalToken, "utf8").digest();
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function decodeBase64Url(v: unknown): Buffer | undefined {
  return typeof v === "string" && BASE64URL.test(v) ? Buffer.from(v, "base64url") : undefined;
}

/** An uncompressed point (0x04 ‖ x ‖ y) that lies on the curve; the sender needs it for ECDH. */
function isP256Point(key: Buffer): boolean {
  if (key.length !== 65 || key[0] !== 0x04) return false;
  try {
    createPublicKey({
      key: {
        kty: "EC",
        crv: "P-256",
        x: key.subarray(1, 33).toString("base64url"),
        y: key.subarray(33).toString("base64url"),
      },
      format: "jwk",
    });
    return true;
  } catch {
    return false;
  }
}
