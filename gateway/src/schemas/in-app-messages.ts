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
  counter,
  nullable,
} from "./common.js";
import { deviceParams } from "./devices.js";

/**
 * In-app messages of an app (stored by the device registry,
 * proto/herald/v1/in_app_message.proto), and the device-facing fetch and events the
 * client libraries call. The registry adds the semantic checks (an "en" entry, an end
 * after the start, a segment of the app) and answers those with 422 or 404.
 */

const content = {
  type: "object",
  description: "One language's text.",
  required: ["title", "body"],
  additionalProperties: false,
  properties: {
    title: { type: "string", minLength: 1, maxLength: 200, description: "1 to 200 characters.", examples: ["Hi!"] },
    body: {
      type: "string",
      minLength: 1,
      maxLength: 2000,
      description: "1 to 2,000 characters.",
      examples: ["Our spring sale starts today."],
    },
  },
} as const;

const contents = {
  type: "object",
  description:
    'Language code → text. Keys are ISO 639-1 codes (two lowercase letters, e.g. "en", "de"). A device gets the ' +
    'entry of its registered language, and the "en" entry when there is none for its language, so "en" is required ' +
    "(without it: 422). 1 to 100 languages.",
  minProperties: 1,
  maxProperties: 100,
  propertyNames: { pattern: "^[a-z]{2}$" },
  additionalProperties: content,
  examples: [{ en: { title: "Hi!", body: "Our spring sale starts today." }, de: { title: "Hallo!", body: "Heute…" } }],
} as const;

export const inAppAudienceAllSchema = component(
  "InAppAudienceAll",
  { title: "All devices" },
  { kind: { type: "string", const: "all", description: "Every device of the app." } },
);

export const inAppAudienceSegmentSchema = component(
  "InAppAudienceSegment",
  { title: "Segment" },
  {
    kind: { type: "string", const: "segment" },
    segment_id: uuid(
      "A segment of the same app (see /v1/segments; unknown: 404). Its rule is evaluated against the device when it " +
        "fetches, so a device that comes to match it sees the message; after the segment is deleted the message " +
        "matches no device.",
    ),
  },
);

export const inAppAudienceExternalIdsSchema = component(
  "InAppAudienceExternalIds",
  { title: "Users" },
  {
    kind: { type: "string", const: "external_ids" },
    external_ids: {
      type: "array",
      minItems: 1,
      maxItems: 10_000,
      items: { type: "string", minLength: 1, maxLength: 255 },
      description: "Your user ids: devices registered with one of them (their external_id). 1 to 10,000.",
      examples: [["user-42", "user-43"]],
    },
  },
);

/** The users audience as answered: its list loses each user erased since (it may end empty, reaching nobody). */
export const inAppAudienceExternalIdsStoredSchema = component(
  "InAppAudienceExternalIdsStored",
  { title: "Users" },
  {
    kind: inAppAudienceExternalIdsSchema.properties.kind,
    external_ids: {
      type: "array",
      maxItems: 10_000,
      items: { type: "string", minLength: 1, maxLength: 255 },
      description:
        "Your user ids: devices registered with one of them (their external_id). A user erased through " +
        "DELETE /v1/apps/{app_id}/users/{external_id} is removed from it; empty when every one was, and then the " +
        "message reaches no device.",
      examples: [["user-42", "user-43"]],
    },
  },
);

const AUDIENCES = [
  { $ref: "InAppAudienceAll#" },
  { $ref: "InAppAudienceSegment#" },
  { $ref: "InAppAudienceExternalIds#" },
];

const audienceInput = {
  type: "object",
  description:
    "Which devices of the app see the message. Opted-out devices and devices with an invalid push token see " +
    "in-app messages too: the app shows them itself, opting out concerns push notifications only.",
  required: ["kind"],
  discriminator: { propertyName: "kind" },
  // The mapping to these components is added to the published document (openapi.ts).
  oneOf: AUDIENCES,
} as const;

const settings = {
  name: {
    type: "string",
    minLength: 1,
    maxLength: 200,
    description: "Your label for the message; devices never see it.",
    examples: ["Spring sale banner"],
  },
  contents,
  image_url: {
    type: ["string", "null"],
    format: "uri",
    pattern: "^https://[^/?#\\s]+",
    maxLength: 2048,
    description: "An https image shown with the message; null: none.",
    examples: ["https://acme.example/sale.png"],
  },
  action_url: {
    type: ["string", "null"],
    format: "uri",
    pattern: "^https?://[^/?#\\s]+",
    maxLength: 2048,
    description: "An http or https URL the app opens when the user taps the message; null: none.",
    examples: ["https://acme.example/sale"],
  },
  audience: audienceInput,
  starts_at: nullable(timestamp("When the message starts to be shown (ISO 8601); null: at once.")),
  ends_at: nullable(timestamp("When it stops being shown; must be after starts_at (else 422); null: never.")),
  priority: {
    type: "integer",
    minimum: 0,
    maximum: 100,
    description: "0 to 100 (default 0); a device gets higher priorities first, then newer messages.",
    examples: [50],
  },
  max_impressions: {
    type: ["integer", "null"],
    minimum: 1,
    maximum: 1_000_000,
    description:
      "How often one device may show the message (impression events counted); then it is no longer fetched and " +
      "a further impression answers 409. null or omitted: unlimited.",
    examples: [3],
  },
} as const;

