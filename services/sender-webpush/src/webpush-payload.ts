import type { DeliveryBatch, RenderedPayload } from "@herald/proto/delivery";

/** The largest payload JSON (in bytes) that encrypts into one 4096-byte record (ece-record.ts). */
export { MAX_PLAINTEXT as MAX_PAYLOAD_BYTES } from "./ece-record.js";

/** A button as the Notifications API's NotificationAction names its fields. */
export interface WebPushAction {
  action: string;
  title: string;
  icon?: string;
}

/**
 * The JSON the service worker receives. `image`, `icon`, `badge` (the monochrome badge
 * image) and `actions` use the names of the Notifications API's showNotification()
 * options, so the worker can pass them on as they are. Web Push has no badge count,
 * sound or silent push of its own: `badge_count` / `badge_increment` are for the worker
 * to apply with navigator.setAppBadge(), and `content_available` tells it the send was
 * meant to be silent (browsers still require a visible notification for every push).
 * `campaign_id` lets the worker report the notification received and clicked
 * (POST /v1/devices/{id}/notification-events), which feeds the campaign's counters.
 */
export interface WebPushPayload {
  campaign_id: string;
  title: string;
  body: string;
  data: unknown;
  image?: string;
  icon?: string;
  badge?: string;
  actions?: WebPushAction[];
  badge_count?: number;
  badge_increment?: number;
  content_available?: true;
}

export function webPushPayload(batch: DeliveryBatch, payload: RenderedPayload): WebPushPayload {
  const out: WebPushPayload = {
    campaign_id: batch.campaignId,
    title: payload.title,
    body: payload.body,
    data: batch.dataJson ? JSON.parse(batch.dataJson) : {},
  };
  if (batch.imageUrl) out.image = batch.imageUrl;
  const n = batch.notification;
  if (!n) return out;
  if (n.webIconUrl) out.icon = n.webIconUrl;
  if (n.webBadgeUrl) out.badge = n.webBadgeUrl;
  if (n.webActions.length > 0) {
    out.actions = n.webActions.map((a) => ({
      action: a.action,
      title: a.title,
      ...(a.iconUrl ? { icon: a.iconUrl } : {}),
    }));
  }
  if (n.badge !== undefined) out.badge_count = n.badge;
  if (n.badgeIncrement !== undefined) out.badge_increment = n.badgeIncrement;
  if (n.contentAvailable) out.content_available = true;
  return out;
}
