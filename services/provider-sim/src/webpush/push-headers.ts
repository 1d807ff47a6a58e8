import { ok, refuse, type Checked } from "../refusal.js";

/** RFC 8030 §5.2–5.4 request headers of a push message. */
export interface PushHeaders {
  ttl: number;
  urgency: string | null;
  topic: string | null;
}

type HeaderValue = string | string[] | undefined;

export const URGENCIES = ["very-low", "low", "normal", "high"] as const;
const TOPIC = /^[A-Za-z0-9_-]{1,32}$/;
const DIGITS = /^[0-9]+$/;

/**
 * Validates TTL (required, a non-negative integer of delta-seconds), Urgency (one of
 * the four RFC values, lowercase) and Topic (1..32 base64url characters). A header
 * sent twice is refused: Node joins repeated HTTP/1.1 headers with ", " and HTTP/2
 * gives an array, and neither is a valid single value.
 */
export function checkPushHeaders(headers: {
  ttl?: HeaderValue;
  urgency?: HeaderValue;
  topic?: HeaderValue;
}): Checked<PushHeaders> {
  const ttl = headers.ttl;
  if (ttl === undefined) return refuse(400, "MissingTTL");
  if (typeof ttl !== "string" || !DIGITS.test(ttl) || !Number.isSafeInteger(Number(ttl))) {
    return refuse(400, "InvalidTTL");
  }
  const urgency = headers.urgency;
  if (urgency !== undefined && (typeof urgency !== "string" || !(URGENCIES as readonly string[]).includes(urgency))) {
    return refuse(400, "InvalidUrgency");
  }
  const topic = headers.topic;
  if (topic !== undefined && (typeof topic !== "string" || !TOPIC.test(topic))) return refuse(400, "InvalidTopic");
  return ok({ ttl: Number(ttl), urgency: urgency ?? null, topic: topic ?? null });
}

/**
 * RFC 8291 messages use `aes128gcm`; the older `aesgcm` draft and anything else are
 * refused. A message without a body (RFC 8030 allows it) needs no content coding.
 */
export function checkContentEncoding(value: HeaderValue, bodyLength: number): Checked<null> {
  if (value === undefined && bodyLength === 0) return ok(null);
  if (typeof value !== "string" || value.trim().toLowerCase() !== "aes128gcm") {
    return refuse(415, "UnsupportedContentEncoding");
  }
  return ok(null);
}
