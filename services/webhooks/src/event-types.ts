/** The event types an endpoint may subscribe to (the REST schema lists the same). */
export const WEBHOOK_EVENT_TYPES = [
  "campaign.started",
  "campaign.completed",
  "campaign.cancelled",
  "device.invalidated",
  "device.opted_out",
  "device.opted_in",
  "deliveries.failed",
  "deliveries.bounced",
  "user.erased",
  "webhook.test",
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (t: string): t is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t);

/** Event ids: the JetStream dedup id and the webhook-id header. */
export const EVENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
