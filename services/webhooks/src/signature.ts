import { createHmac, randomBytes } from "node:crypto";

const PREFIX = "whsec_";

/** A new signing secret: whsec_ + base64 of 24 random bytes. */
export const newSecret = (): string => `${PREFIX}${randomBytes(24).toString("base64")}`;

/**
 * Standard Webhooks' signature of one message: `v1,` + base64 HMAC-SHA256 of
 * "{id}.{timestamp}.{body}", keyed with the base64-decoded part of the whsec_ secret.
 */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** The webhook-* headers of a delivery; several secrets (rotation overlap) sign side by side. */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((s) => sign(s, id, timestamp, body)).join(" "),
  };
}
