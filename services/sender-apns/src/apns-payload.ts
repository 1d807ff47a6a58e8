import { createHash } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { DeliveryBatch, RenderedPayload } from "@herald/proto/delivery";

/** APNs refuses bodies above this (5120 for VoIP, which Herald does not send). */
export const MAX_PAYLOAD_BYTES = 4096;
/** apns-collapse-id is at most 64 bytes. */
const MAX_COLLAPSE_ID_BYTES = 64;

/**
 * Where the send's image URL goes in the body: a top-level key beside `aps`, for the
 * app's Notification Service Extension to download (`mutable-content` wakes it).
 */
export const IMAGE_URL_KEY = "image_url";

/**
 * APNs has no badge increment: the amount goes beside `aps` under this key, with
 * `mutable-content`, for the app's Notification Service Extension to add to the count it
 * keeps (docs/sdk-protocol.md).
 */
export const BADGE_INCREMENT_KEY = "herald_badge_increment";

/**
 * The campaign's id goes beside `aps` under this key, in every push, so that the app's
 * library can report the notification received and opened
 * (POST /v1/devices/{id}/notification-events, docs/sdk-protocol.md §7). It is written
 * after the send's data keys: a data key of the same name cannot replace it.
 */
export const CAMPAIGN_ID_KEY = "herald_campaign_id";

/** Presentation options a send may carry besides title and body. */
export interface AlertOptions {
  sound?: string;
  badge?: number;
  threadId?: string;
}

/**
 * What the sender applies to every alert (and the campaign service's size check with it):
 * a send without a sound plays the default one, as users of other services expect.
 */
export const DEFAULT_ALERT_OPTIONS: AlertOptions = { sound: "default" };

export interface ApnsNotification {
  /** apns-* request headers (without authorization). */
  headers: Record<string, string>;
  body: Buffer;
}

/** A send that cannot become an APNs request fails with `reason` (PayloadTooLarge, EmptyNotification, InvalidData). */
export type BuildResult = { ok: true; notification: ApnsNotification } | { ok: false; reason: string };

/**
 * The APNs request for one rendered payload of a batch: `aps.alert {title, body}` with
 * the send's sound, badge, thread-id and mutable-content (or a background push with only
 * `content-available` when the send is silent or has data but no text), the send's data
 * keys and the campaign's id beside `aps`, and the apns-* headers. Pure: the same input
 * always gives the same bytes, so a batch builds it once per language.
 */
export function buildNotification(
  batch: DeliveryBatch,
  payload: RenderedPayload,
  data: Record<string, unknown>,
  topic: string,
  options: AlertOptions = {},
): BuildResult {
  const n = batch.notification;
  const silent = n?.contentAvailable === true;
  const hasText = payload.title !== "" || payload.body !== "";
  const hasData = Object.keys(data).length > 0;
  if (!hasText && !hasData && !silent) return { ok: false, reason: "EmptyNotification" };
  // A silent send wakes the app without its text: Apple allows nothing else in `aps`.
  const background = silent || !hasText;
  const extra: Record<string, unknown> = { [CAMPAIGN_ID_KEY]: batch.campaignId };

  const aps: Record<string, unknown> = {};
  if (background) {
    aps["content-available"] = 1;
  } else {
    const alert: Record<string, string> = {};
    if (payload.title) alert.title = payload.title;
    if (payload.body) alert.body = payload.body;
    aps.alert = alert;
    const sound = n?.sound ?? options.sound;
    if (sound) aps.sound = sound;
    const badge = n?.badge ?? options.badge;
    if (badge !== undefined) aps.badge = badge;
    const threadId = n?.threadId ?? options.threadId;
    if (threadId) aps["thread-id"] = threadId;
    if (n?.badgeIncrement !== undefined) extra[BADGE_INCREMENT_KEY] = n.badgeIncrement;
    // The extension that fetches the image or adds to the badge only runs for visible notifications.
    if (batch.imageUrl || n?.mutableContent || n?.badgeIncrement !== undefined) aps["mutable-content"] = 1;
  }
  // `aps` is refused as a data key when the send is created; it is skipped here too.
  const { aps: _ignored, ...custom } = data;
  const body = Buffer.from(
    JSON.stringify({ ...custom, ...(batch.imageUrl ? { [IMAGE_URL_KEY]: batch.imageUrl } : {}), ...extra, aps }),
  );
  if (body.length > MAX_PAYLOAD_BYTES) return { ok: false, reason: "PayloadTooLarge" };

  const headers: Record<string, string> = {
    "apns-topic": topic,
    "apns-push-type": background ? "background" : "alert",
    // Apple requires 5 for background pushes. Alerts go at 10 whatever the send's
    // priority: APNs may hold priority-5 alerts back, which no "normal" send expects.
    "apns-priority": background ? "5" : "10",
  };
  const expiration = expirationOf(batch);
  if (expiration !== undefined) headers["apns-expiration"] = String(expiration);
  if (batch.collapseId) headers["apns-collapse-id"] = collapseIdFor(batch.collapseId);
  return { ok: true, notification: { headers, body } };
}

/** Unix seconds after which APNs drops the message: created_at + ttl, when the send has a ttl. */
export function expirationOf(batch: DeliveryBatch): number | undefined {
  if (batch.ttlSeconds <= 0 || !batch.createdAt) return undefined;
  return Math.floor(timestampDate(batch.createdAt).getTime() / 1000) + batch.ttlSeconds;
}

/** A collapse id longer than 64 bytes (multi-byte characters) is hashed to 64 hex characters. */
export function collapseIdFor(collapseId: string): string {
  if (Buffer.byteLength(collapseId) <= MAX_COLLAPSE_ID_BYTES) return collapseId;
  return createHash("sha256").update(collapseId).digest("hex");
}

/** The send's data as an object; anything but a JSON object counts as no data. */
export function parseData(dataJson: string): Record<string, unknown> {
  if (!dataJson) return {};
  const parsed: unknown = JSON.parse(dataJson);
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : {};
}

/** Device tokens are hex (32 bytes today; Apple says not to rely on the length). */
export const isDeviceToken = (token: string): boolean => /^[0-9a-fA-F]{16,200}$/.test(token) && token.length % 2 === 0;
