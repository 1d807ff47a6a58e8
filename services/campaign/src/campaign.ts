/** The campaign as the service works with it, independent of the wire and the database. */

export type CampaignStatusName = "scheduled" | "queued" | "sending" | "completed" | "cancelled" | "failed";

export type PlatformName = "ios" | "android" | "web";

/** Fan-out walks the platforms in this order; the sequence counter spans all of them. */
export const PLATFORM_ORDER: readonly PlatformName[] = ["ios", "android", "web"];

export type Target =
  | { kind: "all" }
  | { kind: "external_ids"; externalIds: string[] }
  | { kind: "segment"; segmentId: string }
  | { kind: "device_ids"; deviceIds: string[] };

export interface ContentText {
  title: string;
  body: string;
}

/** Language code → text; always holds the fallback "en". */
export type Contents = Record<string, ContentText>;

/** A Web Push notification button. */
export interface WebAction {
  action: string;
  title: string;
  iconUrl?: string;
}

/**
 * How the notification is presented (docs/providers.md, "Delivery options"); each
 * sender maps what its provider supports. Stored as this JSON in campaigns.notification.
 */
export interface NotificationOptions {
  sound?: string;
  badge?: number;
  badgeIncrement?: number;
  threadId?: string;
  contentAvailable?: boolean;
  mutableContent?: boolean;
  webIconUrl?: string;
  webBadgeUrl?: string;
  webActions?: WebAction[];
  androidChannelId?: string;
}

export interface DeliveryOptions {
  ttlSeconds: number;
  priority: "normal" | "high";
  collapseId?: string;
  imageUrl?: string;
  /** Absent when the send sets none of the options. */
  notification?: NotificationOptions;
}

export interface NewCampaign {
  appId: string;
  name: string;
  contents: Contents;
  /** Compact JSON object text; "" when the send has no data. */
  dataJson: string;
  target: Target;
  options: DeliveryOptions;
  scheduledAt?: Date;
}

export interface CampaignCounters {
  sent: number;
  delivered: number;
  failed: number;
  bounced: number;
  throttled: number;
  /** Devices that reported the notification received / clicked (RecordEngagement). */
  received: number;
  clicked: number;
}

export interface CampaignRecord extends NewCampaign {
  id: string;
  status: CampaignStatusName;
  audienceSize: number;
  stats: CampaignCounters;
  failureReason?: string;
  sentAt?: Date;
  completedAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

export const FALLBACK_LANGUAGE = "en";
