import { errorResponses, ok, rateLimitHeaders, UUID_PATTERN, uuid } from "./common.js";

/**
 * The four send endpoints: one body shape plus the target. Limits here are the shape;
 * the campaign service adds the semantic checks (an "en" entry, a start time that is
 * not past, a payload that fits every provider) and answers those with 422.
 */

const content = {
  type: "object",
  description: "One language's text; at least one of title and body.",
  minProperties: 1,
  additionalProperties: false,
  properties: {
    title: {
      type: "string",
      maxLength: 256,
      description: "Notification title, at most 256 characters.",
      examples: ["Sale starts now"],
    },
    body: {
      type: "string",
      maxLength: 2048,
      description: "Notification text, at most 2,048 characters.",
      examples: ["50% off everything."],
    },
  },
} as const;

const sendProperties = {
  app_id: uuid("The app whose devices receive the notification."),
  name: {
    type: "string",
    minLength: 1,
    maxLength: 200,
    description: "Your label for the campaign.",
    examples: ["Spring sale"],
  },
  contents: {
    type: "object",
    description:
      'Language code → text. Keys are ISO 639-1 codes (two lowercase letters, e.g. "en", "de"). Each device gets ' +
      'the entry of its registered language, and the "en" entry when there is none for its language, so "en" is ' +
      "required (without it: 422). 1 to 100 languages.",
    minProperties: 1,
    maxProperties: 100,
    propertyNames: { pattern: "^[a-z]{2}$" },
    additionalProperties: content,
    examples: [{ en: { title: "Sale starts now", body: "50% off everything." }, de: { title: "Jetzt im Angebot" } }],
  },
  data: {
    type: "object",
    description:
      "Custom key/value pairs passed to the app's notification handler, at most 3 KB as JSON. iOS: top-level " +
      'keys of the APNs payload beside `aps` (so the key "aps" is refused with 400). Android: FCM `data`, every ' +
      "value converted to a string. Web: the `data` field of the JSON the service worker receives; the web client " +
      "library opens `action_url` on click. Every push also carries the campaign's id for the client library's " +
      "notification events: iOS `herald_campaign_id` beside `aps`, Android data `herald_campaign_id` (a data key " +
      "of that name is overwritten), web `campaign_id` beside `data`.",
    propertyNames: { not: { const: "aps" } },
    examples: [{ action_url: "https://acme.example/sale", sale_id: "42" }],
  },
  scheduled_at: {
    type: "string",
    format: "date-time",
    description:
      "ISO 8601 time with offset (UTC recommended) at which delivery starts; omitted: at once. In the past: 422; " +
      "at most one year ahead. A scheduled campaign can be cancelled until delivery starts.",
    examples: ["2026-11-21T10:00:00.000Z"],
  },
  ttl: {
    type: "integer",
    minimum: 0,
    maximum: 2_419_200,
    description:
      "Seconds the provider keeps the notification for a device that is offline, counted from the send, at most " +
      "28 days (2,419,200). iOS: `apns-expiration`. Android: FCM `android.ttl`. Web: the `TTL` header. 0 or " +
      "omitted: the providers' default (28 days).",
    examples: [86400],
  },
  priority: {
    type: "string",
    enum: ["normal", "high"],
    description:
      'Delivery urgency; "normal" when omitted. iOS: `apns-priority` 10 (high) or 5 (normal). Android: FCM ' +
      "`android.priority` HIGH or NORMAL (high may wake the device). Web: the `Urgency` header high or normal.",
  },
  collapse_id: {
    type: "string",
    minLength: 1,
    maxLength: 64,
    description:
      "Notifications with the same collapse_id replace each other on the device, so only the latest is shown. " +
      "At most 64 bytes. iOS: `apns-collapse-id`. Android: FCM `android.collapse_key`. Web: the `Topic` header " +
      "(a hash of the value, as the header allows only 32 URL-safe characters).",
    examples: ["sale-2026"],
  },
  image_url: {
    type: "string",
    format: "uri",
    pattern: "^https://[^/?#\\s]+",
    maxLength: 2048,
    description:
      "An https image shown with the notification. iOS: in the payload for the app's Notification Service " +
      "Extension to attach (`mutable-content` is set). Android: FCM `notification.image`. Web: `image` in the " +
      "JSON the service worker receives.",
    examples: ["https://acme.example/sale.png"],
  },
} as const;

