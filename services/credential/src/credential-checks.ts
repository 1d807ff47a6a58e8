import { Platform, type PageRequest } from "@herald/proto/common";
import { ApiKeyKind, KeyScope } from "@herald/proto/credential";
import { invalidArgument, isUuid, pageOf } from "@herald/runtime";
import type { ApiKeyKindName } from "./api-key-secret.js";
import { BUNDLE_ID, type PlatformName } from "./platform-credentials.js";
import type { KeyScopeName, PageQuery } from "./credential-store.js";

/**
 * Checks of request fields, shared by the RPC handlers. Each returns the normalised
 * value or throws INVALID_ARGUMENT naming the field.
 */

/** Ids are UUIDs; anything else cannot name an existing row (and must not reach Postgres). */
export { isUuid };

const PLATFORM_NAMES: Partial<Record<Platform, PlatformName>> = {
  [Platform.IOS]: "ios",
  [Platform.ANDROID]: "android",
  [Platform.WEB]: "web",
};

export const PLATFORM_ENUMS: Record<PlatformName, Platform> = {
  ios: Platform.IOS,
  android: Platform.ANDROID,
  web: Platform.WEB,
};

export function platformName(platform: Platform, field = "platform"): PlatformName {
  const name = PLATFORM_NAMES[platform];
  if (!name) throw invalidArgument(`${field} must be ios, android or web`);
  return name;
}

export function appName(value: string): string {
  const name = value.trim();
  if (name.length < 1 || name.length > 200) throw invalidArgument("name must be 1 to 200 characters");
  return name;
}

export function bundleId(value: string): string {
  if (!BUNDLE_ID.test(value)) {
    throw invalidArgument(
      "bundle_id must be 1 to 255 characters of letters, digits, '.', '_' or '-', starting with a letter or digit",
    );
  }
  return value;
}

export function keyName(value: string): string {
  const name = value.trim();
  if (name.length < 1 || name.length > 100) throw invalidArgument("name must be 1 to 100 characters");
  return name;
}

export function keyScope(scope: KeyScope): KeyScopeName {
  if (scope === KeyScope.ORG) return "org";
  if (scope === KeyScope.APP || scope === KeyScope.UNSPECIFIED) return "app";
  throw invalidArgument("scope must be org or app");
}

/** Unspecified is a server key; a client key is publishable, so it may reach one app only. */
export function keyKind(kind: ApiKeyKind, scope: KeyScopeName): ApiKeyKindName {
  if (kind === ApiKeyKind.SERVER || kind === ApiKeyKind.UNSPECIFIED) return "server";
  if (kind !== ApiKeyKind.CLIENT) throw invalidArgument("kind must be server or client");
  if (scope !== "app") throw invalidArgument("a client key must be app-scoped");
  return "client";
}

/** 0 means the service default, stored as null so that changing the default reaches the key. */
export function rateLimit(value: number): number | null {
  if (value === 0) return null;
  if (!Number.isInteger(value) || value < 1 || value > 1_000_000) {
    throw invalidArgument("rate_limit_per_minute must be between 1 and 1000000");
  }
  return value;
}

/** The one paging rule (packages/runtime/src/paging.ts): out-of-range values are refused. */
export function pageQuery(page: PageRequest | undefined): PageQuery & { page: number; perPage: number } {
  const checked = pageOf(page);
  return { ...checked, limit: checked.perPage };
}
