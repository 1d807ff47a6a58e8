import {
  appItemParams,
  appParams,
  errorResponses,
  listOf,
  noContent,
  ok,
  pageQuerystring,
  pathParams,
  rateLimitHeaders,
  timestamp,
  uuid,
  component,
} from "./common.js";

/**
 * Webhook endpoints of an app (the webhooks service, proto/herald/v1/webhook.proto).
 * Deliveries follow Standard Webhooks (https://www.standardwebhooks.com): a POST of
 * `{"type", "timestamp", "data"}` with the headers `webhook-id` (the event id, the same on
 * every retry), `webhook-timestamp` (unix seconds) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256>` per secret, space-separated).
 */

/** The event types, with the shape of each one's `data` (the same list as packages/runtime/src/webhook-events.ts). */
export const WEBHOOK_EVENTS = {
  "campaign.started": "`{campaign_id, app_id, started_at}`: delivery of a campaign began (fan-out started).",
  "campaign.completed":
    "`{campaign_id, app_id, completed_at, audience_size, stats: {sent, delivered, failed, bounced, throttled}}`: " +
    "every device of the campaign has an outcome.",
  "campaign.cancelled": "`{campaign_id, app_id, cancelled_at}`: the campaign was cancelled before delivery.",
  "device.invalidated":
    "`{device_id, app_id, platform, reason, external_id}`: a provider reported the device's push token dead " +
    "(`reason` is the provider's); `external_id` is null when the device has none.",
  "device.opted_out": "`{device_id, app_id, platform, external_id}`: the device opted out of pushes.",
  "device.opted_in": "`{device_id, app_id, platform, external_id}`: the device opted in again.",
  "deliveries.failed":
    "`{campaign_id, app_id, deliveries: [{device_id, platform, reason, attempts}]}`: deliveries of a campaign that " +
    "failed, at most 1,000 per event.",
  "deliveries.bounced":
    "`{campaign_id, app_id, deliveries: [{device_id, platform, reason, attempts}]}`: deliveries of a campaign that " +
    "bounced (dead tokens), at most 1,000 per event.",
  "user.erased":
    "`{app_id, external_id, devices, receipts, engagements, in_app_states, audiences}`: a user's devices and their " +
    "records were erased, and the external id removed from campaign and in-app message audiences " +
    "(DELETE /v1/apps/{app_id}/users/{external_id}), with the counts removed.",
  "webhook.test": "`{webhook_id}`: sent by POST …/webhooks/{id}/test to that endpoint alone.",
} as const;

