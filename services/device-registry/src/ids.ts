import { invalidArgument, isUuid } from "@herald/runtime";

/** Ids are UUIDs; anything else is checked here so that Postgres never sees a bad cast. */
export { isUuid };

export function requireAppId(appId: string): string {
  if (!isUuid(appId)) throw invalidArgument("app_id must be a UUID");
  return appId;
}