export const inAppMessageStatsSchema = component(
  "InAppMessageStats",
  { description: "What devices reported through `POST /v1/devices/{id}/in-app-messages/{message_id}/events`." },
  {
    impressions: counter("Impression events, all devices (each device at most max_impressions)."),
    clicks: counter("Click events, all devices."),
    dismissals: counter("Devices that dismissed the message (a device dismisses once)."),
    devices: counter("Distinct devices with at least one impression."),
  },
);

export const inAppMessageSchema = component(
  "InAppMessage",
  { description: "An in-app message of an app." },
  {
    id: uuid("The message."),
    app_id: uuid("The app."),
    ...settings,
    audience: {
      description: audienceInput.description,
      oneOf: [AUDIENCES[0], AUDIENCES[1], { $ref: "InAppAudienceExternalIdsStored#" }],
    },
    stats: { $ref: "InAppMessageStats#" },
    created_at: timestamp("When the message was created (UTC)."),
    updated_at: timestamp("When its settings last changed (UTC)."),
  },
);

export const deviceInAppMessageSchema = component(
  "DeviceInAppMessage",
  { description: "An in-app message as one device shows it, in its language." },
  {
    id: uuid("The message; report events with it."),
    language: {
      type: "string",
      pattern: "^[a-z]{2}$",
      description: 'The language of title and body: the device\'s own when the message has it, else "en".',
      examples: ["de"],
    },
    title: content.properties.title,
    body: content.properties.body,
    image_url: settings.image_url,
    action_url: settings.action_url,
    priority: settings.priority,
    ends_at: nullable(timestamp("When the message stops being shown; null: never.")),
  },
);

const messageId = uuid("In-app message id.");
const messageParams = appItemParams("message_id", messageId);
const deviceMessageParams = pathParams({ ...deviceParams.properties, message_id: messageId });

const tags = ["In-app messages"];

export const createInAppMessageSchema = {
  tags,
  operationId: "createInAppMessage",
  summary: "Create an in-app message",
  description:
    "At most 1,000 messages per app (more: 422). Without an `en` entry in contents, or with ends_at not after " +
    "starts_at: 422. An audience segment the app does not have: 404.",
  params: appParams,
  body: {
    type: "object",
    required: ["name", "contents", "audience"],
    additionalProperties: false,
    properties: settings,
  },
  response: { 201: ok("The message.", "InAppMessage"), ...errorResponses(400, 403, 404, 413, 415, 422) },
};

export const listInAppMessagesSchema = {
  tags,
  operationId: "listInAppMessages",
  summary: "List an app's in-app messages",
  description: "Newest first.",
  params: appParams,
  querystring: pageQuerystring(),
  response: { 200: listOf("InAppMessage", "A page of in-app messages."), ...errorResponses(400, 403, 404) },
};

export const getInAppMessageSchema = {
  tags,
  operationId: "getInAppMessage",
  summary: "Get an in-app message",
  params: messageParams,
  response: { 200: ok("The message, with its counters.", "InAppMessage"), ...errorResponses(403, 404) },
};

export const updateInAppMessageSchema = {
  tags,
  operationId: "updateInAppMessage",
  summary: "Update an in-app message",
  description:
    "Changes the given fields and keeps the others; null clears an optional one. Given contents replace every " +
    "stored language (and need `en`); the window is checked against the stored start or end (422). Counters and " +
    "what devices already did (impressions, dismissals) are kept.",
  params: messageParams,
  body: { type: "object", minProperties: 1, additionalProperties: false, properties: settings },
  response: { 200: ok("The updated message.", "InAppMessage"), ...errorResponses(400, 403, 404, 413, 415, 422) },
};

export const deleteInAppMessageSchema = {
  tags,
  operationId: "deleteInAppMessage",
  summary: "Delete an in-app message",
  description: "Devices no longer get it; its counters go with it.",
  params: messageParams,
  response: { 204: noContent("Deleted."), ...errorResponses(403, 404) },
};

export const listDeviceInAppMessagesSchema = {
  tags,
  operationId: "listDeviceInAppMessages",
  summary: "Fetch the in-app messages for a device",
  description:
    "The messages of the device's app that apply to it now: started (or without a start) and not ended, with an " +
    "audience that includes the device, not dismissed by it, and shown fewer times than max_impressions; each in " +
    'the device\'s language, falling back to "en". Highest priority first, then newest; at most 20. Opted-out ' +
    "devices and devices with an invalid push token get them too (they are not pushes). Showing one is for the " +
    "app, which then reports an impression event.",
  params: deviceParams,
  response: {
    200: {
      description: "The messages to show.",
      headers: rateLimitHeaders,
      type: "object",
      required: ["data"],
      additionalProperties: false,
      properties: { data: { type: "array", maxItems: 20, items: { $ref: "DeviceInAppMessage#" } } },
    },
    ...errorResponses(403, 404),
  },
};

export const recordInAppMessageEventSchema = {
  tags,
  operationId: "recordInAppMessageEvent",
  summary: "Report an in-app message impression, click or dismissal",
  description:
    "`impression` when the app showed the message, `click` when the user tapped it, `dismiss` when the user closed " +
    "it: a dismissed message is no longer fetched for this device (a repeated dismissal is accepted and counted " +
    "once). An impression beyond the message's max_impressions for this device answers 409 and is not counted. A " +
    "message of another app, or one that does not apply to the device now (audience, start or end): 404.",
  params: deviceMessageParams,
  body: {
    type: "object",
    required: ["type"],
    additionalProperties: false,
    properties: {
      type: { type: "string", enum: ["impression", "click", "dismiss"], description: "What happened." },
    },
  },
  response: { 204: noContent("Counted."), ...errorResponses(400, 403, 404, 409, 415) },
};