const eventType = {
  type: "string",
  enum: Object.keys(WEBHOOK_EVENTS),
  description: `An event type; the \`data\` of each:\n\n${Object.entries(WEBHOOK_EVENTS)
    .map(([k, v]) => `- \`${k}\`: ${v}`)
    .join("\n")}`,
} as const;

const url = {
  type: "string",
  minLength: 1,
  maxLength: 2048,
  description:
    "Where events are POSTed: an https URL whose host resolves only to public addresses (private, loopback and " +
    "link-local addresses are refused here and again at every connection). 400 ValidationError otherwise.",
  examples: ["https://example.com/herald/webhooks"],
} as const;

const events = {
  type: "array",
  minItems: 1,
  maxItems: Object.keys(WEBHOOK_EVENTS).length,
  uniqueItems: true,
  items: eventType,
  description: "The event types the endpoint receives.",
  examples: [["campaign.completed", "device.invalidated"]],
} as const;

const description = {
  type: "string",
  maxLength: 1000,
  description: "A note of your own; empty when omitted.",
} as const;

const enabled = {
  type: "boolean",
  description:
    "Whether events are delivered; true when omitted. Enabling an endpoint Herald disabled clears `disabled_reason`.",
} as const;

const secret = {
  type: "string",
  pattern: "^whsec_[A-Za-z0-9+/]+={0,2}$",
  description:
    "The signing secret, `whsec_` + base64: shown only when the endpoint is created and when the secret is " +
    "rotated. Verify deliveries with any Standard Webhooks library.",
  examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
} as const;

const webhookProperties = {
  id: uuid("The endpoint."),
  app_id: uuid("The app."),
  url,
  events,
  description,
  enabled,
  disabled_reason: {
    type: ["string", "null"],
    description: "Why Herald disabled the endpoint (410 Gone, or failing for 5 days); null otherwise.",
  },
  previous_secret_expires_at: {
    type: ["string", "null"],
    format: "date-time",
    description: "After a rotation, until when the previous secret still signs beside the new one; null otherwise.",
  },
  created_at: timestamp("When the endpoint was created (UTC)."),
  updated_at: timestamp("When the endpoint last changed (UTC)."),
} as const;

export const webhookSchema = component(
  "Webhook",
  { description: "A webhook endpoint (without its secret)." },
  webhookProperties,
);

export const createdWebhookSchema = component(
  "CreatedWebhook",
  { description: "A webhook endpoint with its signing secret, answered only on create and rotation." },
  { ...webhookProperties, secret },
);

export const webhookAttemptSchema = component(
  "WebhookAttempt",
  { description: "The delivery of one event to the endpoint." },
  {
    event_id: { type: "string", description: "The event id, sent as `webhook-id`." },
    event_type: eventType,
    status: {
      type: "string",
      enum: ["pending", "delivered", "failed"],
      description:
        "pending: queued or waiting for a retry (after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h); delivered: a 2xx " +
        "answer; failed: retries used up, or the endpoint disabled.",
    },
    attempts: { type: "integer", minimum: 0, description: "Attempts so far." },
    next_attempt_at: { type: ["string", "null"], format: "date-time", description: "The next attempt, when pending." },
    last_error: { type: ["string", "null"], description: "What the last failed attempt came to." },
    response_status: { type: ["integer", "null"], description: "The HTTP status of the last answer." },
    response_body: { type: ["string", "null"], description: "The last answer's body, cut at 1 KiB." },
    created_at: timestamp("When the delivery was queued (UTC)."),
    delivered_at: { type: ["string", "null"], format: "date-time", description: "When a 2xx answered." },
  },
);

const params = appItemParams("webhook_id", uuid("Webhook endpoint id."));
/** Only the paging parameters: anything else in the query is refused (400). */
const pagingOnly = { ...pageQuerystring(), additionalProperties: false };

const tags = ["Webhooks"];

export const createWebhookSchema = {
  tags,
  operationId: "createWebhook",
  summary: "Create a webhook endpoint",
  description:
    "Answers the endpoint with its signing secret, which is shown only here and on rotation. Each delivery is a " +
    'POST of `{"type": "<event type>", "timestamp": "<ISO 8601>", "data": {…}}` signed per Standard Webhooks.',
  params: appParams,
  body: {
    type: "object",
    required: ["url", "events"],
    additionalProperties: false,
    properties: { url, events, description, enabled },
  },
  response: { 201: ok("The endpoint and its secret.", "CreatedWebhook"), ...errorResponses(400, 403, 404, 415) },
};

export const listWebhooksSchema = {
  tags,
  operationId: "listWebhooks",
  summary: "List the app's webhook endpoints",
  description: "Newest first.",
  params: appParams,
  querystring: pagingOnly,
  response: { 200: listOf("Webhook", "A page of endpoints."), ...errorResponses(400, 403, 404) },
};

export const getWebhookSchema = {
  tags,
  operationId: "getWebhook",
  summary: "Get a webhook endpoint",
  params,
  response: { 200: ok("The endpoint.", "Webhook"), ...errorResponses(403, 404) },
};

export const updateWebhookSchema = {
  tags,
  operationId: "updateWebhook",
  summary: "Update a webhook endpoint",
  params,
  body: {
    type: "object",
    minProperties: 1,
    additionalProperties: false,
    properties: { url, events, description, enabled },
  },
  response: { 200: ok("The endpoint.", "Webhook"), ...errorResponses(400, 403, 404, 415) },
};

export const deleteWebhookSchema = {
  tags,
  operationId: "deleteWebhook",
  summary: "Delete a webhook endpoint",
  description: "Its pending deliveries go with it.",
  params,
  response: { 204: noContent("Deleted."), ...errorResponses(403, 404) },
};

export const rotateWebhookSecretSchema = {
  tags,
  operationId: "rotateWebhookSecret",
  summary: "Rotate a webhook endpoint's signing secret",
  description:
    "Answers the new secret. For 24 hours the previous secret keeps signing beside it: each delivery carries both " +
    "signatures in `webhook-signature`, so receivers can switch without missing an event.",
  params,
  response: { 200: ok("The endpoint and its new secret.", "CreatedWebhook"), ...errorResponses(403, 404) },
};

export const testWebhookSchema = {
  tags,
  operationId: "testWebhook",
  summary: "Send a test event",
  description: "Queues a `webhook.test` event for this endpoint alone, whatever its event types.",
  params,
  response: {
    202: {
      description: "Queued.",
      headers: rateLimitHeaders,
      type: "object",
      required: ["event_id"],
      additionalProperties: false,
      properties: { event_id: { type: "string", description: "The event id (`webhook-id`)." } },
    },
    ...errorResponses(403, 404),
  },
};

export const listWebhookAttemptsSchema = {
  tags,
  operationId: "listWebhookAttempts",
  summary: "List an endpoint's deliveries",
  description: "Newest first: each event's status, attempts, next retry, last error and response (cut at 1 KiB).",
  params,
  querystring: pagingOnly,
  response: { 200: listOf("WebhookAttempt", "A page of deliveries."), ...errorResponses(400, 403, 404) },
};

export const replayWebhookEventSchema = {
  tags,
  operationId: "replayWebhookEvent",
  summary: "Deliver an event again",
  description: "Queues the app's event for the endpoint again, with the same `webhook-id`; 404 for an unknown event.",
  params: pathParams({
    ...params.properties,
    event_id: { type: "string", pattern: "^[A-Za-z0-9_.:-]{1,128}$", description: "The event id." },
  }),
  response: { 202: ok("The delivery, queued.", "WebhookAttempt"), ...errorResponses(403, 404) },
};
