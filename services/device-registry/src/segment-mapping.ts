import type { MessageInitShape } from "@bufbuild/protobuf";
import { toTimestamp } from "@herald/runtime";
import type { SegmentRuleSchema, SegmentSchema } from "@herald/proto/device";
import type { SegmentCriteria } from "./audience-query.js";
import { platformEnum } from "./platform.js";
import type { SegmentRow } from "./segment-store.js";

export function toSegment(row: SegmentRow, previewCount?: number): MessageInitShape<typeof SegmentSchema> {
  return {
    id: row.id,
    appId: row.app_id,
    name: row.name,
    rule: toSegmentRule(row.rule),
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
    previewCount: previewCount === undefined ? undefined : BigInt(previewCount),
  };
}

/** The rule as stored, i.e. normalised ("PT-br" comes back as "pt"). */
export function toSegmentRule(rule: SegmentCriteria): MessageInitShape<typeof SegmentRuleSchema> {
  return {
    tagsAny: [...rule.tagsAny],
    tagsAll: [...rule.tagsAll],
    tagsNone: [...rule.tagsNone],
    platforms: rule.platforms.map(platformEnum),
    languages: [...rule.languages],
    appVersions: [...rule.appVersions],
    timezones: [...rule.timezones],
    hasExternalId: rule.hasExternalId,
  };
}
