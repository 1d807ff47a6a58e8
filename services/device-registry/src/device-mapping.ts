import type { MessageInitShape } from "@bufbuild/protobuf";
import { toTimestamp } from "@herald/runtime";
import type { AudienceDeviceSchema, DeviceSchema } from "@herald/proto/device";
import { platformEnum } from "./platform.js";
import type { AudienceRow, DeviceRow } from "./device-store.js";

export function toDevice(row: DeviceRow): MessageInitShape<typeof DeviceSchema> {
  return {
    id: row.id,
    appId: row.app_id,
    pushToken: row.push_token,
    platform: platformEnum(row.platform),
    externalId: row.external_id ?? undefined,
    language: row.language ?? undefined,
    timezone: row.timezone ?? undefined,
    appVersion: row.app_version ?? undefined,
    tags: row.tags,
    optedIn: row.opted_in,
    invalid: row.invalid,
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
  };
}

export function toAudienceDevice(row: AudienceRow): MessageInitShape<typeof AudienceDeviceSchema> {
  return {
    id: row.id,
    platform: platformEnum(row.platform),
    pushToken: row.push_token,
    language: row.language ?? undefined,
  };
}
