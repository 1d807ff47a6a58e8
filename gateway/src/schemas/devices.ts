import {
  appQuery,
  errorResponses,
  idParams,
  listOf,
  noContent,
  ok,
  pageQuerystring,
  platform,
  rateLimitHeaders,
  timestamp,
  uuid,
  component,
  nullable,
} from "./common.js";

/** Optional device fields; "" or null (nullable) clears a stored value on update. */
const externalId = {
  type: "string",
  maxLength: 255,
  description: "Your own user id; targets send-to-users.",
  examples: ["user-42"],
} as const;
const language = {
  type: "string",
  maxLength: 35,
  description: 'ISO 639-1 code selecting the content variant; a region suffix ("pt-BR") is accepted and dropped.',
  examples: ["en"],
} as const;
const timezone = {
  type: "string",
  maxLength: 64,
  description: "IANA time zone name.",
  examples: ["Europe/Berlin"],
} as const;
const appVersion = { type: "string", maxLength: 64, description: "App version string.", examples: ["2.4.1"] } as const;
const tagList = {
  type: "array",
  maxItems: 100,
  items: { type: "string", minLength: 1, maxLength: 64 },
  description: "Tags for segments; replaces the stored tags.",
  examples: [["beta", "premium"]],
} as const;

export const deviceSchema = component(
  "Device",
  { description: "A registered device." },
  {
    id: uuid("Device id, used in /v1/devices/{id}."),
    app_id: uuid("Owning app."),
    push_token: { type: "string", description: "The platform push token." },
    platform,
    external_id: nullable(externalId),
    language: nullable(language),
    timezone: nullable(timezone),
    app_version: nullable(appVersion),
    tags: { type: "array", items: { type: "string" } },
    opted_in: { type: "boolean", description: "False after opt-out: no pushes are delivered." },
    invalid: {
      type: "boolean",
      description: "True when a provider declared the token dead; cleared by registering again.",
    },
    created_at: timestamp("Registration time (UTC)."),
    updated_at: timestamp("Last change (UTC)."),
  },
);

export const deviceParams = idParams("id", "Device id.");
const tags = ["Devices"];

export const registerDeviceSchema = {
  tags,
  operationId: "registerDevice",
  summary: "Register a device",
  description:
    "Upserts by (app_id, push_token): registering a known token updates that device (and clears `invalid`) instead of " +
    "creating a duplicate. Push tokens: ios the 64-hex APNs device token; android the FCM registration token; web the " +
    "browser's PushSubscription.toJSON() as a JSON string.",
  body: {
    type: "object",
    required: ["app_id", "push_token", "platform"],
    additionalProperties: false,
    properties: {
      app_id: uuid("The app the device belongs to."),
      push_token: { type: "string", minLength: 1, maxLength: 8192, description: "The platform push token." },
      platform,
      external_id: externalId,
      language,
      timezone,
      app_version: appVersion,
      tags: tagList,
    },
  },
  response: { 200: ok("The device, new or updated.", "Device"), ...errorResponses(400, 403, 404) },
};

export const listDevicesSchema = {
  tags,
  operationId: "listDevices",
  summary: "List devices of an app",
  description:
    "Oldest registration first. The filters are optional and combine with AND; `total` counts the devices that match.",
  querystring: pageQuerystring({
    ...appQuery,
    platform: { ...platform, description: "Only devices of this platform." },
    language: {
      type: "string",
      minLength: 2,
      maxLength: 35,
      description: 'Only devices with this ISO 639-1 language; a region suffix ("pt-BR") is accepted and dropped.',
      examples: ["de"],
    },
    opted_in: { type: "boolean", description: "true: only opted-in devices; false: only opted-out ones." },
    invalid: {
      type: "boolean",
      description: "true: only devices whose token a provider declared dead; false: only valid ones.",
    },
    external_id: { ...externalId, minLength: 1, description: "Only devices with exactly this external_id." },
  }),
  response: { 200: listOf("Device", "A page of devices."), ...errorResponses(400, 403, 404) },
};

export const getDeviceSchema = {
  tags,
  operationId: "getDevice",
  summary: "Get a device",
  params: deviceParams,
  response: { 200: ok("The device.", "Device"), ...errorResponses(403, 404) },
};

export const updateDeviceSchema = {
  tags,
  operationId: "updateDevice",
  summary: "Update a device",
  description:
    'Changes the given fields and keeps the others; "" or null clears an optional field, tags replace the stored tags.',
  params: deviceParams,
  body: {
    type: "object",
    additionalProperties: false,
    properties: {
      external_id: nullable(externalId),
      language: nullable(language),
      timezone: nullable(timezone),
      app_version: nullable(appVersion),
      tags: tagList,
    },
  },
  response: { 200: ok("The updated device.", "Device"), ...errorResponses(400, 403, 404) },
};

