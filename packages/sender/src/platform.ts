import { Platform } from "@herald/proto/common";
import type { PlatformSubject } from "@herald/runtime";

const BY_SUBJECT: Record<PlatformSubject, Platform> = {
  ios: Platform.IOS,
  android: Platform.ANDROID,
  web: Platform.WEB,
};

export const platformFromSubject = (s: PlatformSubject): Platform => BY_SUBJECT[s];

export function subjectFromPlatform(p: Platform): PlatformSubject {
  const found = (Object.keys(BY_SUBJECT) as PlatformSubject[]).find((k) => BY_SUBJECT[k] === p);
  if (!found) throw new Error(`no delivery subject for platform ${p}`);
  return found;
}
