import { PAGING } from "@herald/runtime";
import { campaignParams } from "./campaigns.js";
import {
  errorResponses,
  listOf,
  ok,
  pageQuerystring,
  pathParams,
  platform,
  rateLimitHeaders,
  timestamp,
  uuid,
  component,
  counter,
} from "./common.js";
import { deviceParams } from "./devices.js";

/**
 * Per-device receipts (what the provider did with each device's notification), their
 * export, a device's receipts, and the erasure of a user's devices and records.
 */

const OUTCOMES = ["delivered", "failed", "bounced", "throttled"] as const;

const outcome = {
  type: "string",
  enum: OUTCOMES,
  description:
    "delivered: accepted by the provider (APNs, FCM or the browser's push service). failed: rejected or " +
    "undeliverable for another reason (bad credentials, payload refused, expired ttl, retries exhausted). bounced: " +
    "the provider declared the token dead; the device is marked invalid. throttled: still rate-limited by the " +
    "provider when retries ran out. The same four as the campaign's stats.",
} as const;

const reason = {
  type: ["string", "null"],
  description:
    "The provider's reason, as the sender recorded it (APNs's reason names, FCM's error codes, a Web Push " +
    "status, or Herald's own such as PayloadTooLarge); null when delivered.",
  examples: ["BadDeviceToken"],
} as const;

const attempts = {
  type: "integer",
  minimum: 0,
  description: "Sends tried for this device, retries included (0: it never reached a provider).",
} as const;

const at = timestamp("When the outcome was recorded (UTC).");

const externalId = {
  type: ["string", "null"],
  description:
    "The device's external id as the registry has it now: null when the device has none, or no longer exists " +
    "(deleted, or its user erased).",
  examples: ["user-42"],
} as const;

export const deliverySchema = component(
  "Delivery",
  { description: "One device's receipt of a campaign: the final outcome of its notification." },
  {
    device_id: uuid("The device."),
    external_id: externalId,
    platform: {
      type: ["string", "null"],
      enum: [...platform.enum, null],
      description:
        "The device's push platform. null only for receipts recorded before receipts carried their platform, " +
        "when the device no longer exists.",
    },
    outcome,
    reason,
    attempts,
    at,
  },
);

export const deviceDeliverySchema = component(
  "DeviceDelivery",
  { description: "A device's receipt of one campaign." },
  {
    campaign_id: uuid("The campaign, used in /v1/campaigns/{id}."),
    platform,
    outcome,
    reason,
    attempts,
    at,
  },
);

export const userErasureSchema = component(
  "UserErasure",
  { description: "What an erasure removed; all zeros when there was nothing (left) to erase." },
  {
    external_id: { type: "string", description: "The external id erased.", examples: ["user-42"] },
    devices: counter("Devices of the external id deleted."),
    receipts: counter("Per-device delivery receipts of those devices removed."),
    engagements: counter("Received and clicked reports of those devices removed."),
    in_app_states: counter("Per-device in-app message states (impressions, clicks, dismissals) removed."),
    audiences: counter(
      "Campaign targets (`external_ids`) and in-app message audiences (`external_ids`) that named the external id " +
        "and no longer do.",
    ),
  },
);

const filters = {
  outcome: { ...outcome, description: `Only receipts with this outcome. ${outcome.description}` },
  platform: { ...platform, description: "Only receipts of devices of this platform." },
} as const;

export const listCampaignDeliveriesSchema = {
  tags: ["Campaigns"],
  operationId: "listCampaignDeliveries",
  summary: "List a campaign's per-device receipts",
  description:
    "The final outcome of each device the campaign was sent to, filtered by outcome and platform, in the same " +
    "stable order as the export; `total` counts the receipts that match. A receipt appears once its outcome is " +
    "recorded, so a campaign still sending has fewer than its audience. `external_id` is looked up in the device " +
    "registry for the page shown.",
  params: campaignParams,
  querystring: pageQuerystring(filters),
  response: { 200: listOf("Delivery", "A page of receipts."), ...errorResponses(400, 403, 404) },
};

const csvExample =
  "device_id,external_id,platform,outcome,reason,attempts,at\r\n" +
  "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11,user-42,ios,delivered,,1,2026-11-21T10:00:01.250Z\r\n" +
  "0b6f7e3a-9c1d-4e2f-8a5b-3c4d5e6f7a8b,,android,bounced,UNREGISTERED,1,2026-11-21T10:00:01.300Z\r\n";
