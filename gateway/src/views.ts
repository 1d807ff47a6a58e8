import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { Platform, type PageInfo } from "@herald/proto/common";
import { ApiKeyKind, KeyScope, type ApiKey, type App, type PlatformConfig } from "@herald/proto/credential";
import type { Device } from "@herald/proto/device";
import { fromTimestamp } from "@herald/runtime";

/**
 * Proto messages → the JSON the REST API promises: snake_case, ISO 8601 UTC timestamps,
 * enums as lower-case words, absent optionals as null.
 */

export type PlatformName = "ios" | "android" | "web";
export type ScopeName = "org" | "app";

const PLATFORM_NAMES: Record<PlatformName, Platform> = {
  ios: Platform.IOS,
  android: Platform.ANDROID,
  web: Platform.WEB,
};

export function platformName(p: Platform): PlatformName {
  if (p === Platform.IOS) return "ios";
  if (p === Platform.ANDROID) return "android";
  if (p === Platform.WEB) return "web";
  throw new Error(`unexpected platform ${p}`);
}

export const platformFromName = (name: PlatformName): Platform => PLATFORM_NAMES[name];

export function scopeName(s: KeyScope): ScopeName {
  if (s === KeyScope.ORG) return "org";
  if (s === KeyScope.APP) return "app";
  throw new Error(`unexpected key scope ${s}`);
}

export const scopeFromName = (name: ScopeName): KeyScope => (name === "org" ? KeyScope.ORG : KeyScope.APP);

export type KeyKindName = "server" | "client";

/** Keys stored before kinds existed answer UNSPECIFIED: they are server keys. */
export const keyKindName = (k: ApiKeyKind): KeyKindName => (k === ApiKeyKind.CLIENT ? "client" : "server");

export const keyKindFromName = (name: KeyKindName): ApiKeyKind =>
  name === "client" ? ApiKeyKind.CLIENT : ApiKeyKind.SERVER;

/** A timestamp the API always has; its absence is a backend bug, not a null. */
export function iso(ts: Timestamp | undefined): string {
  if (!ts) throw new Error("timestamp missing from backend response");
  return fromTimestamp(ts).toISOString();
}

const orNull = (s: string | undefined): string | null => (s === undefined || s === "" ? null : s);

export interface AppJson {
  id: string;
  org_id: string;
  name: string;
  platform: PlatformName;
  bundle_id: string;
  created_at: string;
  updated_at: string;
}

export function appView(app: App): AppJson {
  return {
    id: app.id,
    org_id: app.orgId,
    name: app.name,
    platform: platformName(app.platform),
    bundle_id: app.bundleId,
    created_at: iso(app.createdAt),
    updated_at: iso(app.updatedAt),
  };
}

export interface DeviceJson {
  id: string;
  app_id: string;
  push_token: string;
  platform: PlatformName;
  external_id: string | null;
  language: string | null;
  timezone: string | null;
  app_version: string | null;
  tags: string[];
  opted_in: boolean;
  invalid: boolean;
  created_at: string;
  updated_at: string;
}

export function deviceView(d: Device): DeviceJson {
  return {
    id: d.id,
    app_id: d.appId,
    push_token: d.pushToken,
    platform: platformName(d.platform),
    external_id: orNull(d.externalId),
    language: orNull(d.language),
    timezone: orNull(d.timezone),
    app_version: orNull(d.appVersion),
    tags: [...d.tags],
    opted_in: d.optedIn,
    invalid: d.invalid,
    created_at: iso(d.createdAt),
    updated_at: iso(d.updatedAt),
  };
}

export interface ApiKeyJson {
  id: string;
  name: string;
  scope: ScopeName;
  kind: KeyKindName;
  app_id: string;
  prefix: string;
  rate_limit_per_minute: number;
  created_at: string;
}

/** `defaultLimit` stands in for a key stored without a limit of its own (0). */
export function apiKeyView(key: ApiKey, defaultLimit: number): ApiKeyJson {
  return {
    id: key.id,
    name: key.name,
    scope: scopeName(key.scope),
    kind: keyKindName(key.kind),
    app_id: key.appId,
    prefix: key.prefix,
    rate_limit_per_minute: key.rateLimitPerMinute || defaultLimit,
    created_at: iso(key.createdAt),
  };
}

export interface IosConfigJson {
  platform: "ios";
  apns_key_id: string;
  apns_team_id: string;
  apns_topic: string | null;
  apns_environment: string;
  fingerprint: string;
  updated_at: string;
}

export interface AndroidConfigJson {
  platform: "android";
  project_id: string;
  client_email: string;
  token_uri: string;
  fingerprint: string;
  updated_at: string;
}

export interface WebConfigJson {
  platform: "web";
  vapid_public_key: string;
  vapid_subject: string;
  fingerprint: string;
  updated_at: string;
}

export type PlatformConfigJson = IosConfigJson | AndroidConfigJson | WebConfigJson;

export function platformConfigView(c: PlatformConfig): PlatformConfigJson {
  const common = { fingerprint: c.fingerprint, updated_at: iso(c.updatedAt) };
  switch (c.details.case) {
    case "apns":
      return {
        platform: "ios",
        apns_key_id: c.details.value.keyId,
        apns_team_id: c.details.value.teamId,
        apns_topic: orNull(c.details.value.topic),
        apns_environment: c.details.value.environment,
        ...common,
      };
    case "fcm":
      return {
        platform: "android",
        project_id: c.details.value.projectId,
        client_email: c.details.value.clientEmail,
        token_uri: c.details.value.tokenUri,
        ...common,
      };
    case "vapid":
      return {
        platform: "web",
        vapid_public_key: c.details.value.publicKey,
        vapid_subject: c.details.value.subject,
        ...common,
      };
    default:
      throw new Error(`platform config of ${platformName(c.platform)} has no public details`);
  }
}

export interface PlatformConfigsJson {
  app_id: string;
  ios: IosConfigJson | null;
  android: AndroidConfigJson | null;
  web: WebConfigJson | null;
}

export function platformConfigsView(appId: string, configs: PlatformConfig[]): PlatformConfigsJson {
  const out: PlatformConfigsJson = { app_id: appId, ios: null, android: null, web: null };
  for (const c of configs) {
    const view = platformConfigView(c);
    if (view.platform === "ios") out.ios = view;
    else if (view.platform === "android") out.android = view;
    else out.web = view;
  }
  return out;
}

export interface PageQuery {
  page: number;
  per_page: number;
}

export interface ListJson<T> {
  data: T[];
  page: number;
  per_page: number;
  total: number;
}

/** The list envelope; the backend's page info wins over the request's when present. */
export function listView<T>(data: T[], info: PageInfo | undefined, asked: PageQuery): ListJson<T> {
  return {
    data,
    page: info?.page || asked.page,
    per_page: info?.perPage || asked.per_page,
    total: Number(info?.total ?? BigInt(data.length)),
  };
}
