import { type OutboxEvent, webhookOutboxEvent } from "@herald/runtime";
import type { CampaignRow } from "./campaign-store.js";

/**
 * The campaign service's webhook events, written to its outbox in the transaction of the
 * change they announce (docs/design.md, "Webhooks", lists the shapes). Ids are
 * deterministic: announcing the same thing twice (a redelivered batch, a fan-out resumed
 * by another replica) is dropped by JetStream's de-duplication and the dispatcher's
 * event table.
 */

/** The columns campaign.completed reports (completed_at set: the campaign has just completed). */
export type CompletedCampaignRow = Pick<
  CampaignRow,
  "id" | "app_id" | "audience_size" | "sent" | "delivered" | "failed" | "bounced" | "throttled"
> & { completed_at: Date };

/** In the trace of the request that created the campaign: the fan-out's claim writes it before its span. */
export function startedEvent(campaign: {
  id: string;
  app_id: string;
  sent_at: Date;
  trace_context?: string | null;
}): OutboxEvent {
  return webhookOutboxEvent({
    id: `campaign.started.${campaign.id}`,
    type: "campaign.started",
    appId: campaign.app_id,
    timestamp: campaign.sent_at,
    data: { campaign_id: campaign.id, app_id: campaign.app_id, started_at: campaign.sent_at.toISOString() },
    traceContext: campaign.trace_context,
  });
}

export function completedEvent(row: CompletedCampaignRow): OutboxEvent {
  return webhookOutboxEvent({
    id: `campaign.completed.${row.id}`,
    type: "campaign.completed",
    appId: row.app_id,
    timestamp: row.completed_at,
    data: {
      campaign_id: row.id,
      app_id: row.app_id,
      completed_at: row.completed_at.toISOString(),
      audience_size: Number(row.audience_size),
      stats: {
        sent: Number(row.sent),
        delivered: Number(row.delivered),
        failed: Number(row.failed),
        bounced: Number(row.bounced),
        throttled: Number(row.throttled),
      },
    },
  });
}

export function cancelledEvent(campaign: { id: string; app_id: string; updated_at: Date }): OutboxEvent {
  return webhookOutboxEvent({
    id: `campaign.cancelled.${campaign.id}`,
    type: "campaign.cancelled",
    appId: campaign.app_id,
    timestamp: campaign.updated_at,
    data: { campaign_id: campaign.id, app_id: campaign.app_id, cancelled_at: campaign.updated_at.toISOString() },
  });
}

/** Up to MAX_DELIVERIES_PER_EVENT results of one outcome batch; `part` names the batch and slice. */
export function deliveriesEvent(
  type: "deliveries.failed" | "deliveries.bounced",
  campaignId: string,
  appId: string,
  part: string,
  deliveries: { device_id: string; platform: string; reason: string; attempts: number }[],
): OutboxEvent {
  return webhookOutboxEvent({
    id: `${type}.${campaignId}.${part}`,
    type,
    appId,
    timestamp: new Date(),
    data: { campaign_id: campaignId, app_id: appId, deliveries },
  });
}