const ndjsonExample =
  '{"device_id":"7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11","external_id":"user-42","platform":"ios",' +
  '"outcome":"delivered","reason":null,"attempts":1,"at":"2026-11-21T10:00:01.250Z"}\n';

export const exportCampaignDeliveriesSchema = {
  tags: ["Campaigns"],
  operationId: "exportCampaignDeliveries",
  summary: "Export a campaign's per-device receipts (CSV or NDJSON)",
  description:
    "Every receipt that passes the filters, streamed as a file download of any size: `format=csv` (RFC 4180, a " +
    "header row, CRLF line ends; the columns are the fields of a receipt of the list) or `format=ndjson` (one " +
    "receipt per line, the list's item shape). In CSV, an `external_id` or `reason` that starts with `=`, `+`, " +
    "`-`, `@`, a tab or a carriage return gets a leading `'`, so that spreadsheets do not run it as a formula. " +
    "Errors before the first byte answer as usual (JSON); a failure once the download has started cuts the " +
    "response off (the connection closes without the final chunk of the chunked encoding), so an interrupted " +
    "download never looks complete: retry it.",
  params: campaignParams,
  querystring: {
    type: "object",
    properties: {
      format: { type: "string", enum: ["csv", "ndjson"], default: "csv", description: "The file format." },
      ...filters,
    },
  },
  response: {
    200: {
      description: "The receipts, streamed.",
      headers: {
        ...rateLimitHeaders,
        "Content-Disposition": {
          type: "string",
          description: 'attachment; filename="campaign-<id>-deliveries.csv" (or .ndjson).',
        },
      },
      content: {
        "text/csv": { schema: { type: "string", examples: [csvExample] } },
        "application/x-ndjson": { schema: { type: "string", examples: [ndjsonExample] } },
      },
    },
    ...errorResponses(400, 403, 404),
  },
};

export const listDeviceDeliveriesSchema = {
  tags: ["Devices"],
  operationId: "listDeviceDeliveries",
  summary: "List a device's receipts",
  description:
    "The device's most recent receipts across the app's campaigns, newest first (as far back as receipts are kept).",
  params: deviceParams,
  querystring: {
    type: "object",
    properties: {
      limit: {
        type: "integer",
        minimum: 1,
        maximum: PAGING.maxPerPage,
        default: PAGING.defaultPerPage,
        description: `At most this many receipts, 1 to ${PAGING.maxPerPage} (default ${PAGING.defaultPerPage}); out of range: 400 ValidationError.`,
      },
    },
  },
  response: {
    200: {
      description: "The receipts, newest first.",
      headers: rateLimitHeaders,
      type: "object",
      required: ["data"],
      additionalProperties: false,
      properties: { data: { type: "array", items: { $ref: "DeviceDelivery#" } } },
    },
    ...errorResponses(400, 403, 404),
  },
};

export const eraseUserSchema = {
  tags: ["Users"],
  operationId: "eraseUser",
  summary: "Erase a user (right to be forgotten)",
  description:
    "Deletes what Herald keeps about one of your users in this app, by the external id their devices were " +
    "registered with: each of those devices' delivery receipts and engagement reports (received, clicked), their " +
    "in-app message states, the external id itself wherever the app's campaigns and in-app messages target it (it " +
    "is removed from their `external_ids`, even when no device has it any more; a list left empty reaches nobody), " +
    "and then the devices themselves; `user.erased` is announced to the app's webhooks with the counts. The records " +
    "go first and the devices last, so that a failure part-way (a 5xx) leaves the devices in place and a retry " +
    "finds them again and completes the erasure. The answer counts what this call removed: a repeat, or an " +
    "external id Herald holds nothing of, answers zeros, so retrying is safe. Campaign counters are totals " +
    "without device ids and stay as they are. A device registered again under this external id afterwards is a " +
    "new device.",
  params: pathParams({
    app_id: uuid("The app."),
    external_id: {
      type: "string",
      minLength: 1,
      maxLength: 255,
      description: "The user's external id (percent-encoded in the path).",
      examples: ["user-42"],
    },
  }),
  response: { 200: ok("What was erased.", "UserErasure"), ...errorResponses(403, 404) },
};
