import { Platform } from "@herald/proto/common";
import type { DevicePlatform } from "./push-token.js";

const TO_DB: Partial<Record<Platform, DevicePlatform>> = {
  [Platform.IOS]: "ios",
  [Platform.ANDROID]: "android",
  [Platform.WEB]: "web",
};

const TO_PROTO: Record<DevicePlatform, Platform> = {
  ios: Platform.IOS,
  android: Platform.ANDROID,
  web: Platform.WEB,
};

/** The stored name of a platform; undefined for UNSPECIFIED or an unknown number. */
export const platformName = (p: Platform): DevicePlatform | undefined => TO_DB[p];

export const platformEnum = (p: DevicePlatform): Platform => TO_PROTO[p];
