import {
  appItemParams,
  appParams,
  errorResponses,
  noContent,
  ok,
  rateLimitHeaders,
  timestamp,
  uuid,
  component,
} from "./common.js";

/**
 * Android notification channels of an app (stored by the device registry,
 * proto/herald/v1/android_channel.proto). Client libraries create them on the device
 * from the sync read; sends name one with android_channel_id.
 */

export const CHANNEL_ID_PATTERN = "^[A-Za-z0-9_.-]{1,64}$";

const channelId = {
  type: "string",
  pattern: CHANNEL_ID_PATTERN,
  description: "The channel id, unique in the app: 1 to 64 characters A-Z a-z 0-9 _ . -. Cannot be changed.",
  examples: ["news"],
} as const;

const settings = {
  name: {
    type: "string",
    minLength: 1,
    maxLength: 255,
    description: "The name users see in the app's notification settings.",
    examples: ["Breaking news"],
  },
  description: {
    type: "string",
    maxLength: 1000,
    description: "The description users see in the notification settings; empty when omitted.",
    examples: ["Headlines as they happen."],
  },
  importance: {
    type: "string",
    enum: ["min", "low", "default", "high", "max"],
    description:
      "Android's NotificationManager importance: how much the channel may interrupt (high and max: heads-up). " +
      '"default" when omitted.',
  },
  sound: {
    type: ["string", "null"],
    pattern: "^[A-Za-z0-9_.-]{1,64}$",
    description:
      'A sound resource of the app (res/raw name without extension) or "default"; null or omitted: the system ' +
      "default. A channel of importance low or min makes no sound.",
    examples: ["chime"],
  },
  vibration: {
    oneOf: [
      { type: "boolean" },
      { type: "array", minItems: 1, maxItems: 64, items: { type: "integer", minimum: 0, maximum: 60_000 } },
    ],
    description:
      "Whether notifications vibrate, or the vibration pattern in milliseconds (off, on, off, on, …), which turns " +
      "vibration on. false when omitted.",
    examples: [[0, 250, 250, 250]],
  },
  lights: {
    oneOf: [{ type: "boolean" }, { type: "string", pattern: "^#[0-9A-Fa-f]{6}$" }],
    description:
      "Whether the notification light blinks, or its color as #RRGGBB, which turns it on. false when omitted.",
    examples: ["#FF6600"],
  },
  badge: {
    type: "boolean",
    description: "Whether notifications of the channel show a badge on the launcher icon. true when omitted.",
  },
  group: {
    type: ["string", "null"],
    pattern: CHANNEL_ID_PATTERN,
    description: "Id of the channel group the app shows this channel in; null or omitted: none.",
    examples: ["media"],
  },
} as const;

export const androidChannelSchema = component(
  "AndroidChannel",
  { description: "An Android notification channel." },
  {
    id: channelId,
    app_id: uuid("The app."),
    ...settings,
    created_at: timestamp("When the channel was created (UTC)."),
    updated_at: timestamp("When the channel last changed (UTC)."),
  },
);

const params = appItemParams("channel_id", channelId);

const tags = ["Android channels"];

export const createAndroidChannelSchema = {
  tags,
  operationId: "createAndroidChannel",
  summary: "Create an Android notification channel",
  description: "At most 100 channels per app (more: 422). An id the app already has: 409.",
  params: appParams,
  body: {
    type: "object",
    required: ["id", "name"],
    additionalProperties: false,
    properties: { id: channelId, ...settings },
  },
  response: { 201: ok("The channel.", "AndroidChannel"), ...errorResponses(400, 403, 404, 409, 415, 422) },
};

export const listAndroidChannelsSchema = {
  tags,
  operationId: "listAndroidChannels",
  summary: "List (sync) the app's Android channels",
  description:
    "Every channel of the app, ordered by id, in one page: the read client libraries sync from. The answer has a " +
    "strong ETag over the list; send it back in If-None-Match and an unchanged list answers 304 with no body.",
  params: appParams,
  headers: {
    type: "object",
    properties: {
      "If-None-Match": {
        type: "string",
        maxLength: 1024,
        description: "The ETag of a list fetched before; 304 when the list is still the same.",
      },
    },
  },
  response: {
    200: {
      description: "Every channel of the app.",
      headers: {
        ...rateLimitHeaders,
        ETag: { type: "string", description: "Strong validator of this list." },
      },
      type: "object",
      required: ["data", "page", "per_page", "total"],
      additionalProperties: false,
      properties: {
        data: { type: "array", items: { $ref: "AndroidChannel#" } },
        page: { type: "integer", minimum: 1, description: "Always 1: the list is never split." },
        per_page: { type: "integer", minimum: 1, description: "The most channels an app can have (100)." },
        total: { type: "integer", minimum: 0, description: "Channels of the app." },
      },
    },
    304: {
      description: "Not modified: the list still has the ETag sent in If-None-Match.",
      headers: { ETag: { type: "string", description: "The unchanged validator." } },
      type: "null",
    },
    ...errorResponses(403, 404),
  },
};

export const getAndroidChannelSchema = {
  tags,
  operationId: "getAndroidChannel",
  summary: "Get an Android channel",
  params,
  response: { 200: ok("The channel.", "AndroidChannel"), ...errorResponses(403, 404) },
};

export const updateAndroidChannelSchema = {
  tags,
  operationId: "updateAndroidChannel",
  summary: "Update an Android channel",
  description:
    "Changes the given fields. Android lets an app change a channel's name and description after it was created " +
    "on a device, but the user owns the other settings from then on: devices that already have the channel keep them.",
  params,
  body: { type: "object", minProperties: 1, additionalProperties: false, properties: settings },
  response: { 200: ok("The channel.", "AndroidChannel"), ...errorResponses(400, 403, 404, 415) },
};

export const deleteAndroidChannelSchema = {
  tags,
  operationId: "deleteAndroidChannel",
  summary: "Delete an Android channel",
  description: "Sends that name it afterwards answer 422; devices remove it at their next sync.",
  params,
  response: { 204: noContent("Deleted."), ...errorResponses(403, 404) },
};
