import type { CreateCampaignRequest } from "@herald/proto/campaign";
import { fromTimestamp } from "@herald/runtime";
import type { NewCampaign } from "./campaign.js";
import { requireDeliverable } from "./notification-checks.js";
import { requirePayloadsFit } from "./payload-fit.js";
import * as check from "./campaign-checks.js";
import type { IdempotencyKey } from "./campaign-store.js";

export interface CreateInput {
  campaign: NewCampaign;
  idempotency?: IdempotencyKey;
}

/** Every shape check of CreateCampaign (INVALID_ARGUMENT), in field order. */
export function parseCreateRequest(req: CreateCampaignRequest): CreateInput {
  const campaign: NewCampaign = {
    appId: check.appId(req.appId),
    name: check.name(req.name),
    contents: check.contents(req.contents),
    dataJson: check.dataJson(req.dataJson),
    target: check.target(req.target),
    options: check.options(req.options),
  };
  if (req.scheduledAt) campaign.scheduledAt = check.timestamp(fromTimestamp(req.scheduledAt), "scheduled_at");
  const key = check.idempotencyKey(req.idempotencyKey);
  return key === undefined ? { campaign } : { campaign, idempotency: { scope: req.idempotencyScope, key } };
}

/**
 * The semantic checks (FAILED_PRECONDITION) that need no other service; the segment's
 * existence is checked against the device registry afterwards.
 */
export function checkCreateSemantics(campaign: NewCampaign, now: Date): void {
  check.requireFallback(campaign.contents);
  check.scheduleWindow(campaign.scheduledAt, now);
  requireDeliverable(campaign.options.notification, campaign.options.imageUrl);
  requirePayloadsFit(campaign, now);
}

/** Scheduled when it starts later than now; anything else goes out at once. */
export const initialStatus = (campaign: NewCampaign, now: Date): "scheduled" | "queued" =>
  campaign.scheduledAt && campaign.scheduledAt.getTime() > now.getTime() ? "scheduled" : "queued";
