import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { DeliveryBatch, RenderedPayload } from "@herald/proto/delivery";

/** FCM refuses messages whose payload (everything but the target) is larger than this. */
export const MAX_PAYLOAD_BYTES = 4096;
/** FCM keeps an undelivered message at most four weeks; a longer ttl is a 400. */
export const MAX_TTL_SECONDS = 28 * 24 * 3600;

/** The HTTP v1 `message` object, as much of it as Herald sends (snake_case, as FCM documents it). */
export interface FcmMessage {
  token: string;
  notification?: { title?: string; body?: string; image?: string };
  data?: Record<string, string>;
  android: {
    priority: "high" | "normal";
    ttl?: string;
    collapse_key?: string;
    notification?: { sound?: string; channel_id?: string; notification_count?: number };
  };
}

/**
 * FCM has no badge increment: the amount goes into `data` under this key for the app's
 * client library to add to the count it keeps (docs/sdk-protocol.md).
 */
export const BADGE_INCREMENT_KEY = "herald_badge_increment";

/**
 * The campaign's id goes into every message's `data` under this key, so that the app's
 * library can report the notification received and opened
 * (POST /v1/devices/{id}/notification-events, docs/sdk-protocol.md §7). It is written
 * after the send's data keys: a data key of the same name cannot replace it.
 */
export const CAMPAIGN_ID_KEY = "herald_campaign_id";

export type DataResult = { ok: true; data: Record<string, string> } | { ok: false; reason: string };

/**
 * FCM's reserved data keys: "from", "notification", "message_type" and, per Google's
 * reference, any key starting with "google" or "gcm" (docs/providers.md §FCM message
 * names the dotted forms; the wider rule also covers them).
 */
export function isReservedDataKey(key: string): boolean {
  const lower = key.toLowerCase();
  return (
    lower === "from" ||
    lower === "notification" ||
    lower === "message_type" ||
    lower.startsWith("google") ||
    lower.startsWith("gcm")
  );
}

/**
 * The send's custom data as FCM wants it: every value a string. Strings pass through,
 * anything else (numbers, booleans, null, objects) is sent as its JSON text, which the
 * app parses back. A reserved key fails the whole send: FCM would refuse every message.
 */
export function fcmData(dataJson: string): DataResult {
  if (!dataJson) return { ok: true, data: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(dataJson);
  } catch {
    return { ok: false, reason: "InvalidData: not JSON" };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { ok: false, reason: "InvalidData: not a JSON object" };
  }
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (isReservedDataKey(key)) return { ok: false, reason: `ReservedDataKey: ${key.slice(0, 64)}` };
    data[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return { ok: true, data };
}

/**
 * Seconds left of the send's ttl at `nowMs`, so a message retried late is not kept by
 * FCM longer than the campaign asked; undefined when the send set no ttl (FCM's
 * default of four weeks applies).
 */
export function remainingTtlSeconds(batch: DeliveryBatch, nowMs: number): number | undefined {
  if (batch.ttlSeconds <= 0) return undefined;
  const createdMs = batch.createdAt ? timestampMs(batch.createdAt) : nowMs;
  const left = Math.ceil((createdMs + batch.ttlSeconds * 1000 - nowMs) / 1000);
  return Math.min(MAX_TTL_SECONDS, Math.max(0, Math.min(left, batch.ttlSeconds)));
}

/**
 * Maps one device's message: a notification message (title, body, image) plus data
 * (the send's, and the campaign's id), with the Android delivery options (sound,
 * channel, badge count in `android.notification`). A silent send (content_available) is
 * a data-only message without its text. Empty fields are left out, not sent empty.
 */
export function fcmMessage(
  token: string,
  batch: DeliveryBatch,
  payload: RenderedPayload,
  data: Record<string, string>,
  ttlSeconds: number | undefined,
): FcmMessage {
  const options = batch.notification;
  const silent = options?.contentAvailable === true;
  const notification: NonNullable<FcmMessage["notification"]> = {};
  if (!silent) {
    if (payload.title) notification.title = payload.title;
    if (payload.body) notification.body = payload.body;
    if (batch.imageUrl) notification.image = batch.imageUrl;
  }
  const message: FcmMessage = {
    token,
    android: { priority: batch.highPriority ? "high" : "normal" },
  };
  if (Object.keys(notification).length > 0) message.notification = notification;
  message.data = {
    ...data,
    ...(options?.badgeIncrement === undefined ? {} : { [BADGE_INCREMENT_KEY]: String(options.badgeIncrement) }),
    [CAMPAIGN_ID_KEY]: batch.campaignId,
  };
  const android: NonNullable<FcmMessage["android"]["notification"]> = {};
  if (options?.sound) android.sound = options.sound;
  if (options?.androidChannelId) android.channel_id = options.androidChannelId;
  if (options?.badge !== undefined) android.notification_count = options.badge;
  if (Object.keys(android).length > 0) message.android.notification = android;
  if (ttlSeconds !== undefined) message.android.ttl = `${ttlSeconds}s`;
  if (batch.collapseId) message.android.collapse_key = batch.collapseId;
  return message;
}

/** The size FCM's 4096-byte limit applies to: the message as JSON without its target. */
export function payloadBytes(message: FcmMessage): number {
  const { token: _target, ...payload } = message;
  return Buffer.byteLength(JSON.stringify(payload));
}

/** The request body of `messages:send`. */
export const sendBody = (message: FcmMessage): string => JSON.stringify({ message });
