import type { MessageInitShape } from "@bufbuild/protobuf";
import type { PageInfoSchema } from "@herald/proto/common";
import {
  ApiKeyKind,
  KeyScope,
  type ApiKeySchema,
  type AppSchema,
  type GetSendCredentialsResponseSchema,
  type PlatformConfigSchema,
} from "@herald/proto/credential";
import { toTimestamp } from "@herald/runtime";
import type { ApnsPublicData, FcmPublicData, VapidPublicData } from "./platform-credentials.js";
import { PLATFORM_ENUMS } from "./credential-checks.js";
import type { ApiKeyRecord, AppRecord, PlatformConfigRecord } from "./credential-store.js";

/** Records to response messages. */

export const toApp = (app: AppRecord): MessageInitShape<typeof AppSchema> => ({
  id: app.id,
  orgId: app.orgId,
  name: app.name,
  platform: PLATFORM_ENUMS[app.platform],
  bundleId: app.bundleId,
  createdAt: toTimestamp(app.createdAt),
  updatedAt: toTimestamp(app.updatedAt),
});

export const toKeyScope = (scope: ApiKeyRecord["scope"]): KeyScope => (scope === "org" ? KeyScope.ORG : KeyScope.APP);

export const toApiKeyKind = (kind: ApiKeyRecord["kind"]): ApiKeyKind =>
  kind === "client" ? ApiKeyKind.CLIENT : ApiKeyKind.SERVER;

/** Requests per minute of keys without their own limit, by kind (HERALD_DEFAULT_RATE_LIMIT, HERALD_CLIENT_KEY_RATE_LIMIT). */
export type DefaultRateLimits = Record<ApiKeyRecord["kind"], number>;

export const effectiveRateLimit = (key: ApiKeyRecord, defaults: DefaultRateLimits): number =>
  key.rateLimitPerMinute ?? defaults[key.kind];

export const toApiKey = (key: ApiKeyRecord, defaults: DefaultRateLimits): MessageInitShape<typeof ApiKeySchema> => ({
  id: key.id,
  orgId: key.orgId,
  appId: key.appId ?? "",
  scope: toKeyScope(key.scope),
  kind: toApiKeyKind(key.kind),
  name: key.name,
  prefix: key.prefix,
  rateLimitPerMinute: effectiveRateLimit(key, defaults),
  createdAt: toTimestamp(key.createdAt),
  revokedAt: key.revokedAt ? toTimestamp(key.revokedAt) : undefined,
});

export const toPageInfo = (
  page: { page: number; perPage: number },
  total: number,
): MessageInitShape<typeof PageInfoSchema> => ({ page: page.page, perPage: page.perPage, total: BigInt(total) });

export function toPlatformConfig(config: PlatformConfigRecord): MessageInitShape<typeof PlatformConfigSchema> {
  return {
    platform: PLATFORM_ENUMS[config.platform],
    fingerprint: config.fingerprint,
    updatedAt: toTimestamp(config.updatedAt),
    details: publicDetails(config),
  };
}

function publicDetails(config: PlatformConfigRecord): MessageInitShape<typeof PlatformConfigSchema>["details"] {
  switch (config.platform) {
    case "ios":
      return { case: "apns", value: config.publicData as ApnsPublicData };
    case "android":
      return { case: "fcm", value: config.publicData as FcmPublicData };
    case "web":
      return { case: "vapid", value: config.publicData as VapidPublicData };
  }
}

/** The decrypted credentials, joined with their public parts, for the senders. */
export function toSendCredentials(
  config: PlatformConfigRecord,
  privateMaterial: string,
): MessageInitShape<typeof GetSendCredentialsResponseSchema> {
  return { fingerprint: config.fingerprint, credentials: sendCredentials(config, privateMaterial) };
}

function sendCredentials(
  config: PlatformConfigRecord,
  privateMaterial: string,
): MessageInitShape<typeof GetSendCredentialsResponseSchema>["credentials"] {
  switch (config.platform) {
    case "ios":
      return { case: "apns", value: { ...(config.publicData as ApnsPublicData), p8Key: privateMaterial } };
    case "android":
      return { case: "fcm", value: { serviceAccountJson: privateMaterial } };
    case "web":
      return { case: "vapid", value: { ...(config.publicData as VapidPublicData), privateKey: privateMaterial } };
  }
}
