import { invalidArgument } from "@herald/runtime";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else is checked here so that Postgres never sees a bad cast. */
export const isUuid = (value: string): boolean => UUID.test(value);

export function requireAppId(appId: string): string {
  if (!isUuid(appId)) throw invalidArgument("app_id must be a UUID");
  return appId;
}
