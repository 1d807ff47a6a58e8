import { appParams } from "./apps.js";
import { errorResponses, ok, rateLimitHeaders, timestamp, uuid } from "./common.js";

const fingerprint = {
  type: "string",
  description: "SHA-256 of the private material (hex, first 16 bytes): tells keys apart without revealing them.",
  examples: ["3f5a0c1d9e8b7a6f5e4d3c2b1a091827"],
} as const;
const updatedAt = timestamp("When these credentials were stored (UTC).");

export const iosInputSchema = {
  $id: "IosPlatformConfigInput",
  type: "object",
  title: "iOS (APNs token authentication)",
  required: ["platform", "apns_p8_key", "apns_key_id", "apns_team_id"],
  additionalProperties: false,
  properties: {
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
} as const;

export const androidInputSchema = {
  $id: "AndroidPlatformConfigInput",
  type: "object",
  title: "Android (FCM HTTP v1 service account)",
  required: ["platform", "fcm_service_account"],
  additionalProperties: false,
  properties: {
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
} as const;

export const webInputSchema = {
  $id: "WebPlatformConfigInput",
  type: "object",
  title: "Web (VAPID)",
  required: ["platform", "vapid_subject"],
  additionalProperties: false,
  properties: {
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
} as const;

export const iosConfigSchema = {
  $id: "IosPlatformConfig",
  type: "object",
  description: "Stored APNs credentials, public parts only.",
  required: ["platform", "apns_key_id", "apns_team_id", "apns_topic", "apns_environment", "fingerprint", "updated_at"],
  additionalProperties: false,
  properties: {
    platform: { type: "string", const: "ios" },
    apns_key_id: { type: "string" },
    apns_team_id: { type: "string" },
    apns_topic: { type: ["string", "null"] },
    apns_environment: { type: "string", enum: ["production", "sandbox"] },
    fingerprint,
    updated_at: updatedAt,
  },
} as const;

export const androidConfigSchema = {
  $id: "AndroidPlatformConfig",
  type: "object",
  description: "Stored FCM service account, public parts only.",
  required: ["platform", "project_id", "client_email", "token_uri", "fingerprint", "updated_at"],
  additionalProperties: false,
  properties: {
    platform: { type: "string", const: "android" },
    project_id: { type: "string" },
    client_email: { type: "string" },
    token_uri: { type: "string" },
    fingerprint,
    updated_at: updatedAt,
  },
} as const;

export const webConfigSchema = {
  $id: "WebPlatformConfig",
  type: "object",
  description: "Stored VAPID key pair, public parts only.",
  required: ["platform", "vapid_public_key", "vapid_subject", "fingerprint", "updated_at"],
  additionalProperties: false,
  properties: {
    platform: { type: "string", const: "web" },
    vapid_public_key: { type: "string", description: "Give this to the web client library (applicationServerKey)." },
    vapid_subject: { type: "string" },
    fingerprint,
    updated_at: updatedAt,
  },
} as const;

export const platformConfigsSchema = {
  $id: "PlatformConfigs",
  type: "object",
  description: "An app's platform configs; null where none is stored.",
  required: ["app_id", "ios", "android", "web"],
  additionalProperties: false,
  properties: {
    app_id: uuid("The app."),
    ios: { anyOf: [{ $ref: "IosPlatformConfig#" }, { type: "null" }] },
    android: { anyOf: [{ $ref: "AndroidPlatformConfig#" }, { type: "null" }] },
    web: { anyOf: [{ $ref: "WebPlatformConfig#" }, { type: "null" }] },
  },
} as const;

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

export const webPushConfigSchema = {
  $id: "WebPushConfig",
  type: "object",
  description: "What a web page needs to subscribe to pushes: public, safe to ship.",
  required: ["app_id", "vapid_public_key"],
  additionalProperties: false,
  properties: {
    app_id: uuid("The app."),
    vapid_public_key: {
      type: "string",
      description:
        "The app's VAPID public key (uncompressed P-256 point, base64url): the `applicationServerKey` of " +
        "`pushManager.subscribe()`.",
      examples: ["BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM"],
    },
  },
} as const;

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
