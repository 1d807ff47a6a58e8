import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  CampaignSchema,
  CampaignStatsSchema,
  CampaignStatus,
  CampaignTargetSchema,
  type DeliverySchema,
  Priority,
  type Campaign,
  type CampaignStats,
  type CampaignTarget,
} from "@herald/proto/campaign";
import { toTimestamp } from "@herald/runtime";
import { NotificationOptionsSchema, type NotificationOptions as NotificationMessage } from "@herald/proto/delivery";
import type { CampaignCounters, CampaignRecord, CampaignStatusName, NotificationOptions, Target } from "./campaign.js";
import type { Receipt, ReceiptColumns } from "./receipt-store.js";

const STATUS: Record<CampaignStatusName, CampaignStatus> = {
  scheduled: CampaignStatus.SCHEDULED,
  queued: CampaignStatus.QUEUED,
  sending: CampaignStatus.SENDING,
  completed: CampaignStatus.COMPLETED,
  cancelled: CampaignStatus.CANCELLED,
  failed: CampaignStatus.FAILED,
};

/** The stored name of a wire status; undefined for UNSPECIFIED or an unknown number. */
export const statusName = (status: CampaignStatus): CampaignStatusName | undefined =>
  (Object.keys(STATUS) as CampaignStatusName[]).find((name) => STATUS[name] === status);

export function toStats(counters: CampaignCounters): CampaignStats {
  return create(CampaignStatsSchema, {
    sent: BigInt(counters.sent),
    delivered: BigInt(counters.delivered),
    failed: BigInt(counters.failed),
    bounced: BigInt(counters.bounced),
    throttled: BigInt(counters.throttled),
    received: BigInt(counters.received),
    clicked: BigInt(counters.clicked),
  });
}

function toTargetMessage(target: Target): CampaignTarget {
  switch (target.kind) {
    case "all":
      return create(CampaignTargetSchema, { target: { case: "all", value: {} } });
    case "external_ids":
      return create(CampaignTargetSchema, {
        target: { case: "externalIds", value: { externalIds: target.externalIds } },
      });
    case "segment":
      return create(CampaignTargetSchema, { target: { case: "segment", value: { segmentId: target.segmentId } } });
    case "device_ids":
      return create(CampaignTargetSchema, { target: { case: "deviceIds", value: { deviceIds: target.deviceIds } } });
  }
}

export function toCampaign(c: CampaignRecord): Campaign {
  return create(CampaignSchema, {
    id: c.id,
    appId: c.appId,
    name: c.name,
    status: STATUS[c.status],
    audienceSize: BigInt(c.audienceSize),
    contents: c.contents,
    dataJson: c.dataJson,
    target: toTargetMessage(c.target),
    options: {
      ttlSeconds: c.options.ttlSeconds,
      priority: c.options.priority === "high" ? Priority.HIGH : Priority.NORMAL,
      collapseId: c.options.collapseId,
      imageUrl: c.options.imageUrl,
      notification: c.options.notification && toNotificationMessage(c.options.notification),
    },
    stats: toStats(c.stats),
    scheduledAt: c.scheduledAt ? toTimestamp(c.scheduledAt) : undefined,
    sentAt: c.sentAt ? toTimestamp(c.sentAt) : undefined,
    completedAt: c.completedAt ? toTimestamp(c.completedAt) : undefined,
    createdAt: toTimestamp(c.createdAt),
    updatedAt: toTimestamp(c.updatedAt),
    failureReason: c.failureReason,
  });
}

/** The stored presentation options as the campaign and delivery messages carry them. */
export function toNotificationMessage(n: NotificationOptions): NotificationMessage {
  return create(NotificationOptionsSchema, {
    sound: n.sound,
    badge: n.badge,
    badgeIncrement: n.badgeIncrement,
    threadId: n.threadId,
    contentAvailable: n.contentAvailable ?? false,
    mutableContent: n.mutableContent ?? false,
    webIconUrl: n.webIconUrl,
    webBadgeUrl: n.webBadgeUrl,
    webActions: n.webActions ?? [],
    androidChannelId: n.androidChannelId,
  });
}

/** A stored receipt as a herald.v1.Delivery. */
export function toDelivery(r: Receipt): MessageInitShape<typeof DeliverySchema> {
  return {
    campaignId: r.campaignId,
    deviceId: r.deviceId,
    platform: r.platform,
    outcome: r.outcome,
    reason: r.reason,
    attempts: r.attempts,
    at: toTimestamp(r.at),
  };
}

/** Columns of receipts as Delivery messages: the export's answer to a gateway of an earlier release. */
export function deliveriesOf(campaignId: string, c: ReceiptColumns): MessageInitShape<typeof DeliverySchema>[] {
  return c.deviceIds.map((deviceId, i) =>
    toDelivery({
      campaignId,
      deviceId,
      platform: c.platforms[i]!,
      outcome: c.outcomes[i]!,
      reason: c.reasons[i]!,
      attempts: c.attempts[i]!,
      at: new Date(c.recordedAtMs[i]!),
    }),
  );
}
