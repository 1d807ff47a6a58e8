import { appParams, errorResponses, ok, rateLimitHeaders, timestamp, uuid, component } from "./common.js";

const fingerprint = {
  type: "string",
  description: "SHA-256 of the private material (hex, first 16 bytes): tells keys apart without revealing them.",
  examples: ["3f5a0c1d9e8b7a6f5e4d3c2b1a091827"],
} as const;
const updatedAt = timestamp("When these credentials were stored (UTC).");

export const iosInputSchema = component(
  "IosPlatformConfigInput",
  { title: "iOS (APNs token authentication)" },
  {
    platform: { type: "string", const: "ios" },
    apns_p8_key: {
      type: "string",
      minLength: 1,
      maxLength: 8192,
      description:
        "Contents of the .p8 file: the PEM block `-----BEGIN PRIVATE KEY-----…`. Stored encrypted, never returned.",
    },
    apns_key_id: {
      type: "string",
      minLength: 1,
      maxLength: 64,
      description: "The key's 10-character Key ID.",
      examples: ["ABC123DEFG"],
    },
    apns_team_id: {
      type: "string",
      minLength: 1,
      maxLength: 64,
      description: "The 10-character Team ID.",
      examples: ["DEF123GHIJ"],
    },
    apns_topic: {
      type: "string",
      maxLength: 255,
      description: "apns-topic; the app's bundle_id when omitted.",
      examples: ["com.acme.app"],
    },
    apns_environment: {
      type: "string",
      enum: ["production", "sandbox"],
      description: "APNs environment; production when omitted.",
    },
  },
  ["apns_topic", "apns_environment"],
);

export const androidInputSchema = component(
  "AndroidPlatformConfigInput",
  { title: "Android (FCM HTTP v1 service account)" },
  {
    platform: { type: "string", const: "android" },
    fcm_service_account: {
      type: ["object", "string"],
      maxLength: 65536,
      maxProperties: 64,
      description:
        "The Google service-account JSON (with project_id, client_email, private_key, token_uri), as an object or as its text. " +
        "Stored encrypted; the private key is never returned.",
    },
  },
);

export const webInputSchema = component(
  "WebPlatformConfigInput",
  { title: "Web (VAPID)" },
  {
    platform: { type: "string", const: "web" },
    vapid_public_key: {
      type: "string",
      maxLength: 256,
      description: "base64url uncompressed P-256 point; generated with the private key when both are omitted.",
    },
    vapid_private_key: {
      type: "string",
      maxLength: 256,
      description: "base64url 32-byte P-256 scalar. Stored encrypted, never returned.",
    },
    vapid_subject: {
      type: "string",
      minLength: 1,
      maxLength: 512,
      description: "Contact for push services: a mailto: or https: URL.",
      examples: ["mailto:ops@acme.example"],
    },
  },
  ["vapid_public_key", "vapid_private_key"],
);

export const iosConfigSchema = component(
  "IosPlatformConfig",
  { description: "Stored APNs credentials, public parts only." },
  {
    platform: { type: "string", const: "ios" },
    apns_key_id: { type: "string" },
    apns_team_id: { type: "string" },
    apns_topic: { type: ["string", "null"] },
    apns_environment: { type: "string", enum: ["production", "sandbox"] },
    fingerprint,
    updated_at: updatedAt,
  },
);

export const androidConfigSchema = component(
  "AndroidPlatformConfig",
  { description: "Stored FCM service account, public parts only." },
  {
    platform: { type: "string", const: "android" },
    project_id: { type: "string" },
    client_email: { type: "string" },
    token_uri: { type: "string" },
    fingerprint,
    updated_at: updatedAt,
  },
);

export const webConfigSchema = component(
  "WebPlatformConfig",
  { description: "Stored VAPID key pair, public parts only." },
  {
    platform: { type: "string", const: "web" },
    vapid_public_key: { type: "string", description: "Give this to the web client library (applicationServerKey)." },
    vapid_subject: { type: "string" },
    fingerprint,
    updated_at: updatedAt,
  },
);

export const platformConfigsSchema = component(
  "PlatformConfigs",
  { description: "An app's platform configs; null where none is stored." },
  {
    app_id: uuid("The app."),
    ios: { anyOf: [{ $ref: "IosPlatformConfig#" }, { type: "null" }] },
    android: { anyOf: [{ $ref: "AndroidPlatformConfig#" }, { type: "null" }] },
    web: { anyOf: [{ $ref: "WebPlatformConfig#" }, { type: "null" }] },
  },
);

const tags = ["Platform configs"];

export const putPlatformConfigSchema = {
  tags,
  operationId: "setPlatformConfig",
  summary: "Store one platform's push credentials",
  description:
    "Validates the credentials (a bad key answers 422 saying what is wrong), encrypts the private material at rest and " +
    "replaces the app's previous config of that platform. The response shows public parts and a fingerprint only.",
  params: appParams,
  body: {
    type: "object",
    required: ["platform"],
    discriminator: { propertyName: "platform" },
    // The mapping to these components is added to the published document (openapi.ts):
    // ajv's discriminator needs const tags and rejects `mapping`.
    oneOf: [
      { $ref: "IosPlatformConfigInput#" },
      { $ref: "AndroidPlatformConfigInput#" },
      { $ref: "WebPlatformConfigInput#" },
    ],
  },
  response: {
    200: {
      description: "The stored config, public view.",
      headers: rateLimitHeaders,
      oneOf: [{ $ref: "IosPlatformConfig#" }, { $ref: "AndroidPlatformConfig#" }, { $ref: "WebPlatformConfig#" }],
    },
    ...errorResponses(400, 403, 404, 413, 422),
  },
};

export const getPlatformConfigsSchema = {
  tags,
  operationId: "getPlatformConfigs",
  summary: "Get an app's platform configs",
  params: appParams,
  response: { 200: ok("Public views of the stored configs.", "PlatformConfigs"), ...errorResponses(403, 404) },
};

export const webPushConfigSchema = component(
  "WebPushConfig",
  { description: "What a web page needs to subscribe to pushes: public, safe to ship." },
  {
    app_id: uuid("The app."),
    vapid_public_key: {
      type: "string",
      description:
        "The app's VAPID public key (uncompressed P-256 point, base64url): the `applicationServerKey` of " +
        "`pushManager.subscribe()`.",
      examples: ["BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM"],
    },
  },
);

export const getWebPushConfigSchema = {
  tags,
  operationId: "getWebPushConfig",
  summary: "Get an app's public web push config",
  description:
    "The public half of the app's web platform config, for the web SDK (which fetches it with a client key). " +
    "404 when the app has no web config yet.",
  params: appParams,
  response: { 200: ok("The public config.", "WebPushConfig"), ...errorResponses(403, 404) },
};
