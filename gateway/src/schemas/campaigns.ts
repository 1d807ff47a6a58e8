import { deliveryOptions } from "./push.js";
import {
  appQuery,
  errorResponses,
  idParams,
  listOf,
  ok,
  pageQuerystring,
  timestamp,
  uuid,
  component,
  counter,
  nullable,
} from "./common.js";

/** Nullable timestamp: the moment has not come (yet), or never will. */
const maybeTimestamp = (description: string) => nullable(timestamp(description));

export const campaignStatsSchema = component(
  "CampaignStats",
  {
    description:
      "Delivery counters, each device counted once. `sent` counts devices whose final outcome has been recorded; " +
      "each of them is in exactly one of `delivered`, `failed`, `bounced` or `throttled`. When a campaign completes, " +
      "`sent` equals `audience_size` and " +
      "the four outcomes add up to `sent`. `received` and `clicked` count devices whose client library reported " +
      "the notification shown or clicked (`POST /v1/devices/{id}/notification-events`): devices without a library " +
      "(or offline ones) report nothing, so they are lower bounds.",
  },
  {
    campaign_id: uuid("The campaign."),
    sent: counter(
      "Devices whose final outcome (delivered, failed, bounced or throttled) has been recorded, including those " +
        "that failed before reaching a provider (expired ttl, unusable credentials, oversized payload).",
    ),
    delivered: counter("Accepted by the provider (APNs, FCM or the browser's push service)."),
    failed: counter(
      "Rejected or undeliverable for another reason (bad credentials, payload refused, retries exhausted).",
    ),
    bounced: counter("The provider declared the token dead; the device is marked invalid and no longer targeted."),
    throttled: counter("Still rate-limited by the provider after retries."),
    received: counter("Devices that reported the notification received and shown (once per device)."),
    clicked: counter("Devices that reported a click on the notification (once per device; also counted as received)."),
  },
);

export const campaignContentSchema = component(
  "CampaignContent",
  { description: "One language's text; null where the send gave none." },
  {
    title: { type: ["string", "null"], examples: ["Sale starts now"] },
    body: { type: ["string", "null"], examples: ["50% off everything until midnight."] },
  },
);

const target = {
  description: "Who the campaign targets, by the send endpoint that created it.",
  oneOf: [
    {
      type: "object",
      title: "All devices",
      required: ["type"],
      additionalProperties: false,
      properties: { type: { type: "string", const: "all", description: "POST /v1/push/send." } },
    },
    {
      type: "object",
      title: "Users",
      required: ["type", "external_ids_count"],
      additionalProperties: false,
      properties: {
        type: { type: "string", const: "users", description: "POST /v1/push/send-to-users." },
        external_ids_count: {
          type: "integer",
          minimum: 0,
          description:
            "Distinct external ids targeted, less those erased since (DELETE /v1/apps/{app_id}/users/{external_id}); " +
            "0 when every one was.",
        },
      },
    },
    {
      type: "object",
      title: "Segment",
      required: ["type", "segment_id"],
      additionalProperties: false,
      properties: {
        type: { type: "string", const: "segment", description: "POST /v1/push/send-to-segment." },
        segment_id: uuid("The segment."),
      },
    },
    {
      type: "object",
      title: "Devices",
      required: ["type", "device_ids"],
      additionalProperties: false,
      properties: {
        type: { type: "string", const: "devices", description: "POST /v1/push/send-to-devices." },
        device_ids: {
          type: "array",
          minItems: 1,
          maxItems: 100,
          items: { type: "string", format: "uuid" },
          description: "The distinct device ids targeted, lowercase.",
        },
      },
    },
  ],
} as const;

export const campaignSchema = component(
  "Campaign",
  { description: "One send: its content, target, delivery options, lifecycle and counters." },
  {
    id: uuid("Campaign id, used in /v1/campaigns/{id}."),
    app_id: uuid("The app whose devices it targets."),
    name: { type: "string", description: "The label given at send time." },
    status: {
      type: "string",
      enum: ["scheduled", "queued", "sending", "completed", "cancelled", "failed"],
      description:
        "scheduled: waits for scheduled_at. queued: due, waiting for fan-out. sending: being handed to the " +
        "providers. completed: every targeted device has an outcome. cancelled: cancelled before delivery started " +
        "(from scheduled or queued). failed: could not be sent, see failure_reason. " +
        "Transitions: scheduled → queued → sending → completed; scheduled/queued → cancelled; any → failed.",
    },
    audience_size: {
      type: "integer",
      minimum: 0,
      description: "Targetable devices (opted in, valid) found at fan-out; 0 until fan-out has counted them.",
    },
    sent_at: maybeTimestamp("When delivery started (UTC); null before."),
    scheduled_at: maybeTimestamp("The requested delivery time (UTC); null for immediate sends."),
    completed_at: maybeTimestamp("When the last outcome arrived (UTC); null until completed."),
    created_at: timestamp("When the send was accepted (UTC)."),
    updated_at: timestamp("Last change of status or counters (UTC)."),
    contents: {
      type: "object",
      description: "Language code (ISO 639-1) → text, as sent.",
      additionalProperties: { $ref: "CampaignContent#" },
    },
    data: {
      type: ["object", "null"],
      additionalProperties: true,
      description: "The custom data of the send; null when none was given.",
    },
    target,
    ttl: { type: "integer", minimum: 0, description: "Time to live in seconds; 0: the providers' default." },
    priority: { type: "string", enum: ["normal", "high"] },
    collapse_id: { type: ["string", "null"] },
    image_url: { type: ["string", "null"] },
    // The send's presentation options, each present only when the send set it.
    ...deliveryOptions,
    failure_reason: { type: ["string", "null"], description: "Why the campaign failed; null unless status is failed." },
    stats: { $ref: "CampaignStats#" },
  },
  Object.keys(deliveryOptions),
);

export const campaignParams = idParams("id", "Campaign id.");
const tags = ["Campaigns"];

export const listCampaignsSchema = {
  tags,
  operationId: "listCampaigns",
  summary: "List campaigns of an app",
  description: "Newest first; `total` counts the campaigns that match the status filter.",
  querystring: pageQuerystring({
    ...appQuery,
    status: {
      type: "string",
      enum: campaignSchema.properties.status.enum,
      description: "Only campaigns in this status.",
    },
  }),
  response: { 200: listOf("Campaign", "A page of campaigns."), ...errorResponses(400, 403, 404) },
};

export const getCampaignSchema = {
  tags,
  operationId: "getCampaign",
  summary: "Get a campaign",
  params: campaignParams,
  response: { 200: ok("The campaign.", "Campaign"), ...errorResponses(403, 404) },
};

export const getCampaignStatsSchema = {
  tags,
  operationId: "getCampaignStats",
  summary: "Get a campaign's delivery statistics",
  params: campaignParams,
  response: { 200: ok("The counters.", "CampaignStats"), ...errorResponses(403, 404) },
};

export const cancelCampaignSchema = {
  tags,
  operationId: "cancelCampaign",
  summary: "Cancel a campaign",
  description:
    "Cancels a scheduled (or queued) campaign before its delivery starts; no device receives it. No body is " +
    "needed. Once delivery has started (status sending, completed, failed) or after an earlier cancel, the answer " +
    'is 409 with `"error": "CampaignNotCancellable"`.',
  params: campaignParams,
  response: { 200: ok("The cancelled campaign.", "Campaign"), ...errorResponses(403, 404, 409) },
};
