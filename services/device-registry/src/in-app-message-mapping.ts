import type { MessageInitShape } from "@bufbuild/protobuf";
import type { DeviceInAppMessageSchema, InAppAudienceSchema, InAppMessageSchema } from "@herald/proto/in_app_message";
import { toTimestamp } from "@herald/runtime";
import { FALLBACK_LANGUAGE } from "./in-app-message-checks.js";
import type { DeviceCandidateRow, InAppMessageRow } from "./in-app-message-store.js";

export function toInAppMessage(row: InAppMessageRow): MessageInitShape<typeof InAppMessageSchema> {
  return {
    id: row.id,
    appId: row.app_id,
    name: row.name,
    contents: row.contents,
    imageUrl: row.image_url ?? undefined,
    actionUrl: row.action_url ?? undefined,
    audience: toAudience(row),
    startsAt: row.starts_at ? toTimestamp(row.starts_at) : undefined,
    endsAt: row.ends_at ? toTimestamp(row.ends_at) : undefined,
    priority: row.priority,
    maxImpressions: row.max_impressions ?? undefined,
    stats: {
      impressions: BigInt(row.impressions),
      clicks: BigInt(row.clicks),
      dismissals: BigInt(row.dismissals),
      devices: BigInt(row.devices),
    },
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
  };
}

function toAudience(row: InAppMessageRow): MessageInitShape<typeof InAppAudienceSchema> {
  switch (row.audience_kind) {
    case "all":
      return { target: { case: "all", value: {} } };
    case "segment":
      return { target: { case: "segmentId", value: row.segment_id ?? "" } };
    case "external_ids":
      return { target: { case: "externalIds", value: { externalIds: row.external_ids ?? [] } } };
  }
}

/**
 * A message as the device shows it: the entry of the device's language when the message
 * has one, else the "en" fallback (which every stored message has); `language` says which.
 */
export function toDeviceMessage(
  row: DeviceCandidateRow,
  deviceLanguage: string | null,
): MessageInitShape<typeof DeviceInAppMessageSchema> {
  const own = deviceLanguage !== null && row.own !== null;
  const language = own ? deviceLanguage : FALLBACK_LANGUAGE;
  const content = (own ? row.own : row.fallback) ?? { title: "", body: "" };
  return {
    id: row.id,
    language,
    title: content.title,
    body: content.body,
    imageUrl: row.image_url ?? undefined,
    actionUrl: row.action_url ?? undefined,
    priority: row.priority,
    endsAt: row.ends_at ? toTimestamp(row.ends_at) : undefined,
  };
}