const httpsUrl = (description: string, example: string) =>
  ({
    type: "string",
    format: "uri",
    pattern: "^https://[^/?#\\s]+",
    maxLength: 2048,
    description,
    examples: [example],
  }) as const;

/**
 * Presentation options; docs/providers.md ("Delivery options") maps each to the
 * provider's field. Options a platform has no field for are ignored for its devices.
 */
export const deliveryOptions = {
  sound: {
    type: "string",
    pattern: "^[A-Za-z0-9_.-]{1,64}$",
    description:
      'The sound to play: "default" or a sound file of the app. iOS: `aps.sound` (a file in the app bundle, e.g. ' +
      '"chime.caf"; alerts play "default" when omitted). Android: FCM `android.notification.sound` (a res/raw ' +
      "resource; on Android 8+ the channel's sound wins). Web: none, browsers have no notification sound.",
    examples: ["default"],
  },
  badge: {
    type: "integer",
    minimum: 0,
    maximum: 99_999,
    description:
      "Sets the app icon's badge count; 0 clears it. iOS: `aps.badge`. Android: FCM " +
      "`android.notification.notification_count`. Web: `badge_count` in the JSON the service worker receives " +
      "(for navigator.setAppBadge). Not with badge_increment (400).",
    examples: [3],
  },
  badge_increment: {
    type: "integer",
    minimum: 1,
    maximum: 99_999,
    description:
      "Adds to the badge count instead of setting it. No provider has an increment, so the client library applies " +
      "it to the count it keeps: iOS: `herald_badge_increment` beside `aps`, with `aps.mutable-content` so the " +
      "Notification Service Extension runs. Android: FCM data `herald_badge_increment`. Web: `badge_increment` " +
      "in the JSON the service worker receives. Not with badge (400).",
    examples: [1],
  },
  thread_id: {
    type: "string",
    minLength: 1,
    maxLength: 64,
    description: "iOS only: `aps.thread-id`, groups notifications in Notification Center.",
    examples: ["chat-42"],
  },
  content_available: {
    type: "boolean",
    description:
      "A silent push that wakes the app with `data` and shows nothing. iOS: `apns-push-type: background`, " +
      "`apns-priority: 5`, `aps.content-available: 1` and no alert. Android: an FCM data-only message (no " +
      "`notification`). The text of `contents` is not sent to iOS and Android devices. Web Push has no silent " +
      "push (browsers show a notification for every push): web devices get the notification with " +
      "`content_available: true` in its JSON. Not with sound, badge, badge_increment, thread_id, " +
      "mutable_content, android_channel_id or image_url (422).",
  },
  mutable_content: {
    type: "boolean",
    description:
      "iOS only: `aps.mutable-content: 1`, so the app's Notification Service Extension may change the notification " +
      "before it is shown (set anyway when the send has an image_url or badge_increment).",
  },
  icon: httpsUrl(
    "Web only: the notification's icon, `icon` in the JSON the service worker receives (its showNotification option).",
    "https://acme.example/icon-192.png",
  ),
  web_badge: httpsUrl(
    "Web only: the small monochrome image shown where the notification does not fit (Android's status bar), " +
      "`badge` in the JSON the service worker receives (its showNotification option). Not a count: see badge.",
    "https://acme.example/badge-72.png",
  ),
  actions: {
    type: "array",
    maxItems: 2,
    description:
      "Web only: up to two buttons, `actions` in the JSON the service worker receives (showNotification's " +
      "NotificationAction: action, title, icon). The service worker gets the clicked button's `action`.",
    items: {
      type: "object",
      required: ["action", "title"],
      additionalProperties: false,
      properties: {
        action: { type: "string", minLength: 1, maxLength: 64, description: "Id of the button, unique in the send." },
        title: { type: "string", minLength: 1, maxLength: 64, description: "The button's label." },
        icon: httpsUrl("An icon on the button.", "https://acme.example/reply.png"),
      },
    },
    examples: [[{ action: "open", title: "Open" }]],
  },
  android_channel_id: {
    type: "string",
    pattern: "^[A-Za-z0-9_.-]{1,64}$",
    description:
      "Android only: the notification channel, FCM `android.notification.channel_id`. Must be a channel of the app " +
      "(see /v1/apps/{app_id}/android-channels), else 422.",
    examples: ["news"],
  },
} as const;

