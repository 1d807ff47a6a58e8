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
} from "./common.js";

const stringList = (description: string, item: object, maxItems = 1_000) =>
  ({ type: "array", minItems: 1, maxItems, items: item, description }) as const;
const tag = { type: "string", minLength: 1, maxLength: 64 } as const;

export const segmentRuleSchema = {
  $id: "SegmentRule",
  type: "object",
  description:
    "Which devices of the app a segment selects. Every part that is set must match (AND); within a list, any " +
    "value matches (OR) except for tags_all. Parts left out do not restrict. Only opted-in devices with a valid " +
    "token are ever targeted. At least one part must be set. The stored rule is normalised (language codes " +
    "lower-cased without region, duplicates dropped) and shows only the parts that are set.",
  minProperties: 1,
  additionalProperties: false,
  properties: {
    tags_any: stringList("The device has at least one of these tags.", tag, 100),
    tags_all: stringList("The device has every one of these tags.", tag, 100),
    tags_none: stringList("The device has none of these tags.", tag, 100),
    platforms: stringList("The device's platform is one of these.", platform, 3),
    languages: stringList(
      'The device\'s language is one of these ISO 639-1 codes ("pt-BR" counts as "pt"). Devices without a language do not match.',
      { type: "string", minLength: 2, maxLength: 35 },
    ),
    app_versions: stringList(
      "The device's app_version is exactly one of these.",
      { type: "string", minLength: 1, maxLength: 64 },
      100,
    ),
    timezones: stringList("The device's IANA time zone is one of these.", {
      type: "string",
      minLength: 1,
      maxLength: 64,
    }),
    has_external_id: {
      type: "boolean",
      description: "true: only devices with an external_id; false: only devices without one.",
    },
  },
  examples: [
    { tags_any: ["beta", "premium"], tags_none: ["churned"], platforms: ["ios", "android"], languages: ["de"] },
  ],
} as const;

const name = {
  type: "string",
  minLength: 1,
  maxLength: 200,
  description: "Unique per app.",
  examples: ["Beta testers in Germany"],
} as const;

export const segmentSchema = component(
  "Segment",
  { description: "A named, stored audience rule of an app; target it with POST /v1/push/send-to-segment." },
  {
    id: uuid("Segment id, used as segment_id and in /v1/segments/{id}."),
    app_id: uuid("Owning app."),
    name,
    rule: { $ref: "SegmentRule#" },
    preview_count: {
      type: ["integer", "null"],
      minimum: 0,
      description:
        "Targetable devices (opted in, valid) matching the rule right now. Counted on create and get; null in " +
        "lists and after an update. A send counts again when its delivery starts.",
    },
    created_at: timestamp("Creation time (UTC)."),
    updated_at: timestamp("Last change (UTC)."),
  },
);

const segmentParams = idParams("id", "Segment id.");
const tags = ["Segments"];

export const createSegmentSchema = {
  tags,
  operationId: "createSegment",
  summary: "Create a segment",
  body: {
    type: "object",
    required: ["app_id", "name", "rule"],
    additionalProperties: false,
    properties: { app_id: uuid("The app."), name, rule: { $ref: "SegmentRule#" } },
  },
  response: { 201: ok("The segment, with preview_count.", "Segment"), ...errorResponses(400, 403, 404, 409, 413, 415) },
};

export const previewSegmentSchema = {
  tags,
  operationId: "previewSegment",
  summary: "Count the devices a segment rule selects",
  description:
    "Counts the targetable devices (opted in, valid) of the app that the rule selects right now, without storing " +
    "anything: the count a segment with this rule would show as preview_count. A read, like GET.",
  body: {
    type: "object",
    required: ["app_id", "rule"],
    additionalProperties: false,
    properties: { app_id: uuid("The app."), rule: { $ref: "SegmentRule#" } },
  },
  response: {
    200: {
      description: "How many devices match now.",
      headers: rateLimitHeaders,
      type: "object",
      required: ["count"],
      additionalProperties: false,
      properties: { count: { type: "integer", minimum: 0, description: "Targetable devices matching the rule." } },
    },
    ...errorResponses(400, 403, 404, 413, 415),
  },
};

export const listSegmentsSchema = {
  tags,
  operationId: "listSegments",
  summary: "List segments of an app",
  querystring: pageQuerystring(appQuery),
  response: { 200: listOf("Segment", "A page of segments (preview_count null)."), ...errorResponses(400, 403, 404) },
};

export const getSegmentSchema = {
  tags,
  operationId: "getSegment",
  summary: "Get a segment",
  params: segmentParams,
  response: { 200: ok("The segment, with preview_count.", "Segment"), ...errorResponses(403, 404) },
};

export const updateSegmentSchema = {
  tags,
  operationId: "updateSegment",
  summary: "Update a segment",
  description: "Changes the name, the rule or both; a given rule replaces the stored one entirely.",
  params: segmentParams,
  body: {
    type: "object",
    minProperties: 1,
    additionalProperties: false,
    properties: { name, rule: { $ref: "SegmentRule#" } },
  },
  response: { 200: ok("The updated segment.", "Segment"), ...errorResponses(400, 403, 404, 409, 413, 415) },
};

export const deleteSegmentSchema = {
  tags,
  operationId: "deleteSegment",
  summary: "Delete a segment",
  description:
    'Scheduled campaigns that target it fail (failure_reason "segment not found") when their delivery time comes.',
  params: segmentParams,
  response: { 204: noContent("Deleted."), ...errorResponses(403, 404) },
};
