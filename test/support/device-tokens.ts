import { createECDH, randomBytes, randomUUID } from "node:crypto";

/** Realistic push tokens per platform, for tests. */
export const apnsToken = (): string => randomBytes(32).toString("hex");

export const fcmToken = (): string =>
  `${randomBytes(8).toString("base64url")}:APA91b${randomBytes(110).toString("base64url")}`.slice(0, 163);

/** A browser-style PushSubscription.toJSON() for an endpoint under baseUrl. */
export function webSubscription(baseUrl = "https://127.0.0.1:4443/wp"): {
  json: string;
  privateKey: Buffer;
  auth: Buffer;
} {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const auth = randomBytes(16);
  const json = JSON.stringify({
    endpoint: `${baseUrl}/${randomUUID()}`,
    expirationTime: null,
    keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: auth.toString("base64url") },
  });
  return { json, privateKey: ecdh.getPrivateKey(), auth };
}