export const deleteDeviceSchema = {
  tags,
  operationId: "deleteDevice",
  summary: "Delete a device",
  params: deviceParams,
  response: { 204: noContent("Deleted."), ...errorResponses(403, 404) },
};

const optSchema = (optIn: boolean) => ({
  tags,
  operationId: optIn ? "optInDevice" : "optOutDevice",
  summary: optIn ? "Opt a device back in" : "Opt a device out",
  description: optIn
    ? "Pushes are delivered to the device again."
    : "Suppresses all future pushes to the device; the registration is kept. No body is needed (an empty body or {} is fine).",
  params: deviceParams,
  response: { 200: ok("The device.", "Device"), ...errorResponses(403, 404) },
});

export const recordNotificationEventSchema = {
  tags,
  operationId: "recordNotificationEvent",
  summary: "Report a notification received or clicked",
  description:
    "What a client library reports about a push it got (the web SDK's service worker does it by itself): `received` " +
    "when the notification was shown, `clicked` when the user opened it. Each feeds the campaign's `received` and " +
    "`clicked` counters once per device, however often it is repeated (safe to retry); a click also counts as " +
    "received. The campaign must be one this device's app sent (scheduled, cancelled and unknown campaigns: 404).",
  params: deviceParams,
  body: {
    type: "object",
    required: ["campaign_id", "type"],
    additionalProperties: false,
    properties: {
      campaign_id: uuid("The campaign the notification came from (`campaign_id` of the push payload)."),
      type: { type: "string", enum: ["received", "clicked"], description: "What happened." },
    },
  },
  response: { 204: noContent("Recorded (or already recorded)."), ...errorResponses(400, 403, 404) },
};

export const optOutSchema = optSchema(false);
export const optInSchema = optSchema(true);

const MAX_REJECTIONS_SHOWN = 100;

export const importDevicesSchema = {
  tags,
  operationId: "importDevices",
  summary: "Import devices in bulk (NDJSON)",
  description:
    "For migrations from other push services: the body is NDJSON (`application/x-ndjson`), one register body per line " +
    "(the same fields and rules as `POST /v1/devices/register`; a line's `app_id` may be left out, and must otherwise " +
    "be the imported app's), of any size: it is read as a stream and written in batches. Each line upserts by push " +
    "token exactly as register does; a device already stored with the same values is left untouched, so importing the " +
    "same file twice changes nothing. Bad lines never fail the others: the answer counts created, updated, unchanged " +
    `and rejected lines and lists the first ${MAX_REJECTIONS_SHOWN} rejected ones with their line number and reason. ` +
    "The request counts once against the rate limit, whatever its number of lines.",
  consumes: ["application/x-ndjson"],
  querystring: {
    type: "object",
    required: ["app_id"],
    additionalProperties: false,
    properties: { app_id: uuid("The app the devices belong to.") },
  },
  // Read as a stream by the route, line by line; each line is validated on its own.
  body: {
    "x-ndjson-stream": true,
    type: "string",
    description: "NDJSON: one register body per line.",
    examples: [
      '{"push_token":"a1b2…64 hex","platform":"ios","language":"en","external_id":"user-1"}\n' +
        '{"push_token":"fcm-token…","platform":"android","tags":["beta"]}\n',
    ],
  },
  response: {
    200: {
      description: "What the import did.",
      headers: rateLimitHeaders,
      type: "object",
      required: ["lines", "created", "updated", "unchanged", "rejected", "rejections"],
      additionalProperties: false,
      properties: {
        lines: { type: "integer", description: "Non-empty lines read." },
        created: { type: "integer" },
        updated: { type: "integer", description: "Existing devices whose values changed (or that were invalid)." },
        unchanged: { type: "integer", description: "Existing devices already stored with these values." },
        rejected: { type: "integer" },
        rejections: {
          type: "array",
          maxItems: MAX_REJECTIONS_SHOWN,
          description: `The first ${MAX_REJECTIONS_SHOWN} rejected lines.`,
          items: {
            type: "object",
            required: ["line", "reason"],
            additionalProperties: false,
            properties: { line: { type: "integer" }, reason: { type: "string" } },
          },
        },
      },
    },
    ...errorResponses(400, 403, 404, 415),
  },
};

/** The register body a line must be (app_id optional: the query names the app). */
export const importLineSchema = {
  ...registerDeviceSchema.body,
  required: ["push_token", "platform"],
};