const sendRequired = ["app_id", "name", "contents"];

const body = (extra: Record<string, object>, extraRequired: string[]) => ({
  type: "object",
  required: [...sendRequired, ...extraRequired],
  additionalProperties: false,
  properties: { ...sendProperties, ...deliveryOptions, ...extra },
});

export const sendBody = body({}, []);

export const sendToUsersBody = body(
  {
    external_ids: {
      type: "array",
      minItems: 1,
      maxItems: 10_000,
      items: { type: "string", minLength: 1, maxLength: 255 },
      description:
        "Your user ids (devices' external_id): every targetable device of each is sent to. 1 to 10,000; duplicates count once.",
      examples: [["user-42", "user-43"]],
    },
  },
  ["external_ids"],
);

export const sendToSegmentBody = body(
  { segment_id: uuid("A segment of the same app (see /v1/segments); unknown: 404.") },
  ["segment_id"],
);

export const sendToDevicesBody = body(
  {
    device_ids: {
      type: "array",
      minItems: 1,
      maxItems: 100,
      items: { type: "string", format: "uuid", pattern: UUID_PATTERN },
      description:
        "Devices of the app by id (see /v1/devices), e.g. one device for a test push. 1 to 100; duplicates count " +
        "once. Ids that are unknown, of another app, opted out or with an invalid token are simply not sent to.",
      examples: [["2b5f6a0e-8c1d-4e7a-9f3b-6d2c1a0e9b47"]],
    },
  },
  ["device_ids"],
);

const idempotencyHeaders = {
  type: "object",
  properties: {
    "Idempotency-Key": {
      type: "string",
      minLength: 1,
      maxLength: 255,
      pattern: "^[\\x20-\\x7E]+$",
      description:
        "Makes retries safe: a second request with the same key from the same API key (or session user) within " +
        "24 hours creates nothing and answers 200 with the first campaign and `Idempotent-Replayed: true`, even if " +
        "its body differs; reusing it for a send to another app answers 409. 1 to 255 printable ASCII characters, " +
        "e.g. a UUID.",
      examples: ["5b1f8c0e-2a4d-4f7e-9c3b-8d6a1e0f2b47"],
    },
  },
};

const replayed = {
  description: "A replay: the campaign created by the first request with this Idempotency-Key.",
  headers: {
    ...rateLimitHeaders,
    "Idempotent-Replayed": { type: "string", enum: ["true"], description: "Present on replays." },
  },
  $ref: "Campaign#",
};

const sendResponses = {
  200: replayed,
  201: ok("The campaign: status queued (or already further) for an immediate send, scheduled otherwise.", "Campaign"),
};

const tags = ["Push"];
const common =
  "Creates a campaign. Without scheduled_at, delivery starts at once; only opted-in devices whose token is valid " +
  "are targeted. Each language's notification, with data, image_url and the options, must fit every provider's " +
  "limit as that platform's sender builds it (3993 bytes of Web Push JSON, 4096 for APNs and FCM), else 422 " +
  "naming the language and platform. Watch progress at GET /v1/campaigns/{id}.";

/** A send endpoint: the common description, then what its target adds. */
const sendOperation = (operationId: string, summary: string, target: string, body: object) => ({
  tags,
  operationId,
  summary,
  description: target ? `${common} ${target}` : common,
  headers: idempotencyHeaders,
  body,
  response: { ...sendResponses, ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
});

export const sendSchema = sendOperation("sendToAll", "Send to all devices of an app", "", sendBody);

export const sendToUsersSchema = sendOperation(
  "sendToUsers",
  "Send to users by external id",
  "Targets the devices registered with one of the given external ids.",
  sendToUsersBody,
);

export const sendToDevicesSchema = sendOperation(
  "sendToDevices",
  "Send to devices by id",
  "Targets exactly the given devices, on every platform; audience_size counts those that are targetable when " +
    "delivery starts. Sends the same way a campaign to all does, so a test push to one device shows what a " +
    "campaign would do.",
  sendToDevicesBody,
);

export const sendToSegmentSchema = sendOperation(
  "sendToSegment",
  "Send to a segment",
  "Targets the devices matching the segment's rule when delivery starts.",
  sendToSegmentBody,
);
