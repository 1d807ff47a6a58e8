import { createHash, timingSafeEqual } from "node:crypto";
import { Platform } from "@herald/proto/common";
import type { Device } from "@herald/proto/device";

/**
 * Whether a presented push token is the device's own: what a client key must show before
 * it may read or change a device (client-key-policy.ts). The registry stores tokens in a
 * canonical form (services/device-registry/src/push-token.ts), so the presented text is
 * brought to that form first, then both are hashed and compared in constant time.
 */
export function possessesDevice(device: Pick<Device, "platform" | "pushToken">, presented: string): boolean {
  const canonical = canonicalToken(device.platform, presented);
  if (canonical === undefined || device.pushToken === "") return false;
  return timingSafeEqual(sha256(canonical), sha256(device.pushToken));
}

const sha256 = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/** The registry's canonical form of a token of that platform; undefined when it cannot be one. */
function canonicalToken(platform: Platform, presented: string): string | undefined {
  switch (platform) {
    case Platform.IOS:
      return presented.toLowerCase();
    case Platform.WEB:
      return canonicalWebSubscription(presented);
    default:
      return presented;
  }
}

/** PushSubscription.toJSON() text re-serialised as the registry stores it: endpoint and keys only, in that order. */
function canonicalWebSubscription(text: string): string | undefined {
  let sub: unknown;
  try {
    sub = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(sub) || typeof sub.endpoint !== "string" || !isObject(sub.keys)) return undefined;
  const { p256dh, auth } = sub.keys;
  if (typeof p256dh !== "string" || typeof auth !== "string" || !URL.canParse(sub.endpoint)) return undefined;
  return JSON.stringify({
    endpoint: new URL(sub.endpoint).href,
    keys: {
      p256dh: Buffer.from(p256dh, "base64url").toString("base64url"),
      auth: Buffer.from(auth, "base64url").toString("base64url"),
    },
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
